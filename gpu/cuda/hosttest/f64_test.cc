// Host check of the FP64-pipe Fp product (hosttest/field_f64.h): equal to the
// portable product on edge values, random values and values with long carry
// runs. Build: make -C gpu/cuda f64test
#include <stdio.h>
#include "field_gen.h"
#include "field_f64.h"

using namespace c2;

int main() {
    // The emulated rounding must differ from round-to-nearest where it should:
    // (2^53-1)*3 + 2 = 3*2^53 - 1 lies 1 below 3*2^53 (ulp 4 there).
    double x = 9007199254740991.0;
    if (f64::fma_rz(x, 3, 2) != 3 * 9007199254740992.0 - 4 || f64::fma_rn(x, 3, 2) != 3 * 9007199254740992.0) {
        printf("FAIL: directed rounding is not emulated (build with -frounding-math)\n");
        return 1;
    }
    std::mt19937_64 rng(42);
    gen<FpParams> g{rng};
    std::vector<fp_t> vals = g.edges();
    for (int i = 0; i < 64; i++) vals.push_back(g.sparse());
    for (int i = 0; i < 64; i++) vals.push_back(g.uniform());
    long n = 0, bad = 0;
    auto check = [&](const fp_t& a, const fp_t& b) {
        fp_t want = fp_t::mul_portable(a, b), got = f64::mul_f64(a, b);
        n++;
        if (got != want && bad++ < 5) {
            printf("FAIL: a=");
            for (int k = 11; k >= 0; k--) printf("%08x", a.v[k]);
            printf(" b=");
            for (int k = 11; k >= 0; k--) printf("%08x", b.v[k]);
            printf("\n");
        }
    };
    for (const fp_t& a : vals)
        for (const fp_t& b : vals) check(a, b);
    for (int i = 0; i < 20000; i++) check(g.uniform(), g.uniform());
    printf("%s: mul_f64 equals mul_portable on %ld products (%ld differ)\n", bad ? "FAIL" : "ok", n, bad);
    return bad ? 1 : 0;
}
