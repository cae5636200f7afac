// Host check of the fixed-base scalar multiplication's per-thread bodies
// (fixedbase.cuh, run by setup.cu's kernels): tables of G1 and G2
// generators for several window counts (uneven widths included), products
// of special and random scalars computed by fb_thread with a few threads and
// several points each (batch inversion across infinity), against a plain
// double-and-add over the scalar's bits, and one product against
// gnark-crypto's value; every result's words are canonical. Build and run:
// make -C gpu/cuda hosttest
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <random>
#include <vector>
#include "../fixedbase.cuh"
#include "field_gen.h"

using namespace c2;

// gnark-crypto's generators G and k·G for one k, as gnark-crypto v0.22
// prints their coordinates: Fp elements in Montgomery form, six 64-bit words
// each, least significant first. G1 rows: x and y of G, then of k·G. G2 rows:
// x0, x1, y0, y1 (x = x0 + x1·u, y likewise) of G, then of k·G.
static const uint64_t G1_MONT[4][6] = {
    {0x5cb38790fd530c16, 0x7817fc679976fff5, 0x154f95c7143ba1c1, 0xf0ae6acdf3d0e747, 0xedce6ecc21dbf440, 0x120177419e0bfb75},
    {0xbaac93d50ce72271, 0x8c22631a7918fd8e, 0xdd595f13570725ce, 0x51ac582950405194, 0x0e1c8c3fad0059c0, 0x0bbc3efc5008a26a},
    {0x3b183f448f49862a, 0xe236a31a21a0c1c9, 0x3b8c959d952afa68, 0x9104cdc77ac8d7db, 0x257717c285886625, 0x01ed667e09f5b869},
    {0xdb306a65c929fb07, 0x499dd3f01ce4cdb8, 0xea1e4769060e5912, 0xe3949d3ce0a97871, 0x36b8a22cbdffd695, 0x03ffe2a4f00769bb},
};
static const uint64_t G2_MONT[8][6] = {
    {0xf5f28fa202940a10, 0xb3f5fb2687b4961a, 0xa1a893b53e2ae580, 0x9894999d1a3caee9, 0x6f67b7631863366b, 0x058191924350bcd7},
    {0xa5a9c0759e23f606, 0xaaa0c59dbccd60c3, 0x3bb17e18e2867806, 0x1b1ab6cc8541b367, 0xc2b6ed0ef2158547, 0x11922a097360edf3},
    {0x4c730af860494c4a, 0x597cfa1f5e369c5a, 0xe7e6856caa0a635a, 0xbbefb5e96e0d495f, 0x07d3a975f0ef25a2, 0x0083fd8e7e80dae5},
    {0xadc0fc92df64b05d, 0x18aa270a2b1461dc, 0x86adac6a3be4eba0, 0x79495c4ec93da33a, 0xe7175850a43ccaed, 0x0b2bc2a163de1bf2},
    {0xd6bd8171d4931b9a, 0x59501e4f5a2e430a, 0x92d85a184067e6d6, 0x5aab119768ee2a02, 0xf8f83f88c787b045, 0x177a1bd2545a02d6},
    {0x5d0094fd07c0a407, 0x30e573d3655f77e1, 0x6cfcf902833fd468, 0xfa77fa616fc530e8, 0x02f2f3145c25a945, 0x0d22cbf4ed57966f},
    {0x7fdfcca88cb8b554, 0xf8058f24f3e5f69c, 0x105c8c7006534529, 0x1b585b16acaad297, 0xb81d931cc2ef0c4f, 0x12bafa92b88e9382},
    {0x89fa5fdab2f6a78a, 0x350e457279cf438d, 0x3289744c39bafd1b, 0x777cc6cfb0cc8c24, 0x738a7abf8a6b30f2, 0x110e62d5b726cd7a},
};
// k = 0x5f3a1c2b4d6e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6
static const uint64_t K_MONT[4] = {0x1f20476afe88d3e6, 0x5166774f2d1614ed, 0x35cf54996c132d8e, 0x54b1da5a2004ba14};

