// Montgomery arithmetic for the BLS12-381 base field Fp (381 bits) and
// scalar field Fr (255 bits), on 32-bit limbs.
//
// The limb layout equals gnark-crypto's fp.Element ([6]uint64) and
// fr.Element ([4]uint64) read as little-endian 32-bit words, and the
// Montgomery radix is the same (2^384 for Fp, 2^256 for Fr), so values cross
// the Go boundary without any conversion. Every function keeps its output
// fully reduced (in [0, p)), which is what gnark-crypto expects as well,
// except in the lazy Fp of C2_FP_LAZY (below).
//
// Lazy Fp (C2_FP_LAZY, with C2_FIELD_EO; the Makefile's default): an Fp value is any integer in
// [0, 2p) congruent to it. A product takes operands in [0, 2p) and returns
// its CIOS result without the final subtraction (below 2p because
// 8p < 2^384); a sum or difference is brought back into [0, 2p) by one
// conditional subtraction or addition of 2p. is_zero and == compare modulo
// p; canonical() returns the value in [0, p), which is what a value leaving
// the device must be. Fr is never lazy (its 4r exceeds 2^256).
#pragma once
#include <stdint.h>

#ifdef __CUDACC__
#define C2_HD __host__ __device__ __forceinline__
#define C2_NOINLINE __host__ __device__ __noinline__
#else
#define C2_HD inline
#define C2_NOINLINE
#endif

namespace c2 {

struct FpParams {
    static constexpr int N = 12;
#ifdef C2_FP_LAZY
    static constexpr bool LAZY = true;
#else
    static constexpr bool LAZY = false;
#endif
    static constexpr uint32_t INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    C2_HD static constexpr uint32_t mod(int i) {
        constexpr uint32_t m[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe,
                                    0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84,
                                    0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
        return m[i];
    }
    C2_HD static uint32_t one(int i) {  // 2^384 mod p
        constexpr uint32_t m[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b,
                                    0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853,
                                    0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
        return m[i];
    }
};

struct FrParams {
    static constexpr int N = 8;
    static constexpr bool LAZY = false;
    static constexpr uint32_t INV = 0xffffffffu;  // -r^-1 mod 2^32
    C2_HD static constexpr uint32_t mod(int i) {
        constexpr uint32_t m[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                   0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
        return m[i];
    }
    C2_HD static uint32_t one(int i) {  // 2^256 mod r
        constexpr uint32_t m[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                   0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
        return m[i];
    }
};

// Carry-chain primitives of the even/odd field arithmetic (C2_FIELD_EO:
// mul_eo, sqr_eo, add/sub/neg_eo). On the device they are single PTX
// instructions whose carry flag flows from one statement to the next; on the
// host they are emulated with cf so that the same code can be checked against
// the portable product (hosttest/).
struct carry_t {
    uint32_t cf = 0;
    bool sub = false;  // host: the flag was last set by a subtraction (unused on the device)
};
#if defined(__CUDA_ARCH__)
// One PTX instruction each: d = a op b, or d = (a*b).lo/hi + c; ".cc" sets
// the carry flag and the "c" forms (addc, madc, subc) read it.
#define C2_PTX_AB(fn, op)                                                  \
    C2_HD void fn(uint32_t& d, uint32_t a, uint32_t b, carry_t&) {         \
        asm volatile(op " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));       \
    }
#define C2_PTX_ABC(fn, op)                                                         \
    C2_HD void fn(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t&) {     \
        asm volatile(op " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));   \
    }
C2_PTX_ABC(mad_lo_cc, "mad.lo.cc.u32")
C2_PTX_ABC(madc_lo_cc, "madc.lo.cc.u32")
C2_PTX_ABC(madc_hi_cc, "madc.hi.cc.u32")
C2_PTX_ABC(madc_hi, "madc.hi.u32")
C2_PTX_ABC(mad_hi_cc, "mad.hi.cc.u32")
C2_PTX_ABC(madc_lo, "madc.lo.u32")
C2_PTX_ABC(madc_hi_wrap, "madc.hi.u32")
C2_PTX_AB(add_cc, "add.cc.u32")
C2_PTX_AB(addc_cc, "addc.cc.u32")
C2_PTX_AB(addc, "addc.u32")
C2_PTX_AB(sub_cc, "sub.cc.u32")
C2_PTX_AB(subc_cc, "subc.cc.u32")
C2_PTX_AB(subc, "subc.u32")
C2_PTX_AB(addc_wrap, "addc.u32")
#undef C2_PTX_AB
#undef C2_PTX_ABC
C2_HD void note_kept_carry(uint32_t) {}
#else
// The device's carry flag after a subtraction is not a borrow an addition
// can take (nor the reverse): the host counts every chain step that reads a
// flag of the other kind, so hosttest fails on chains the device would
// compute differently.
inline uint64_t mixed_carries = 0;
inline void read_add_flag(const carry_t& f) { mixed_carries += f.sub; }
inline void read_sub_flag(const carry_t& f) { mixed_carries += !f.sub; }
inline void mad_lo_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
    f.sub = false;
}
inline void madc_lo_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    read_add_flag(f);
    uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c + f.cf;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
}
inline void madc_hi_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    read_add_flag(f);
    uint64_t s = (((uint64_t)a * b) >> 32) + c + f.cf;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
}
inline void mad_hi_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    uint64_t s = (((uint64_t)a * b) >> 32) + c;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
    f.sub = false;
}
// madc_lo, madc_hi_wrap and addc_wrap drop their carry out on purpose
// (arithmetic modulo 2^(32N)), so the host does not count it.
inline void madc_lo(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    read_add_flag(f);
    d = (uint32_t)((uint64_t)a * b) + c + f.cf;
}
inline void madc_hi_wrap(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    read_add_flag(f);
    d = (uint32_t)(((uint64_t)a * b) >> 32) + c + f.cf;
}
inline void addc_wrap(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    read_add_flag(f);
    d = a + b + f.cf;
}
inline void add_cc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    uint64_t s = (uint64_t)a + b;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
    f.sub = false;
}
inline void addc_cc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    read_add_flag(f);
    uint64_t s = (uint64_t)a + b + f.cf;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
}
// addc and madc.hi drop their carry out; the host counts the dropped carries
// that were not zero, so hosttest can check the bounds that make dropping
// them safe.
inline uint64_t dropped_carries = 0;
inline void addc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    read_add_flag(f);
    uint64_t s = (uint64_t)a + b + f.cf;
    d = (uint32_t)s;
    dropped_carries += s >> 32;
}
inline void madc_hi(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    read_add_flag(f);
    uint64_t s = (((uint64_t)a * b) >> 32) + c + f.cf;
    d = (uint32_t)s;
    dropped_carries += s >> 32;
}
// PTX subtraction: the carry flag holds the borrow (1 when the result wrapped).
inline void sub_cc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    uint64_t s = (uint64_t)a - b;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 63);
    f.sub = true;
}
inline void subc_cc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    read_sub_flag(f);
    uint64_t s = (uint64_t)a - b - f.cf;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 63);
}
inline void subc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    read_sub_flag(f);
    d = a - b - f.cf;
}
// The host counts the carries above word N that prod_sum_eo keeps ("wide"),
// so hosttest can show that its checks reach them.
inline uint64_t kept_carries = 0;
inline void note_kept_carry(uint32_t z) { kept_carries += z; }
#endif

