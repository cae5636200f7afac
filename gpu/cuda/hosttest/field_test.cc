// Host check of the Montgomery products in field.cuh. The even/odd
// functions (mul_eo, sqr_eo; also add_eo, sub_eo, neg_eo) run here with the PTX carry
// instructions emulated in the same statement order; each is compared with
// the portable product (the one the GPU tests compared with gnark-crypto) on
// edge values and millions of random operands, and all of them with a
// big-integer reference (a*b mod p == r*2^(32N) mod p, r < p), which shares
// no code with field.cuh. The fused product prod_sum_eo (a*b + c*d, and
// a*b - c*d with -c) is compared with two portable products on all
// quadruples of edge values and millions of random ones, and with the
// reference. Shoup's product by a fixed multiplier (field_shoup.cuh) is
// compared with the Montgomery product and the reference on all pairs of
// edge values and on random ones, and each multiplier's quotient with the
// big-integer division.
// Built with C2_FP_LAZY (field_test_lazy), Fp's even/odd functions take
// operands in [0, 2p) (each operand here is x or x + p at random, x + p
// always for the widest cases) and must return results below 2p that are
// congruent to the portable ones.
// Build and run: make -C gpu/cuda hosttest   (optional argument: a seed)
#include <stdio.h>
#include <stdlib.h>
#include <random>
#include <vector>
#include "../field.cuh"
#include "../field_shoup.cuh"
#include "field_gen.h"

using namespace c2;

// ---- reference: plain big integers as little-endian 32-bit words ----
using big = std::vector<uint32_t>;

static big big_mul(const uint32_t* a, const uint32_t* b, int n) {
    big r(2 * n, 0);
    for (int i = 0; i < n; i++) {
        uint64_t c = 0;
        for (int j = 0; j < n; j++) {
            c += (uint64_t)a[i] * b[j] + r[i + j];
            r[i + j] = (uint32_t)c;
            c >>= 32;
        }
        r[i + n] = (uint32_t)c;
    }
    return r;
}

// x mod m by binary long division (m has n words, x any length).
static big big_mod(const big& x, const uint32_t* m, int n) {
    big rem(n + 1, 0);
    for (int bit = (int)x.size() * 32 - 1; bit >= 0; bit--) {
        uint32_t in = (x[bit / 32] >> (bit % 32)) & 1;
        for (int k = n; k > 0; k--) rem[k] = (rem[k] << 1) | (rem[k - 1] >> 31);
        rem[0] = (rem[0] << 1) | in;
        bool ge = rem[n] != 0;
        if (!ge) {
            ge = true;  // equal counts as >=
            for (int k = n - 1; k >= 0; k--) {
                if (rem[k] != m[k]) {
                    ge = rem[k] > m[k];
                    break;
                }
            }
        }
        if (ge) {
            uint64_t br = 0;
            for (int k = 0; k <= n; k++) {
                uint64_t d = (uint64_t)rem[k] - (k < n ? m[k] : 0) - br;
                rem[k] = (uint32_t)d;
                br = (d >> 63) & 1;
            }
        }
    }
    rem.resize(n);
    return rem;
}

// p's words, least significant first.
template <class P>
static big modulus() {
    big m(P::N);
    for (int i = 0; i < P::N; i++) m[i] = P::mod(i);
    return m;
}

// a * b mod p, with a's and b's words read as plain integers.
template <class P>
static big product_mod(const Fe<P>& a, const Fe<P>& b) {
    return big_mod(big_mul(a.v, b.v, P::N), modulus<P>().data(), P::N);
}

// For r < p: value = r * 2^(32N) mod p, and true. For r >= p: false, value
// untouched.
template <class P>
static bool shifted_mod(const Fe<P>& r, big& value) {
    if (!gen<P>::below_p(r)) return false;
    const int N = P::N;
    big rs(2 * N, 0);
    for (int i = 0; i < N; i++) rs[N + i] = r.v[i];
    value = big_mod(rs, modulus<P>().data(), N);
    return true;
}

