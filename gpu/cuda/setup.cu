// Fixed-base scalar multiplication, for development proving keys made on
// the device (c2_fixed_base_table, c2_fixed_base_mul).
//
// A table holds, for W windows of near-equal widths c_w covering 256 bits at
// offsets o_w (digits.cuh, as the MSM cuts scalars), the multiples
// d·2^(o_w)·G for every signed-digit magnitude d in [1, 2^(c_w-1)]. A scalar
// k = Σ d_w·2^(o_w) then costs W mixed additions, one per window (the sign
// flips y), with no doubling.
//
// Each thread of c2_fixed_base_mul computes m points (indices t, t + T,
// t + 2T, ... of the chunk, T threads), parks each XYZZ result (X, Y in the
// output slot, ZZ and ZZZ in scratch) with the running product of the ZZZs,
// inverts that product once (Fermat) and walks back, peeling off each
// point's 1/ZZZ (Montgomery's batch inversion) to write the affine point: the
// inversion's ~570 products are shared by m points instead of paid per point.
#include "common.cuh"
#include "fixedbase.cuh"

namespace c2 {

static constexpr int FB_THREADS = 128;
static constexpr int FB_MIN_WINDOWS = 11;  // widest window 24 bits
static constexpr int FB_MAX_WINDOWS = 64;

// Entries per window: the widest window's magnitudes.
static inline uint32_t fb_entries(int W) { return 1u << (window_width(0, W) - 1); }

// Thread (w, e) of the table (see fb_table_entry).
template <class F>
__global__ void __launch_bounds__(FB_THREADS) k_fb_table(const affine_t<F>* __restrict__ bases, int W, uint32_t nb,
                                                         affine_t<F>* __restrict__ table) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < (uint64_t)W * nb) table[t] = fb_table_entry<F>(bases, W, nb, t);
}

// out[i] = scalars[i]·G for i < n, T threads (see fb_thread).
template <class F>
__global__ void __launch_bounds__(FB_THREADS) k_fb_mul(const affine_t<F>* __restrict__ table, int W, uint32_t nb,
                                                       const fr_t* __restrict__ scalars, uint64_t n, uint32_t T, int m,
                                                       affine_t<F>* __restrict__ out, F* __restrict__ zz_s,
                                                       F* __restrict__ zzz_s, F* __restrict__ pre_s) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < T) fb_thread<F>(table, W, nb, scalars, n, T, m, t, out, zz_s, zzz_s, pre_s);
}

// Device scratch per point of a chunk: ZZ, ZZZ, the running product, and two
// staging slots for host scalars.
template <class F>
static uint64_t fb_scratch_per_point() {
    return 3 * sizeof(F) + 2 * sizeof(fr_t);
}

template <class F>
static int fb_table_impl(c2_status* st, stream_ctx* sc, const affine_t<F>* base, int W, affine_t<F>* table) {
    affine_t<F> wb[FB_MAX_WINDOWS];
    if (!fb_window_bases<F>(*base, W, wb))
        return set_status(st, C2_ERR_INVALID, 0, "fixed base: the base is infinity or of small order");
    const uint32_t nb = fb_entries(W);
    const uint64_t total = (uint64_t)W * nb;
    cudaStream_t s = sc->s;
    scratch m_bases;
    C2_CHECK(m_bases.alloc(W * sizeof(affine_t<F>), s));
    C2_CHECK(cudaMemcpyAsync(m_bases.p, wb, W * sizeof(affine_t<F>), cudaMemcpyHostToDevice, s));
    k_fb_table<F><<<blocks_for(total, FB_THREADS), FB_THREADS, 0, s>>>(m_bases.as<affine_t<F>>(), W, nb, table);
    C2_CHECK_LAUNCH(k_fb_table);
    C2_CHECK(cudaStreamSynchronize(s));  // wb is on this stack
    C2_CHECK(cudaGetLastError());
    return ok(st);
}

