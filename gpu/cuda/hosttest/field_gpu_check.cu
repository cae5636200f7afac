// GPU check of the field products (needs a CUDA device): every function in
// field.cuh (portable, mul_eo, sqr_eo, add/sub/neg_eo, the fused prod_sum_eo
// for a*b + c*d and a*b - c*d) runs on the device over edge values and
// random operands, and each result is compared with the portable products
// computed on the host (the one the Go tests tie to
// gnark-crypto). This checks what the host tests cannot: the inline-PTX
// mapping of the carry primitives and ptxas' handling of the carry flag.
// Built with C2_FP_LAZY (field_gpu_check_lazy), Fp's operands reach the
// device as x or x + p at random and each result must be below 2p and
// congruent to the host's; == and canonical() run on the device too (equal
// operand pairs must give the canonical value, word for word). Shoup's
// product (field_shoup.cuh) runs on the device with multipliers made on the
// host, and shoup_entry on the device must make the host's entries.
// Build and run: make -C gpu/cuda gpucheck   (optional argument: a seed)
#include "cuda_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <random>
#include <vector>
#include "field_gen.h"
#include "../field_shoup.cuh"

using namespace c2;

enum {
    V_PORTABLE,
    V_EO,
    V_SQR_EO,
    V_ADD_EO,
    V_SUB_EO,
    V_NEG_EO,
    V_PROD_SUM_EO,
    V_PROD_DIFF_EO,
    V_CANONICAL,
    V_COUNT
};
static const char* vname[V_COUNT] = {"portable", "mul_eo",      "sqr_eo",          "add_eo",   "sub_eo",
                                     "neg_eo",   "prod_sum_eo", "prod_sum_eo(-c)", "canonical"};

template <class F>
__global__ void k_products(const F* a, const F* b, const F* c, const F* d, F* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const F x = a[i], y = b[i], z = c[i], w = d[i];
    out[V_PORTABLE * n + i] = F::mul_portable(x, y);
    out[V_EO * n + i] = F::mul_eo(x, y);
    out[V_SQR_EO * n + i] = F::sqr_eo(x);
    out[V_ADD_EO * n + i] = F::add_eo(x, y);
    out[V_SUB_EO * n + i] = F::sub_eo(x, y);
    out[V_NEG_EO * n + i] = F::neg_eo(x);
    out[V_PROD_SUM_EO * n + i] = F::prod_sum_eo(x, y, z, w);
    out[V_PROD_DIFF_EO * n + i] = F::prod_sum_eo(x, y, F::neg_eo(z), w);
    // x's value in [0, p) when x == y (mod p), else all ones
    out[V_CANONICAL * n + i] = x == y ? x.canonical() : F{{0xffffffffu}};
}

