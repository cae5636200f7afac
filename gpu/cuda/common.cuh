// Internal helpers shared by the translation units of libc2cuda.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <atomic>
#include "c2cuda.h"

namespace c2 {

// A stream object: one CUDA stream for compute, one for host<->device copies.
struct stream_ctx {
    int ordinal;
    cudaStream_t s;
    cudaStream_t copy;
    int sm_count;
    cudaEvent_t mark[2];  // start and end of the current call, for c2_stream_span
    void* out_stage;      // pinned host memory of out_stage_bytes for call results (copy_out)
    // Scratch (below) of the stream's calls: the bytes allocated and not yet
    // released, in host order, and their most since the last start mark
    // (c2_stream_mark 0), which c2_stream_scratch reports.
    std::atomic<uint64_t> scratch_live{0};
    std::atomic<uint64_t> scratch_peak{0};
};

// The library streams whose scratch is counted: stream_ctx registers itself
// when created and leaves when destroyed; scratch_owner finds the stream_ctx
// of a CUDA stream (compute or copy), nullptr for any other.
void scratch_register(stream_ctx* sc);
void scratch_unregister(stream_ctx* sc);
stream_ctx* scratch_owner(cudaStream_t s);

// The largest call result copy_out carries: 64 window sums of a G2 MSM in
// XYZZ form (64 x 384 bytes).
constexpr size_t out_stage_bytes = 24576;

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

// Events a call creates for its own streams' order, destroyed when the call
// returns; slots it never created stay null.
template <int K>
struct call_events {
    cudaEvent_t e[K] = {};
    ~call_events() {
        for (cudaEvent_t x : e)
            if (x) cudaEventDestroy(x);
    }
    cudaEvent_t& operator[](int i) { return e[i]; }
};

// rc, after the stream s has drained when rc is an error: a failed entry
// point leaves no work of its own queued behind it.
inline int drained(cudaStream_t s, int rc) {
    if (rc) cudaStreamSynchronize(s);
    return rc;
}

// Evaluates a CUDA call; on failure records it and returns from the caller.
#define C2_CHECK(call)                                                        \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) return cuda_fail(st, e_, #call, __FILE__, __LINE__); \
    } while (0)

// Selects device ordinal for this host thread. The first successful call for
// an ordinal sets how host threads wait for it (C2_CUDA_SYNC, see api.cu); a
// failed one is returned, and the next call tries again.
int enter_device(c2_status* st, int ordinal);

// Starts an entry point on a device: selects it and clears a stale,
// non-sticky error left in this host thread by an earlier failed call.
#define C2_ENTER(ordinal)                          \
    do {                                           \
        int rc_ = enter_device(st, (ordinal));     \
        if (rc_) return rc_;                       \
        (void)cudaGetLastError();                  \
    } while (0)

// Kernel trace, on when the environment has C2_TRACE=1: a traced call (a
// trace_call alive on its host thread) records an event on its stream
// after each kernel it launches (trace_mark) and, when it ends, writes to
// stderr one line a kernel with the kernel's completion time in ms since
// the device's epoch and the time since the call's previous mark — which
// kernels of a call waited, and for how long, without a profiler — after
// one line for the call: its start on the device and, on the host's clock
// in ms since the epoch was seen, when the call began and ended. The host
// times show how long the device waited for the host between calls.
struct trace_call {
    trace_call(int ordinal, cudaStream_t s, const char* call);
    ~trace_call();
    void mark(const char* what);

   private:
    static constexpr int max_marks = 256;
    int ordinal_;
    cudaStream_t s_;
    const char* call_;
    trace_call* outer_;
    cudaEvent_t start_ = nullptr;
    double host_start_ = 0;  // ms on the host's clock (see host_ms)
    cudaEvent_t ev_[max_marks];
    const char* what_[max_marks];
    int n_ = 0;
};

// Marks the end of the work just queued on the traced call's stream, if
// this thread runs a traced call.
void trace_mark(const char* what);

// Checks the last launch (and marks it for the trace).
#define C2_CHECK_LAUNCH(name)                  \
    do {                                       \
        C2_CHECK(cudaPeekAtLastError());       \
        trace_mark(#name);                     \
    } while (0)

// Copies a call's result, rows of width bytes spaced spitch bytes apart
// in device memory, to dst (rows packed) and waits for it. The copy lands
// in the stream's pinned stage first: a copy into pageable memory goes
// through the driver's staging buffer, which copies of other streams share,
// so a short call would wait for a long call's copies to drain.
inline int copy_out(c2_status* st, stream_ctx* sc, void* dst, const void* src, size_t width, size_t spitch,
                    size_t rows) {
    const size_t bytes = width * rows;
    if (bytes > out_stage_bytes)
        return set_status(st, C2_ERR_INVALID, 0, "result of %zu bytes exceeds the stage (%zu)", bytes, out_stage_bytes);
    if (bytes == 0) return ok(st);
    C2_CHECK(cudaMemcpy2DAsync(sc->out_stage, width, src, spitch, width, rows, cudaMemcpyDeviceToHost, sc->s));
    C2_CHECK(cudaStreamSynchronize(sc->s));
    memcpy(dst, sc->out_stage, bytes);
    return ok(st);
}

// Stream-ordered device scratch memory released when it leaves scope,
// counted in its library stream's scratch_live and scratch_peak. One alloc
// an object.
struct scratch {
    void* p = nullptr;
    cudaStream_t s = 0;
    size_t bytes = 0;
    stream_ctx* owner = nullptr;
    scratch() {}
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
    ~scratch() {
        if (!p) return;
        cudaFreeAsync(p, s);
        if (owner) owner->scratch_live -= bytes;
    }
    cudaError_t alloc(size_t n, cudaStream_t stream) {
        s = stream;
        cudaError_t e = cudaMallocAsync(&p, n ? n : 1, stream);
        if (e != cudaSuccess) {
            p = nullptr;
            return e;
        }
        bytes = n;
        if ((owner = scratch_owner(stream))) {
            const uint64_t live = owner->scratch_live += n;
            uint64_t peak = owner->scratch_peak.load();
            while (live > peak && !owner->scratch_peak.compare_exchange_weak(peak, live)) {
            }
        }
        return e;
    }
    template <class T>
    T* as() const { return (T*)p; }
};

inline unsigned blocks_for(uint64_t n, unsigned threads) { return (unsigned)((n + threads - 1) / threads); }

}  // namespace c2
