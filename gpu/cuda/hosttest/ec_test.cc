// Host check that the statement orders of the mixed addition (ec.cuh,
// xyzz_t::add_affine_in<0/1/2>) and the XYZZ addition (xyzz_t::add) give
// exactly the results of the reference formulas below (madd-2008-s and
// add-2008-s with y3 = r (qq - x3) - y1 ppp as two products and a
// subtraction; ec.cuh fuses them with Fe::prod_diff for G1), for G1 (Fp) and
// G2 (Fp2) coordinates: random accumulators and points (the formulas are
// field arithmetic, so points need not be on the curve) and the special cases
// (either operand at infinity, equal points -> doubling, opposite points ->
// infinity, y1 = 0). Built with C2_FP_LAZY (ec_test_lazy) it also checks the
// additions of G1 and G2 in the lazy Fp against the fully reduced one
// (check_lazy).
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
// The fully reduced Fp, and Fp2 over it, beside the lazy ones of this build.
struct FpStrict : FpParams {
    static constexpr bool LAZY = false;
};
using fs_t = Fe<FpStrict>;
using fs2_t = fp2_base<fs_t>;

static fs_t strict(const fp_t& x) {
    fs_t r;
    for (int i = 0; i < fp_t::N; i++) r.v[i] = x.v[i];
    return r;
}
static fs2_t strict(const fp2_t& x) { return {strict(x.a0), strict(x.a1)}; }
template <class F>
static auto strict(const xyzz_t<F>& a) {
    return xyzz_t<decltype(strict(a.x))>{strict(a.x), strict(a.y), strict(a.zz), strict(a.zzz)};
}
template <class F>
static auto strict(const affine_t<F>& a) {
    return affine_t<decltype(strict(a.x))>{strict(a.x), strict(a.y)};
}

// x, or x + p (each Fp of an Fp2 on its own), at random, for x < p.
static fp_t lift(gen<FpParams>& g, const fp_t& x) { return g.lift(x); }
static fp2_t lift(gen<FpParams>& g, const fp2_t& x) { return {g.lift(x.a0), g.lift(x.a1)}; }
template <class F>
static xyzz_t<F> lift(gen<FpParams>& g, const xyzz_t<F>& a) {
    // ZZ = 0 is how infinity is made (inf()): it stays 0
    return {lift(g, a.x), lift(g, a.y), a.is_inf() ? a.zz : lift(g, a.zz), lift(g, a.zzz)};
}

// r is below 2p and congruent to s (fully reduced): equal words once reduced.
static bool congruent(const fp_t& r, const fs_t& s) {
    if (!gen<FpParams>::in_bound(r)) return false;
    const fp_t c = r.canonical();
    for (int i = 0; i < fp_t::N; i++)
        if (c.v[i] != s.v[i]) return false;
    return true;
}
static bool congruent(const fp2_t& r, const fs2_t& s) { return congruent(r.a0, s.a0) && congruent(r.a1, s.a1); }
template <class F, class S>
static bool congruent(const xyzz_t<F>& r, const xyzz_t<S>& s) {
    return congruent(r.x, s.x) && congruent(r.y, s.y) && congruent(r.zz, s.zz) && congruent(r.zzz, s.zzz);
}