// An element from 64-bit words, least significant first.
template <class F>
static F from_words64(const uint64_t* w) {
    F r;
    for (int i = 0; i < F::N; i++) r.v[i] = (uint32_t)(w[i / 2] >> (32 * (i % 2)));
    return r;
}
static fp_t fp(const uint64_t* w) { return from_words64<fp_t>(w); }
// The G1 point of rows x, y; the G2 point of rows x0, x1, y0, y1.
static g1_affine g1(const uint64_t (*r)[6]) { return {fp(r[0]), fp(r[1])}; }
static g2_affine g2(const uint64_t (*r)[6]) { return {{fp(r[0]), fp(r[1])}, {fp(r[2]), fp(r[3])}}; }
static g1_affine generator(fp_t*) { return g1(G1_MONT); }
static g2_affine generator(fp2_t*) { return g2(G2_MONT); }
static g1_affine kg(fp_t*) { return g1(G1_MONT + 2); }
static g2_affine kg(fp2_t*) { return g2(G2_MONT + 4); }

// a and b have the same words: the same point, both canonical (with the lazy
// Fp, C2_FP_LAZY, a result with a coordinate in [p, 2p) differs).
template <class F>
static bool same(const affine_t<F>& a, const affine_t<F>& b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

// k·g by double-and-add over the bits of k's plain value.
template <class F>
static affine_t<F> reference(const affine_t<F>& g, const fr_t& k) {
    const fr_t s = k.from_mont();
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (int b = 255; b >= 0; b--) {
        acc = acc.dbl();
        if ((s.v[b / 32] >> (b % 32)) & 1) acc = acc.add_affine(g);
    }
    return acc.to_affine();
}

static std::mt19937_64 rng;

template <class F>
static int check(const char* name, int W, int nrand) {
    F* tag = nullptr;
    const affine_t<F> g = generator(tag);
    std::vector<affine_t<F>> wb(W);
    if (!fb_window_bases<F>(g, W, wb.data())) {
        printf("%s W=%d: window bases failed\n", name, W);
        return 1;
    }
    const uint32_t nb = 1u << (window_width(0, W) - 1);
    std::vector<affine_t<F>> table((size_t)W * nb);
    for (uint64_t t = 0; t < table.size(); t++) table[t] = fb_table_entry<F>(wb.data(), W, nb, t);

    std::vector<fr_t> sc;
    const fr_t one = fr_t::one(), k = from_words64<fr_t>(K_MONT);
    sc.push_back(fr_t::zero());
    sc.push_back(one);
    sc.push_back(one + one);
    sc.push_back(one.neg());          // r - 1
    sc.push_back((one + one).neg());  // r - 2
    sc.push_back(k);
    sc.push_back(fr_t::zero());
    for (int i = 0; i < nrand; i++) sc.push_back(gen<FrParams>{rng}.uniform());
    const uint64_t n = sc.size();
    const uint32_t T = 5;
    const int m = (int)((n + T - 1) / T);
    std::vector<affine_t<F>> out(n);
    std::vector<F> zz(n), zzz(n), pre(n);
    for (uint32_t t = 0; t < T; t++)
        fb_thread<F>(table.data(), W, nb, sc.data(), n, T, m, t, out.data(), zz.data(), zzz.data(), pre.data());

    int bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        const affine_t<F> want = reference<F>(g, sc[i]);
        if (!same(out[i], want) && bad++ < 5) printf("%s W=%d: scalar %llu differs\n", name, W, (unsigned long long)i);
    }
    if (!out[0].is_inf() || !out[6].is_inf()) bad++, printf("%s W=%d: zero scalar not infinity\n", name, W);
    if (!same(out[1], g)) bad++, printf("%s W=%d: 1·G != G\n", name, W);
    if (!(out[3].x == g.x && out[3].y == g.y.neg())) bad++, printf("%s W=%d: (r-1)·G != -G\n", name, W);
    if (!same(out[5], kg(tag))) bad++, printf("%s W=%d: k·G differs from gnark-crypto\n", name, W);
    printf("%s W=%d (%u entries a window): %llu products, %d differences\n", name, W, nb, (unsigned long long)n, bad);
    return bad;
}

int main(int argc, char** argv) {
    rng.seed(check_seed(argc, argv));
    int bad = 0;
    bad += check<fp_t>("G1", 64, 24);
    bad += check<fp_t>("G1", 26, 8);  // 22 windows of 10 bits, 4 of 9
    bad += check<fp2_t>("G2", 64, 8);
    bad += check<fp2_t>("G2", 26, 2);
    printf(bad ? "FAIL\n" : "ok\n");
    return bad ? 1 : 0;
}
