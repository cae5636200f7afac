// Host check of the fixed-base scalar multiplication's per-thread bodies
// (fixedbase.cuh, run by setup.cu's kernels): tables of G1 and G2
// generators for several window counts (uneven widths included), products
// of special and random scalars computed by fb_thread with a few threads and
// several points each (batch inversion across infinity), against a plain
// double-and-add over the scalar's bits, and one product against
// gnark-crypto's value. Build and run: make -C gpu/cuda hosttest
#include <stdio.h>
#include <stdlib.h>
#include <random>
#include <vector>
#include "../fixedbase.cuh"

using namespace c2;

// gnark-crypto's generators and k·G for one k (Montgomery form, 32-bit
// limbs), printed by gnark-crypto v0.22.
static const uint32_t G1X[12] = {0xfd530c16, 0x5cb38790, 0x9976fff5, 0x7817fc67, 0x143ba1c1, 0x154f95c7,
                                 0xf3d0e747, 0xf0ae6acd, 0x21dbf440, 0xedce6ecc, 0x9e0bfb75, 0x12017741};
static const uint32_t G1Y[12] = {0x0ce72271, 0xbaac93d5, 0x7918fd8e, 0x8c22631a, 0x570725ce, 0xdd595f13,
                                 0x50405194, 0x51ac5829, 0xad0059c0, 0x0e1c8c3f, 0x5008a26a, 0x0bbc3efc};
static const uint32_t G2X0[12] = {0x02940a10, 0xf5f28fa2, 0x87b4961a, 0xb3f5fb26, 0x3e2ae580, 0xa1a893b5,
                                  0x1a3caee9, 0x9894999d, 0x1863366b, 0x6f67b763, 0x4350bcd7, 0x05819192};
static const uint32_t G2X1[12] = {0x9e23f606, 0xa5a9c075, 0xbccd60c3, 0xaaa0c59d, 0xe2867806, 0x3bb17e18,
                                  0x8541b367, 0x1b1ab6cc, 0xf2158547, 0xc2b6ed0e, 0x7360edf3, 0x11922a09};
static const uint32_t G2Y0[12] = {0x60494c4a, 0x4c730af8, 0x5e369c5a, 0x597cfa1f, 0xaa0a635a, 0xe7e6856c,
                                  0x6e0d495f, 0xbbefb5e9, 0xf0ef25a2, 0x07d3a975, 0x7e80dae5, 0x0083fd8e};
static const uint32_t G2Y1[12] = {0xdf64b05d, 0xadc0fc92, 0x2b1461dc, 0x18aa270a, 0x3be4eba0, 0x86adac6a,
                                  0xc93da33a, 0x79495c4e, 0xa43ccaed, 0xe7175850, 0x63de1bf2, 0x0b2bc2a1};
// k = 0x5f3a1c2b4d6e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6
static const uint64_t K_MONT[4] = {0x1f20476afe88d3e6, 0x5166774f2d1614ed, 0x35cf54996c132d8e, 0x54b1da5a2004ba14};
static const uint32_t P1X[12] = {0x8f49862a, 0x3b183f44, 0x21a0c1c9, 0xe236a31a, 0x952afa68, 0x3b8c959d,
                                 0x7ac8d7db, 0x9104cdc7, 0x85886625, 0x257717c2, 0x09f5b869, 0x01ed667e};
static const uint32_t P1Y[12] = {0xc929fb07, 0xdb306a65, 0x1ce4cdb8, 0x499dd3f0, 0x060e5912, 0xea1e4769,
                                 0xe0a97871, 0xe3949d3c, 0xbdffd695, 0x36b8a22c, 0xf00769bb, 0x03ffe2a4};
static const uint32_t P2X0[12] = {0xd4931b9a, 0xd6bd8171, 0x5a2e430a, 0x59501e4f, 0x4067e6d6, 0x92d85a18,
                                  0x68ee2a02, 0x5aab1197, 0xc787b045, 0xf8f83f88, 0x545a02d6, 0x177a1bd2};
