// Device experiment (needs a CUDA device of compute capability 8.0 or more):
// whether the IMAD pipe's Fp products (fp_t::mul_eo) run beside int8 tensor
// core work (mma.sync m16n8k32 u8 x u8 -> s32) and beside carry-chain
// integer additions (add.cc/addc.cc, the ALU pipe), or take turns with them
// as they do with the FP64 pipe (f64_bench). A Montgomery reduction by the
// constant p on the tensor cores (byte limbs, 16 values a fragment) pays
// for its IMAD.WIDEs saved with MMAs and ALU carry work; it can win only if
// those pipes run while the IMAD pipe does.
//
// Each thread runs, per round, the work of its mode:
//   eo       four independent chains x_c <- x_c * y (mul_eo)
//   mma      K warp-wide MMAs into four independent accumulators
//   eo+mma   both, independent of each other
//   alu      A twelve-word carry chains (add.cc, addc.cc)
//   eo+alu   both
//   all      the three
// The s: modes run eo in some warps and the other work in others (k_spec).
// If a pair's time is near the larger of its parts, the pipes overlap; near
// their sum, they take turns. Kernels are bounded to <= 168 registers (3
// blocks of 128 threads an SM, as the MSM bucket kernel), and every launch
// asks for enough dynamic shared memory that no SM holds more blocks than
// that: a kernel of fewer registers alone would otherwise run with more
// warps than it has beside the products. The eo chains' results must be
// equal in every mode that runs them (checked).
// Build and run: make -C gpu/cuda mmabench [MMA_ARGS="rounds K A"]
#include "cuda_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include "field_gen.h"

using namespace c2;

// One m16n8k32 MMA, accumulating into c.
__device__ __forceinline__ void mma_u8(uint32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// x += y over twelve words with the carry chain (IADD3.X on the ALU pipe).
__device__ __forceinline__ void add_chain(uint32_t (&x)[12], const uint32_t (&y)[12]) {
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(x[0]) : "r"(y[0]));
#pragma unroll
    for (int i = 1; i < 11; i++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(x[i]) : "r"(y[i]));
    asm volatile("addc.u32 %0, %0, %1;" : "+r"(x[11]) : "r"(y[11]));
}

enum { EO = 1, MMA = 2, ALU = 4 };

template <int Mode>
__device__ __forceinline__ void work(uint64_t t, int rounds, int K, int A, fp_t* out, uint32_t* side) {
    fp_t x[4], y = chain_element(t * 5 + 4);
#pragma unroll
    for (int c = 0; c < 4; c++) x[c] = chain_element(t * 5 + c);
    uint32_t acc[4][4] = {}, a[4], b0 = mix32(t * 7 + 1), b1 = mix32(t * 7 + 2);
#pragma unroll
    for (int i = 0; i < 4; i++) a[i] = mix32(t * 7 + 3 + i);
    uint32_t s[12], d[12];
#pragma unroll
    for (int i = 0; i < 12; i++) s[i] = mix32(t * 29 + i), d[i] = mix32(t * 31 + i);
    for (int r = 0; r < rounds; r++) {
        if (Mode & EO) {
#pragma unroll
            for (int c = 0; c < 4; c++) x[c] = fp_t::mul_eo(x[c], y);
        }
        if (Mode & MMA) {
            for (int k = 0; k < K; k += 4) {
#pragma unroll
                for (int q = 0; q < 4; q++) mma_u8(acc[q], a, b0, b1);
                a[0] += 0x01010101u;  // the operands change, so no MMA is hoisted
                a[1] ^= a[0];
            }
        }
        if (Mode & ALU) {
            for (int k = 0; k < A; k++) {
                add_chain(s, d);
                d[0] ^= s[11];
            }
        }
    }
    if (Mode & EO) {
#pragma unroll
        for (int c = 0; c < 4; c++) out[t * 4 + c] = x[c];
    }
    uint32_t h = 0;
#pragma unroll
    for (int q = 0; q < 4; q++) h ^= acc[q][0] ^ acc[q][1] ^ acc[q][2] ^ acc[q][3];
#pragma unroll
    for (int i = 0; i < 12; i++) h ^= s[i];
    side[t] = h;
}

template <int Mode>
__global__ void __launch_bounds__(128, 3) k_mode(int rounds, int K, int A, fp_t* out, uint32_t* side) {
    work<Mode>(blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, rounds, K, A, out, side);
}

// Warp-specialized: blocks of 12 warps, one block an SM. With the usual
// placement of warp w on the SM's scheduler w % 4, each scheduler holds
// warps w, w + 4 (eo) and w + 8 (the other work). Which groups run is the mode: EO alone, the other
// alone, or both side by side on every scheduler.
template <int Mode>
__global__ void __launch_bounds__(384, 1) k_spec(int rounds, int K, int A, fp_t* out, uint32_t* side) {
    const uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const bool other = threadIdx.x >= 256;
    if (!other && (Mode & EO)) work<EO>(t, rounds, K, A, out, side);
    if (other && (Mode & MMA)) work<MMA>(t, rounds, K, A, out, side);
    if (other && (Mode & ALU)) work<ALU>(t, rounds, K, A, out, side);
}

