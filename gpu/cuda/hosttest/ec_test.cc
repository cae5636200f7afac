// Host check that the statement orders of the mixed addition (ec.cuh,
// xyzz_t::add_affine_in<0/1/2>) and the XYZZ addition (xyzz_t::add) give
// exactly the results of the reference formulas below (madd-2008-s and
// add-2008-s with y3 = r (qq - x3) - y1 ppp as two products and a
// subtraction; ec.cuh fuses them with Fe::prod_diff for G1), for G1 (Fp) and
// G2 (Fp2) coordinates: random accumulators and points (the formulas are
// field arithmetic, so points need not be on the curve) and the special cases
// (either operand at infinity, equal points -> doubling, opposite points ->
// infinity, y1 = 0). Built with C2_FP_LAZY (ec_test_lazy) it also checks G1's
// additions in the lazy Fp against the fully reduced one (check_lazy).
// Build and run: make -C gpu/cuda hosttest
#include <stdio.h>
#include <stdlib.h>
#include <random>
#include "../ec.cuh"
#include "field_gen.h"

using namespace c2;

static std::mt19937_64 rng;

static void random_el(fp_t& x) { x = gen<FpParams>{rng}.uniform(); }
static void random_el(fp2_t& x) {
    random_el(x.a0);
    random_el(x.a1);
}

template <class F>
static bool same(const xyzz_t<F>& a, const xyzz_t<F>& b) {
    return a.x == b.x && a.y == b.y && a.zz == b.zz && a.zzz == b.zzz;
}

// madd-2008-s: two products for y3.
template <class F>
static xyzz_t<F> ref_add_affine(const xyzz_t<F>& a, const affine_t<F>& q) {
    if (q.is_inf()) return a;
    if (a.is_inf()) return xyzz_t<F>::from_affine(q);
    F u2 = q.x * a.zz, s2 = q.y * a.zzz;
    F p = u2 - a.x, r = s2 - a.y;
    if (p.is_zero()) return r.is_zero() ? xyzz_t<F>::dbl_affine(q) : xyzz_t<F>::inf();
    F pp = p.sqr(), ppp = p * pp, qq = a.x * pp;
    xyzz_t<F> o;
    o.x = r.sqr() - ppp - qq.dbl();
    F t = qq - o.x;
    F ry = r * t, yp = a.y * ppp;
    o.y = ry - yp;
    o.zz = a.zz * pp;
    o.zzz = a.zzz * ppp;
    return o;
}

// add-2008-s: two products for y3.
template <class F>
static xyzz_t<F> ref_add(const xyzz_t<F>& a, const xyzz_t<F>& q) {
    if (q.is_inf()) return a;
    if (a.is_inf()) return q;
    F u1 = a.x * q.zz, u2 = q.x * a.zz, s1 = a.y * q.zzz, s2 = q.y * a.zzz;
    F p = u2 - u1, r = s2 - s1;
    if (p.is_zero()) return r.is_zero() ? a.dbl() : xyzz_t<F>::inf();
    F pp = p.sqr(), ppp = p * pp, qq = u1 * pp;
    xyzz_t<F> o;
    o.x = r.sqr() - ppp - qq.dbl();
    F t = qq - o.x;
    F ry = r * t, sp = s1 * ppp;
    o.y = ry - sp;
    o.zz = a.zz * q.zz * pp;
    o.zzz = a.zzz * q.zzz * ppp;
    return o;
}