// r is the Montgomery product of a and b: r < p and r * 2^(32N) == a * b (mod p).
template <class P>
static bool reference_ok(const Fe<P>& a, const Fe<P>& b, const Fe<P>& r) {
    big rv;
    return shifted_mod(r, rv) && product_mod(a, b) == rv;
}

// r is the Montgomery form of a*b + c*d (or a*b - c*d for sub): r < p and
// r * 2^(32N) == a*b +- c*d (mod p).
template <class P>
static bool reference2_ok(const Fe<P>& a, const Fe<P>& b, const Fe<P>& c, const Fe<P>& d, bool sub,
                          const Fe<P>& r) {
    big rv;
    if (!shifted_mod(r, rv)) return false;
    const int N = P::N;
    const big m = modulus<P>();
    big ab = product_mod(a, b), cd = product_mod(c, d);
    // ab +- cd + p, then mod p (both terms < p)
    big s(N + 1, 0);
    int64_t borrow = 0;
    for (int i = 0; i < N; i++) {
        int64_t t = (int64_t)ab[i] + (int64_t)m[i] + (sub ? -(int64_t)cd[i] : (int64_t)cd[i]) + borrow;
        s[i] = (uint32_t)t;
        borrow = t >> 32;  // arithmetic shift: -1, 0, 1 or 2
    }
    s[N] = (uint32_t)borrow;
    return big_mod(s, m.data(), N) == rv;
}

// x's words, most significant first, separated by spaces.
template <class P>
static void print_words(const Fe<P>& x) {
    for (int k = P::N - 1; k >= 0; k--) printf(k == P::N - 1 ? "%08x" : " %08x", x.v[k]);
}

// Counts a mismatch in *bad and prints the first five: "NAME: WHAT mismatch
// for a = ..., LABEL = ...".
template <class P>
static void report_pair(const char* name, const char* what, const Fe<P>& a, const char* label, const Fe<P>& b,
                        int* bad) {
    if ((*bad)++ < 5) {
        printf("%s: %s mismatch for a = ", name, what);
        print_words(a);
        printf(", %s = ", label);
        print_words(b);
        printf("\n");
    }
}

// r is in the arithmetic's range (below 2p when lazy, else below p) and
// congruent to want (< p), compared word by word after the portable
// reduction; a lazy r's canonical() is that reduction too.
template <class P>
static bool same(const Fe<P>& r, const Fe<P>& want) {
    using F = Fe<P>;
    if (!gen<P>::in_bound(r)) return false;
    const F c = F::LAZY ? F::reduce_once(r.v, 0) : r, k = r.canonical();
    for (int i = 0; i < P::N; i++)
        if (c.v[i] != want.v[i] || k.v[i] != want.v[i]) return false;
    return true;
}

// carry_faults returns 1 when the products since the last call dropped a
// non-zero carry or read a flag across addition and subtraction (a mismatch
// of its own), else 0, and resets both counters for the next check.
static int carry_faults() {
    const int bad = dropped_carries || mixed_carries;
    dropped_carries = 0;
    mixed_carries = 0;
    return bad;
}