typedef void (*kernel_t)(int, int, int, fp_t*, uint32_t*);

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 32;
    int K = argc > 2 ? atoi(argv[2]) : 16;
    int A = argc > 3 ? atoi(argv[3]) : 24;
    K = (K + 3) / 4 * 4;
    int dev = 0, sms = 0, clock_khz = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    const int block = 128, grid = sms * 48;  // many waves: the tail is small
    // dynamic shared memory that leaves room for three blocks an SM (k_mode)
    // or one (k_spec), whatever the kernel's registers allow
    int smem_sm = 0;
    CK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    const int three_an_sm = smem_sm / 4 + 1024, one_an_sm = smem_sm / 2 + 1024;
    const uint64_t threads = (uint64_t)grid * block;
    fp_t* d_out;
    uint32_t* d_side;
    CK(cudaMalloc(&d_out, threads * 4 * sizeof(fp_t)));
    CK(cudaMalloc(&d_side, threads * sizeof(uint32_t)));
    std::vector<fp_t> ref(threads * 4), got(threads * 4);
    struct {
        const char* name;
        int mode;
        kernel_t k;
    } modes[] = {{"eo", EO, k_mode<EO>},           {"mma", MMA, k_mode<MMA>}, {"eo+mma", EO | MMA, k_mode<EO | MMA>},
                 {"alu", ALU, k_mode<ALU>},        {"eo+alu", EO | ALU, k_mode<EO | ALU>},
                 {"all", EO | MMA | ALU, k_mode<EO | MMA | ALU>}};
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    // The best of three launches after a warm-up, ms.
    auto best_of_three = [&](kernel_t k, int blocks, int threads_a_block, int smem) {
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        k<<<blocks, threads_a_block, smem>>>(rounds, K, A, d_out, d_side);
        CK(cudaGetLastError());
        float best = 1e30f;
        for (int rep = 0; rep < 3; rep++) {
            CK(cudaEventRecord(e0));
            k<<<blocks, threads_a_block, smem>>>(rounds, K, A, d_out, d_side);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (ms < best) best = ms;
        }
        return best;
    };
    // A pair overlaps when its time is near the larger part's, not their sum.
    auto pair = [&](const char* layout, const float* t, const char* name, int p) {
        float s = t[EO] + t[p], mx = t[EO] > t[p] ? t[EO] : t[p];
        printf("%seo+%s: %.3f ms; parts' sum %.3f, larger part %.3f: %.0f %% of the way from sum to max\n", layout,
               name, t[EO | p], s, mx, 100.0 * (s - t[EO | p]) / (s - mx));
    };
    printf("%d SMs, %d MHz; %d rounds, K = %d MMAs and A = %d carry chains a round a thread\n", sms,
           clock_khz / 1000, rounds, K, A);
    int status = 0;
    float t_mode[8] = {};
    for (auto& m : modes) {
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, m.k));
        const float best = best_of_three(m.k, grid, block, three_an_sm);
        t_mode[m.mode] = best;
        long differ = 0;
        if (m.mode & EO) {
            CK(cudaMemcpy(got.data(), d_out, threads * 4 * sizeof(fp_t), cudaMemcpyDeviceToHost));
            if (m.mode == EO)
                ref = got;
            else
                for (uint64_t i = 0; i < threads * 4; i++) differ += got[i] != ref[i];
        }
        const double sec = best * 1e-3;
        const double warps = (double)threads / 32;
        printf("%-7s %3d regs %4d B spill  %9.3f ms", m.name, fa.numRegs, (int)fa.localSizeBytes, best);
        if (m.mode & EO) printf("  %6.2f G products/s", threads * 4.0 * rounds / sec / 1e9);
        if (m.mode & MMA) printf("  %7.2f MMA/clk/SM", warps * K * rounds / sec / (clock_khz * 1e3) / sms);
        if (m.mode & ALU) printf("  %6.2f G chains/s", threads * (double)A * rounds / sec / 1e9);
        if (m.mode & EO) printf("  %ld differ from eo", differ);
        printf("\n");
        if (differ) status = 1;
    }
    pair("", t_mode, "mma", MMA);
    pair("", t_mode, "alu", ALU);
    // The warp-specialized kernels: one block of 384 threads an SM.
    struct {
        const char* name;
        int mode;
        kernel_t k;
    } spec[] = {{"s:eo", EO, k_spec<EO>},
                {"s:mma", MMA, k_spec<MMA>},
                {"s:eo+mma", EO | MMA, k_spec<EO | MMA>},
                {"s:alu", ALU, k_spec<ALU>},
                {"s:eo+alu", EO | ALU, k_spec<EO | ALU>}};
    float t_spec[8] = {};
    for (auto& m : spec) {
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, m.k));
        t_spec[m.mode] = best_of_three(m.k, sms * 16, 384, one_an_sm);
        printf("%-9s %3d regs %4d B spill  %9.3f ms\n", m.name, fa.numRegs, (int)fa.localSizeBytes, t_spec[m.mode]);
    }
    pair("s:", t_spec, "mma", MMA);
    pair("s:", t_spec, "alu", ALU);
    if (!chain_matches_host(ref[0], rounds)) status = 1;
    printf("%s\n", status ? "FAIL" : "ok: every eo chain equals the host's");
    return status;
}