// Field element with N 32-bit limbs in Montgomery form.
template <class P>
struct Fe {
    static constexpr int N = P::N;
    uint32_t v[N];
#ifdef C2_FIELD_EO
    static constexpr bool LAZY = P::LAZY;
#else
    static constexpr bool LAZY = false;  // the portable arithmetic is always fully reduced
#endif
    // Lazy bounds: a product of operands below 2p stays below
    // p + 4p^2/R < 2p, and a fused a*b + c*d below p + 8p^2/R < 2p, when
    // 8p < R, i.e. 8 (p's top limb + 1) <= 2^32.
    static_assert(!LAZY || 8 * ((uint64_t)P::mod(N - 1) + 1) <= (1ull << 32), "lazy reduction needs 8p < R");

    // Limb i of 2p (2p < 2^(32N) for both moduli).
    C2_HD static constexpr uint32_t mod2(int i) {
        return (P::mod(i) << 1) | (i > 0 ? P::mod(i - 1) >> 31 : 0);
    }
    // Limb i of the bound that add, sub and neg keep their results under: 2p
    // when lazy, else p.
    C2_HD static constexpr uint32_t bound(int i) { return LAZY ? mod2(i) : P::mod(i); }

    C2_HD static Fe zero() {
        Fe r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    C2_HD static Fe one() {
        Fe r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = P::one(i);
        return r;
    }
    // Whether every limb is 0: the value's only representation of zero
    // unless it is lazy (where p is the other one). Callers that know how
    // their zero was made (the point at infinity) test this alone.
    C2_HD bool is_raw_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    // Whether the value is 0 modulo p.
    C2_HD bool is_zero() const {
        if constexpr (LAZY) {
            uint32_t acc = 0;
#pragma unroll
            for (int i = 0; i < N; i++) acc |= v[i] ^ P::mod(i);
            return is_raw_zero() || acc == 0;
        } else {
            return is_raw_zero();
        }
    }
    // The value in [0, p): itself unless lazy.
    C2_HD Fe canonical() const {
        if constexpr (LAZY) {
            carry_t f;
            return eo_reduce_once(v, f);
        } else {
            return *this;
        }
    }
    // Equality modulo p.
    C2_HD bool operator==(const Fe& o) const {
        const Fe a = canonical(), b = o.canonical();
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= a.v[i] ^ b.v[i];
        return acc == 0;
    }
    C2_HD bool operator!=(const Fe& o) const { return !(*this == o); }

    // r = x - p if x >= p (x < 2p given as N limbs plus a carry bit).
    C2_HD static Fe reduce_once(const uint32_t x[N], uint32_t carry) {
        Fe r;
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)x[i] - P::mod(i) - borrow;
            r.v[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        // keep x when x < p, i.e. when the subtraction borrowed past the carry
        bool keep = borrow > carry;
        if (keep) {
#pragma unroll
            for (int i = 0; i < N; i++) r.v[i] = x[i];
        }
        return r;
    }

    C2_HD friend Fe operator+(const Fe& a, const Fe& b) {
#ifdef C2_FIELD_EO
        return add_eo(a, b);
#else
        return add_portable(a, b);
#endif
    }
    C2_HD friend Fe operator-(const Fe& a, const Fe& b) {
#ifdef C2_FIELD_EO
        return sub_eo(a, b);
#else
        return sub_portable(a, b);
#endif
    }
    C2_HD Fe neg() const {
#ifdef C2_FIELD_EO
        return neg_eo(*this);
#else
        return neg_portable(*this);
#endif
    }
    C2_HD static Fe add_portable(const Fe& a, const Fe& b) {
        uint32_t s[N];
        uint64_t c = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            c += (uint64_t)a.v[i] + b.v[i];
            s[i] = (uint32_t)c;
            c >>= 32;
        }
        return reduce_once(s, (uint32_t)c);
    }
    C2_HD static Fe sub_portable(const Fe& a, const Fe& b) {
        Fe r;
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)a.v[i] - b.v[i] - borrow;
            r.v[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        if (borrow) {
            uint64_t c = 0;
#pragma unroll
            for (int i = 0; i < N; i++) {
                c += (uint64_t)r.v[i] + P::mod(i);
                r.v[i] = (uint32_t)c;
                c >>= 32;
            }
        }
        return r;
    }
    C2_HD static Fe neg_portable(const Fe& a) {
        if (a.is_zero()) return a;
        Fe r;
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)P::mod(i) - a.v[i] - borrow;
            r.v[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        return r;
    }

