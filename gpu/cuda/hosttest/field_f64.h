// Experiment: the Fp Montgomery product on the FP64 pipe.
//
// mul_f64(a, b) returns the same value as fp_t's product, a*b/2^384 mod p,
// fully reduced, from and to the same 12-word Montgomery form; inside it
// works on 8 limbs of 48 bits held in doubles (R = 2^384 = 2^(8*48), so the
// Montgomery form is unchanged). Every floating-point operation below is
// exact; the proof is in the bounds at each step.
//
// One limb product x*y (x, y < 2^48 integers, so x*y < 2^96) is split into
// its part above and below 2^48 without integer instructions:
//   S' = fma_rz(x, y, S)   S is a column's "high" accumulator, a double in
//                          [2^100, 2^101) whose last bit weighs 2^48; rounding
//                          toward zero adds floor(x*y / 2^48) * 2^48 to it;
//   D  = S' - S            that high part, exact (both in one binade);
//   lo = fma(x, y, -D)     x*y mod 2^48, exact;
// lo goes into the column's "low" accumulator L (a plain double integer).
// Products are summed column by column (product scanning) together with
// the Montgomery quotient digits q_i*p_j, so only three accumulators live at a
// time. Bounds (each term < 2^48): a column's high part gathers at most 15
// terms (< 2^52: S stays in its binade), its low part at most 15 terms plus a
// carry below 2^48 + 33, so the column value V = high + low < 2^53 is exact.
//
// Counted work per product: 120 limb products * 4 FP64 operations, 11 per
// column below 8 and 7 above, 16 input conversions: about 640 FP64
// operations, against mul_eo's 435 IMAD instructions (582 pipe slots). On the H200 it
// runs at 0.82x mul_eo's rate, and chains of both products side by side run at
// the harmonic mean of the two: the FP64 and IMAD work does not overlap
// (BENCHMARKS.md, session 10). The library does not use it.
#pragma once
#include <stdint.h>
#include <string.h>
#include "../field.cuh"
#ifndef __CUDA_ARCH__
#include <cfenv>
#include <cmath>
#endif