static const uint32_t P2X1[12] = {0x07c0a407, 0x5d0094fd, 0x655f77e1, 0x30e573d3, 0x833fd468, 0x6cfcf902,
                                  0x6fc530e8, 0xfa77fa61, 0x5c25a945, 0x02f2f314, 0xed57966f, 0x0d22cbf4};
static const uint32_t P2Y0[12] = {0x8cb8b554, 0x7fdfcca8, 0xf3e5f69c, 0xf8058f24, 0x06534529, 0x105c8c70,
                                  0xacaad297, 0x1b585b16, 0xc2ef0c4f, 0xb81d931c, 0xb88e9382, 0x12bafa92};
static const uint32_t P2Y1[12] = {0xb2f6a78a, 0x89fa5fda, 0x79cf438d, 0x350e4572, 0x39bafd1b, 0x3289744c,
                                  0xb0cc8c24, 0x777cc6cf, 0x8a6b30f2, 0x738a7abf, 0xb726cd7a, 0x110e62d5};

static fp_t fp(const uint32_t* v) {
    fp_t r;
    for (int i = 0; i < 12; i++) r.v[i] = v[i];
    return r;
}
static g1_affine gen(fp_t*) { return {fp(G1X), fp(G1Y)}; }
static g2_affine gen(fp2_t*) { return {{fp(G2X0), fp(G2X1)}, {fp(G2Y0), fp(G2Y1)}}; }
static g1_affine kg(fp_t*) { return {fp(P1X), fp(P1Y)}; }
static g2_affine kg(fp2_t*) { return {{fp(P2X0), fp(P2X1)}, {fp(P2Y0), fp(P2Y1)}}; }

template <class F>
static bool same(const affine_t<F>& a, const affine_t<F>& b) {
    return a.x == b.x && a.y == b.y;
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

// Random Montgomery representations below r (valid elements).
static fr_t random_fr() {
    for (;;) {
        fr_t x;
        for (int i = 0; i < 8; i++) x.v[i] = (uint32_t)rng();
        x.v[7] &= 0x7fffffff;
        bool below = false;
        for (int i = 7; i >= 0; i--) {
            if (x.v[i] != FrParams::mod(i)) {
                below = x.v[i] < FrParams::mod(i);
                break;
            }
        }
        if (below) return x;
    }
}

template <class F>
static int check(const char* name, int W, int nrand) {
    F* tag = nullptr;
    const affine_t<F> g = gen(tag);
    std::vector<affine_t<F>> wb(W);
    if (!fb_window_bases<F>(g, W, wb.data())) {
        printf("%s W=%d: window bases failed\n", name, W);
        return 1;
    }
    const uint32_t nb = 1u << (window_width(0, W) - 1);
    std::vector<affine_t<F>> table((size_t)W * nb);
    for (uint64_t t = 0; t < table.size(); t++) table[t] = fb_table_entry<F>(wb.data(), W, nb, t);

    std::vector<fr_t> sc;
    fr_t one = fr_t::one(), k;
    for (int i = 0; i < 4; i++) {
        k.v[2 * i] = (uint32_t)K_MONT[i];
        k.v[2 * i + 1] = (uint32_t)(K_MONT[i] >> 32);
    }
    sc.push_back(fr_t::zero());
    sc.push_back(one);
    sc.push_back(one + one);
    sc.push_back(one.neg());          // r - 1
    sc.push_back((one + one).neg());  // r - 2
    sc.push_back(k);
    sc.push_back(fr_t::zero());
    for (int i = 0; i < nrand; i++) sc.push_back(random_fr());
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
    uint64_t seed = argc > 1 ? strtoull(argv[1], nullptr, 0) : std::random_device{}();
    printf("seed %llu\n", (unsigned long long)seed);
    rng.seed(seed);
    int bad = 0;
    bad += check<fp_t>("G1", 64, 24);
    bad += check<fp_t>("G1", 26, 8);  // 22 windows of 10 bits, 4 of 9
    bad += check<fp2_t>("G2", 64, 8);
    bad += check<fp2_t>("G2", 26, 2);
    printf(bad ? "FAIL\n" : "ok\n");
    return bad ? 1 : 0;
}
