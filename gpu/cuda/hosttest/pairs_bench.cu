// Device experiment (needs a CUDA device): the rate of G1 point additions in
// the two forms a bucket accumulation can take, over the same gathered
// points (pseudo-random coordinates in Fp: the formulas are field
// arithmetic, so points need not lie on the curve for timing; x1 = x2 has
// probability ~2^-381).
//   xyzz:    each thread adds K gathered affine points into one XYZZ
//            accumulator (xyzz_t::add_affine, as k_run_tasks does): one
//            mixed addition per point, 96 bytes read.
//   affine K: each thread adds K pairs of gathered affine points in affine
//            form, the K inversions shared by Montgomery's trick (prefix
//            products in local memory, one Fermat inversion): 5 products and
//            a squaring per pair plus 1/K inversion; 192 bytes read and 96
//            written per pair, as one round of a pairwise bucket reduction.
//   warp K:  the same pairs, with the inversions shared by a whole warp:
//            each lane's K prefixes in shared memory (word-major), the 32
//            lanes' products combined by an inclusive prefix scan and a
//            suffix scan of shuffles (5 products each), one Fermat
//            inversion a warp: 6 products a pair plus 12/K, and since all
//            32 lanes execute the warp's inversion, 570/K of it a lane.
//   global K: the same, the prefixes in global memory and the warps'
//            products inverted together by a second kernel in batches of
//            32 a thread, so that a lane pays 6 products a pair plus 13/K
//            and a negligible share of the inversions; per pair both
//            points' x gathered, then both points again, 96 bytes of sum
//            written and 48 of prefix written and read.
// Prints additions per second for each, and checks sampled results against
// affine additions on the host (xyzz results after conversion to affine).
// Build and run: make -C gpu/cuda pairbench   (optional argument: log2 points)
#include "cuda_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include "../ec.cuh"
#include "field_gen.h"

using namespace c2;
using A = affine_t<fp_t>;
using X = xyzz_t<fp_t>;

// Position of the j-th gathered point: a bijection of [0, 2^lg) that
// scatters neighbours (multiplication by an odd constant modulo 2^lg).
C2_HD uint32_t gather_index(uint64_t j, uint32_t mask) { return (uint32_t)(j * 0x9E3779B1ull) & mask; }

// Coordinates below p: the top limb is kept under p's (0x1a0111ea).
__global__ void k_points(A* pts, uint64_t n) {
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    A p;
    for (int l = 0; l < 12; l++) {
        p.x.v[l] = mix32(i * 64 + l);
        p.y.v[l] = mix32(i * 64 + 32 + l);
    }
    p.x.v[11] &= 0x0fffffff;
    p.y.v[11] &= 0x0fffffff;
    pts[i] = p;
}

__global__ void __launch_bounds__(128) k_xyzz_chain(const A* __restrict__ pts, uint32_t mask, uint64_t n, int K,
                                                    X* __restrict__ out) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t first = t * K;
    if (first >= n) return;
    X acc = X::inf();
    for (int i = 0; i < K && first + i < n; i++) acc = acc.add_affine(pts[gather_index(first + i, mask)]);
    out[t] = acc;
}

// One pair of a batch's backward pass: p + q, its inverse 1/(q.x - p.x)
// being inv * pre (inv: the inverse of the product of the batch's
// differences up to this pair; pre: the product of those before it); inv
// moves past the pair.
__device__ __forceinline__ A pair_sum(const A& p, const A& q, const fp_t& pre, fp_t& inv) {
    const fp_t d = q.x - p.x;
    const fp_t di = inv * pre;
    inv = inv * d;
    const fp_t lam = (q.y - p.y) * di;
    A r;
    r.x = lam.sqr() - p.x - q.x;
    r.y = lam * (p.x - r.x) - p.y;
    return r;
}

