// Device, stream and memory entry points of libc2cuda.
#include <stdarg.h>
#include <stdlib.h>
#include <chrono>
#include <mutex>
#include <vector>
#include "common.cuh"

namespace c2 {

int set_status(c2_status* st, int code, int cuda_err, const char* fmt, ...) {
    if (st) {
        st->code = code;
        st->cuda_error = cuda_err;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->msg, sizeof st->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int cuda_fail(c2_status* st, cudaError_t e, const char* what, const char* file, int line) {
    int code = C2_ERR_CUDA;
    switch (e) {
    case cudaErrorMemoryAllocation:
        code = C2_ERR_OOM;
        break;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
        code = C2_ERR_NO_DEVICE;
        break;
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorContextIsDestroyed:
        code = C2_ERR_LOST;
        break;
    default:
        break;
    }
    const char* base = strrchr(file, '/');
    return set_status(st, code, (int)e, "%s: %s (%s:%d)", cudaGetErrorString(e), what,
                      base ? base + 1 : file, line);
}

// How a host thread waits for a device (C2_CUDA_SYNC): "block" (the default)
// sleeps until the driver wakes it, "spin" busy-waits on its core and "yield"
// busy-waits yielding the core. A call waits for its stream for the whole
// device work it launched (about a second for a 32 GiB partition's pass), so
// spinning would hold one host core busy for each call in flight, cores the
// witness synthesis and the host's share of B_G2 need; a blocking wait costs
// some microseconds of wake-up a synchronization instead.
static int sync_flags(const char* v) {
    if (!v || !*v || strcmp(v, "block") == 0) return cudaDeviceScheduleBlockingSync;
    if (strcmp(v, "spin") == 0) return cudaDeviceScheduleSpin;
    if (strcmp(v, "yield") == 0) return cudaDeviceScheduleYield;
    return -1;
}

static std::mutex enter_mu;
static std::atomic<bool> entered[64];  // the device's wait mode is set

static bool trace_on();

int enter_device(c2_status* st, int ordinal) {
    if (ordinal < 0 || ordinal >= 64)
        return set_status(st, C2_ERR_NO_DEVICE, 0, "no CUDA device %d", ordinal);
    if (!entered[ordinal].load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> g(enter_mu);
        if (!entered[ordinal].load(std::memory_order_relaxed)) {
            const char* v = getenv("C2_CUDA_SYNC");
            const int want = sync_flags(v);
            if (want < 0)
                return set_status(st, C2_ERR_INVALID, 0, "C2_CUDA_SYNC=\"%s\": want block, spin or yield", v);
            // Before the device's first use in this process, so that its
            // primary context starts with these flags. Where another library
            // in the process started it already, the flags are set on it
            // after, if the driver lets them change: the mode is a matter of
            // host load, not of results, so a refusal leaves the device usable.
            // A failure here is returned and the next call tries again.
            cudaError_t e = cudaInitDevice(ordinal, (unsigned)want, cudaInitDeviceFlagsAreValid);
            if (e == cudaErrorSetOnActiveProcess)
                (void)cudaGetLastError();  // started by another library: set below if allowed
            else
                C2_CHECK(e);
            C2_CHECK(cudaSetDevice(ordinal));
            unsigned got = 0;
            C2_CHECK(cudaGetDeviceFlags(&got));
            if ((got & cudaDeviceScheduleMask) != (unsigned)want &&
                (cudaSetDeviceFlags((got & ~cudaDeviceScheduleMask) | (unsigned)want) != cudaSuccess ||
                 cudaGetDeviceFlags(&got) != cudaSuccess))
                (void)cudaGetLastError();
            if (trace_on())
                fprintf(stderr, "c2trace dev=%d sync=%s flags=%#x\n", ordinal, v && *v ? v : "block", got);
            entered[ordinal].store(true, std::memory_order_release);
        }
    }
    C2_CHECK(cudaSetDevice(ordinal));
    return 0;
}

static std::once_flag pool_once[64];
static std::once_flag epoch_once[64];
static cudaEvent_t epoch[64];  // time origin of each device's stream spans
// The host's monotonic clock when the epoch event was seen complete: the
// trace's host times are ms since then, within a wake-up of the device's.
static std::chrono::steady_clock::time_point host_epoch[64];

static double host_ms(int ordinal) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_epoch[ordinal]).count();
}

static bool trace_on() {
    static const bool on = [] {
        const char* v = getenv("C2_TRACE");
        return v && strcmp(v, "1") == 0;
    }();
    return on;
}

static thread_local trace_call* current_trace = nullptr;

trace_call::trace_call(int ordinal, cudaStream_t s, const char* call)
    : ordinal_(ordinal), s_(s), call_(call), outer_(current_trace) {
    if (!trace_on() || ordinal < 0 || ordinal >= 64 || !epoch[ordinal]) return;
    host_start_ = host_ms(ordinal);
    if (cudaEventCreate(&start_) != cudaSuccess || cudaEventRecord(start_, s) != cudaSuccess) {
        if (start_) cudaEventDestroy(start_);
        start_ = nullptr;
        return;
    }
    current_trace = this;
}

void trace_call::mark(const char* what) {
    if (!start_ || n_ == max_marks) return;
    cudaEvent_t e;
    if (cudaEventCreate(&e) != cudaSuccess) return;
    if (cudaEventRecord(e, s_) != cudaSuccess) {
        cudaEventDestroy(e);
        return;
    }
    ev_[n_] = e;
    what_[n_++] = what;
}

trace_call::~trace_call() {
    if (!start_) return;
    const double host_end = host_ms(ordinal_);
    current_trace = outer_;
    float t0 = 0, prev = 0;
    bool timed = n_ > 0 && cudaEventSynchronize(ev_[n_ - 1]) == cudaSuccess &&
                 cudaEventElapsedTime(&t0, epoch[ordinal_], start_) == cudaSuccess;
    if (timed)
        fprintf(stderr, "c2trace dev=%d stream=%p call=%s start_ms=%.3f host_start_ms=%.3f host_end_ms=%.3f\n",
                ordinal_, (void*)s_, call_, t0, host_start_, host_end);
    prev = t0;
    for (int i = 0; i < n_; i++) {
        float t = 0;
        if (timed && cudaEventElapsedTime(&t, epoch[ordinal_], ev_[i]) == cudaSuccess) {
            fprintf(stderr, "c2trace dev=%d stream=%p call=%s seq=%d kernel=%s end_ms=%.3f dt_ms=%.3f\n", ordinal_,
                    (void*)s_, call_, i, what_[i], t, t - prev);
            prev = t;
        }
        cudaEventDestroy(ev_[i]);
    }
    cudaEventDestroy(start_);
    (void)cudaGetLastError();
}

void trace_mark(const char* what) {
    if (current_trace) current_trace->mark(what);
}

static std::mutex streams_mu;
static std::vector<stream_ctx*> streams;  // the live library streams

void scratch_register(stream_ctx* sc) {
    std::lock_guard<std::mutex> g(streams_mu);
    streams.push_back(sc);
}

void scratch_unregister(stream_ctx* sc) {
    std::lock_guard<std::mutex> g(streams_mu);
    for (size_t i = 0; i < streams.size(); i++) {
        if (streams[i] == sc) {
            streams[i] = streams.back();
            streams.pop_back();
            return;
        }
    }
}

stream_ctx* scratch_owner(cudaStream_t s) {
    std::lock_guard<std::mutex> g(streams_mu);
    for (stream_ctx* sc : streams)
        if (sc->s == s || sc->copy == s) return sc;
    return nullptr;
}

}  // namespace c2