template <class F>
static int fb_mul_impl(c2_status* st, stream_ctx* sc, const affine_t<F>* table, int W, int chunk_log,
                       const fr_t* scalars, bool scalars_dev, uint64_t n, affine_t<F>* out) {
    cudaStream_t s = sc->s;
    if (n == 0) return ok(st);
    const uint32_t nb = fb_entries(W);
    int per_sm = 0;
    C2_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_fb_mul<F>, FB_THREADS, 0));
    if (per_sm < 1) per_sm = 1;
    uint64_t T = (uint64_t)sc->sm_count * per_sm * FB_THREADS;
    // Chunk: m points per thread, within the scratch bound.
    const uint64_t cap = C2_FIXED_BASE_SCRATCH / fb_scratch_per_point<F>();
    if (T > cap) T = cap;
    uint64_t m = cap / T;
    if (m > 64) m = 64;
    if ((uint64_t)n <= T * m) {  // one chunk: fewer points per thread
        m = (n + T - 1) / T;
        if (T > n) T = n;
    }
    uint64_t CH = T * m;
    if (chunk_log) {  // test knob: smaller chunks
        CH = 1ull << chunk_log;
        if (T > CH) T = CH;
    }
    const uint64_t nchunks = (n + CH - 1) / CH;

    scratch m_zz, m_zzz, m_pre, m_sc;
    // Destroyed before the scratch: no copy into staging outlives it.
    struct copy_sync {
        cudaStream_t c;
        ~copy_sync() { cudaStreamSynchronize(c); }
    } cs{sc->copy};
    C2_CHECK(m_zz.alloc(CH * sizeof(F), s));
    C2_CHECK(m_zzz.alloc(CH * sizeof(F), s));
    C2_CHECK(m_pre.alloc(CH * sizeof(F), s));
    const fr_t* slot[2] = {nullptr, nullptr};
    call_events<4> ev;  // copied[2], used[2]
    if (!scalars_dev) {
        C2_CHECK(m_sc.alloc(2 * CH * sizeof(fr_t), s));
        slot[0] = m_sc.as<fr_t>();
        slot[1] = slot[0] + CH;
        for (int i = 0; i < 4; i++) C2_CHECK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
        // the copy stream must not touch staging before it is allocated on s
        C2_CHECK(cudaEventRecord(ev[2], s));
        C2_CHECK(cudaEventRecord(ev[3], s));
    }
    auto issue_copy = [&](uint64_t ci) -> int {
        const int k = (int)(ci & 1);
        const uint64_t off = ci * CH, cnt = n - off < CH ? n - off : CH;
        C2_CHECK(cudaStreamWaitEvent(sc->copy, ev[2 + k], 0));
        C2_CHECK(cudaMemcpyAsync((void*)slot[k], scalars + off, cnt * sizeof(fr_t), cudaMemcpyHostToDevice, sc->copy));
        C2_CHECK(cudaEventRecord(ev[k], sc->copy));
        return C2_OK;
    };
    int rc;
    if (!scalars_dev && (rc = issue_copy(0))) return rc;
    for (uint64_t ci = 0; ci < nchunks; ci++) {
        const int k = (int)(ci & 1);
        const uint64_t off = ci * CH, cnt = n - off < CH ? n - off : CH;
        const fr_t* csc = scalars + off;
        if (!scalars_dev) {
            C2_CHECK(cudaStreamWaitEvent(s, ev[k], 0));
            csc = slot[k];
        }
        const uint32_t threads = (uint32_t)(cnt < T ? cnt : T);
        k_fb_mul<F><<<blocks_for(threads, FB_THREADS), FB_THREADS, 0, s>>>(
            table, W, nb, csc, cnt, threads, (int)((cnt + threads - 1) / threads), out + off, m_zz.as<F>(),
            m_zzz.as<F>(), m_pre.as<F>());
        C2_CHECK_LAUNCH(k_fb_mul);
        if (!scalars_dev) {
            C2_CHECK(cudaEventRecord(ev[2 + k], s));
            if (ci + 1 < nchunks && (rc = issue_copy(ci + 1))) return rc;
        }
    }
    C2_CHECK(cudaStreamSynchronize(s));
    C2_CHECK(cudaGetLastError());
    return ok(st);
}

static int fb_check(c2_status* st, stream_ctx* sc, int group, int W) {
    if (!sc) return set_status(st, C2_ERR_INVALID, 0, "fixed base: null stream");
    if (group != 1 && group != 2) return set_status(st, C2_ERR_INVALID, 0, "group %d is not 1 or 2", group);
    if (W < FB_MIN_WINDOWS || W > FB_MAX_WINDOWS)
        return set_status(st, C2_ERR_INVALID, 0, "fixed base: %d windows outside [%d, %d]", W, FB_MIN_WINDOWS,
                          FB_MAX_WINDOWS);
    return C2_OK;
}

}  // namespace c2

using namespace c2;

extern "C" {

int c2_fixed_base_table(c2_status* st, c2_stream* h, int group, const void* base, int nwindows, void* table) {
    stream_ctx* sc = (stream_ctx*)h;
    if (int rc = fb_check(st, sc, group, nwindows)) return rc;
    if (!base || !table) return set_status(st, C2_ERR_INVALID, 0, "c2_fixed_base_table: null argument");
    C2_ENTER(sc->ordinal);
    return drained(sc->s, group == 1
                              ? fb_table_impl<fp_t>(st, sc, (const g1_affine*)base, nwindows, (g1_affine*)table)
                              : fb_table_impl<fp2_t>(st, sc, (const g2_affine*)base, nwindows, (g2_affine*)table));
}

int c2_fixed_base_mul(c2_status* st, c2_stream* h, int group, const void* table, int nwindows, const void* scalars,
                      int scalars_on_device, uint64_t n, void* out, uint64_t offset) {
    stream_ctx* sc = (stream_ctx*)h;
    const int chunk_log = (nwindows >> 8) & 0xff;
    nwindows &= 0xff;
    if (int rc = fb_check(st, sc, group, nwindows)) return rc;
    if (chunk_log > 30) return set_status(st, C2_ERR_INVALID, 0, "fixed base: chunk 2^%d", chunk_log);
    if (n && (!table || !scalars || !out))
        return set_status(st, C2_ERR_INVALID, 0, "c2_fixed_base_mul: null argument");
    C2_ENTER(sc->ordinal);
    const bool dev = scalars_on_device != 0;
    return drained(sc->s, group == 1 ? fb_mul_impl<fp_t>(st, sc, (const g1_affine*)table, nwindows, chunk_log,
                                                         (const fr_t*)scalars, dev, n, (g1_affine*)out + offset)
                                     : fb_mul_impl<fp2_t>(st, sc, (const g2_affine*)table, nwindows, chunk_log,
                                                          (const fr_t*)scalars, dev, n, (g2_affine*)out + offset));
}

}  // extern "C"