    // Addition, subtraction and negation on the carry primitives (FIELD=eo),
    // results below bound(): p, or 2p when lazy. a + b < 2 bound() < 2^(32N)
    // (4p < 2^384 for Fp), so the sum needs no carry word (the host counts a
    // dropped carry, see addc).
    C2_HD static Fe add_eo(const Fe& a, const Fe& b) {
        carry_t f;
        uint32_t r[N];
        add_cc(r[0], a.v[0], b.v[0], f);
#pragma unroll
        for (int k = 1; k < N - 1; k++) addc_cc(r[k], a.v[k], b.v[k], f);
        addc(r[N - 1], a.v[N - 1], b.v[N - 1], f);
        return eo_reduce_once<LAZY>(r, f);
    }
    // a - b, plus bound() when it borrowed (the carry out of that addition is
    // the wrap back and is not used).
    C2_HD static Fe sub_eo(const Fe& a, const Fe& b) {
        carry_t f;
        uint32_t r[N], mask;
        sub_cc(r[0], a.v[0], b.v[0], f);
#pragma unroll
        for (int k = 1; k < N; k++) subc_cc(r[k], a.v[k], b.v[k], f);
        subc(mask, 0, 0, f);  // all ones when a < b
        Fe o;
        add_cc(o.v[0], r[0], bound(0) & mask, f);
#pragma unroll
        for (int k = 1; k < N; k++) addc_cc(o.v[k], r[k], bound(k) & mask, f);
        return o;
    }
    // bound() - a, or 0 for a = 0.
    C2_HD static Fe neg_eo(const Fe& a) {
        carry_t f;
        uint32_t r[N], nz = 0;
        sub_cc(r[0], bound(0), a.v[0], f);
#pragma unroll
        for (int k = 1; k < N; k++) subc_cc(r[k], bound(k), a.v[k], f);
#pragma unroll
        for (int k = 0; k < N; k++) nz |= a.v[k];
        Fe o;
#pragma unroll
        for (int k = 0; k < N; k++) o.v[k] = nz ? r[k] : 0;
        return o;
    }
    C2_HD Fe dbl() const { return *this + *this; }

    // Montgomery product a*b/R mod p.
    C2_HD friend Fe operator*(const Fe& a, const Fe& b) {
#ifdef C2_FIELD_EO
        return mul_eo(a, b);
#else
        return mul_portable(a, b);
#endif
    }