using namespace c2;

extern "C" {

int c2_abi_version(void) { return C2_ABI_VERSION; }

int c2_device_count(c2_status* st, int* count) {
    *count = 0;
    C2_CHECK(cudaGetDeviceCount(count));
    return ok(st);
}

int c2_device_info(c2_status* st, int ordinal, char* name, int name_len, uint64_t* total_mem,
                   int* sm_count, int* cc_major, int* cc_minor) {
    cudaDeviceProp p;
    C2_CHECK(cudaGetDeviceProperties(&p, ordinal));
    if (name && name_len > 0) {
        strncpy(name, p.name, name_len - 1);
        name[name_len - 1] = 0;
    }
    *total_mem = p.totalGlobalMem;
    *sm_count = p.multiProcessorCount;
    *cc_major = p.major;
    *cc_minor = p.minor;
    return ok(st);
}

int c2_mem_info(c2_status* st, int ordinal, uint64_t* free_bytes, uint64_t* total_bytes) {
    C2_ENTER(ordinal);
    size_t f = 0, t = 0;
    C2_CHECK(cudaMemGetInfo(&f, &t));
    *free_bytes = f;
    *total_bytes = t;
    return ok(st);
}

int c2_stream_create(c2_status* st, int ordinal, int urgent, c2_stream** out) {
    *out = nullptr;
    int n = 0;
    C2_CHECK(cudaGetDeviceCount(&n));
    if (ordinal < 0 || ordinal >= n || ordinal >= 64)
        return set_status(st, C2_ERR_NO_DEVICE, 0, "no CUDA device %d (have %d)", ordinal, n);
    C2_ENTER(ordinal);
    // Keep freed stream-ordered memory in the pool: the hot paths then never
    // return memory to the driver (no implicit device synchronization). And
    // never let an allocation reuse memory whose free is still pending on
    // another stream: the pool would make the allocating stream wait for
    // that stream's queued work, so a short call beside a long one would
    // wait for all of it. Reuse of completed frees stays allowed.
    cudaError_t perr = cudaSuccess;
    std::call_once(pool_once[ordinal], [&] {
        cudaMemPool_t pool;
        perr = cudaDeviceGetDefaultMemPool(&pool, ordinal);
        if (perr == cudaSuccess) {
            uint64_t thr = UINT64_MAX;
            perr = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr);
        }
        if (perr == cudaSuccess) {
            int no = 0;
            perr = cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &no);
        }
    });
    C2_CHECK(perr);
    stream_ctx* s = new stream_ctx();
    s->ordinal = ordinal;
    int least = 0, greatest = 0;
    cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    const int prio = urgent ? greatest : least;
    if (e == cudaSuccess) e = cudaStreamCreateWithPriority(&s->s, cudaStreamNonBlocking, prio);
    if (e == cudaSuccess) e = cudaStreamCreateWithPriority(&s->copy, cudaStreamNonBlocking, prio);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&s->sm_count, cudaDevAttrMultiProcessorCount, ordinal);
    if (e == cudaSuccess) e = cudaEventCreate(&s->mark[0]);
    if (e == cudaSuccess) e = cudaEventCreate(&s->mark[1]);
    if (e == cudaSuccess) e = cudaMallocHost(&s->out_stage, out_stage_bytes);
    if (e == cudaSuccess) {
        std::call_once(epoch_once[ordinal], [&] {
            e = cudaEventCreate(&epoch[ordinal]);
            if (e == cudaSuccess) e = cudaEventRecord(epoch[ordinal], s->s);
            if (e == cudaSuccess) e = cudaEventSynchronize(epoch[ordinal]);
            host_epoch[ordinal] = std::chrono::steady_clock::now();
        });
    }
    if (e != cudaSuccess) {
        if (s->out_stage) cudaFreeHost(s->out_stage);
        delete s;
        return cuda_fail(st, e, "stream create", __FILE__, __LINE__);
    }
    scratch_register(s);
    *out = (c2_stream*)s;
    return ok(st);
}