template <class P>
static int check(const char* name, std::mt19937_64& rng, size_t n) {
    using F = Fe<P>;
    gen<P> g{rng};
    std::vector<F> edges = g.edges();
    std::vector<F> a(n), b(n), c(n), d(n);
    size_t i = 0;
    for (const F& x : edges)
        for (const F& y : edges)
            if (i < n) a[i] = x, b[i] = y, i++;
    for (; i < n; i++) {
        switch (i % 4) {
        case 0: a[i] = g.uniform(), b[i] = g.uniform(); break;
        case 1: a[i] = g.sparse(), b[i] = g.sparse(); break;
        case 2: a[i] = g.sparse(), b[i] = g.uniform(); break;
        default: a[i] = edges[rng() % edges.size()], b[i] = i & 4 ? g.uniform() : g.sparse();
        }
    }
    // the second pair of the fused products: edge values where a and b are
    // edge values, other operands elsewhere
    const size_t ne = edges.size();
    for (i = 0; i < n; i++) {
        if (i < ne * ne) {
            c[i] = edges[(i * 7 + 1) % ne], d[i] = edges[(i / ne * 5 + i + 2) % ne];
        } else {
            c[i] = a[n - 1 - i + ne * ne], d[i] = b[(i + n / 2) % n];
        }
    }
    // the operands as the device gets them: x or x + p when lazy
    std::vector<F> la(n), lb(n), lc(n), ld(n);
    for (i = 0; i < n; i++) la[i] = g.lift(a[i]), lb[i] = g.lift(b[i]), lc[i] = g.lift(c[i]), ld[i] = g.lift(d[i]);
    F *da, *db, *dc, *dd, *dout;
    CK(cudaMalloc(&da, n * sizeof(F)));
    CK(cudaMalloc(&db, n * sizeof(F)));
    CK(cudaMalloc(&dc, n * sizeof(F)));
    CK(cudaMalloc(&dd, n * sizeof(F)));
    CK(cudaMalloc(&dout, V_COUNT * n * sizeof(F)));
    CK(cudaMemcpy(da, la.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, lb.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dc, lc.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dd, ld.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    k_products<F><<<(unsigned)((n + 127) / 128), 128>>>(da, db, dc, dd, dout, n);
    CK(cudaGetLastError());
    std::vector<F> out(V_COUNT * n);
    CK(cudaMemcpy(out.data(), dout, V_COUNT * n * sizeof(F), cudaMemcpyDeviceToHost));
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
    CK(cudaFree(dd));
    CK(cudaFree(dout));
    int bad = 0;
    for (int v = 0; v < V_COUNT; v++) {
        size_t wrong = 0;
        for (size_t k = 0; k < n; k++) {
            F want;
            switch (v) {
            case V_SQR_EO: want = F::mul_portable(a[k], a[k]); break;
            case V_ADD_EO: want = F::add_portable(a[k], b[k]); break;
            case V_SUB_EO: want = F::sub_portable(a[k], b[k]); break;
            case V_NEG_EO: want = F::neg_portable(a[k]); break;
            case V_PROD_SUM_EO:
                want = F::add_portable(F::mul_portable(a[k], b[k]), F::mul_portable(c[k], d[k]));
                break;
            case V_PROD_DIFF_EO:
                want = F::sub_portable(F::mul_portable(a[k], b[k]), F::mul_portable(c[k], d[k]));
                break;
            case V_CANONICAL:
                want = a[k] == b[k] ? a[k] : F{{0xffffffffu}};  // exact words below
                break;
            default: want = F::mul_portable(a[k], b[k]);
            }
            const F& r = out[v * n + k];
            const bool ok = v == V_CANONICAL ? memcmp(&r, &want, sizeof r) == 0 : gen<P>::in_bound(r) && r == want;
            if (!ok && wrong++ < 3) printf("%s %s: wrong at %zu\n", name, vname[v], k);
        }
        printf("%s %-15s: %zu results on the device, %zu differ from the host's portable version\n", name,
               vname[v], n, wrong);
        if (wrong) bad++;
    }
    return bad;
}

using fr_shoup = shoup_t<FrParams>;

__global__ void k_shoup(const fr_t* a, const fr_shoup* t, const fr_t* x, fr_t* out, fr_shoup* entries, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = mul_shoup<FrParams>(a[i], t[i]);
    entries[i] = shoup_entry<FrParams>(x[i]);
}

// a_i * w_i by mul_shoup with entries made on the host from x_i, against
// the host's portable a_i * x_i / R; the device's entries of x_i against the
// host's. Operands: edge pairs, random ones, and a = c / w (c = 1, 2, 3),
// whose quotient falls one short and needs the final subtraction.
static int check_shoup(std::mt19937_64& rng, size_t n) {
    using F = fr_t;
    gen<FrParams> g{rng};
    std::vector<F> edges = g.edges();
    std::vector<F> a(n), x(n);
    std::vector<fr_shoup> t(n);
    F raw_one = F::zero();
    raw_one.v[0] = 1;
    size_t i = 0;
    for (const F& u : edges)
        for (const F& v : edges)
            if (i < n) a[i] = u, x[i] = v, i++;
    for (; i < n; i++) {
        x[i] = i % 3 ? g.uniform() : g.sparse();
        if (i % 64 < 3 && !x[i].is_zero()) {
            // c / w with w = x / R: w^-1 = inverse(w) R^-2 (inverse() is
            // Montgomery's), times c
            const F w = F::mul_portable(x[i], raw_one);
            const F inv_w = F::mul_portable(F::mul_portable(w.inverse(), raw_one), raw_one);
            F c_mont = F::one();  // c R mod p, c = i % 64 + 1
            for (size_t k = 0; k < i % 64; k++) c_mont = F::add_portable(c_mont, F::one());
            a[i] = F::mul_portable(inv_w, c_mont);
        } else {
            a[i] = i & 1 ? g.uniform() : g.sparse();
        }
    }
    for (i = 0; i < n; i++) t[i] = shoup_entry<FrParams>(x[i]);
    F *da, *dx, *dout;
    fr_shoup *dt, *dent;
    CK(cudaMalloc(&da, n * sizeof(F)));
    CK(cudaMalloc(&dx, n * sizeof(F)));
    CK(cudaMalloc(&dout, n * sizeof(F)));
    CK(cudaMalloc(&dt, n * sizeof(fr_shoup)));
    CK(cudaMalloc(&dent, n * sizeof(fr_shoup)));
    CK(cudaMemcpy(da, a.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, x.data(), n * sizeof(F), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dt, t.data(), n * sizeof(fr_shoup), cudaMemcpyHostToDevice));
    k_shoup<<<(unsigned)((n + 127) / 128), 128>>>(da, dt, dx, dout, dent, n);
    CK(cudaGetLastError());
    std::vector<F> out(n);
    std::vector<fr_shoup> ent(n);
    CK(cudaMemcpy(out.data(), dout, n * sizeof(F), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ent.data(), dent, n * sizeof(fr_shoup), cudaMemcpyDeviceToHost));
    CK(cudaFree(da));
    CK(cudaFree(dx));
    CK(cudaFree(dout));
    CK(cudaFree(dt));
    CK(cudaFree(dent));
    size_t wrong = 0, wrong_entries = 0;
    for (i = 0; i < n; i++) {
        const F want = F::mul_portable(a[i], x[i]);
        if (!(gen<FrParams>::below_p(out[i]) && out[i] == want) && wrong++ < 3) printf("fr mul_shoup: wrong at %zu\n", i);
        if (memcmp(&ent[i], &t[i], sizeof(fr_shoup)) != 0 && wrong_entries++ < 3)
            printf("fr shoup_entry: wrong at %zu\n", i);
    }
    printf("fr mul_shoup      : %zu results on the device, %zu differ from the host's portable product; "
           "%zu of its entries differ from the host's\n",
           n, wrong, wrong_entries);
    return (wrong ? 1 : 0) + (wrong_entries ? 1 : 0);
}

int main(int argc, char** argv) {
    const uint64_t seed = check_seed(argc, argv);
    int dev = 0;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("device %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    std::mt19937_64 rng(seed);
    int bad = check<FrParams>("fr", rng, 1 << 22) + check<FpParams>(FpParams::LAZY ? "fp (lazy)" : "fp", rng, 1 << 22);
    bad += check_shoup(rng, 1 << 20);
    printf(bad ? "FAIL\n" : "ok\n");
    return bad ? 1 : 0;
}