template <int K>
__global__ void __launch_bounds__(128) k_affine_pairs(const A* __restrict__ pts, uint32_t mask, uint64_t npairs,
                                                      A* __restrict__ out) {
    uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t first = t * K;
    if (first >= npairs) return;
    const int cnt = npairs - first < (uint64_t)K ? (int)(npairs - first) : K;
    fp_t pre[K];
    fp_t acc = fp_t::one();
    for (int i = 0; i < cnt; i++) {
        const uint64_t j = first + i;
        const fp_t px = pts[gather_index(2 * j, mask)].x, qx = pts[gather_index(2 * j + 1, mask)].x;
        pre[i] = acc;
        acc = acc * (qx - px);
    }
    fp_t inv = acc.inverse();
    for (int i = cnt - 1; i >= 0; i--) {
        const uint64_t j = first + i;
        out[j] = pair_sum(pts[gather_index(2 * j, mask)], pts[gather_index(2 * j + 1, mask)], pre[i], inv);
    }
}

// Fp value moved between lanes: each word by __shfl_*_sync.
__device__ __forceinline__ fp_t shfl_up_fp(const fp_t& x, int d) {
    fp_t r;
#pragma unroll
    for (int l = 0; l < 12; l++) r.v[l] = __shfl_up_sync(0xffffffffu, x.v[l], d);
    return r;
}
__device__ __forceinline__ fp_t shfl_down_fp(const fp_t& x, int d) {
    fp_t r;
#pragma unroll
    for (int l = 0; l < 12; l++) r.v[l] = __shfl_down_sync(0xffffffffu, x.v[l], d);
    return r;
}
__device__ __forceinline__ fp_t shfl_idx_fp(const fp_t& x, int lane) {
    fp_t r;
#pragma unroll
    for (int l = 0; l < 12; l++) r.v[l] = __shfl_sync(0xffffffffu, x.v[l], lane);
    return r;
}

// The product of the other 31 lanes' values acc (the lanes' cofactor, so
// that 1/acc = cof / T), and in T the product of all 32: a prefix and a
// suffix scan of shuffles, 5 products each, and at most one more. Every lane
// of the warp must call it.
__device__ __forceinline__ fp_t lane_cofactor(const fp_t& acc, int lane, fp_t& T) {
    fp_t S = acc, U = acc;  // inclusive prefix and suffix products over the lanes
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const fp_t y = shfl_up_fp(S, d);
        if (lane >= d) S = y * S;
        const fp_t z = shfl_down_fp(U, d);
        if (lane + d < 32) U = U * z;
    }
    T = shfl_idx_fp(S, 31);
    const fp_t before = shfl_up_fp(S, 1), after = shfl_down_fp(U, 1);
    fp_t cof = fp_t::one();
    if (lane < 31) cof = after;
    if (lane > 0) cof = cof * before;
    return cof;
}

// Every lane of every warp runs to the end (the scans need all 32): a
// missing pair contributes 1 to the products and writes nothing.
template <int K>
__global__ void __launch_bounds__(128) k_affine_warp(const A* __restrict__ pts, uint32_t mask, uint64_t npairs,
                                                     A* __restrict__ out) {
    extern __shared__ uint32_t pre_words[];  // word w of prefix i at (i * 12 + w) * blockDim.x + tid
    const uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t first = t * K;
    const int cnt = first >= npairs ? 0 : npairs - first < (uint64_t)K ? (int)(npairs - first) : K;
    const int lane = threadIdx.x & 31;
    const unsigned T = blockDim.x;
    fp_t acc = fp_t::one();
    for (int i = 0; i < cnt; i++) {
        const uint64_t j = first + i;
#pragma unroll
        for (int w = 0; w < 12; w++) pre_words[(i * 12 + w) * T + threadIdx.x] = acc.v[w];
        const fp_t px = pts[gather_index(2 * j, mask)].x, qx = pts[gather_index(2 * j + 1, mask)].x;
        acc = acc * (qx - px);
    }
    fp_t total;
    const fp_t cof = lane_cofactor(acc, lane, total);
    fp_t inv = total.inverse() * cof;
    for (int i = cnt - 1; i >= 0; i--) {
        const uint64_t j = first + i;
        fp_t pre;
#pragma unroll
        for (int w = 0; w < 12; w++) pre.v[w] = pre_words[(i * 12 + w) * T + threadIdx.x];
        out[j] = pair_sum(pts[gather_index(2 * j, mask)], pts[gather_index(2 * j + 1, mask)], pre, inv);
    }
}

