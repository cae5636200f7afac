// Short Weierstrass (a = 0) point arithmetic for BLS12-381 G1 (over Fp) and
// G2 (over Fp2). Affine points use gnark-crypto's layout (X then Y) with the
// point at infinity stored as (0, 0). Accumulators use XYZZ coordinates
// (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2), infinity being ZZ = 0; formulas follow
// the Explicit-Formulas Database (add-2008-s, madd-2008-s, dbl-2008-s-1).
//
// With the lazy Fp (field.cuh, C2_FP_LAZY) coordinates may exceed p, and
// zero tests of the point at infinity stay exact all the same: an affine
// point comes from memory or to_affine, both canonical, or is one negated
// (y becomes 2p - y, which is 0 only for y = 0), so (0, 0) is its only
// infinity; an accumulator is at infinity only as made by inf() (ZZ
// exactly 0), since a sum's ZZ is a product of values non-zero modulo p and
// a doubling's is zero modulo p only for y = 0, which no point of G1 or G2
// has (their curves' groups have odd order). Values written back to memory
// that the host reads go through canonical() or to_affine.
#pragma once
#include "field.cuh"

namespace c2 {

template <class F>
struct affine_t {
    F x, y;
    C2_HD bool is_inf() const { return x.is_raw_zero() && y.is_raw_zero(); }
};

// Statement order of the mixed addition (xyzz_t::add_affine_in<Order>): all
// orders compute the same products on the same operands (identical results,
// checked by hosttest/ec_test.cc); they differ in how many values are live
// at once, which decides spills in the G2 bucket kernels (255 registers).
//   0: the original order;
//   1: zz*pp, p*pp, zzz*ppp, x*pp, y*ppp first (each input consumed early);
//   2: as 1 with x*pp before p*pp.
// ptxas -v, nvcc 11.8, sm_90 (make ecregs), k_run_tasks spill stores /
// registers: G2 portable 0: 1504 B, 1: 580 B, 2: 704 B; G2 FIELD=eo 0: 944 B,
// 1: 328 B, 2: 532 B; G1 portable 0: 168 regs, 1: 200; G1 FIELD=eo 0: 178,
// 1: 154, 2: 150. Defaults: G1 0, G2 1; FIELD=eo sets G1 1 (Makefile).
// Where y3 is one fused product (fused_y: G1), y * ppp is part of it, and
// orders 1 and 2 differ only in computing ppp or qq first.
// C2_EC_ORDER_G1 / C2_EC_ORDER_G2 override.
#ifndef C2_EC_ORDER_G1
#define C2_EC_ORDER_G1 0
#endif
#ifndef C2_EC_ORDER_G2
#define C2_EC_ORDER_G2 1
#endif
template <class F>
struct add_order {
    static constexpr int value = C2_EC_ORDER_G1;
};
template <>
struct add_order<fp2_t> {
    static constexpr int value = C2_EC_ORDER_G2;
};

// Whether the additions compute y3 = r (qq - x3) - y1 ppp as one fused
// product F::prod_diff (one Montgomery reduction instead of two) or as two
// products and a subtraction. Fp fuses: two products are 5-6 % slower in G1
// MSMs (BENCHMARKS.md, session 15). Fp2 does not: its fused form is one chain
// of four products, 10 % slower than two independent Fp2 products (session 13).
template <class F>
struct fused_y {
    static constexpr bool value = false;
};
template <class P>
struct fused_y<Fe<P>> {
    static constexpr bool value = true;
};

template <class F>
struct xyzz_t {
    F x, y, zz, zzz;

    C2_HD static xyzz_t inf() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
    C2_HD bool is_inf() const { return zz.is_raw_zero(); }
    // The coordinates in [0, p) (see field.cuh's lazy Fp).
    C2_HD xyzz_t canonical() const { return {x.canonical(), y.canonical(), zz.canonical(), zzz.canonical()}; }
    C2_HD static xyzz_t from_affine(const affine_t<F>& p) {
        if (p.is_inf()) return inf();
        return {p.x, p.y, F::one(), F::one()};
    }

    C2_NOINLINE xyzz_t dbl() const { return dbl_in(); }

    // dbl, inlined where it is called (add_in's equal-points case).
    C2_HD xyzz_t dbl_in() const {
        if (is_inf()) return *this;
        F u = y.dbl();
        F v = u.sqr();
        F w = u * v;
        F s = x * v;
        F x2 = x.sqr();
        F m = x2.dbl() + x2;
        xyzz_t r;
        r.x = m.sqr() - s.dbl();
        r.y = m * (s - r.x) - w * y;
        r.zz = v * zz;
        r.zzz = w * zzz;
        return r;
    }

