// Host check of the NTT pass network (ntt_net.cuh): G = 2^(t-1) simulated
// threads run the DIF and DIT stages with the pass kernel's exchanges and
// twiddle positions over Fr, with and without the thread roles that let
// whole warps skip twiddles of 1 (net_role), and every output must equal the naive
// transform X[k] = sum x[n] w^(nk) (DIF: at position bitrev(k) from natural
// input; DIT: at position k from bit-reversed input), for t = 1 .. 10; once
// with the twiddles as Montgomery values and once as Shoup multipliers
// (field_shoup.cuh, ntt.cu's C2_NTT_SHOUP).
// Build and run: make -C gpu/cuda hosttest
#include <stdio.h>
#include <random>
#include <vector>
#include "../ntt_net.cuh"
#include "../field_shoup.cuh"

namespace c2 {
// A stage's product by a Shoup twiddle, as ntt.cu's fr_t * fr_tw.
static fr_t operator*(const fr_t& x, const shoup_t<FrParams>& z) { return mul_shoup<FrParams>(x, z); }
}  // namespace c2

using namespace c2;

static uint32_t bitrev(uint32_t x, int bits) {
    uint32_t r = 0;
    for (int i = 0; i < bits; i++) r |= ((x >> i) & 1) << (bits - 1 - i);
    return r;
}

// A root of unity of order 2^32: 7^((r - 1) / 2^32), 7 generating Fr*.
static fr_t root_2_32() {
    fr_t seven = fr_t::zero();
    for (int i = 0; i < 7; i++) seven = seven + fr_t::one();
    uint32_t e[7];
    e[0] = FrParams::mod(1);  // (r - 1) >> 32: r's low word is 1
    for (int i = 1; i < 7; i++) e[i] = FrParams::mod(i + 1);
    return seven.pow_limbs(e, 7);
}

// Runs the network on r (G threads x 2 slots, indexed by the thread's number
// tc within its column, which plays network thread net_role(tc, q)) for a
// 2^t-point transform, skipping the twiddles net_has_twiddle skips. Counts
// in *broken the exchanges that reach the wrong thread, the skipped
// twiddles that are not 1 and the warps whose threads disagree on a skip.
// The stages multiply by tw's entries, itw's values as Z.
template <class Z>
static void run_network(bool dit, int t, int q, std::vector<fr_t>& r, const std::vector<fr_t>& itw,
                        const std::vector<Z>& tw, int* broken) {
    const uint32_t G = 1u << (t - 1);
    auto exchange = [&](int c) {
        std::vector<fr_t> sent(G);
        for (uint32_t tc = 0; tc < G; tc++) sent[tc] = r[2 * tc + 1 - net_keep(net_role(tc, q), c)];
        for (uint32_t tc = 0; tc < G; tc++) {
            const uint32_t from = tc ^ (1u << net_thread_bit(c, q));
            *broken += net_role(from, q) != (net_role(tc, q) ^ (1u << c));
            r[2 * tc + 1 - net_keep(net_role(tc, q), c)] = sent[from];
        }
    };
    for (int i = 0; i < t; i++) {
        const int b = dit ? i : t - 1 - i;
        if (i > 0) exchange(dit ? b - 1 : b);
        for (uint32_t tc = 0; tc < G; tc++) {
            const uint32_t j = net_role(tc, q);
            const Z& z = tw[net_twiddle_index(j, b)];
            const bool has = net_has_twiddle(j, b, q);
            *broken += !has && b > 0 && itw[net_twiddle_index(j, b)] != fr_t::one();
            *broken += has != net_has_twiddle(net_role(tc & ~31u, q), b, q);
            if (dit)
                net_dit(r[2 * tc], r[2 * tc + 1], z, has);
            else
                net_dif(r[2 * tc], r[2 * tc + 1], z, has);
        }
    }
}

// The inner table of a 2^t-point network with root w (ntt_net.cuh):
// w_(2^(b+1))^a = w^(a 2^(t-b-1)) at (2^b - 1) + a.
static std::vector<fr_t> inner_table(const fr_t& w, int t) {
    const uint32_t N = 1u << t;
    std::vector<fr_t> itw(N > 1 ? N - 1 : 1, fr_t::one());
    for (int b = 0; b < t; b++) {
        fr_t wb = w;
        for (int i = 0; i < t - b - 1; i++) wb = wb * wb;
        fr_t p = fr_t::one();
        for (uint32_t a = 0; a < (1u << b); a++, p = p * wb) itw[(1u << b) - 1 + a] = p;
    }
    return itw;
}