    // (a*b + c*d)/R mod p and (a*b - c*d)/R mod p (R the Montgomery radix),
    // fully reduced. Under C2_FIELD_EO one interleaved Montgomery reduction
    // serves both products (prod_sum_eo); otherwise they are two products.
    C2_HD static Fe prod_sum(const Fe& a, const Fe& b, const Fe& c, const Fe& d) {
#ifdef C2_FIELD_EO
        return prod_sum_eo(a, b, c, d);
#else
        return a * b + c * d;
#endif
    }
    C2_HD static Fe prod_diff(const Fe& a, const Fe& b, const Fe& c, const Fe& d) {
#ifdef C2_FIELD_EO
        return prod_sum_eo(a, b, c.neg(), d);
#else
        return a * b - c * d;
#endif
    }

    // CIOS on 32-bit limbs, portable C++ (64-bit accumulators).
    C2_HD static Fe mul_portable(const Fe& a, const Fe& b) {
        uint32_t t[N + 2];
#pragma unroll
        for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t c = 0;
            const uint32_t bi = b.v[i];
#pragma unroll
            for (int j = 0; j < N; j++) {
                c += (uint64_t)a.v[j] * bi + t[j];
                t[j] = (uint32_t)c;
                c >>= 32;
            }
            c += t[N];
            t[N] = (uint32_t)c;
            t[N + 1] = (uint32_t)(c >> 32);
            const uint32_t m = t[0] * P::INV;
            c = (uint64_t)m * P::mod(0) + t[0];
            c >>= 32;
#pragma unroll
            for (int j = 1; j < N; j++) {
                c += (uint64_t)m * P::mod(j) + t[j];
                t[j - 1] = (uint32_t)c;
                c >>= 32;
            }
            c += t[N];
            t[N - 1] = (uint32_t)c;
            t[N] = t[N + 1] + (uint32_t)(c >> 32);
        }
        return reduce_once(t, t[N]);
    }

    // ---- Even/odd Montgomery product (C2_FIELD_EO) ----
    // The running CIOS value is kept as two N-word halves, x (words 0..N-1)
    // and y (words 1..N, i.e. one word up), value x + 2^32 y. In a row
    // x*w (w one 32-bit word), the 64-bit products of the even limbs of x
    // fill disjoint word pairs (j, j+1) of one half and those of the odd limbs
    // disjoint pairs of the other, so each half takes one carry chain of
    // mad.lo.cc/madc.hi.cc pairs on the same operands, which ptxas fuses into
    // one IMAD.WIDE.U32.X each (carry in and out). Word pairs stay aligned
    // across rows: the division by 2^32 swaps the roles of the halves and
    // moves x two words down inside the next row's odd-limb chain, so no
    // instruction is spent on shifting.
    //
    // Bounds: with a, b < p the CIOS value before each division is below
    // 2p + 2^33 p < 2^(32(N+1)) for both moduli, so y never exceeds N words
    // and the carry out of a chain that ends at y's top word is zero; x's
    // carries go into y[N-1] (the same word N). With lazy a < 2p (Fp) it is
    // below 3p + 3p 2^32, still below 2^(32(N+1)) as 3p < R.

    // The first row of a product, a*w split by limb parity: x[j], x[j+1] hold
    // the low and high words of a_j*w for even j, y[j], y[j+1] those of
    // a_(j+1)*w.
    C2_HD static void eo_first_row(uint32_t* x, uint32_t* y, const Fe& a, uint32_t w) {
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            uint64_t pe = (uint64_t)a.v[j] * w, po = (uint64_t)a.v[j + 1] * w;
            x[j] = (uint32_t)pe;
            x[j + 1] = (uint32_t)(pe >> 32);
            y[j] = (uint32_t)po;
            y[j + 1] = (uint32_t)(po >> 32);
        }
    }

    // Adds the even limbs of u times w into t in place (u_j*w at t[j], t[j+1]
    // for even j), opening a carry chain that it leaves in f.
    template <class U>
    C2_HD static void eo_add_even(uint32_t* t, U ux, uint32_t w, carry_t& f) {
        mad_lo_cc(t[0], ux(0), w, t[0], f);
        madc_hi_cc(t[1], ux(0), w, t[1], f);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            madc_lo_cc(t[j], ux(j), w, t[j], f);
            madc_hi_cc(t[j + 1], ux(j), w, t[j + 1], f);
        }
    }

    // Adds u*w (u's limbs given by ux, w one word) in place: the odd limbs of
    // u into y, the even ones into x. The carry out of word N (y's top word)
    // is dropped (the caller bounds the value below 2^(32(N+1))), or with
    // Wide returned in z (the caller bounds the value below 2^(32(N+1)+1)).
    template <bool Wide = false, class U>
    C2_HD static void eo_add_row(uint32_t* x, uint32_t* y, U ux, uint32_t w, uint32_t& z, carry_t& f) {
        mad_lo_cc(y[0], ux(1), w, y[0], f);
        madc_hi_cc(y[1], ux(1), w, y[1], f);
#pragma unroll
        for (int j = 3; j < N - 1; j += 2) {
            madc_lo_cc(y[j - 1], ux(j), w, y[j - 1], f);
            madc_hi_cc(y[j], ux(j), w, y[j], f);
        }
        madc_lo_cc(y[N - 2], ux(N - 1), w, y[N - 2], f);
        if constexpr (Wide) {
            madc_hi_cc(y[N - 1], ux(N - 1), w, y[N - 1], f);
            addc(z, 0, 0, f);
        } else {
            madc_hi(y[N - 1], ux(N - 1), w, y[N - 1], f);
        }
        eo_add_even(x, ux, w, f);
        if constexpr (Wide) {
            addc_cc(y[N - 1], y[N - 1], 0, f);
            addc(z, z, 0, f);
            note_kept_carry(z);
        } else {
            addc(y[N - 1], y[N - 1], 0, f);
        }
    }

    // Adds m*p with m = x[0] * (-p^-1): even limbs of p into x, odd ones into
    // y; x[0] becomes 0. Wide keeps the carry out of word N in z (see
    // eo_add_row).
    template <bool Wide = false>
    C2_HD static void eo_reduce(uint32_t* x, uint32_t* y, uint32_t& z, carry_t& f) {
        uint32_t m = x[0] * P::INV;
#if defined(__CUDA_ARCH__)
        // With -p^-1 = 2^32 - 1 (Fr) m is -x[0], and ptxas then takes each
        // low half m*p_j as x[0]*(-p_j), splitting every IMAD.WIDE.X of the
        // row into an IMAD.X and an IMAD.HI.X (+24 instructions a product,
        // make sass). An identity byte permutation hides where m comes from.
        if constexpr (P::INV == 0xffffffffu) asm("prmt.b32 %0, %1, 0, 0x3210;" : "=r"(m) : "r"(m));
#endif
        eo_add_row<Wide>(x, y, [](int j) { return P::mod(j); }, m, z, f);
    }
    C2_HD static void eo_reduce(uint32_t* x, uint32_t* y, carry_t& f) {
        uint32_t z = 0;
        eo_reduce(x, y, z, f);
    }

    // Divides the value (x[0] == 0) by 2^32 and adds u*w (u's limbs given by
    // ux, which may be a or p) and top * 2^(32N) (a word above the value's
    // N + 1 words before the division): afterwards x is again the even half
    // (word 0 up) and y the odd half.
    // wf maps the new word 0 to w (a row of a product ignores it; a row of a
    // plain reduction returns word0 * (-p^-1)).
    template <class U, class W>
    C2_HD static void eo_shift_row(uint32_t* x, uint32_t* y, U ux, W wf, carry_t& f, uint32_t top = 0) {
        // new word 0 = y[0] + x[1]; its carry enters word 1, the first word
        // of the new odd half, which is x >> 64 plus the odd limbs of u*w.
        add_cc(y[0], y[0], x[1], f);
        const uint32_t w = wf(y[0]);
#pragma unroll
        for (int j = 1; j < N - 1; j += 2) {
            madc_lo_cc(x[j - 1], ux(j), w, x[j + 1], f);
            madc_hi_cc(x[j], ux(j), w, x[j + 2], f);
        }
        madc_lo_cc(x[N - 2], ux(N - 1), w, 0, f);
        madc_hi(x[N - 1], ux(N - 1), w, top, f);
        // the old y (words 0..N-1 now) takes the even limbs
        eo_add_even(y, ux, w, f);
        addc(x[N - 1], x[N - 1], 0, f);
#pragma unroll
        for (int k = 0; k < N; k++) {
            uint32_t t = x[k];
            x[k] = y[k];
            y[k] = t;
        }
    }

    // (x >> 32) + y (x[0] == 0), a value below 2p: a product's result
    // (eo_result).
    C2_HD static Fe eo_final(const uint32_t* x, const uint32_t* y, carry_t& f) {
        uint32_t r[N];
        add_cc(r[0], x[1], y[0], f);
#pragma unroll
        for (int k = 1; k < N - 1; k++) addc_cc(r[k], x[k + 1], y[k], f);
        addc(r[N - 1], y[N - 1], 0, f);
        return eo_result(r, f);
    }

    // A product's result r < 2p: fully reduced, or as it is when lazy.
    C2_HD static Fe eo_result(const uint32_t* r, carry_t& f) {
        if constexpr (LAZY) {
            Fe o;
#pragma unroll
            for (int k = 0; k < N; k++) o.v[k] = r[k];
            return o;
        } else {
            return eo_reduce_once(r, f);
        }
    }

    // r < 2m (N words) reduced to [0, m), m = p, or 2p with Twice.
    template <bool Twice = false>
    C2_HD static Fe eo_reduce_once(const uint32_t* r, carry_t& f) {
        constexpr auto m = [](int k) { return Twice ? mod2(k) : P::mod(k); };
        uint32_t s[N], keep;
        sub_cc(s[0], r[0], m(0), f);
#pragma unroll
        for (int k = 1; k < N; k++) subc_cc(s[k], r[k], m(k), f);
        subc(keep, 0, 0, f);  // all ones when r < m
        Fe o;
#pragma unroll
        for (int k = 0; k < N; k++) o.v[k] = keep ? r[k] : s[k];
        return o;
    }

    C2_HD static Fe mul_eo(const Fe& a, const Fe& b) {
        uint32_t x[N], y[N];
        carry_t f;
        auto ax = [&](int j) { return a.v[j]; };
        eo_first_row(x, y, a, b.v[0]);
        eo_reduce(x, y, f);
#pragma unroll
        for (int i = 1; i < N; i++) {
            const uint32_t bi = b.v[i];
            eo_shift_row(x, y, ax, [&](uint32_t) { return bi; }, f);
            eo_reduce(x, y, f);
        }
        return eo_final(x, y, f);
    }

    // (a*b + c*d)/R mod p in one Montgomery reduction (R = 2^(32N)): each row
    // adds a*b_i (with the division by 2^32 of eo_shift_row), then c*d_i
    // (eo_add_row), then m*p, so one m and one m*p serve both products.
    //
    // Bounds, for a, b, c, d in [0, p) and t = p's top limb + 1 (p < t 2^(32(N-1))),
    // t <= 2^31 - 1 (p < R/2 - R/2^32; Fp: t ~ 0.10 2^32, Fr: t ~ 0.45 2^32):
    //  - the value T after each row's division is below 3p: T' 2^32 = T + a b_i
    //    + c d_i + m p < 3p + 3p (2^32 - 1) = 3p 2^32;
    //  - inside a row, T + a b_i + c d_i < 3p + 2p (2^32 - 1) < (2^33 + 1) p
    //    < 2^32 R, so these additions never carry out of word N;
    //  - m p brings the value below 3p 2^32 < 2^(32(N+1)+1). When 3t <= 2^32
    //    (Fp) that is below 2^(32(N+1)) and nothing leaves word N, as in mul_eo.
    //    Otherwise (Fr: "wide") the carry out of word N is kept in z and added
    //    to word N of the next row after its division (eo_shift_row's top);
    //  - after the last row T R = a b + c d + M p with M < R, so T < 2p^2/R + p
    //    < 2p (p < R/2): the last row stays below 2p 2^32 < 2^(32(N+1)) (its
    //    reduction needs no z), and eo_final's single subtraction of p leaves
    //    the result in [0, p).
    // Lazy operands (a, c < 2p; Fp only) change 3p to 5p above: T < 5p, and
    // m p leaves nothing above word N while 5t <= 2^32 (Fp: 5t ~ 0.51 2^32);
    // the result is below 8p^2/R + p < 2p and is returned as it is.
    // By these bounds every carry that a chain drops (addc, madc_hi) is zero;
    // the host emulation counts the non-zero ones (hosttest/field_test.cc).
    C2_HD static Fe prod_sum_eo(const Fe& a, const Fe& b, const Fe& c, const Fe& d) {
        static_assert((uint64_t)P::mod(N - 1) + 1 <= 0x7fffffffu, "prod_sum_eo needs p < R/2 - R/2^32");
        constexpr bool wide = (LAZY ? 5 : 3) * ((uint64_t)P::mod(N - 1) + 1) > (1ull << 32);
        uint32_t x[N], y[N], z = 0;
        carry_t f;
        auto ax = [&](int j) { return a.v[j]; };
        auto cx = [&](int j) { return c.v[j]; };
        eo_first_row(x, y, a, b.v[0]);
        eo_add_row(x, y, cx, d.v[0], z, f);
        eo_reduce<wide>(x, y, z, f);
#pragma unroll
        for (int i = 1; i < N; i++) {
            const uint32_t bi = b.v[i];
            eo_shift_row(x, y, ax, [&](uint32_t) { return bi; }, f, z);
            eo_add_row(x, y, cx, d.v[i], z, f);
            if (i < N - 1) {
                eo_reduce<wide>(x, y, z, f);
            } else {
                eo_reduce(x, y, f);
            }
        }
        return eo_final(x, y, f);
    }

    // One chain adding the products a[i] * a[j] (j = j0, j0 + 2, ... < N) to
    // the word pairs (s, s+1), (s+2, s+3), ... of h; top is the highest
    // index of h written so far. A chain that ends on a fresh word cannot
    // carry out; otherwise its carry goes to the fresh word above.
    C2_HD static void sq_chain(uint32_t* h, int& top, int s, const Fe& a, int i, int j0, carry_t& f) {
        if (j0 >= N) return;
        int k = s;
        mad_lo_cc(h[k], a.v[j0], a.v[i], h[k], f);
#pragma unroll
        for (int j = j0; j < N; j += 2, k += 2) {
            if (j != j0) madc_lo_cc(h[k], a.v[j], a.v[i], h[k], f);
            if (j + 2 < N) {
                madc_hi_cc(h[k + 1], a.v[j], a.v[i], h[k + 1], f);
            } else if (k + 1 > top) {
                madc_hi(h[k + 1], a.v[j], a.v[i], h[k + 1], f);
                top = k + 1;
            } else {
                madc_hi_cc(h[k + 1], a.v[j], a.v[i], h[k + 1], f);
                addc(h[k + 2], h[k + 2], 0, f);  // h[k + 2] is fresh (k + 2 > top)
                top = k + 2;
            }
        }
    }

    // Montgomery square: the off-diagonal products a[i] a[j] (i < j) once,
    // in two halves by the parity of i + j (e: pairs at even words, o: pairs
    // at odd words, o[k] = word k + 1), merged, doubled, plus the diagonal
    // squares; then the low N words are reduced with the rows of mul_eo
    // (products replaced by m * p) and the high N words added. The result is
    // below p + a^2/R: below 2p for a < p, and for a lazy a < 2p as 4p < R.
    C2_HD static Fe sqr_eo(const Fe& a) {
        uint32_t e[2 * N], o[2 * N];
        carry_t f;
#pragma unroll
        for (int k = 0; k < 2 * N; k++) e[k] = o[k] = 0;
        int etop = -1, otop = -1;
        // row 0: disjoint products, no additions
#pragma unroll
        for (int j = 1; j < N; j += 2) {
            uint64_t po = (uint64_t)a.v[j] * a.v[0];
            o[j - 1] = (uint32_t)po;  // words j, j + 1
            o[j] = (uint32_t)(po >> 32);
            otop = j;
        }
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            uint64_t pe = (uint64_t)a.v[j] * a.v[0];
            e[j] = (uint32_t)pe;
            e[j + 1] = (uint32_t)(pe >> 32);
            etop = j + 1;
        }
