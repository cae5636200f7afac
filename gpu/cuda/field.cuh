// Montgomery arithmetic for the BLS12-381 base field Fp (381 bits) and
// scalar field Fr (255 bits), on 32-bit limbs.
//
// The limb layout equals gnark-crypto's fp.Element ([6]uint64) and
// fr.Element ([4]uint64) read as little-endian 32-bit words, and the
// Montgomery radix is the same (2^384 for Fp, 2^256 for Fr), so values cross
// the Go boundary without any conversion. Every function keeps its output
// fully reduced (in [0, p)), which is what gnark-crypto expects as well.
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
    static constexpr uint32_t INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    C2_HD static uint32_t mod(int i) {
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
    static constexpr uint32_t INV = 0xffffffffu;  // -r^-1 mod 2^32
    C2_HD static uint32_t mod(int i) {
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

// Carry-chain primitives for the PTX Montgomery product (C2_FIELD_PTX, an
// opt-in experiment: on the H200 it moved carry work from IMAD.X to IADD3 and
// ran 13-30% slower than the portable product, so it is off by default). On
// the device they are single PTX instructions whose carry flag flows from one
// statement to the next; on the host they are emulated with cf so that the
// same code can be checked against the portable product (hosttest/).
struct carry_t {
    uint32_t cf = 0;
};
#if defined(__CUDA_ARCH__)
C2_HD void mad_lo_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t&) {
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
}
C2_HD void madc_lo_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t&) {
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
}
C2_HD void madc_hi_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t&) {
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
}
C2_HD void add_cc(uint32_t& d, uint32_t a, uint32_t b, carry_t&) {
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
}
C2_HD void addc_cc(uint32_t& d, uint32_t a, uint32_t b, carry_t&) {
    asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
}
C2_HD void addc(uint32_t& d, uint32_t a, uint32_t b, carry_t&) {
    asm volatile("addc.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
}
#else
inline void mad_lo_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
}
inline void madc_lo_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c + f.cf;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
}
inline void madc_hi_cc(uint32_t& d, uint32_t a, uint32_t b, uint32_t c, carry_t& f) {
    uint64_t s = (((uint64_t)a * b) >> 32) + c + f.cf;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
}
inline void add_cc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    uint64_t s = (uint64_t)a + b;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
}
inline void addc_cc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) {
    uint64_t s = (uint64_t)a + b + f.cf;
    d = (uint32_t)s;
    f.cf = (uint32_t)(s >> 32);
}
inline void addc(uint32_t& d, uint32_t a, uint32_t b, carry_t& f) { d = a + b + f.cf; }
#endif

// t[1..N+1] += u[0..N-1] (u shifted up one limb), carry into t[N+1].
template <int N>
C2_HD void add_shifted(uint32_t* t, const uint32_t* u, carry_t& f) {
    add_cc(t[1], t[1], u[0], f);
#pragma unroll
    for (int k = 2; k <= N; k++) addc_cc(t[k], t[k], u[k - 1], f);
    addc(t[N + 1], t[N + 1], 0, f);
}

// t[0..N+1] += x * y: the 64-bit products of the even limbs of x are disjoint
// words of one N-limb number, those of the odd limbs of another one limb up;
// both are added with carry chains.
template <int N, class X>
C2_HD void mac_row_wide(uint32_t* t, X x, uint32_t y, carry_t& f) {
    uint32_t ue[N], uo[N];
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        uint64_t pe = (uint64_t)x(j) * y;
        uint64_t po = (uint64_t)x(j + 1) * y;
        ue[j] = (uint32_t)pe;
        ue[j + 1] = (uint32_t)(pe >> 32);
        uo[j] = (uint32_t)po;
        uo[j + 1] = (uint32_t)(po >> 32);
    }
    add_cc(t[0], t[0], ue[0], f);
#pragma unroll
    for (int k = 1; k < N; k++) addc_cc(t[k], t[k], ue[k], f);
    addc_cc(t[N], t[N], 0, f);
    addc(t[N + 1], t[N + 1], 0, f);
    add_shifted<N>(t, uo, f);
}

// t[0..N+1] += x * y: even limbs of x through one mad chain into t, odd limbs
// as disjoint 64-bit products in u, added shifted by one limb.
template <int N, class X>
C2_HD void mac_row(uint32_t* t, X x, uint32_t y, carry_t& f) {
    uint32_t u[N];
    mad_lo_cc(t[0], x(0), y, t[0], f);
    madc_hi_cc(t[1], x(0), y, t[1], f);
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        madc_lo_cc(t[j], x(j), y, t[j], f);
        madc_hi_cc(t[j + 1], x(j), y, t[j + 1], f);
    }
    addc_cc(t[N], t[N], 0, f);
    addc(t[N + 1], t[N + 1], 0, f);