int main() {
    std::mt19937_64 rng(7);
    int failures = 0;
    const fr_t w32 = root_2_32();
    for (int t = 1; t <= 10; t++) {
        const uint32_t N = 1u << t, G = N / 2;
        fr_t w = w32;
        for (int i = t; i < 32; i++) w = w * w;
        fr_t half = w;  // w^(2^(t-1)) must be -1
        for (int i = 1; i < t; i++) half = half * half;
        if (half != fr_t::one().neg()) {
            printf("t=%d: root has the wrong order\n", t);
            return 1;
        }
        const std::vector<fr_t> itw = inner_table(w, t);
        std::vector<shoup_t<FrParams>> itw_s;
        for (const fr_t& z : itw) itw_s.push_back(shoup_entry<FrParams>(z));
        std::vector<fr_t> x(N), X(N);
        for (auto& v : x) {
            for (int i = 0; i < 8; i++) v.v[i] = (uint32_t)rng();
            v.v[7] &= 0x3fffffff;
        }
        for (uint32_t k = 0; k < N; k++) {
            fr_t wk = fr_t::one(), acc = fr_t::zero(), p = fr_t::one();
            for (uint32_t i = 0; i < k; i++) wk = wk * w;
            for (uint32_t n = 0; n < N; n++, p = p * wk) acc = acc + x[n] * p;
            X[k] = acc;
        }
        for (int shoup = 0; shoup <= 1; shoup++)
        for (int dit = 0; dit <= 1; dit++)
            for (int q : {0, net_warp_bits(t)}) {
                std::vector<fr_t> r(N), out(N);
                for (uint32_t tc = 0; tc < G; tc++)
                    for (int s = 0; s < 2; s++) {
                        const uint32_t n1 = net_load_index(dit, net_role(tc, q), s, t);
                        r[2 * tc + s] = dit ? x[bitrev(n1, t)] : x[n1];
                    }
                int broken = 0;
                if (shoup)
                    run_network(dit, t, q, r, itw, itw_s, &broken);
                else
                    run_network(dit, t, q, r, itw, itw, &broken);
                for (uint32_t tc = 0; tc < G; tc++)
                    for (int s = 0; s < 2; s++) out[net_store_index(dit, net_role(tc, q), s, t)] = r[2 * tc + s];
                int bad = 0;
                for (uint32_t p = 0; p < N; p++) bad += out[p] != X[dit ? p : bitrev(p, t)];
                if (bad || broken)
                    printf("t=%d q=%d %s%s: %d of %u outputs differ, %d broken steps\n", t, q, dit ? "DIT" : "DIF",
                           shoup ? " (Shoup twiddles)" : "", bad, N, broken);
                failures += bad + broken;
            }
        // Fused pairs (ntt.cu's k_ntt_pair): a network of one kind leaves each
        // thread's slots where the other kind loads them, so the second
        // network runs on the registers as the first left them. With the
        // inverse root's table for the first network and the root's for the
        // second, the pair returns N * x in the first's load order.
        fr_t wi = fr_t::one();
        for (uint32_t i = 0; i + 1 < N; i++) wi = wi * w;  // w^(N-1) = w^-1
        const std::vector<fr_t> itw_i = inner_table(wi, t);
        fr_t nN = fr_t::zero();
        for (uint32_t i = 0; i < N; i++) nN = nN + fr_t::one();
        for (int first_dit = 0; first_dit <= 1; first_dit++)
            for (int q : {0, net_warp_bits(t)}) {
                std::vector<fr_t> r(N), out(N);
                for (uint32_t tc = 0; tc < G; tc++)
                    for (int s = 0; s < 2; s++) r[2 * tc + s] = x[net_load_index(first_dit, net_role(tc, q), s, t)];
                int broken = 0;
                run_network(first_dit, t, q, r, itw_i, itw_i, &broken);
                for (uint32_t tc = 0; tc < G; tc++)
                    for (int s = 0; s < 2; s++)
                        broken += net_store_index(first_dit, net_role(tc, q), s, t) !=
                                  net_load_index(!first_dit, net_role(tc, q), s, t);
                run_network(!first_dit, t, q, r, itw, itw, &broken);
                for (uint32_t tc = 0; tc < G; tc++)
                    for (int s = 0; s < 2; s++) out[net_store_index(!first_dit, net_role(tc, q), s, t)] = r[2 * tc + s];
                int bad = 0;
                for (uint32_t p = 0; p < N; p++) bad += out[p] != x[p] * nN;
                if (bad || broken)
                    printf("t=%d q=%d pair %s: %d of %u outputs differ, %d broken steps\n", t, q,
                           first_dit ? "DIT, DIF" : "DIF, DIT", bad, N, broken);
                failures += bad + broken;
            }
    }
    if (failures) return 1;
    printf("ntt_net: DIF and DIT networks equal the naive transform for t = 1..10, warp-skipped twiddles too, "
           "with Montgomery and with Shoup twiddles; fused pairs return N times their input\n");
    return 0;
}
