// Host check that the statement orders of the mixed addition (ec.cuh,
// xyzz_t::add_affine_in<0/1/2>) give identical results, for G1
// (Fp) and G2 (Fp2) coordinates: random accumulators and points (the
// formulas are field arithmetic, so points need not be on the curve) and the
// special cases (either operand at infinity, equal points -> doubling,
// opposite points -> infinity). Build and run: make -C gpu/cuda hosttest
#include <stdio.h>
#include <stdlib.h>
#include <random>
#include "../ec.cuh"

using namespace c2;

static std::mt19937_64* rng;

template <class P>
static void random_fe(Fe<P>& x) {
    const int N = P::N;
    uint32_t mask = 1;
    while (mask < P::mod(N - 1)) mask = mask << 1 | 1;
    for (;;) {
        for (int i = 0; i < N; i++) x.v[i] = (uint32_t)(*rng)();
        x.v[N - 1] &= mask;
        for (int k = N - 1; k >= 0; k--) {
            if (x.v[k] != P::mod(k)) {
                if (x.v[k] < P::mod(k)) return;
                break;
            }
        }
    }
}
static void random_el(fp_t& x) { random_fe(x); }
static void random_el(fp2_t& x) {
    random_fe(x.a0);
    random_fe(x.a1);
}

template <class F>
static bool same(const xyzz_t<F>& a, const xyzz_t<F>& b) {
    return a.x == b.x && a.y == b.y && a.zz == b.zz && a.zzz == b.zzz;
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
        default: break;
        }
        xyzz_t<F> r0 = a.template add_affine_in<0>(q);
        xyzz_t<F> r1 = a.template add_affine_in<1>(q);
        xyzz_t<F> r2 = a.template add_affine_in<2>(q);
        if ((!same(r1, r0) || !same(r2, r0)) && bad++ < 5) printf("%s: orders differ at iteration %d\n", name, it);
        if (it % 8 == 2 && !r0.is_inf()) dbl++;
        if (it % 8 == 3 && r0.is_inf()) inf++;
    }
    printf("%s: %d mixed additions (%d doublings, %d cancellations), %d differences\n", name, iters, dbl, inf, bad);
    // the special cases must have been reached
    if (dbl != (iters + 5) / 8 || inf != (iters + 4) / 8) bad++;
    return bad;
}

int main(int argc, char** argv) {
    uint64_t seed;
    if (argc > 1) {
        seed = strtoull(argv[1], nullptr, 0);
    } else {
        std::random_device rd;
        seed = ((uint64_t)rd() << 32) | rd();
    }
    printf("seed %llu\n", (unsigned long long)seed);
    std::mt19937_64 r(seed);
    rng = &r;
    int bad = check<fp_t>("g1", 40000) + check<fp2_t>("g2", 16000);
    return bad ? 1 : 0;
}