namespace c2 {
namespace f64 {

#ifdef __CUDA_ARCH__
__device__ __forceinline__ double fma_rz(double x, double y, double z) { return __fma_rz(x, y, z); }
__device__ __forceinline__ double fma_rn(double x, double y, double z) { return __fma_rn(x, y, z); }
__device__ __forceinline__ double add_rn(double x, double y) { return __dadd_rn(x, y); }
__device__ __forceinline__ double add_rz(double x, double y) { return __dadd_rz(x, y); }
__device__ __forceinline__ double mul_rn(double x, double y) { return __dmul_rn(x, y); }
__device__ __forceinline__ double from_words(uint32_t hi, uint32_t lo) { return __hiloint2double((int)hi, (int)lo); }
__device__ __forceinline__ uint32_t lo_word(double d) { return (uint32_t)__double2loint(d); }
__device__ __forceinline__ uint32_t hi_word(double d) { return (uint32_t)__double2hiint(d); }
__device__ __forceinline__ uint32_t shr_pair(uint32_t lo, uint32_t hi, int s) { return __funnelshift_r(lo, hi, s); }
#else
// The host emulates the device's directed rounding through the C floating-point
// environment (build with -frounding-math).
inline double fma_rz(double x, double y, double z) {
    std::fesetround(FE_TOWARDZERO);
    volatile double r = std::fma(x, y, z);
    std::fesetround(FE_TONEAREST);
    return r;
}
inline double add_rz(double x, double y) {
    std::fesetround(FE_TOWARDZERO);
    volatile double r = x + y;
    std::fesetround(FE_TONEAREST);
    return r;
}
inline double fma_rn(double x, double y, double z) { return std::fma(x, y, z); }
inline double add_rn(double x, double y) { return x + y; }
inline double mul_rn(double x, double y) { return x * y; }
inline double from_words(uint32_t hi, uint32_t lo) {
    uint64_t b = (uint64_t)hi << 32 | lo;
    double d;
    memcpy(&d, &b, 8);
    return d;
}
inline uint64_t bits(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}
inline uint32_t lo_word(double d) { return (uint32_t)bits(d); }
inline uint32_t hi_word(double d) { return (uint32_t)(bits(d) >> 32); }
inline uint32_t shr_pair(uint32_t lo, uint32_t hi, int s) { return (uint32_t)(((uint64_t)hi << 32 | lo) >> s); }
#endif

constexpr double TWO52 = 4503599627370496.0;               // 2^52
constexpr double TWO100 = 1267650600228229401496703205376.0;  // 2^100
constexpr double INV48 = 1.0 / 281474976710656.0;          // 2^-48
constexpr uint32_t EXP52 = 0x43300000u;                    // high word of 2^52

// p in 48-bit limbs and -p^-1 mod 2^48.
C2_HD double p48(int j) {
    constexpr double m[8] = {(double)0xffffffffaaabull, (double)0xb153ffffb9feull, (double)0xf6241eabfffeull,
                             (double)0x6730d2a0f6b0ull, (double)0x4b84f38512bfull, (double)0x434bacd76477ull,
                             (double)0xe69a4b1ba7b6ull, (double)0x1a0111ea397full};
    return m[j];
}
constexpr double PINV48 = (double)0xfffcfffcfffdull;

// a's 12 words as 8 limbs of 48 bits: 2^52 + limb is assembled bit-wise,
// then 2^52 is subtracted (exact).
C2_HD void to_limbs(const fp_t& a, double l[8]) {
#pragma unroll
    for (int m = 0; m < 4; m++) {
        uint32_t w0 = a.v[3 * m], w1 = a.v[3 * m + 1], w2 = a.v[3 * m + 2];
        l[2 * m] = add_rn(from_words(EXP52 | (w1 & 0xffffu), w0), -TWO52);
        l[2 * m + 1] = add_rn(from_words(EXP52 | (w2 >> 16), shr_pair(w1, w2, 16)), -TWO52);
    }
}

// Adds x*y into a column: its high part into S (offset form), its low part into L.
C2_HD void mac(double x, double y, double& S, double& L) {
    double s = fma_rz(x, y, S);
    double d = add_rn(s, -S);
    L = add_rn(L, fma_rn(x, y, -d));
    S = s;
}

// a*b/2^384 mod p, fully reduced; a, b < p.
C2_HD fp_t mul_f64(const fp_t& a, const fp_t& b) {
    double x[8], y[8], q[8];
    to_limbs(a, x);
    to_limbs(b, y);
    uint32_t lo32[8], hi16[8];
    double S = TWO100, L = 0;  // column k's accumulators
#pragma unroll
    for (int k = 0; k < 16; k++) {
        double Sn = TWO100;  // column k+1's high accumulator
#pragma unroll
        for (int i = 0; i < 8; i++) {
            int j = k - i;
            if (j >= 0 && j < 8) mac(x[i], y[j], Sn, L);
        }
#pragma unroll
        for (int i = 0; i < 8; i++) {
            int j = k - i;
            if (i < k && j >= 1 && j < 8) mac(q[i], p48(j), Sn, L);
        }
        // V = high + low of column k, < 2^53; split V = Dv + Vlo, Vlo < 2^48.
        double V = add_rn(fma_rn(S, INV48, -TWO52), L);
        double Dv = add_rn(add_rz(V, TWO100), -TWO100);
        double Vlo = add_rn(V, -Dv);
        if (k < 8) {
            // q_k = Vlo * (-p^-1) mod 2^48; Vlo + q_k p_0 is a multiple of 2^48.
            double t = add_rn(fma_rz(Vlo, PINV48, TWO100), -TWO100);
            q[k] = fma_rn(Vlo, PINV48, -t);
            double T = fma_rn(q[k], p48(0), Vlo);
            L = mul_rn(add_rn(T, Dv), INV48);
        } else {
            double m = add_rn(Vlo, TWO52);
            lo32[k - 8] = lo_word(m);
            hi16[k - 8] = hi_word(m) & 0xffffu;
            L = mul_rn(Dv, INV48);
        }
        S = Sn;
    }
    uint32_t w[12];
#pragma unroll
    for (int m = 0; m < 4; m++) {
        uint32_t el = lo32[2 * m], eh = hi16[2 * m], ol = lo32[2 * m + 1], oh = hi16[2 * m + 1];
        w[3 * m] = el;
        w[3 * m + 1] = eh | ol << 16;
        w[3 * m + 2] = ol >> 16 | oh << 16;
    }
    carry_t f;
    return fp_t::eo_reduce_once(w, f);
}

}  // namespace f64
}  // namespace c2
