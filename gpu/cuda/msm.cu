// C entry points for MSM, batch addition and point filling (G1 and G2).
#include "msm_entry.h"

using namespace c2;

static int check_group(c2_status* st, int group) {
    if (group != 1 && group != 2) return set_status(st, C2_ERR_INVALID, 0, "group %d is not 1 or 2", group);
    return C2_OK;
}

// dst[j] = src[idx[j]] for points of W 16-byte words (6 for G1, 12 for G2):
// one thread per word, so that a warp reads whole points.
static __global__ void k_gather_points(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                       const uint32_t* __restrict__ idx, uint64_t n, int W) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n * W) return;
    uint64_t j = t / W;
    int w = (int)(t - j * W);
    dst[t] = src[(uint64_t)idx[j] * W + w];
}

// c2_msm and c2_msm_split (bases_hi not null).
static int msm_entry(c2_status* st, c2_stream* h, int group, const void* bases, bool bases_dev, const void* bases_hi,
                     const void* scalars, bool scalars_dev, uint64_t n, int window_bits, void* out, int* nwindows,
                     int* used_window_bits, const char* name) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || !out || !nwindows || !used_window_bits || (n && (!bases || !scalars)))
        return set_status(st, C2_ERR_INVALID, 0, "%s: null argument", name);
    if (int rc = check_group(st, group)) return rc;
    C2_ENTER(sc->ordinal);
    trace_call trace(sc->ordinal, sc->s, bases_hi ? "msm_split" : "msm");
    return drained(sc->s, group == 1 ? msm_g1(st, sc, bases, bases_dev, bases_hi, scalars, scalars_dev, n,
                                              window_bits, out, nwindows, used_window_bits)
                                     : msm_g2(st, sc, bases, bases_dev, bases_hi, scalars, scalars_dev, n,
                                              window_bits, out, nwindows, used_window_bits));
}

extern "C" {

int c2_msm_indexed(c2_status* st, c2_stream* h, int group, const void* bases, uint64_t nbases, const uint32_t* idx,
                   const void* scalars, uint64_t n, int window_bits, void* out, int* nwindows, int* used_window_bits) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || !out || !nwindows || !used_window_bits || (n && (!bases || !scalars || !idx)))
        return set_status(st, C2_ERR_INVALID, 0, "c2_msm_indexed: null argument");
    if (int rc = check_group(st, group)) return rc;
    C2_ENTER(sc->ordinal);
    trace_call trace(sc->ordinal, sc->s, "msm_indexed");
    const int W = group == 1 ? 6 : 12;
    scratch pts, ix;
    if (n) {
        C2_CHECK(pts.alloc(n * W * sizeof(uint4), sc->s));
        C2_CHECK(ix.alloc(n * sizeof(uint32_t), sc->s));
        C2_CHECK(cudaMemcpyAsync(ix.p, idx, n * sizeof(uint32_t), cudaMemcpyHostToDevice, sc->s));
        k_gather_points<<<blocks_for(n * W, 256), 256, 0, sc->s>>>(pts.as<uint4>(), (const uint4*)bases,
                                                                   ix.as<uint32_t>(), n, W);
        C2_CHECK_LAUNCH(k_gather_points);
    }
    (void)nbases;
    int rc;
    if (group == 1)
        rc = msm_g1(st, sc, pts.p, true, nullptr, scalars, false, n, window_bits, out, nwindows, used_window_bits);
    else
        rc = msm_g2(st, sc, pts.p, true, nullptr, scalars, false, n, window_bits, out, nwindows, used_window_bits);
    cudaStreamSynchronize(sc->s);  // the scratch is released in stream order; the host idx is free now
    return rc;
}

int c2_msm(c2_status* st, c2_stream* h, int group, const void* bases, int bases_on_device, const void* scalars,
           int scalars_on_device, uint64_t n, int window_bits, void* out, int* nwindows, int* used_window_bits) {
    return msm_entry(st, h, group, bases, bases_on_device, nullptr, scalars, scalars_on_device, n, window_bits, out,
                     nwindows, used_window_bits, "c2_msm");
}

int c2_msm_split(c2_status* st, c2_stream* h, int group, const void* bases, const void* bases_hi, const void* scalars,
                 int scalars_on_device, uint64_t n, int window_bits, void* out, int* nwindows, int* used_window_bits) {
    if (n && !bases_hi) return set_status(st, C2_ERR_INVALID, 0, "c2_msm_split: null argument");
    return msm_entry(st, h, group, bases, true, bases_hi, scalars, scalars_on_device, n, window_bits, out, nwindows,
                     used_window_bits, "c2_msm_split");
}

int c2_shift_points(c2_status* st, c2_stream* h, int group, void* dst, const void* src, uint64_t n, int doublings) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || (n && (!dst || !src))) return set_status(st, C2_ERR_INVALID, 0, "c2_shift_points: null argument");
    if (int rc = check_group(st, group)) return rc;
    C2_ENTER(sc->ordinal);
    trace_call trace(sc->ordinal, sc->s, "shift_points");
    return drained(sc->s, group == 1 ? shift_g1(st, sc, dst, src, n, doublings)
                                     : shift_g2(st, sc, dst, src, n, doublings));
}

int c2_batch_add(c2_status* st, c2_stream* h, int group, const void* bases, int bases_on_device,
                 const uint64_t* bitmap, uint64_t n, void* out) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || !out || (n && (!bases || !bitmap))) return set_status(st, C2_ERR_INVALID, 0, "c2_batch_add: null argument");
    if (int rc = check_group(st, group)) return rc;
    C2_ENTER(sc->ordinal);
    trace_call trace(sc->ordinal, sc->s, "batch_add");
    return drained(sc->s, group == 1 ? batch_add_g1(st, sc, bases, bases_on_device, bitmap, n, out)
                                     : batch_add_g2(st, sc, bases, bases_on_device, bitmap, n, out));
}

int c2_fill_points(c2_status* st, c2_stream* h, int group, void* dst, uint64_t n, const void* seeds, uint64_t k) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || !dst || !seeds) return set_status(st, C2_ERR_INVALID, 0, "c2_fill_points: null argument");
    if (int rc = check_group(st, group)) return rc;
    C2_ENTER(sc->ordinal);
    return drained(sc->s, group == 1 ? fill_g1(st, sc, dst, n, seeds, k) : fill_g2(st, sc, dst, n, seeds, k));
}

}  // extern "C"
