// Signed-digit decomposition of scalars for the MSM.
//
// A scalar s < 2^255 is cut into W windows of near-equal widths covering 256
// bits (the wider ones first), so that no window is left with a few bits and
// a few overfull buckets. With d_w in [-2^(c_w-1), 2^(c_w-1)],
// s = sum d_w 2^(o_w); the top window absorbs the last carry because it holds
// fewer than c_w - 1 significant bits of s.
#pragma once
#include <stdint.h>
#include "field.cuh"

namespace c2 {

C2_HD int window_width(int w, int W) { return 256 / W + (w < 256 % W ? 1 : 0); }

C2_HD int window_offset(int w, int W) {
    int r = 256 % W;
    return w * (256 / W) + (w < r ? w : r);
}

// The split layout (c2_msm_split): s = lo + 2^128 hi, each half cut into H
// near-equal windows of 128 bits (the wider ones first). Window w < 2H is
// window w % H of half w / H, so windows w and w + H have one width and
// offsets 128 apart: the digit of window w + H multiplies 2^128 times the
// base, which the split MSM reads from its second base array, and both
// windows share window w's buckets. The carry runs from window H - 1 into
// window H as in the plain layout, and the top window absorbs the last one.
C2_HD int split_width(int w, int H) { return 128 / H + (w % H < 128 % H ? 1 : 0); }

C2_HD int split_offset(int w, int H) {
    const int j = w % H, r = 128 % H;
    return (w >= H ? 128 : 0) + j * (128 / H) + (j < r ? j : r);
}

// The window width (at most max_c) for n points: c gives W = ceil(256/c)
// windows whose widest is window_width(0, W) <= c bits (so several c share
// one layout), and the pick minimises W (n + 2.7 nb), nb = 2^(widest - 1)
// buckets per window: one mixed addition per point and window, and per
// bucket its share of the window sums. The weight 2.7 makes the pick agree
// with the H200 window sweep (BENCHMARKS.md) at 2^20 points (16 windows),
// 2^22 (15) and 2^24 (13), for G1 and G2; any weight in (2.46, 2.9) does.
// gpu/cuda_device.go's msmWindows mirrors this rule.
inline int msm_pick_window(uint64_t n, int max_c) {
    int best = 4;
    double best_cost = 1e300;
    for (int c = 4; c <= max_c; c++) {
        int W = (256 + c - 1) / c;
        double cost = (double)W * ((double)n + 2.7 * (double)(1ull << (window_width(0, W) - 1)));
        if (cost < best_cost) {
            best_cost = cost;
            best = c;
        }
    }
    return best;
}

// Magnitude of the signed digit of c bits at offset o; carry is the carry in
// (0 or 1) and receives the carry out; neg receives the sign.
C2_HD uint32_t signed_digit_at(const uint32_t s[8], int o, int c, uint32_t& carry, bool& neg) {
    const int li = o >> 5, sh = o & 31;
    uint64_t word = 0;
    if (li < 8) word = s[li];
    if (li + 1 < 8) word |= (uint64_t)s[li + 1] << 32;
    uint32_t d = (uint32_t)((word >> sh) & ((1u << c) - 1)) + carry;
    if (d > (1u << (c - 1))) {
        d = (1u << c) - d;
        carry = 1;
        neg = true;
    } else {
        carry = 0;
        neg = false;
    }
    return d;
}

// The signed digit of window w of the plain layout of W windows.
C2_HD uint32_t signed_digit(const uint32_t s[8], int w, int W, uint32_t& carry, bool& neg) {
    return signed_digit_at(s, window_offset(w, W), window_width(w, W), carry, neg);
}

// The half-window count H (at most max_c bits a window) for a split MSM of
// n points: 2n points of 128-bit scalars, ranked as msm_pick_window ranks
// the plain layouts, H (2n + 2.7 nb) with nb = 2^(widest - 1) buckets per
// window pair.
inline int msm_pick_split(uint64_t n, int max_c) {
    int best = 0;
    double best_cost = 1e300;
    for (int H = 1; H <= 32; H++) {
        const int widest = split_width(0, H);
        if (widest > max_c) continue;
        double cost = (double)H * (2.0 * (double)n + 2.7 * (double)(1ull << (widest - 1)));
        if (cost < best_cost) {
            best_cost = cost;
            best = H;
        }
    }
    return best;
}

}  // namespace c2