#pragma unroll
        for (int i = 1; i < N - 1; i++) {
            sq_chain(o, otop, 2 * i, a, i, i + 1, f);  // words 2i+1, ...: o index 2i
            sq_chain(e, etop, 2 * i + 2, a, i, i + 2, f);
        }
        // S = e + 2^32 o (words 2..2N-1), then 2S
        add_cc(e[1], e[1], o[0], f);
#pragma unroll
        for (int k = 2; k < 2 * N - 1; k++) addc_cc(e[k], e[k], o[k - 1], f);
        addc(e[2 * N - 1], e[2 * N - 1], 0, f);
        add_cc(e[1], e[1], e[1], f);
#pragma unroll
        for (int k = 2; k < 2 * N - 1; k++) addc_cc(e[k], e[k], e[k], f);
        addc(e[2 * N - 1], e[2 * N - 1], e[2 * N - 1], f);
        // + sum a[i]^2 2^(64 i)
        mad_lo_cc(e[0], a.v[0], a.v[0], e[0], f);
        madc_hi_cc(e[1], a.v[0], a.v[0], e[1], f);
#pragma unroll
        for (int i = 1; i < N - 1; i++) {
            madc_lo_cc(e[2 * i], a.v[i], a.v[i], e[2 * i], f);
            madc_hi_cc(e[2 * i + 1], a.v[i], a.v[i], e[2 * i + 1], f);
        }
        madc_lo_cc(e[2 * N - 2], a.v[N - 1], a.v[N - 1], e[2 * N - 2], f);
        madc_hi(e[2 * N - 1], a.v[N - 1], a.v[N - 1], e[2 * N - 1], f);
        // reduce the low half: x = e[0..N-1], y = 0
        uint32_t x[N], y[N];