// The inversions shared by every warp of the grid, in three kernels: the
// lanes' K prefixes go to global memory (pre, word-major over the grid's
// threads), each lane's cofactor to cof and each warp's product to tot
// (k_global_fwd); k_invert_batches inverts tot in batches of KB a thread;
// k_global_bwd adds the pairs from 1/acc = cof / T.
template <int K>
__global__ void __launch_bounds__(128) k_global_fwd(const A* __restrict__ pts, uint32_t mask, uint64_t npairs,
                                                    uint32_t* __restrict__ pre, fp_t* __restrict__ cof,
                                                    fp_t* __restrict__ tot) {
    const uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t nt = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t first = t * K;
    const int cnt = first >= npairs ? 0 : npairs - first < (uint64_t)K ? (int)(npairs - first) : K;
    fp_t acc = fp_t::one();
    for (int i = 0; i < cnt; i++) {
        const uint64_t j = first + i;
#pragma unroll
        for (int w = 0; w < 12; w++) pre[(i * 12 + w) * nt + t] = acc.v[w];
        const fp_t px = pts[gather_index(2 * j, mask)].x, qx = pts[gather_index(2 * j + 1, mask)].x;
        acc = acc * (qx - px);
    }
    fp_t T;
    cof[t] = lane_cofactor(acc, threadIdx.x & 31, T);
    if ((threadIdx.x & 31) == 0) tot[t >> 5] = T;
}

// v[i] = 1/v[i] for i < n: Montgomery's trick over batches of KB a thread.
template <int KB>
__global__ void __launch_bounds__(128) k_invert_batches(fp_t* __restrict__ v, uint64_t n) {
    const uint64_t first = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) * KB;
    if (first >= n) return;
    const int cnt = n - first < (uint64_t)KB ? (int)(n - first) : KB;
    fp_t pre[KB];
    fp_t acc = fp_t::one();
    for (int i = 0; i < cnt; i++) {
        pre[i] = acc;
        acc = acc * v[first + i];
    }
    fp_t inv = acc.inverse();
    for (int i = cnt - 1; i >= 0; i--) {
        const fp_t x = v[first + i];
        v[first + i] = inv * pre[i];
        inv = inv * x;
    }
}

template <int K>
__global__ void __launch_bounds__(128) k_global_bwd(const A* __restrict__ pts, uint32_t mask, uint64_t npairs,
                                                    const uint32_t* __restrict__ pre, const fp_t* __restrict__ cof,
                                                    const fp_t* __restrict__ tinv, A* __restrict__ out) {
    const uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t nt = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t first = t * K;
    if (first >= npairs) return;
    const int cnt = npairs - first < (uint64_t)K ? (int)(npairs - first) : K;
    fp_t inv = tinv[t >> 5] * cof[t];
    for (int i = cnt - 1; i >= 0; i--) {
        const uint64_t j = first + i;
        fp_t p;
#pragma unroll
        for (int w = 0; w < 12; w++) p.v[w] = pre[(i * 12 + w) * nt + t];
        out[j] = pair_sum(pts[gather_index(2 * j, mask)], pts[gather_index(2 * j + 1, mask)], p, inv);
    }
}

static A host_add(const A& p, const A& q) {
    fp_t lam = (q.y - p.y) * (q.x - p.x).inverse();
    A r;
    r.x = lam.sqr() - p.x - q.x;
    r.y = lam * (p.x - r.x) - p.y;
    return r;
}