template <class F>
static int check(const char* name, int iters) {
    int bad = 0, dbl = 0, inf = 0;
    for (int it = 0; it < iters; it++) {
        xyzz_t<F> a;
        affine_t<F> q;
        random_el(a.x), random_el(a.y), random_el(a.zz), random_el(a.zzz);
        random_el(q.x), random_el(q.y);
        switch (it % 8) {
        case 0: q = {F::zero(), F::zero()}; break;     // q at infinity
        case 1: a.zz = F::zero(); break;                // accumulator at infinity
        case 2:                                         // q equal to a: doubling
        case 3:                                         // q = -a: infinity
            q.x = a.x * a.zz.inverse();
            q.y = a.y * a.zzz.inverse();
            if (it % 8 == 3) q.y = q.y.neg();
            break;
        case 4: a.y = F::zero(); break;  // -y = 0 in the fused product
        default: break;
        }
        xyzz_t<F> ref = ref_add_affine(a, q);
        xyzz_t<F> r0 = a.template add_affine_in<0>(q);
        xyzz_t<F> r1 = a.template add_affine_in<1>(q);
        xyzz_t<F> r2 = a.template add_affine_in<2>(q);
        if ((!same(r0, ref) || !same(r1, ref) || !same(r2, ref)) && bad++ < 5)
            printf("%s: an order differs from the reference at iteration %d\n", name, it);
        if (it % 8 == 2 && !r0.is_inf()) dbl++;
        if (it % 8 == 3 && r0.is_inf()) inf++;
    }
    printf("%s: %d mixed additions in each of 3 orders (%d doublings, %d cancellations), %d differences\n", name,
           iters, dbl, inf, bad);
    // the special cases must have been reached
    if (dbl != (iters + 5) / 8 || inf != (iters + 4) / 8) bad++;
    return bad;
}

// xyzz_t::add against ref_add: random operands, either one at infinity, the
// same point in other coordinates (q = (l^2 x, l^3 y, l^2 zz, l^3 zzz):
// doubling) and its negation (cancellation).
template <class F>
static int check_add(const char* name, int iters) {
    int bad = 0, dbl = 0, inf = 0;
    for (int it = 0; it < iters; it++) {
        xyzz_t<F> a, q;
        random_el(a.x), random_el(a.y), random_el(a.zz), random_el(a.zzz);
        random_el(q.x), random_el(q.y), random_el(q.zz), random_el(q.zzz);
        switch (it % 8) {
        case 0: q.zz = F::zero(); break;
        case 1: a.zz = F::zero(); break;
        case 2:
        case 3: {
            F l;
            random_el(l);
            F l2 = l.sqr(), l3 = l2 * l;
            q = {a.x * l2, a.y * l3, a.zz * l2, a.zzz * l3};
            if (it % 8 == 3) q.y = q.y.neg();
            break;
        }
        case 4: a.y = F::zero(); break;  // -s1 = 0 in the fused product
        default: break;
        }
        xyzz_t<F> ref = ref_add(a, q);
        xyzz_t<F> r = a.add(q);
        if (!same(r, ref) && bad++ < 5) printf("%s: add differs from the reference at iteration %d\n", name, it);
        if (it % 8 == 2 && !r.is_inf()) dbl++;
        if (it % 8 == 3 && r.is_inf()) inf++;
    }
    printf("%s: %d XYZZ additions (%d doublings, %d cancellations), %d differences\n", name, iters, dbl, inf, bad);
    if (dbl != (iters + 5) / 8 || inf != (iters + 4) / 8) bad++;
    return bad;
}

// fp2_t's product (fused products under C2_FIELD_EO, else Karatsuba) and
// square against the schoolbook formulas in Fp: random operands, operands
// with a zero or equal half, and operands near p.
static int check_fp2(int iters) {
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        fp2_t x, y;
        random_el(x), random_el(y);
        switch (it % 6) {
        case 0: x.a1 = fp_t::zero(); break;
        case 1: y.a0 = fp_t::zero(); break;
        case 2: y = x; break;
        case 3: x.a0 = x.a1 = fp_t::one().neg(); break;  // p - R mod p: large limbs
        default: break;
        }
        fp2_t want{x.a0 * y.a0 - x.a1 * y.a1, x.a0 * y.a1 + x.a1 * y.a0};
        fp2_t sq{x.a0 * x.a0 - x.a1 * x.a1, (x.a0 * x.a1).dbl()};
        if ((x * y != want || x.sqr() != sq) && bad++ < 5) printf("fp2: product differs at iteration %d\n", it);
    }
    printf("fp2: %d products and squares, %d differences\n", iters, bad);
    return bad;
}

#ifdef C2_FP_LAZY
// The fully reduced Fp beside the lazy one of this build.
struct FpStrict : FpParams {
    static constexpr bool LAZY = false;
};
using fs_t = Fe<FpStrict>;

static fs_t strict(const fp_t& x) {
    fs_t r;
    for (int i = 0; i < fp_t::N; i++) r.v[i] = x.v[i];
    return r;
}
static xyzz_t<fs_t> strict(const xyzz_t<fp_t>& a) { return {strict(a.x), strict(a.y), strict(a.zz), strict(a.zzz)}; }