#pragma unroll
        for (int k = 0; k < N; k++) x[k] = e[k], y[k] = 0;
        auto px = [](int j) { return P::mod(j); };
        auto mf = [](uint32_t w0) { return w0 * P::INV; };
        eo_reduce(x, y, f);
#pragma unroll
        for (int i = 1; i < N; i++) eo_shift_row(x, y, px, mf, f);
        // (x >> 32) + y + high half, below 2p
        uint32_t r[N];
        add_cc(r[0], x[1], y[0], f);
#pragma unroll
        for (int k = 1; k < N - 1; k++) addc_cc(r[k], x[k + 1], y[k], f);
        addc(r[N - 1], y[N - 1], 0, f);
        add_cc(r[0], r[0], e[N], f);
#pragma unroll
        for (int k = 1; k < N - 1; k++) addc_cc(r[k], r[k], e[N + k], f);
        addc(r[N - 1], r[N - 1], e[2 * N - 1], f);
        return eo_result(r, f);
    }

    C2_HD Fe sqr() const {
#ifdef C2_FIELD_EO
        return sqr_eo(*this);
#else
        return *this * *this;
#endif
    }

    // Leaves Montgomery form: returns a/R (the plain integer value).
    C2_HD Fe from_mont() const {
        Fe o = zero();
        o.v[0] = 1;
        return *this * o;
    }

    // this^e for a 64-bit exponent.
    C2_HD Fe pow(uint64_t e) const {
        Fe r = one(), b = *this;
        while (e) {
            if (e & 1) r = r * b;
            b = b.sqr();
            e >>= 1;
        }
        return r;
    }
    // this^e for an exponent given as N 32-bit little-endian limbs.
    C2_HD Fe pow_limbs(const uint32_t* e, int nlimbs) const {
        Fe r = one();
        for (int i = nlimbs - 1; i >= 0; i--) {
            for (int b = 31; b >= 0; b--) {
                r = r.sqr();
                if ((e[i] >> b) & 1) r = r * *this;
            }
        }
        return r;
    }
    // Multiplicative inverse by Fermat (p-2 exponent); 0 maps to 0.
    C2_HD Fe inverse() const {
        uint32_t e[N];
        uint64_t borrow = 2;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)P::mod(i) - borrow;
            e[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        return pow_limbs(e, N);
    }
};

