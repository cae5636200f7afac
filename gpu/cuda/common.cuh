// Internal helpers shared by the translation units of libc2cuda.
#pragma once
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include "c2cuda.h"

namespace c2 {

// A stream object: one CUDA stream for compute, one for host<->device copies.
struct stream_ctx {
    int ordinal;
    cudaStream_t s;
    cudaStream_t copy;
    int sm_count;
    cudaEvent_t mark[2];  // start and end of the current call, for c2_stream_span
};

int set_status(c2_status* st, int code, int cuda_err, const char* fmt, ...);

// Maps a CUDA error to a C2 code and records it.
int cuda_fail(c2_status* st, cudaError_t e, const char* what, const char* file, int line);

inline int ok(c2_status* st) {
    if (st) {
        st->code = C2_OK;
        st->cuda_error = 0;
        st->msg[0] = 0;
    }
    return C2_OK;
}

// Evaluates a CUDA call; on failure records it and returns from the caller.
#define C2_CHECK(call)                                                        \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) return cuda_fail(st, e_, #call, __FILE__, __LINE__); \
    } while (0)

// Starts an entry point on a device: selects it and clears a stale,
// non-sticky error left in this host thread by an earlier failed call.
#define C2_ENTER(ordinal)                 \
    do {                                  \
        C2_CHECK(cudaSetDevice(ordinal)); \
        (void)cudaGetLastError();         \
    } while (0)

// Checks the last launch.
#define C2_CHECK_LAUNCH(name) C2_CHECK(cudaPeekAtLastError())

// Stream-ordered device scratch memory released when it leaves scope.
struct scratch {
    void* p = nullptr;
    cudaStream_t s = 0;
    scratch() {}
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
    ~scratch() {
        if (p) cudaFreeAsync(p, s);
    }
    cudaError_t alloc(size_t bytes, cudaStream_t stream) {
        s = stream;
        return cudaMallocAsync(&p, bytes ? bytes : 1, stream);
    }
    template <class T>
    T* as() const { return (T*)p; }
};

inline unsigned blocks_for(uint64_t n, unsigned threads) { return (unsigned)((n + threads - 1) / threads); }

}  // namespace c2
