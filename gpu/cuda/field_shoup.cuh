// Products by a multiplier known ahead (Shoup's method), for the NTT's
// twiddles: with w and its quotient wq ~ w 2^(32(N+1)) / p stored together,
// a*w mod p costs the high part of a*wq (its top columns only) and the low
// halves of a*w and q*(2^(32N) - p): for Fr 79 64-bit partial products, 22
// single words and q 2^32 - q on the ALU, against the 128 64-bit partial
// products of a Montgomery product (make sass: 186 IMAD slots against 246,
// 224 instructions against 248). a stays in Montgomery form (a = x R gives
// a w = (x w) R), so a twiddle's entry holds w itself, not w R.
//
// Bounds (K = 32(N+1), a < p, w < p, wq = floor(w 2^K / p) or one less,
// S = a wq):
//  - the partial products a_i wq_j with i + j < N - 1 and the low words of
//    those with i + j = N - 1 are left out: D < (2N - 1) 2^(32N) in all;
//  - a w / p - S / 2^K = a (w 2^K - wq p) / (p 2^K) < 2a / 2^K, so the
//    computed q = floor((S - D) / 2^K) is above a w / p - 2a / 2^K - D / 2^K
//    > a w / p - 1: q is floor(a w / p) or one less, and a w - q p is
//    a w mod p or that plus p, below 2p <= 2^(32N) (static_assert below):
//    computing it modulo 2^(32N) loses nothing, and one conditional
//    subtraction of p leaves it in [0, p).
// The "one less" is rare for random operands (a w mod p within about
// 2^-28 p of a multiple's edge); a = c / w for small c reaches it.
// hosttest/field_test.cc compares mul_shoup with the Montgomery product and
// with a big-integer reference, with shoup_quotient's quotients and with
// the exact one and one less, and checks those quotients against the
// big-integer identity w 2^K = wq p + rem.
#pragma once
#include <type_traits>
#include "field.cuh"

