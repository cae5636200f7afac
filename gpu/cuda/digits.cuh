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

// Magnitude of the signed digit of window w; carry is the carry in (0 or 1)
// and receives the carry out; neg receives the sign.
C2_HD uint32_t signed_digit(const uint32_t s[8], int w, int W, uint32_t& carry, bool& neg) {
    const int c = window_width(w, W), o = window_offset(w, W);
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

}  // namespace c2