using fp_t = Fe<FpParams>;
using fr_t = Fe<FrParams>;

// Fp2 = Fp[u]/(u^2+1) over the Fp B (fp_t; the host tests also build it
// over a fully reduced Fp beside the lazy one), laid out as gnark-crypto's
// E2{A0, A1}.
template <class B>
struct fp2_base {
    B a0, a1;
    C2_HD static fp2_base zero() { return {B::zero(), B::zero()}; }
    C2_HD static fp2_base one() { return {B::one(), B::zero()}; }
    C2_HD bool is_zero() const { return a0.is_zero() && a1.is_zero(); }
    C2_HD bool is_raw_zero() const { return a0.is_raw_zero() && a1.is_raw_zero(); }
    C2_HD fp2_base canonical() const { return {a0.canonical(), a1.canonical()}; }
    C2_HD bool operator==(const fp2_base& o) const { return a0 == o.a0 && a1 == o.a1; }
    C2_HD bool operator!=(const fp2_base& o) const { return !(*this == o); }
    C2_HD friend fp2_base operator+(const fp2_base& x, const fp2_base& y) { return {x.a0 + y.a0, x.a1 + y.a1}; }
    C2_HD friend fp2_base operator-(const fp2_base& x, const fp2_base& y) { return {x.a0 - y.a0, x.a1 - y.a1}; }
    C2_HD fp2_base neg() const { return {a0.neg(), a1.neg()}; }
    C2_HD fp2_base dbl() const { return {a0.dbl(), a1.dbl()}; }
    // Under C2_FIELD_EO two fused products (Fe::prod_diff, Fe::prod_sum): 4
    // multiplications and 2 Montgomery reductions, no additions of operands
    // (G2 MSM 2^24 6 % faster than Karatsuba on the H200, BENCHMARKS.md
    // session 13); otherwise Karatsuba, 3 Fp products.
    C2_HD friend fp2_base operator*(const fp2_base& x, const fp2_base& y) {
#ifdef C2_FIELD_EO
        return {B::prod_diff(x.a0, y.a0, x.a1, y.a1), B::prod_sum(x.a0, y.a1, x.a1, y.a0)};
#else
        B t0 = x.a0 * y.a0;
        B t1 = x.a1 * y.a1;
        B t2 = (x.a0 + x.a1) * (y.a0 + y.a1);
        return {t0 - t1, t2 - t0 - t1};
#endif
    }
    // (a0+a1 u)^2 = (a0+a1)(a0-a1) + 2 a0 a1 u: 2 Fp products.
    C2_HD fp2_base sqr() const {
        B t = a0 * a1;
        return {(a0 + a1) * (a0 - a1), t.dbl()};
    }
    C2_HD fp2_base inverse() const {
        B n = (a0.sqr() + a1.sqr()).inverse();
        return {a0 * n, (a1 * n).neg()};
    }
};
using fp2_t = fp2_base<fp_t>;

}  // namespace c2