int c2_stream_destroy(c2_status* st, c2_stream* h) {
    stream_ctx* s = (stream_ctx*)h;
    if (!s) return ok(st);
    C2_ENTER(s->ordinal);
    scratch_unregister(s);
    cudaError_t e1 = cudaStreamSynchronize(s->s);
    cudaError_t e2 = cudaStreamSynchronize(s->copy);
    cudaStreamDestroy(s->s);
    cudaStreamDestroy(s->copy);
    cudaEventDestroy(s->mark[0]);
    cudaEventDestroy(s->mark[1]);
    if (s->out_stage) cudaFreeHost(s->out_stage);
    delete s;
    C2_CHECK(e1);
    C2_CHECK(e2);
    return ok(st);
}

int c2_stream_mark(c2_status* st, c2_stream* h, int which) {
    stream_ctx* s = (stream_ctx*)h;
    if (which != 0 && which != 1) return set_status(st, C2_ERR_INVALID, 0, "mark %d", which);
    C2_ENTER(s->ordinal);
    C2_CHECK(cudaEventRecord(s->mark[which], s->s));
    if (which == 0) s->scratch_peak = s->scratch_live.load();
    return ok(st);
}

int c2_stream_scratch(c2_status* st, c2_stream* h, uint64_t* peak_bytes) {
    stream_ctx* s = (stream_ctx*)h;
    if (!s || !peak_bytes) return set_status(st, C2_ERR_INVALID, 0, "c2_stream_scratch: null argument");
    *peak_bytes = s->scratch_peak.load();
    return ok(st);
}