// The mixed and XYZZ additions and doublings of G1 (F = fp_t) or G2
// (fp2_t) in the lazy Fp against the same formulas in the fully reduced
// one: operands with each Fp x or x + p at random (an accumulator's ZZ = 0
// and an affine infinity stay 0), results congruent coordinate by
// coordinate and below 2p, chained so that lazy results feed the next
// addition. Equal points (doubling) and opposite ones (infinity) come in
// other representations: an affine point from the accumulator, and an XYZZ
// point as (l^2 x, l^3 y, l^2 zz, l^3 zzz).
template <class F>
static int check_lazy(const char* name, int iters) {
    gen<FpParams> g{rng};
    int bad = 0, dbl = 0, inf = 0, xdbl = 0, xinf = 0;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    auto sacc = strict(acc);
    auto report = [&](const char* what, int it) {
        if (bad++ < 5) printf("%s (lazy): %s differs at iteration %d\n", name, what, it);
    };
    for (int it = 0; it < iters; it++) {
        if (it % 64 == 0) {  // a fresh random accumulator
            xyzz_t<F> c;
            random_el(c.x), random_el(c.y), random_el(c.zz), random_el(c.zzz);
            acc = lift(g, c);
            sacc = strict(c);
        }
        affine_t<F> q;
        random_el(q.x), random_el(q.y);
        const bool at_inf = acc.is_inf();
        switch (it % 8) {
        case 0: q = {F::zero(), F::zero()}; break;
        case 2:  // q equal to acc, or its negation
        case 3:
            if (at_inf) break;
            q.x = (acc.x * acc.zz.inverse()).canonical();
            q.y = (acc.y * acc.zzz.inverse()).canonical();
            if (it % 8 == 3) q.y = q.y.neg().canonical();
            break;
        default: break;
        }
        const affine_t<F> lq = q.is_inf() ? q : affine_t<F>{lift(g, q.x), lift(g, q.y)};
        xyzz_t<F> r = acc.add_affine(lq);
        const auto s = sacc.add_affine(strict(q));
        if (!congruent(r, s)) report("mixed addition", it);
        if (!at_inf && it % 8 == 2 && !r.is_inf()) dbl++;
        if (!at_inf && it % 8 == 3 && r.is_inf()) inf++;
        // XYZZ additions: of r, and of acc in other coordinates (doubling)
        // or negated (infinity); a doubling of r
        F l;
        random_el(l);
        const F l2 = l.sqr(), l3 = l2 * l;
        xyzz_t<F> same = at_inf ? acc : xyzz_t<F>{acc.x * l2, acc.y * l3, acc.zz * l2, acc.zzz * l3};
        if (it % 2) same.y = same.y.neg();
        same = lift(g, same.canonical());
        const xyzz_t<F> r2 = r.add(acc), r3 = acc.add(same), r4 = r.dbl();
        if (!congruent(r2, s.add(sacc))) report("XYZZ addition", it);
        if (!congruent(r3, sacc.add(strict(same.canonical())))) report("XYZZ addition of the same point", it);
        if (!congruent(r4, s.dbl())) report("doubling", it);
        if (!at_inf && it % 2 == 0 && !r3.is_inf()) xdbl++;
        if (!at_inf && it % 2 == 1 && r3.is_inf()) xinf++;
        // the lazy chain goes on from its own result; the strict one from
        // the lazy one's canonical value, so that a difference shows once
        acc = it % 3 ? r : r2;
        sacc = strict(acc.canonical());
    }
    printf("%s (lazy): %d mixed additions (%d doublings, %d cancellations), XYZZ additions (%d doublings, %d "
           "cancellations) and doublings, %d differences, %llu non-zero carries dropped, %llu flags read across "
           "addition and subtraction\n",
           name, iters, dbl, inf, xdbl, xinf, bad, (unsigned long long)dropped_carries,
           (unsigned long long)mixed_carries);
    if (dbl < iters / 16 || inf < iters / 16 || xdbl < iters / 4 || xinf < iters / 4) bad++;
    if (dropped_carries || mixed_carries) bad++;
    dropped_carries = mixed_carries = 0;
    return bad;
}
#endif

int main(int argc, char** argv) {
    rng.seed(check_seed(argc, argv));
    int bad = check_fp2(60000);
#ifdef C2_FP_LAZY
    bad += check_lazy<fp_t>("g1", 40000) + check_lazy<fp2_t>("g2", 16000);
#endif
    bad += check<fp_t>("g1", 40000) + check<fp2_t>("g2", 16000);
    bad += check_add<fp_t>("g1", 40000) + check_add<fp2_t>("g2", 16000);
    return bad ? 1 : 0;
}