namespace c2 {

// A multiplier w in [0, p), plain (not in Montgomery form), with wq =
// floor(w 2^(32(N+1)) / p) or one less.
template <class P>
struct shoup_t {
    uint32_t w[P::N];
    uint32_t wq[P::N + 1];
};

// mu = floor(2^(32(2N+1)) / p), least significant word first (Fr only:
// shoup_quotient's one product).
template <class P>
struct shoup_params;
template <>
struct shoup_params<FrParams> {
    C2_HD static constexpr uint32_t mu(int i) {
        constexpr uint32_t m[10] = {0x101613ce, 0x0c0d6393, 0x42737a02, 0xbe4bad71, 0x65043eb4,
                                    0x07e08ed3, 0x38b5dcb7, 0xfede377c, 0x355094ed, 0x00000002};
        return m[i];
    }
    static constexpr int MU_WORDS = 10;
};

// wq = floor(w 2^(32(N+1)) / p) or one less, for w < p: words N .. 2N of
// w * mu (w mu / 2^(32N) is below w 2^(32(N+1)) / p by less than w / 2^(32N)
// < 1, and w mu < 2^(32(2N+1))). Portable code, for building tables.
template <class P>
C2_HD void shoup_quotient(uint32_t* wq, const uint32_t* w) {
    constexpr int N = P::N, M = shoup_params<P>::MU_WORDS;
    uint32_t t[N + M];
    for (int k = 0; k < N + M; k++) t[k] = 0;
    for (int i = 0; i < N; i++) {
        uint64_t c = 0;
        for (int j = 0; j < M; j++) {
            c += (uint64_t)w[i] * shoup_params<P>::mu(j) + t[i + j];
            t[i + j] = (uint32_t)c;
            c >>= 32;
        }
        t[i + M] = (uint32_t)c;
    }
    for (int k = 0; k <= N; k++) wq[k] = t[N + k];
}

// The entry for a value x in Montgomery form: w = x / R, its quotient.
template <class P>
C2_HD shoup_t<P> shoup_entry(const Fe<P>& x) {
    Fe<P> raw_one = Fe<P>::zero();
    raw_one.v[0] = 1;
    const Fe<P> w = x * raw_one;  // x R^-1: the plain value
    shoup_t<P> t;
    for (int k = 0; k < P::N; k++) t.w[k] = w.v[k];
    shoup_quotient<P>(t.wq, t.w);
    return t;
}

// Limb j of 2^(32N) - p (~p + 1).
template <class P>
C2_HD constexpr uint32_t shoup_negmod(int j) {
    uint32_t carry = 1, out = 0;
    for (int k = 0; k <= j; k++) {
        const uint64_t s = (uint64_t)(~P::mod(k)) + carry;
        out = (uint32_t)s;
        carry = (uint32_t)(s >> 32);
    }
    return out;
}

// f(std::integral_constant<int, k>) for k = B, B + S, ... below E: loop
// indices the compiler sees as constants.
template <int B, int E, int S = 1, class F>
C2_HD void shoup_for(F&& f) {
    if constexpr (B < E) {
        f(std::integral_constant<int, B>{});
        shoup_for<B + S, E, S>(f);
    }
}

// Adds the low halves of m*v_j (j = J, J + 2, ... while I + J < N) into h,
// whose pairs of words start at positions of I + J's parity, modulo
// 2^(32N): one carry chain, the top word's carry dropped. v.at<j>() is limb
// j; with Neg, v's limbs are constants and the zero ones at the chain's
// start are skipped.
template <int N, int I, int J, bool First, bool Neg, class V>
C2_HD void shoup_low_chain(uint32_t* h, uint32_t m, const V& v, carry_t& f) {
    if constexpr (I + J < N) {
        constexpr int pos = I + J;
        if constexpr (Neg && First && v.template at<J>() == 0) {
            shoup_low_chain<N, I, J + 2, true, Neg>(h, m, v, f);
        } else {
            const uint32_t vj = v.template at<J>();
            if constexpr (pos + 1 < N) {
                if constexpr (First)
                    mad_lo_cc(h[pos], m, vj, h[pos], f);
                else
                    madc_lo_cc(h[pos], m, vj, h[pos], f);
                if constexpr (pos + 1 == N - 1)
                    madc_hi_wrap(h[pos + 1], m, vj, h[pos + 1], f);
                else
                    madc_hi_cc(h[pos + 1], m, vj, h[pos + 1], f);
            } else if constexpr (First) {
                h[pos] += m * vj;
            } else {
                madc_lo(h[pos], m, vj, h[pos], f);
            }
            shoup_low_chain<N, I, J + 2, false, Neg>(h, m, v, f);
        }
    }
}

// The multiplier's limbs (runtime) and those of 2^(32N) - p (constants).
template <int N>
struct shoup_limbs {
    const uint32_t* w;
    template <int J>
    C2_HD uint32_t at() const { return w[J]; }
};
template <class P>
struct shoup_neg_limbs {
    // limb 0 of 2^(32N) - p is 2^32 - 1 (p is 1 mod 2^32): its products
    // q_i (2^32 - 1) are q 2^32 - q in all, added by mul_shoup on the ALU
    static_assert(P::mod(0) == 1, "limb 0 of 2^(32N) - p taken as 2^32 - 1");
    template <int J>
    C2_HD static constexpr uint32_t at() { return J == 0 ? 0 : shoup_negmod<P>(J); }
};

// a * w mod p for a in [0, p), fully reduced (see the bounds above).
template <class P>
C2_HD Fe<P> mul_shoup(const Fe<P>& a, const shoup_t<P>& t) {
    constexpr int N = P::N;
    static_assert(2 * ((uint64_t)P::mod(N - 1) + 1) <= (1ull << 32), "mul_shoup needs 2p <= 2^(32N)");
    carry_t f;
    // The multiplier in registers: operands read from memory inside the
    // carry chains keep ptxas from fusing their products (IMAD.WIDE).
    uint32_t w[N], wq[N + 1];
#pragma unroll
    for (int k = 0; k < N; k++) w[k] = t.w[k];
#pragma unroll
    for (int k = 0; k <= N; k++) wq[k] = t.wq[k];

    // q: words N+1 .. 2N of the kept partial products of a*wq, in two
    // halves by word pair: x holds the pairs that start at N, N+2, ...;
    // y the high word of a_i wq_(N-1-i) at word N, then the pairs that start
    // at N+1, N+3, ... (arrays indexed by word position).
    uint32_t x[2 * N + 1], y[2 * N + 1];
#pragma unroll
    for (int k = N; k <= 2 * N; k++) x[k] = y[k] = 0;
    shoup_for<0, N>([&](auto ic) {
        constexpr int i = decltype(ic)::value;
        const uint32_t ai = a.v[i];
        // y: u odd, wq_(N-i+u) at words N+u, N+u+1
        mad_hi_cc(y[N], ai, wq[N - 1 - i], y[N], f);
        shoup_for<1, i + 1, 2>([&](auto uc) {
            constexpr int u = decltype(uc)::value;
            madc_lo_cc(y[N + u], ai, wq[N - i + u], y[N + u], f);
            if constexpr (N + u + 1 == 2 * N)
                madc_hi(y[N + u + 1], ai, wq[N - i + u], y[N + u + 1], f);
            else
                madc_hi_cc(y[N + u + 1], ai, wq[N - i + u], y[N + u + 1], f);
        });
        constexpr int ytop = i >= 1 ? N + 1 + ((i - 1) & ~1) + 1 : N;  // last word of y's chain
        if constexpr (ytop < 2 * N) addc(y[ytop + 1], y[ytop + 1], 0, f);
        // x: u even
        shoup_for<0, i + 1, 2>([&](auto uc) {
            constexpr int u = decltype(uc)::value;
            if constexpr (u == 0)
                mad_lo_cc(x[N], ai, wq[N - i], x[N], f);
            else
                madc_lo_cc(x[N + u], ai, wq[N - i + u], x[N + u], f);
            if constexpr (N + u + 1 == 2 * N)
                madc_hi(x[N + u + 1], ai, wq[N - i + u], x[N + u + 1], f);
            else
                madc_hi_cc(x[N + u + 1], ai, wq[N - i + u], x[N + u + 1], f);
        });
        constexpr int xtop = N + (i & ~1) + 1;
        if constexpr (xtop < 2 * N) addc(x[xtop + 1], x[xtop + 1], 0, f);
    });
    uint32_t q[N], w0;
    add_cc(w0, x[N], y[N], f);
#pragma unroll
    for (int k = 0; k < N - 1; k++) addc_cc(q[k], x[N + 1 + k], y[N + 1 + k], f);
    addc(q[N - 1], x[2 * N], y[2 * N], f);  // a wq < 2^(32(2N+1)): nothing above word 2N
    (void)w0;

    // a*w + q*(2^(32N) - p) modulo 2^(32N), in two halves: e holds the
    // pairs that start at even words, o those at odd words.
    uint32_t e[N], o[N];
#pragma unroll
    for (int k = 0; k < N; k++) e[k] = o[k] = 0;
    const shoup_limbs<N> wv{w};
    const shoup_neg_limbs<P> nv{};
    shoup_for<0, N>([&](auto ic) {
        constexpr int i = decltype(ic)::value;
        uint32_t* h0 = (i & 1) ? o : e;  // pairs starting at word i's parity
        uint32_t* h1 = (i & 1) ? e : o;
        shoup_low_chain<N, i, 0, true, false>(h0, a.v[i], wv, f);
        shoup_low_chain<N, i, 1, true, false>(h1, a.v[i], wv, f);
        shoup_low_chain<N, i, 0, true, true>(h0, q[i], nv, f);
        shoup_low_chain<N, i, 1, true, true>(h1, q[i], nv, f);
    });
    uint32_t r[N];
    r[0] = e[0];
    add_cc(r[1], e[1], o[1], f);
#pragma unroll
    for (int k = 2; k < N - 1; k++) addc_cc(r[k], e[k], o[k], f);
    addc_wrap(r[N - 1], e[N - 1], o[N - 1], f);
    // + q 2^32 - q: the products by limb 0 of 2^(32N) - p
    add_cc(r[1], r[1], q[0], f);
#pragma unroll
    for (int k = 2; k < N - 1; k++) addc_cc(r[k], r[k], q[k - 1], f);
    addc_wrap(r[N - 1], r[N - 1], q[N - 2], f);
    sub_cc(r[0], r[0], q[0], f);
#pragma unroll
    for (int k = 1; k < N - 1; k++) subc_cc(r[k], r[k], q[k], f);
    subc(r[N - 1], r[N - 1], q[N - 1], f);
    return Fe<P>::eo_reduce_once(r, f);  // r < 2p
}

}  // namespace c2