template <class P>
static int check(const char* name, std::mt19937_64& rng, int iters, int refs) {
    using F = Fe<P>;
    gen<P> g{rng};
    std::vector<F> edges = g.edges();
    int bad = 0, nref = 0;
    auto report = [&](const char* what, const F& a, const F& b) { report_pair(name, what, a, "b", b, &bad); };
    auto one = [&](const F& a, const F& b, bool ref) {
        F r = F::mul_portable(a, b);
        if (ref) {
            nref++;
            if (!reference_ok(a, b, r)) report("portable vs reference", a, b);
        }
        const F la = g.lift(a), lb = g.lift(b);
        if (!same(F::mul_eo(la, lb), r)) report("mul_eo", a, b);
        if (!same(F::add_eo(la, lb), F::add_portable(a, b))) report("add_eo", a, b);
        if (!same(F::sub_eo(la, lb), F::sub_portable(a, b))) report("sub_eo", a, b);
        if (!same(F::sub_eo(lb, la), F::sub_portable(b, a))) report("sub_eo", b, a);
        if (!same(F::neg_eo(la), F::neg_portable(a))) report("neg_eo", a, a);
        if (la.is_zero() != a.is_raw_zero() || (la == lb) != (a == b)) report("is_zero or ==", a, b);
        F s = F::mul_portable(a, a);
        if (!same(F::sqr_eo(la), s)) report("sqr_eo", a, a);
        if (ref && !reference_ok(a, a, F::sqr_eo(la).canonical())) report("sqr_eo vs reference", a, a);
    };
    for (const F& a : edges)
        for (const F& b : edges) one(a, b, true);
    for (int it = 0; it < iters; it++) {
        F a, b;
        switch (it % 4) {
        case 0: a = g.uniform(), b = g.uniform(); break;
        case 1: a = g.sparse(), b = g.sparse(); break;
        case 2: a = g.sparse(), b = g.uniform(); break;
        default: a = edges[rng() % edges.size()], b = it & 4 ? g.uniform() : g.sparse();
        }
        one(a, b, it < refs);
    }
    printf("%s: %zu edge pairs + %d random products (%d also against the big-integer reference), %d mismatches, "
           "%llu non-zero carries dropped, %llu flags read across addition and subtraction\n",
           name, edges.size() * edges.size(), iters, nref, bad, (unsigned long long)dropped_carries,
           (unsigned long long)mixed_carries);
    bad += carry_faults();
    return bad;
}

// The fused product prod_sum_eo (a*b + c*d, one reduction) and a*b - c*d as
// prod_sum_eo(a, b, -c, d), against two portable products, on all quadruples
// of edge values and on random quadruples; a part also against the
// big-integer reference. prod_sum/prod_diff (the build's dispatch, here the
// portable one) are compared too.
template <class P>
static int check2(const char* name, std::mt19937_64& rng, int iters, int refs) {
    using F = Fe<P>;
    gen<P> g{rng};
    std::vector<F> edges = g.edges();
    const size_t ne = edges.size();
    int bad = 0, nref = 0;
    long cases = 0;
    auto report = [&](const char* what, const F& a, const F& b, const F& c, const F& d) {
        if (bad++ < 5) {
            printf("%s: %s mismatch for", name, what);
            for (const F* x : {&a, &b, &c, &d}) {
                printf(" (");
                print_words(*x);
                printf(")");
            }
            printf("\n");
        }
    };
    bool wide = false;  // lazy: every operand x + p
    auto one = [&](const F& a, const F& b, const F& c, const F& d, bool ref) {
        cases++;
        F ab = F::mul_portable(a, b), cd = F::mul_portable(c, d);
        F sum = F::add_portable(ab, cd), diff = F::sub_portable(ab, cd);
        const F la = g.lift(a, wide), lb = g.lift(b, wide), lc = g.lift(c, wide), ld = g.lift(d, wide);
        F r = F::prod_sum_eo(la, lb, lc, ld);
        if (!same(r, sum)) report("prod_sum_eo", a, b, c, d);
        F rd = F::prod_sum_eo(la, lb, F::neg_eo(lc), ld);
        if (!same(rd, diff)) report("prod_sum_eo(a, b, -c, d)", a, b, c, d);
        if (!same(F::prod_sum(la, lb, lc, ld), sum)) report("prod_sum", a, b, c, d);
        if (!same(F::prod_diff(la, lb, lc, ld), diff)) report("prod_diff", a, b, c, d);
        r = r.canonical(), rd = rd.canonical();
        if (ref) {
            nref++;
            if (!reference2_ok(a, b, c, d, false, r)) report("prod_sum_eo vs reference", a, b, c, d);
            if (!reference2_ok(a, b, c, d, true, rd)) report("prod_sum_eo(a, b, -c, d) vs reference", a, b, c, d);
        }
    };
    for (size_t i = 0; i < ne * ne * ne * ne; i++) {
        size_t k = i;
        const F& a = edges[k % ne];
        k /= ne;
        const F& b = edges[k % ne];
        k /= ne;
        const F& c = edges[k % ne];
        k /= ne;
        one(a, b, c, edges[k], i % 64 == 0);
    }
    // the largest operands: p - 1..3 (edges[5..7]) and all-ones limbs under
    // p's top limb (edges[ne - 2])
    const F top = edges[ne - 2];
    for (int it = 0; it < iters; it++) {
        F a, b, c, d;
        switch (it % 5) {
        case 0: a = g.uniform(), b = g.uniform(), c = g.uniform(), d = g.uniform(); break;
        case 1: a = g.sparse(), b = g.sparse(), c = g.sparse(), d = g.sparse(); break;
        case 2: a = g.sparse(), b = g.uniform(), c = g.uniform(), d = g.sparse(); break;
        case 3:  // large operands with random multipliers: the widest intermediate values
            a = edges[5 + rng() % 3], c = edges[5 + rng() % 3];
            b = it & 8 ? top : g.uniform(), d = it & 16 ? top : g.sparse();
            break;
        default:
            a = edges[rng() % ne], b = g.uniform(), c = it & 4 ? g.uniform() : g.sparse(), d = edges[rng() % ne];
        }
        wide = it % 5 == 3;
        one(a, b, c, d, it < refs);
    }
    printf("%s: %ld fused products (%zu edge quadruples, %d random; %d also against the big-integer reference), "
           "%d mismatches, %llu non-zero carries dropped, %llu carries kept above word N, %llu flags read across "
           "addition and subtraction\n",
           name, cases, ne * ne * ne * ne, iters, nref, bad, (unsigned long long)dropped_carries,
           (unsigned long long)kept_carries, (unsigned long long)mixed_carries);
    bad += carry_faults();
    kept_carries = 0;
    return bad;
}