#pragma unroll
    for (int j = 1; j < N; j += 2) {
        uint64_t p = (uint64_t)x(j) * y;
        u[j - 1] = (uint32_t)p;
        u[j] = (uint32_t)(p >> 32);
    }
    add_shifted<N>(t, u, f);
}

// Field element with N 32-bit limbs in Montgomery form.
template <class P>
struct Fe {
    static constexpr int N = P::N;
    uint32_t v[N];

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
    C2_HD bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    C2_HD bool operator==(const Fe& o) const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
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
    C2_HD friend Fe operator-(const Fe& a, const Fe& b) {
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
    C2_HD Fe neg() const {
        if (is_zero()) return *this;
        Fe r;
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)P::mod(i) - v[i] - borrow;
            r.v[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        return r;
    }
    C2_HD Fe dbl() const { return *this + *this; }

    // Montgomery product a*b/R mod p.
    C2_HD friend Fe operator*(const Fe& a, const Fe& b) {
#ifdef C2_FIELD_PTX
        return mul_chain(a, b);
#else
        return mul_portable(a, b);
#endif
    }

    // CIOS on 32-bit limbs with PTX carry chains (see mac_row).
    C2_HD static Fe mul_chain(const Fe& a, const Fe& b) {
        uint32_t t[N + 2];
#pragma unroll
        for (int i = 0; i < N + 2; i++) t[i] = 0;
        carry_t f;
#pragma unroll
        for (int i = 0; i < N; i++) {
#ifdef C2_FIELD_WIDE
            mac_row_wide<N>(t, [&](int j) { return a.v[j]; }, b.v[i], f);
            const uint32_t m = t[0] * P::INV;
            mac_row_wide<N>(t, [](int j) { return P::mod(j); }, m, f);
#else
            mac_row<N>(t, [&](int j) { return a.v[j]; }, b.v[i], f);
            const uint32_t m = t[0] * P::INV;
            mac_row<N>(t, [](int j) { return P::mod(j); }, m, f);
#endif
            // t[0] is now zero: divide by 2^32
#pragma unroll
            for (int k = 0; k <= N; k++) t[k] = t[k + 1];
            t[N + 1] = 0;
        }
        return reduce_once(t, t[N]);
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
    C2_HD Fe sqr() const { return *this * *this; }

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

// Fp2 = Fp[u]/(u^2+1), laid out as gnark-crypto's E2{A0, A1}.
struct fp2_t {
    fp_t a0, a1;
    C2_HD static fp2_t zero() { return {fp_t::zero(), fp_t::zero()}; }
    C2_HD static fp2_t one() { return {fp_t::one(), fp_t::zero()}; }
    C2_HD bool is_zero() const { return a0.is_zero() && a1.is_zero(); }
    C2_HD bool operator==(const fp2_t& o) const { return a0 == o.a0 && a1 == o.a1; }
    C2_HD bool operator!=(const fp2_t& o) const { return !(*this == o); }
    C2_HD friend fp2_t operator+(const fp2_t& x, const fp2_t& y) { return {x.a0 + y.a0, x.a1 + y.a1}; }
    C2_HD friend fp2_t operator-(const fp2_t& x, const fp2_t& y) { return {x.a0 - y.a0, x.a1 - y.a1}; }
    C2_HD fp2_t neg() const { return {a0.neg(), a1.neg()}; }
    C2_HD fp2_t dbl() const { return {a0.dbl(), a1.dbl()}; }
    // Karatsuba: 3 Fp products.
    C2_HD friend fp2_t operator*(const fp2_t& x, const fp2_t& y) {
        fp_t t0 = x.a0 * y.a0;
        fp_t t1 = x.a1 * y.a1;
        fp_t t2 = (x.a0 + x.a1) * (y.a0 + y.a1);
        return {t0 - t1, t2 - t0 - t1};
    }
    // (a0+a1 u)^2 = (a0+a1)(a0-a1) + 2 a0 a1 u: 2 Fp products.
    C2_HD fp2_t sqr() const {
        fp_t t = a0 * a1;
        return {(a0 + a1) * (a0 - a1), t.dbl()};
    }
    C2_HD fp2_t inverse() const {
        fp_t n = (a0.sqr() + a1.sqr()).inverse();
        return {a0 * n, (a1 * n).neg()};
    }
};

}  // namespace c2
