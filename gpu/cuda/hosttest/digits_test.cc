// Host check of the MSM's signed-digit decomposition (digits.cuh): for every
// window count the kernel may use, sum d_w 2^(o_w) must give back the scalar,
// with |d_w| <= 2^(c_w - 1) and no carry out of the top window; and
// msm_pick_window picks the measured layouts.
// Build and run: make -C gpu/cuda hosttest
#include <stdio.h>
#include <random>
#include "../digits.cuh"

using namespace c2;

// acc += sign * d * 2^o on 9 little-endian 32-bit limbs (mod 2^288).
static void add_shifted(uint32_t acc[9], uint32_t d, int o, bool neg) {
    uint32_t v[9] = {0};
    uint64_t x = (uint64_t)d << (o & 31);
    int li = o >> 5;
    if (li < 9) v[li] = (uint32_t)x;
    if (li + 1 < 9) v[li + 1] = (uint32_t)(x >> 32);
    uint64_t c = 0;
    for (int i = 0; i < 9; i++) {
        uint64_t t = neg ? (uint64_t)acc[i] - v[i] - c : (uint64_t)acc[i] + v[i] + c;
        acc[i] = (uint32_t)t;
        c = neg ? ((t >> 63) & 1) : (t >> 32);
    }
}

int main() {
    std::random_device rd;
    uint64_t seed = ((uint64_t)rd() << 32) | rd();
    printf("seed %llu\n", (unsigned long long)seed);
    std::mt19937_64 rng(seed);
    const uint32_t rm1[8] = {0x00000000, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                             0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};  // r - 1
    int bad = 0, checked = 0;
    for (int W = 11; W <= 64; W++) {
        for (int it = 0; it < 20000; it++) {
            uint32_t s[8];
            if (it == 0) {
                for (int i = 0; i < 8; i++) s[i] = 0;
            } else if (it == 1) {
                for (int i = 0; i < 8; i++) s[i] = rm1[i];
            } else if (it == 2) {
                for (int i = 0; i < 8; i++) s[i] = 0xffffffff;
                s[7] = 0x7fffffff;  // 2^255 - 1
            } else {
                for (int i = 0; i < 8; i++) s[i] = (uint32_t)rng();
                if (it % 7 == 0) s[rng() % 8] = 0xffffffff;  // long runs of ones
                s[7] &= 0x7fffffff;                          // s < 2^255
            }
            uint32_t acc[9] = {0}, carry = 0;
            bool ok = true;
            for (int w = 0; w < W; w++) {
                bool neg;
                uint32_t d = signed_digit(s, w, W, carry, neg);
                if (d > (1u << (window_width(w, W) - 1))) ok = false;
                add_shifted(acc, d, window_offset(w, W), neg);
            }
            if (carry) ok = false;
            for (int i = 0; i < 8; i++)
                if (acc[i] != s[i]) ok = false;
            if (acc[8]) ok = false;
            checked++;
            if (!ok && bad++ < 5) printf("W=%d iteration %d: wrong decomposition\n", W, it);
        }
    }
    printf("digits: %d scalars, %d wrong\n", checked, bad);
    // msm_pick_window's layouts where the H200 window sweep put the fastest
    // (BENCHMARKS.md): windows for 2^lg points under either group's cap
    // (at 2^27 the cap, c <= 21, rules out the 12 windows the model prefers).
    const struct {
        int lg, max_c, W;
    } picks[] = {{20, 21, 16}, {22, 21, 15}, {24, 21, 13}, {20, 20, 16}, {22, 20, 15}, {24, 20, 13}, {27, 21, 13}};
    int bad_picks = 0;
    for (const auto& p : picks) {
        int c = msm_pick_window(1ull << p.lg, p.max_c);
        int W = (256 + c - 1) / c;
        if (c > p.max_c || W != p.W) {
            printf("msm_pick_window(2^%d, %d) = c %d (%d windows), want %d windows\n", p.lg, p.max_c, c, W, p.W);
            bad_picks++;
        }
    }
    printf("window picks: %d checked, %d wrong\n", (int)(sizeof picks / sizeof picks[0]), bad_picks);

    // The split layout: windows w and w + H of one width, offsets 128 apart,
    // each half's windows tiling its 128 bits; the digits give back the
    // scalar, within their bounds, with no carry out of the top window.
    int bad_split = 0, split_checked = 0;
    for (int H = 6; H <= 32; H++) {
        int off = 0;
        for (int w = 0; w < H; w++) {
            if (split_width(w, H) != split_width(w + H, H) || split_offset(w + H, H) != split_offset(w, H) + 128 ||
                split_offset(w, H) != off || split_width(w, H) > split_width(0, H) ||
                split_width(w, H) < split_width(0, H) - 1) {
                if (bad_split++ < 5) printf("H=%d window %d: layout\n", H, w);
            }
            off += split_width(w, H);
        }
        if (off != 128 && bad_split++ < 5) printf("H=%d: windows cover %d bits\n", H, off);
        for (int it = 0; it < 20000; it++) {
            uint32_t s[8];
            for (int i = 0; i < 8; i++) s[i] = it == 1 ? rm1[i] : it == 2 ? 0xffffffff : it == 3 ? 0 : (uint32_t)rng();
            if (it == 3) s[4] = 1;                                    // 2^128
            if (it == 4) s[0] = s[1] = s[2] = s[3] = 0xffffffff;     // carries into the high half
            if (it > 4 && it % 7 == 0) s[rng() % 8] = 0xffffffff;
            if (it == 0)
                for (int i = 0; i < 8; i++) s[i] = 0;
            s[7] &= 0x7fffffff;
            uint32_t acc[9] = {0}, carry = 0;
            bool ok = true;
            for (int w = 0; w < 2 * H; w++) {
                bool neg;
                const int c = split_width(w, H);
                uint32_t d = signed_digit_at(s, split_offset(w, H), c, carry, neg);
                if (d > (1u << (c - 1))) ok = false;
                add_shifted(acc, d, split_offset(w, H), neg);
            }
            if (carry || acc[8]) ok = false;
            for (int i = 0; i < 8; i++)
                if (acc[i] != s[i]) ok = false;
            split_checked++;
            if (!ok && bad_split++ < 5) printf("H=%d iteration %d: wrong split decomposition\n", H, it);
        }
    }
    // the split pick: 6 window pairs of 21-22 bits from 2^24 points on
    const struct {
        int lg, H;
    } split_picks[] = {{22, 7}, {24, 6}, {26, 6}, {27, 6}};
    for (const auto& p : split_picks) {
        const int H = msm_pick_split(1ull << p.lg, 22);
        if (H != p.H && bad_split++ < 10) printf("msm_pick_split(2^%d, 22) = %d, want %d\n", p.lg, H, p.H);
    }
    printf("split digits: %d scalars, %d wrong\n", split_checked, bad_split);
    return bad || bad_picks || bad_split ? 1 : 0;
}