// mul_shoup(a, shoup_entry(x)) against the Montgomery product a*x/R (the
// same value: the entry holds x/R) and against a*w mod p from big integers;
// shoup_quotient's wq against long division (the exact quotient or one
// less), and the products also with those two quotients.
template <class P>
static int check_shoup(const char* name, std::mt19937_64& rng, int multipliers, int per) {
    using F = Fe<P>;
    constexpr int N = P::N;
    gen<P> g{rng};
    std::vector<F> edges = g.edges();
    const big m = modulus<P>();
    int bad = 0, nref = 0, nprod = 0;
    auto report = [&](const char* what, const F& a, const F& x) { report_pair(name, what, a, "x", x, &bad); };
    // the entry with its quotient one less (when it is not 0)
    auto one_less = [&](const shoup_t<P>& t) {
        shoup_t<P> e = t;
        uint64_t br = 1;
        for (int k = 0; k <= N; k++) {
            const uint64_t d = (uint64_t)e.wq[k] - br;
            e.wq[k] = (uint32_t)d;
            br = (d >> 63) & 1;
        }
        return br ? t : e;
    };
    // w 2^(32(N+1)) = wq p + rem with rem < p: wq is the exact quotient
    auto quotient_ok = [&](const shoup_t<P>& t) {
        big ws(2 * N + 1, 0);
        for (int k = 0; k < N; k++) ws[N + 1 + k] = t.w[k];
        const big rem = big_mod(ws, m.data(), N);
        // wq * p + rem, (2N + 1) words
        big s(2 * N + 2, 0);
        for (int i = 0; i <= N; i++) {
            uint64_t c = 0;
            for (int j = 0; j < N; j++) {
                c += (uint64_t)t.wq[i] * m[j] + s[i + j];
                s[i + j] = (uint32_t)c;
                c >>= 32;
            }
            for (int k = i + N; c; k++) {
                c += s[k];
                s[k] = (uint32_t)c;
                c >>= 32;
            }
        }
        uint64_t c = 0;
        for (int k = 0; k < 2 * N + 2; k++) {
            c += (uint64_t)s[k] + (k < N ? rem[k] : 0);
            s[k] = (uint32_t)c;
            c >>= 32;
        }
        ws.push_back(0);
        return s == ws;
    };
    auto one_more = [&](const shoup_t<P>& t) {
        shoup_t<P> e = t;
        uint64_t c = 1;
        for (int k = 0; k <= N; k++) {
            c += e.wq[k];
            e.wq[k] = (uint32_t)c;
            c >>= 32;
        }
        return e;
    };
    // The exact quotient, given shoup_entry's (the exact one or one less);
    // ok is false when neither it nor the next one is exact.
    auto exact_quotient = [&](const shoup_t<P>& t, bool& ok) {
        if (quotient_ok(t)) return t;
        const shoup_t<P> e = one_more(t);
        ok &= quotient_ok(e);
        return e;
    };
    auto one = [&](const F& a, const F& x, const shoup_t<P>& t, bool ref) {
        nprod++;
        const F r = mul_shoup<P>(a, t);
        if (!same(r, F::mul_portable(a, x))) report("mul_shoup vs Montgomery", a, x);
        if (ref) {
            nref++;
            if (big(r.v, r.v + N) != product_mod(a, g.from_words(t.w))) report("mul_shoup vs reference", a, x);
        }
    };
    // every product three times: with shoup_entry's quotient, the exact
    // one and the exact one less 1 (the contract's two ends)
    auto three = [&](const F& a, const F& x, const shoup_t<P>& t, const shoup_t<P>& e, bool ref) {
        one(a, x, t, ref);
        one(a, x, e, false);
        one(a, x, one_less(e), false);
    };
    for (const F& x : edges) {
        bool ok = true;
        const shoup_t<P> t = shoup_entry<P>(x), e = exact_quotient(t, ok);
        if (!ok) report("quotient", x, x);
        for (const F& a : edges) three(a, x, t, e, true);
    }
    F raw_one = F::zero();
    raw_one.v[0] = 1;
    for (int it = 0; it < multipliers; it++) {
        const F x = it % 3 == 0 ? g.sparse() : g.uniform();
        bool ok = true;
        const shoup_t<P> t = shoup_entry<P>(x), e = exact_quotient(t, ok);
        if (!ok) report("quotient", x, x);
        // a = c / w for small c: a w mod p = c, where q falls one short
        // of floor(a w / p) and the final subtraction is needed
        if (it < 20000 && !x.is_zero()) {
            const F inv_w = F::mul_portable(F::mul_portable(g.from_words(t.w).inverse(), raw_one), raw_one);
            F c = F::zero(), c_mont = F::zero();  // c, and c R mod p
            for (uint32_t k = 1; k <= 3; k++) {
                c.v[0] = k;
                c_mont = F::add_portable(c_mont, F::one());
                const F a = F::mul_portable(inv_w, c_mont);  // w^-1 c
                if (product_mod(a, g.from_words(t.w)) != big(c.v, c.v + N)) report("c / w operand", a, x);
                three(a, x, t, e, k == 1);
            }
        }
        for (int k = 0; k < per; k++) {
            const F a = k % 4 == 0 ? g.sparse() : k % 4 == 1 ? edges[rng() % edges.size()] : g.uniform();
            if (k < 4)
                three(a, x, t, e, k == 0 && it < 20000);
            else
                one(a, x, t, false);
        }
    }
    printf("%s: mul_shoup: %d products (%d also against the big-integer reference), %d mismatches, "
           "%llu non-zero carries dropped, %llu flags read across addition and subtraction\n",
           name, nprod, nref, bad, (unsigned long long)dropped_carries, (unsigned long long)mixed_carries);
    bad += carry_faults();
    return bad;
}

int main(int argc, char** argv) {
    std::mt19937_64 rng(check_seed(argc, argv));
    const char* fp = FpParams::LAZY ? "fp (lazy)" : "fp";
    int bad = check<FrParams>("fr", rng, 2000000, 50000) + check<FpParams>(fp, rng, 2000000, 30000);
    bad += check2<FrParams>("fr", rng, 2000000, 40000) + check2<FpParams>(fp, rng, 2000000, 20000);
    bad += check_shoup<FrParams>("fr", rng, 40000, 50);
    return bad ? 1 : 0;
}