struct timer {
    cudaEvent_t a, b;
    timer() {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    void start() { CK(cudaEventRecord(a)); }
    float stop_ms() {
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }
};

// Times launch (best of reps after a warm-up), which adds the pairs
// (gather_index(2j), gather_index(2j + 1)) into d_out[j] for j < npairs, and
// checks 512 sampled sums against host additions; prints a row labelled
// name, K and what.
template <class L>
static int run_pairs(const char* name, int K, const char* what, L launch, const A* d_out, std::vector<A>& pts,
                     uint32_t mask, uint64_t npairs, int reps) {
    timer tm;
    CK(cudaMemset((void*)d_out, 0, npairs * sizeof(A)));
    launch();  // warm-up
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    float best = 1e30f;
    for (int r = 0; r < reps; r++) {
        tm.start();
        launch();
        float ms = tm.stop_ms();
        if (ms < best) best = ms;
    }
    CK(cudaGetLastError());
    std::vector<A> out(npairs);
    CK(cudaMemcpy(out.data(), d_out, npairs * sizeof(A), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (uint64_t s = 0; s < 512; s++) {
        uint64_t j = (s * 2654435761ull) % npairs;
        A want = host_add(pts[gather_index(2 * j, mask)], pts[gather_index(2 * j + 1, mask)]);
        if (!(want.x == out[j].x) || !(want.y == out[j].y)) bad++;
    }
    printf("%-6s K=%-4d %9.3f ms  %6.3f G additions/s  (%llu pairs, %s)  %d of 512 sampled wrong\n", name, K, best,
           npairs / (best * 1e6), (unsigned long long)npairs, what, bad);
    return bad;
}

template <int K>
static int run_affine(const A* d_pts, std::vector<A>& pts, uint32_t mask, uint64_t n, A* d_out, int reps) {
    const uint64_t npairs = n / 2;
    const uint64_t threads = (npairs + K - 1) / K;
    const unsigned blocks = (unsigned)((threads + 127) / 128);
    char what[64];
    snprintf(what, sizeof what, "%llu threads", (unsigned long long)threads);
    return run_pairs("affine", K, what, [&] { k_affine_pairs<K><<<blocks, 128>>>(d_pts, mask, npairs, d_out); },
                     d_out, pts, mask, npairs, reps);
}

template <int K>
static int run_warp(const A* d_pts, std::vector<A>& pts, uint32_t mask, uint64_t n, A* d_out, int reps) {
    const uint64_t npairs = n / 2;
    const uint64_t threads = (npairs + K - 1) / K;
    const unsigned blocks = (unsigned)((threads + 127) / 128);
    const size_t smem = (size_t)K * 48 * 128;
    CK(cudaFuncSetAttribute(k_affine_warp<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_affine_warp<K>, 128, smem));
    char what[64];
    snprintf(what, sizeof what, "%d blocks an SM", occ);
    return run_pairs("warp", K, what, [&] { k_affine_warp<K><<<blocks, 128, smem>>>(d_pts, mask, npairs, d_out); },
                     d_out, pts, mask, npairs, reps);
}

template <int K>
static int run_global(const A* d_pts, std::vector<A>& pts, uint32_t mask, uint64_t n, A* d_out, int reps) {
    constexpr int KB = 32;
    const uint64_t npairs = n / 2;
    const uint64_t threads = (npairs + K - 1) / K;
    const unsigned blocks = (unsigned)((threads + 127) / 128);
    const uint64_t nt = (uint64_t)blocks * 128, nw = nt / 32;
    uint32_t* pre;
    fp_t *cof, *tot;
    CK(cudaMalloc(&pre, (size_t)K * 48 * nt));
    CK(cudaMalloc(&cof, nt * sizeof(fp_t)));
    CK(cudaMalloc(&tot, nw * sizeof(fp_t)));
    const unsigned iblocks = (unsigned)(((nw + KB - 1) / KB + 127) / 128);
    const int bad = run_pairs("global", K, "3 kernels",
                              [&] {
                                  k_global_fwd<K><<<blocks, 128>>>(d_pts, mask, npairs, pre, cof, tot);
                                  k_invert_batches<KB><<<iblocks, 128>>>(tot, nw);
                                  k_global_bwd<K><<<blocks, 128>>>(d_pts, mask, npairs, pre, cof, tot, d_out);
                              },
                              d_out, pts, mask, npairs, reps);
    CK(cudaFree(pre));
    CK(cudaFree(cof));
    CK(cudaFree(tot));
    return bad;
}

// Each runner over the batch sizes Ks: the wrong samples summed.
template <int... Ks>
struct runs {
    static int global(const A* d, std::vector<A>& p, uint32_t m, uint64_t n, A* o, int r) {
        return (run_global<Ks>(d, p, m, n, o, r) + ...);
    }
    static int warp(const A* d, std::vector<A>& p, uint32_t m, uint64_t n, A* o, int r) {
        return (run_warp<Ks>(d, p, m, n, o, r) + ...);
    }
    static int affine(const A* d, std::vector<A>& p, uint32_t m, uint64_t n, A* o, int r) {
        return (run_affine<Ks>(d, p, m, n, o, r) + ...);
    }
};

int main(int argc, char** argv) {
    const int lg = argc > 1 ? atoi(argv[1]) : 24;
    const uint64_t n = 1ull << lg;
    const uint32_t mask = (uint32_t)(n - 1);
    const int reps = 3;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs; 2^%d points (%.2f GB)\n", prop.name, prop.multiProcessorCount, lg, n * sizeof(A) / 1e9);
    A* d_pts;
    CK(cudaMalloc(&d_pts, n * sizeof(A)));
    k_points<<<(unsigned)((n + 255) / 256), 256>>>(d_pts, n);
    CK(cudaGetLastError());
    std::vector<A> pts(n);
    CK(cudaMemcpy(pts.data(), d_pts, n * sizeof(A), cudaMemcpyDeviceToHost));
    void* d_out;
    CK(cudaMalloc(&d_out, (n / 2) * sizeof(A) > (n / 16) * sizeof(X) ? (n / 2) * sizeof(A) : (n / 16) * sizeof(X)));

    int bad = 0;
    // XYZZ chains of K = 16 points per thread (k_run_tasks' pieces hold up to 128).
    for (int K : {16, 128}) {
        const uint64_t threads = (n + K - 1) / K;
        const unsigned blocks = (unsigned)((threads + 127) / 128);
        timer tm;
        k_xyzz_chain<<<blocks, 128>>>(d_pts, mask, n, K, (X*)d_out);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        float best = 1e30f;
        for (int r = 0; r < reps; r++) {
            tm.start();
            k_xyzz_chain<<<blocks, 128>>>(d_pts, mask, n, K, (X*)d_out);
            float ms = tm.stop_ms();
            if (ms < best) best = ms;
        }
        std::vector<X> out(threads);
        CK(cudaMemcpy(out.data(), d_out, threads * sizeof(X), cudaMemcpyDeviceToHost));
        int wrong = 0;
        for (uint64_t s = 0; s < 64; s++) {
            uint64_t t = (s * 2654435761ull) % threads;
            A acc = pts[gather_index(t * K, mask)];
            for (int i = 1; i < K; i++) acc = host_add(acc, pts[gather_index(t * K + i, mask)]);
            const X& g = out[t];
            fp_t zzi = g.zz.inverse(), zzzi = g.zzz.inverse();
            if (!(acc.x == g.x * zzi) || !(acc.y == g.y * zzzi)) wrong++;
        }
        bad += wrong;
        printf("xyzz   K=%-4d %9.3f ms  %6.3f G additions/s  (%llu points, %llu threads)  %d of 64 sampled wrong\n", K,
               best, n / (best * 1e6), (unsigned long long)n, (unsigned long long)threads, wrong);
    }
    bad += runs<4, 8, 16, 32>::global(d_pts, pts, mask, n, (A*)d_out, reps);
    bad += runs<4, 8, 16, 32>::warp(d_pts, pts, mask, n, (A*)d_out, reps);
    bad += runs<16, 64, 128, 256, 512>::affine(d_pts, pts, mask, n, (A*)d_out, reps);
    CK(cudaFree(d_pts));
    CK(cudaFree(d_out));
    return bad ? 1 : 0;
}
