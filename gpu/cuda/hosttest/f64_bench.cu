// Device experiment (needs a CUDA device): Fp products per second on the IMAD
// pipe (fp_t::mul_eo), on the FP64 pipe (f64::mul_f64, hosttest/field_f64.h)
// and both at once. Each thread runs four independent chains x_c <- x_c * y;
// a mode says which product each chain uses:
//   eo    all four mul_eo
//   f64   all four mul_f64
//   mix2  chains 0, 2 mul_eo; 1, 3 mul_f64
//   mix1  chains 0, 1, 2 mul_eo; 3 mul_f64
// Every mode computes the same values, so the results of all modes must be
// equal word for word; the program checks that, and one chain against the host.
// Each mode runs at the compiler's register count and at <= 168 registers
// (3 blocks of 128 threads an SM, as the MSM bucket kernel).
// Build and run: make -C gpu/cuda f64bench
#include "cuda_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include "field_f64.h"
#include "field_gen.h"

using namespace c2;

template <int Mode>
__device__ __forceinline__ fp_t product(int c, const fp_t& x, const fp_t& y) {
    bool f = Mode == 1 || (Mode == 2 && (c & 1)) || (Mode == 3 && c == 3);
    return f ? f64::mul_f64(x, y) : fp_t::mul_eo(x, y);
}

template <int Mode>
__device__ __forceinline__ void chains(uint64_t t, int rounds, fp_t* out) {
    fp_t x[4], y = chain_element(t * 5 + 4);
#pragma unroll
    for (int c = 0; c < 4; c++) x[c] = chain_element(t * 5 + c);
    for (int r = 0; r < rounds; r++) {
#pragma unroll
        for (int c = 0; c < 4; c++) x[c] = product<Mode>(c, x[c], y);
    }
#pragma unroll
    for (int c = 0; c < 4; c++) out[t * 4 + c] = x[c];
}

template <int Mode>
__global__ void __launch_bounds__(128) k_free(int rounds, fp_t* out) {
    chains<Mode>(blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, rounds, out);
}
template <int Mode>
__global__ void __launch_bounds__(128, 3) k_168(int rounds, fp_t* out) {
    chains<Mode>(blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, rounds, out);
}

typedef void (*kernel_t)(int, fp_t*);

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 64;
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int block = 128, grid = sms * 48;  // many waves: the tail is small
    const uint64_t threads = (uint64_t)grid * block;
    fp_t* d_out;
    CK(cudaMalloc(&d_out, threads * 4 * sizeof(fp_t)));
    std::vector<fp_t> ref(threads * 4), got(threads * 4);
    const char* names[4] = {"eo", "f64", "mix2", "mix1"};
    kernel_t free_k[4] = {k_free<0>, k_free<1>, k_free<2>, k_free<3>};
    kernel_t k168[4] = {k_168<0>, k_168<1>, k_168<2>, k_168<3>};
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int status = 0;
    for (int bound = 0; bound < 2; bound++) {
        for (int m = 0; m < 4; m++) {
            kernel_t k = bound ? k168[m] : free_k[m];
            cudaFuncAttributes fa;
            CK(cudaFuncGetAttributes(&fa, k));
            k<<<grid, block>>>(rounds, d_out);  // warm-up
            CK(cudaGetLastError());
            CK(cudaEventRecord(e0));
            k<<<grid, block>>>(rounds, d_out);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            CK(cudaMemcpy(got.data(), d_out, threads * 4 * sizeof(fp_t), cudaMemcpyDeviceToHost));
            long differ = 0;
            if (bound == 0 && m == 0)
                ref = got;
            else
                for (uint64_t i = 0; i < threads * 4; i++) differ += got[i] != ref[i];
            double rate = (double)threads * 4 * rounds / (ms * 1e-3) / 1e9;
            printf("%-5s %s  %3d regs %4d B spill  %8.3f ms  %6.2f G products/s  %ld differ from eo\n", names[m],
                   bound ? "<=168" : "free ", fa.numRegs, (int)fa.localSizeBytes, ms, rate, differ);
            if (differ) status = 1;
        }
    }
    if (!chain_matches_host(ref[0], rounds)) status = 1;
    printf("%s\n", status ? "FAIL" : "ok: every mode equals the host's chain");
    return status;
}