    // Doubling of an affine point (ZZ = ZZZ = 1).
    C2_NOINLINE static xyzz_t dbl_affine(const affine_t<F>& p) {
        F u = p.y.dbl();
        F v = u.sqr();
        F w = u * v;
        F s = p.x * v;
        F x2 = p.x.sqr();
        F m = x2.dbl() + x2;
        xyzz_t r;
        r.x = m.sqr() - s.dbl();
        r.y = m * (s - r.x) - w * p.y;
        r.zz = v;
        r.zzz = w;
        return r;
    }

    // this + q for an affine q.
    C2_HD xyzz_t add_affine(const affine_t<F>& q) const {
        return add_affine_in<add_order<F>::value>(q);
    }

    // add_affine in statement order Order (see add_order).
    template <int Order>
    C2_HD xyzz_t add_affine_in(const affine_t<F>& q) const {
        if (q.is_inf()) return *this;
        if (is_inf()) return from_affine(q);
        F u2 = q.x * zz;
        F s2 = q.y * zzz;
        F p = u2 - x;
        F r = s2 - y;
        if (p.is_zero()) {
            if (r.is_zero()) return dbl_affine(q);
            return inf();
        }
        F pp = p.sqr();
        xyzz_t o;
        if constexpr (fused_y<F>::value) {
            // y3 = r (qq - x3) - y ppp as one fused product (Fe::prod_diff)
            if constexpr (Order == 0) {
                F ppp = p * pp;
                F qq = x * pp;
                o.x = r.sqr() - ppp - qq.dbl();
                o.y = F::prod_diff(r, qq - o.x, y, ppp);
                o.zz = zz * pp;
                o.zzz = zzz * ppp;
            } else {
                o.zz = zz * pp;
                F ppp, qq;
                if constexpr (Order == 1) {
                    ppp = p * pp;
                    o.zzz = zzz * ppp;
                    qq = x * pp;
                } else {
                    qq = x * pp;
                    ppp = p * pp;
                    o.zzz = zzz * ppp;
                }
                o.x = r.sqr() - ppp - qq.dbl();
                o.y = F::prod_diff(r, qq - o.x, y, ppp);
            }
        } else if constexpr (Order == 1) {
            o.zz = zz * pp;
            F ppp = p * pp;
            o.zzz = zzz * ppp;
            F qq = x * pp;
            F yppp = y * ppp;
            o.x = r.sqr() - ppp - qq.dbl();
            o.y = r * (qq - o.x) - yppp;
        } else if constexpr (Order == 2) {
            o.zz = zz * pp;
            F qq = x * pp;
            F ppp = p * pp;
            o.zzz = zzz * ppp;
            F yppp = y * ppp;
            o.x = r.sqr() - ppp - qq.dbl();
            o.y = r * (qq - o.x) - yppp;
        } else {
            F ppp = p * pp;
            F qq = x * pp;
            o.x = r.sqr() - ppp - qq.dbl();
            o.y = r * (qq - o.x) - y * ppp;
            o.zz = zz * pp;
            o.zzz = zzz * ppp;
        }
        return o;
    }

    // this + q for an XYZZ q: one call site of the formula per kernel.
    C2_NOINLINE xyzz_t add(const xyzz_t& q) const { return add_in(q); }

    // add, inlined where it is called: for loops whose additions are the
    // kernel's work (k_window_segments), where a call passes both points
    // through the stack (local memory).
    C2_HD xyzz_t add_in(const xyzz_t& q) const {
        if (q.is_inf()) return *this;
        if (is_inf()) return q;
        F u1 = x * q.zz;
        F u2 = q.x * zz;
        F s1 = y * q.zzz;
        F s2 = q.y * zzz;
        F p = u2 - u1;
        F r = s2 - s1;
        if (p.is_zero()) {
            if (r.is_zero()) return dbl_in();
            return inf();
        }
        F pp = p.sqr();
        F ppp = p * pp;
        F qq = u1 * pp;
        xyzz_t o;
        o.x = r.sqr() - ppp - qq.dbl();
        if constexpr (fused_y<F>::value) {
            o.y = F::prod_diff(r, qq - o.x, s1, ppp);
        } else {
            o.y = r * (qq - o.x) - s1 * ppp;
        }
        o.zz = zz * q.zz * pp;
        o.zzz = zzz * q.zzz * ppp;
        return o;
    }

    // Affine form (one inversion), canonical; infinity maps to (0, 0).
    C2_NOINLINE affine_t<F> to_affine() const {
        if (is_inf()) return {F::zero(), F::zero()};
        F izzz = zzz.inverse();
        F iz = izzz * zz;      // 1/z
        F izz = iz.sqr();      // 1/zz
        return {(x * izz).canonical(), (y * izzz).canonical()};
    }
};

using g1_affine = affine_t<fp_t>;
using g2_affine = affine_t<fp2_t>;
using g1_xyzz = xyzz_t<fp_t>;
using g2_xyzz = xyzz_t<fp2_t>;

}  // namespace c2