// r's coordinates are below 2p and congruent to s's (fully reduced).
static bool congruent(const xyzz_t<fp_t>& r, const xyzz_t<fs_t>& s) {
    const fp_t* rc[4] = {&r.x, &r.y, &r.zz, &r.zzz};
    const fs_t* sc[4] = {&s.x, &s.y, &s.zz, &s.zzz};
    for (int k = 0; k < 4; k++) {
        if (!gen<FpParams>::in_bound(*rc[k])) return false;
        const fp_t c = rc[k]->canonical();
        for (int i = 0; i < fp_t::N; i++)
            if (c.v[i] != sc[k]->v[i]) return false;
    }
    return true;
}

// G1's mixed and XYZZ additions and doublings in the lazy Fp against the
// same formulas in the fully reduced one: operands with coordinates x or
// x + p (an affine point's infinity and an accumulator's ZZ = 0 stay 0),
// results congruent coordinate by coordinate and below 2p, chained so that
// lazy results feed the next addition; equal points (doubling) and opposite
// ones (infinity) included.
static int check_lazy(int iters) {
    gen<FpParams> g{rng};
    int bad = 0, dbl = 0, inf = 0;
    xyzz_t<fp_t> acc = xyzz_t<fp_t>::inf();
    xyzz_t<fs_t> sacc = xyzz_t<fs_t>::inf();
    for (int it = 0; it < iters; it++) {
        if (it % 64 == 0) {  // a fresh random accumulator, lifted
            fp_t c[4];
            for (fp_t& x : c) x = g.uniform();
            acc = {g.lift(c[0]), g.lift(c[1]), g.lift(c[2]), g.lift(c[3])};
            sacc = {strict(c[0]), strict(c[1]), strict(c[2]), strict(c[3])};
        }
        g1_affine q{g.uniform(), g.uniform()};
        const bool at_inf = acc.is_inf();
        switch (it % 8) {
        case 0: q = {fp_t::zero(), fp_t::zero()}; break;
        case 2:  // q equal to acc, or its negation
        case 3:
            if (at_inf) break;
            q.x = (acc.x * acc.zz.inverse()).canonical();
            q.y = (acc.y * acc.zzz.inverse()).canonical();
            if (it % 8 == 3) q.y = q.y.neg();
            break;
        default: break;
        }
        const g1_affine lq = q.is_inf() ? q : g1_affine{g.lift(q.x), g.lift(q.y)};
        const affine_t<fs_t> sq{strict(q.x.canonical()), strict(q.y.canonical())};
        xyzz_t<fp_t> r = acc.add_affine(lq);
        xyzz_t<fs_t> s = sacc.add_affine(sq);
        if (!congruent(r, s) && bad++ < 5) printf("g1 (lazy): mixed addition differs at iteration %d\n", it);
        if (!at_inf && it % 8 == 2 && !r.is_inf()) dbl++;
        if (!at_inf && it % 8 == 3 && r.is_inf()) inf++;
        // an XYZZ addition of the result to the accumulator, and a doubling
        xyzz_t<fp_t> r2 = r.add(acc), r3 = r.dbl();
        if ((!congruent(r2, s.add(sacc)) || !congruent(r3, s.dbl())) && bad++ < 5)
            printf("g1 (lazy): XYZZ addition or doubling differs at iteration %d\n", it);
        // the lazy chain goes on from its own result; the strict one from
        // the lazy one's canonical value, so that a difference shows once
        acc = it % 3 ? r : r2;
        sacc = strict(acc.canonical());
    }
    printf("g1 (lazy): %d mixed additions (%d doublings, %d cancellations) with XYZZ additions and doublings, "
           "%d differences\n",
           iters, dbl, inf, bad);
    if (dbl < iters / 16 || inf < iters / 16) bad++;
    return bad;
}
#endif

int main(int argc, char** argv) {
    rng.seed(check_seed(argc, argv));
    int bad = check_fp2(60000);
#ifdef C2_FP_LAZY
    bad += check_lazy(40000);
#endif
    bad += check<fp_t>("g1", 40000) + check<fp2_t>("g2", 16000);
    bad += check_add<fp_t>("g1", 40000) + check_add<fp2_t>("g2", 16000);
    return bad ? 1 : 0;
}