int c2_stream_span(c2_status* st, c2_stream* h, double* start_ms, double* end_ms) {
    stream_ctx* s = (stream_ctx*)h;
    *start_ms = *end_ms = 0;
    C2_ENTER(s->ordinal);
    C2_CHECK(cudaEventSynchronize(s->mark[1]));
    float a = 0, b = 0;
    C2_CHECK(cudaEventElapsedTime(&a, epoch[s->ordinal], s->mark[0]));
    C2_CHECK(cudaEventElapsedTime(&b, epoch[s->ordinal], s->mark[1]));
    *start_ms = a;
    *end_ms = b;
    return ok(st);
}

int c2_mem_alloc(c2_status* st, int ordinal, uint64_t bytes, void** dptr) {
    *dptr = nullptr;
    C2_ENTER(ordinal);
    C2_CHECK(cudaMalloc(dptr, bytes ? bytes : 1));
    return ok(st);
}

int c2_mem_free(c2_status* st, int ordinal, void* dptr) {
    C2_ENTER(ordinal);
    C2_CHECK(cudaFree(dptr));
    return ok(st);
}

int c2_host_alloc(c2_status* st, uint64_t bytes, void** hptr) {
    *hptr = nullptr;
    C2_CHECK(cudaHostAlloc(hptr, bytes ? bytes : 1, cudaHostAllocPortable));
    return ok(st);
}

int c2_host_free(c2_status* st, void* hptr) {
    C2_CHECK(cudaFreeHost(hptr));
    return ok(st);
}

int c2_copy(c2_status* st, c2_stream* h, void* dst, const void* src, uint64_t bytes, int kind) {
    stream_ctx* s = (stream_ctx*)h;
    cudaMemcpyKind k;
    switch (kind) {
    case 1: k = cudaMemcpyHostToDevice; break;
    case 2: k = cudaMemcpyDeviceToHost; break;
    case 3: k = cudaMemcpyDeviceToDevice; break;
    default: return set_status(st, C2_ERR_INVALID, 0, "copy kind %d", kind);
    }
    C2_ENTER(s->ordinal);
    C2_CHECK(cudaMemcpyAsync(dst, src, bytes, k, s->s));
    C2_CHECK(cudaStreamSynchronize(s->s));
    return ok(st);
}

}  // extern "C"
