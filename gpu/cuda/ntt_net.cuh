// The butterfly network of one NTT pass with two elements per thread.
//
// A pass runs a 2^t-point transform on each of its columns with G = 2^(t-1)
// threads per column: radix-2 stage b (bit b of the element index n1) pairs
// n1 and n1 + 2^b. Before stage b thread j holds the two elements whose
// index with bit b removed is j, in slot 0 (bit b clear) and slot 1 (bit b
// set); so the twiddle of stage b is w_(2^(b+1))^(j mod 2^b), and moving
// from stage b to stage b -/+ 1 exchanges one element with thread j ^ 2^c
// (c the lower of the two bits): each thread keeps the slot named by bit c
// of j and trades the other (net_keep). Exchanges between threads of one
// warp use shuffles, wider ones shared memory; no element makes a round
// trip through shared memory in a stage that needs no exchange.
//
// Decimation in frequency (DIF) runs stages t-1 down to 0: thread j loads
// n1 = j and j + G and stores n1 = 2j and 2j + 1, leaving the outputs in
// bit-reversed order. Decimation in time (DIT) runs stages 0 up to t-1 on
// bit-reversed input: it loads 2j, 2j + 1 and stores j, j + G.
//
// The functions are generic over the element type so that
// hosttest/ntt_net_test.cc runs the same network on the host.
#pragma once
#include <stdint.h>
#include "field.cuh"

namespace c2 {

// Index within the pass's 2^t-point column of thread j's slot s when the
// pass loads (first stage) or stores (after the last stage).
C2_HD uint32_t net_load_index(bool dit, uint32_t j, int s, int t) {
    return dit ? 2 * j + (uint32_t)s : j + ((uint32_t)s << (t - 1));
}
C2_HD uint32_t net_store_index(bool dit, uint32_t j, int s, int t) {
    return dit ? j + ((uint32_t)s << (t - 1)) : 2 * j + (uint32_t)s;
}

// Position of stage b's twiddle for thread j in the inner table, which holds
// w_(2^(b+1))^a at (2^b - 1) + a for a < 2^b, stage after stage.
C2_HD uint32_t net_twiddle_index(uint32_t j, int b) {
    const uint32_t m = (1u << b) - 1;
    return m + (j & m);
}

// Thread roles. A column's G threads are numbered tc = 0 .. G-1 within it
// (bits 0-4 the lane, the rest the warp). Thread tc plays network thread
// j = net_role(tc, q): j's q low bits are tc's q lowest warp bits and the
// lane moves up by q. Stage b's twiddle is 1 when j's b low bits are zero,
// which for b <= q is one answer for a whole warp, so whole warps skip those
// products (half of them at stage 1, a quarter at stage 2, an eighth at 3).
// A pass of 2^t-point columns uses q = net_warp_bits(t); q = 0 is the
// identity.
C2_HD int net_warp_bits(int t) {
    const int q = t - 1 - 5;  // warp bits of a column of 2^(t-1) threads
    return q <= 0 ? 0 : q < 3 ? q : 3;
}
C2_HD uint32_t net_role(uint32_t tc, int q) {
    if (q == 0) return tc;
    const uint32_t m = (1u << q) - 1;
    return (tc & ~((m << 5) | 31u)) | ((tc & 31u) << q) | ((tc >> 5) & m);
}
// The bit of tc that holds bit c of j = net_role(tc, q).
C2_HD int net_thread_bit(int c, int q) { return c < q ? 5 + c : c < q + 5 ? c - q : c; }
// Whether stage b multiplies by its twiddle: not at stage 0, and not where
// the warp's twiddle is known to be 1.
C2_HD bool net_has_twiddle(uint32_t j, int b, int q) {
    return b > 0 && (b > q || (j & ((1u << b) - 1)) != 0);
}

// The slot thread j keeps in the exchange across bit c (the lower of the two
// stages' bits); the other slot is sent to and received from thread j ^ 2^c.
C2_HD int net_keep(uint32_t j, int c) { return (int)((j >> c) & 1); }

// Stage butterflies. DIF: (u, v) -> (u + v, (u - v) z); DIT: (u, v) ->
// (u + v z, u - v z); stage 0 has z = 1 and passes has_z = false. Z is the
// element type or a multiplier type that E * Z knows.
template <class E, class Z>
C2_HD void net_dif(E& u, E& v, const Z& z, bool has_z) {
    E s = u + v;
    E d = u - v;
    u = s;
    v = has_z ? d * z : d;
}
template <class E, class Z>
C2_HD void net_dit(E& u, E& v, const Z& z, bool has_z) {
    E y = has_z ? v * z : v;
    v = u - y;
    u = u + y;
}

}  // namespace c2
