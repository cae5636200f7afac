/*
 * C ABI of libc2cuda.so, the CUDA backend of c2. Plain C, no CUDA headers:
 * the Go package resolves these symbols with dlsym.
 *
 * Conventions:
 *  - Every function returns a C2_* code and, when st is not NULL, fills *st
 *    with the code, the CUDA error number (0 if none) and a message.
 *  - Field elements are gnark-crypto's Montgomery form: Fr = 32 bytes
 *    (4 little-endian uint64), Fp = 48 bytes (6 uint64). G1 affine = 96
 *    bytes, G2 affine = 192 bytes, infinity = all zero.
 *  - Pointers flagged *_on_device point to device memory from c2_mem_alloc;
 *    otherwise they point to host memory (pinned or pageable).
 *  - Calls are synchronous: when a call returns, its stream is idle and no
 *    host pointer it was given is used any more.
 */
#ifndef C2CUDA_H
#define C2CUDA_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define C2_ABI_VERSION 10

enum {
    C2_OK = 0,
    C2_ERR_INVALID = 1,   /* bad argument */
    C2_ERR_OOM = 2,       /* device (or pinned host) memory exhausted */
    C2_ERR_LOST = 3,      /* sticky device error: the context is unusable */
    C2_ERR_NO_DEVICE = 4, /* no CUDA device or no usable driver */
    C2_ERR_CUDA = 5       /* any other CUDA error */
};

typedef struct {
    int code;
    int cuda_error;
    char msg[256];
} c2_status;

typedef struct c2_stream c2_stream;

/* Constants of one NTT domain of size n = 2^log_n, Montgomery form. */
typedef struct {
    uint64_t omega[4];     /* primitive n-th root of unity */
    uint64_t omega_inv[4]; /* its inverse */
    uint64_t g[4];         /* coset shift */
    uint64_t g_inv[4];     /* its inverse */
    uint64_t n_inv[4];     /* 1/n */
    uint64_t z_inv[4];     /* 1/(g^n - 1), used by c2_compute_h only */
} c2_ntt_consts;

enum {
    C2_NTT_FORWARD = 0,
    C2_NTT_INVERSE = 1,
    C2_NTT_COSET_FORWARD = 2,
    C2_NTT_COSET_INVERSE = 3,
    C2_NTT_FORWARD_NR = 4 /* forward, output left in bit-reversed order */
};

/* MSM output: per-window sums. With W windows, window w has width
 * 256/W + (w < 256%W) bits and weighs 2^o_w, o_w = w*(256/W) + min(w, 256%W).
 * Each sum is an XYZZ point (X, Y, ZZ, ZZZ; infinity when ZZ = 0). */
#define C2_MAX_WINDOWS 64

int c2_abi_version(void);
int c2_device_count(c2_status* st, int* count);
int c2_device_info(c2_status* st, int ordinal, char* name, int name_len, uint64_t* total_mem,
                   int* sm_count, int* cc_major, int* cc_minor);
int c2_mem_info(c2_status* st, int ordinal, uint64_t* free_bytes, uint64_t* total_bytes);

/* A stream pair (compute and copy) of one device. urgent != 0 creates both
 * at the device's greatest stream priority, 0 at its least (the default):
 * the block scheduler then dispatches an urgent stream's pending blocks
 * before other streams' pending blocks; running blocks are not preempted. */
int c2_stream_create(c2_status* st, int ordinal, int urgent, c2_stream** out);
int c2_stream_destroy(c2_status* st, c2_stream* s);
/* Device timing with CUDA events. c2_stream_mark records the stream's start
 * (which = 0) or end (which = 1) event on its compute stream; c2_stream_span
 * waits for the end event and returns both events' times in milliseconds
 * since the device's epoch (an event recorded when the device's first stream
 * was created), so that spans of different streams of one device compare. */
int c2_stream_mark(c2_status* st, c2_stream* s, int which);
int c2_stream_span(c2_status* st, c2_stream* s, double* start_ms, double* end_ms);
/* The most device scratch (stream-ordered allocations of the library's
 * calls on s, counted in host order from allocation to release) held at once
 * since s's last start mark, in bytes. */
int c2_stream_scratch(c2_status* st, c2_stream* s, uint64_t* peak_bytes);

int c2_mem_alloc(c2_status* st, int ordinal, uint64_t bytes, void** dptr);
int c2_mem_free(c2_status* st, int ordinal, void* dptr);
int c2_host_alloc(c2_status* st, uint64_t bytes, void** hptr);
int c2_host_free(c2_status* st, void* hptr);
/* kind: 1 host->device, 2 device->host, 3 device->device */
int c2_copy(c2_status* st, c2_stream* s, void* dst, const void* src, uint64_t bytes, int kind);

/* In-place NTT of n = 2^log_n Fr elements, natural order in and out. */
int c2_ntt(c2_status* st, c2_stream* s, void* data, int on_device, int log_n, int kind,
           const c2_ntt_consts* k);
/* Groth16 quotient: a <- coset_iNTT((coset(a)*coset(b) - coset(c)) * z_inv), natural
 * order. b and c are clobbered. flags: C2_H_ON_DEVICE, a, b and c are device
 * buffers; else host memory, staged in three device vectors, or with
 * C2_H_TWO_VECTORS in two (c is uploaded into b's once the product has read
 * it, so its upload overlaps no work). */
enum {
    C2_H_ON_DEVICE = 1,
    C2_H_TWO_VECTORS = 2
};
int c2_compute_h(c2_status* st, c2_stream* s, void* a, void* b, void* c, int flags, int log_n,
                 const c2_ntt_consts* k);

/* group: 1 = G1, 2 = G2. window_bits = 0 picks the window count; otherwise
 * W = ceil(256/window_bits) (bits 8-15, when set, are log2 of the streaming
 * chunk, a test knob). out receives *nwindows XYZZ window sums (room for
 * C2_MAX_WINDOWS); *used_window_bits is the widest window. */
int c2_msm(c2_status* st, c2_stream* s, int group, const void* bases, int bases_on_device,
           const void* scalars, int scalars_on_device, uint64_t n, int window_bits, void* out,
           int* nwindows, int* used_window_bits);
/* The split MSM: c2_msm over resident bases, with bases_hi[i] = 2^128 bases[i]
 * (device memory, from c2_shift_points) so that each scalar is two 128-bit
 * halves over 2n bases. window_bits = 0 picks the layout; otherwise
 * H = ceil(128/window_bits). out receives *nwindows = H XYZZ sums whose
 * combination is sum_w out[w] 2^(o_w), with o_w the offsets of H near-equal
 * windows covering 128 bits, the wider ones first; *used_window_bits is the
 * widest. */
int c2_msm_split(c2_status* st, c2_stream* s, int group, const void* bases, const void* bases_hi, const void* scalars,
                 int scalars_on_device, uint64_t n, int window_bits, void* out, int* nwindows, int* used_window_bits);
/* dst[i] = 2^doublings src[i] for i < n affine points in device memory
 * (dst may be src); returns when they are written. */
int c2_shift_points(c2_status* st, c2_stream* s, int group, void* dst, const void* src, uint64_t n, int doublings);
/* The MSM sum_j scalars[j] * bases[idx[j]] (j < n) over nbases resident
 * bases (device memory), gathered on the device; idx and scalars are host
 * memory, every idx[j] < nbases (the caller checks). Output as c2_msm. */
int c2_msm_indexed(c2_status* st, c2_stream* s, int group, const void* bases, uint64_t nbases, const uint32_t* idx,
                   const void* scalars, uint64_t n, int window_bits, void* out, int* nwindows, int* used_window_bits);
/* Sum of bases[i] over the i < n whose bit i is set in bitmap (64-bit words,
 * little-endian bit order, host memory). out receives one XYZZ point. */
int c2_batch_add(c2_status* st, c2_stream* s, int group, const void* bases, int bases_on_device,
                 const uint64_t* bitmap, uint64_t n, void* out);
/* One matrix of a recorded R1CS in device memory (compressed sparse rows):
 * row j's terms are col[row_start[j] .. row_start[j+1]) with coefficients
 * coeffs[coeff[...]]; columns index w = inputs ‖ aux. */
typedef struct {
    const uint32_t* row_start; /* constraints + 1 entries */
    const uint32_t* col;
    const uint16_t* coeff;
} c2_csr;

/* A recorded R1CS in device memory: A, B, C, the coefficient table (Fr) and
 * one kind byte per coefficient (1: one, 2: minus one, 0: other). */
typedef struct {
    c2_csr m[3];
    const void* coeffs;
    const uint8_t* kinds;
    uint64_t constraints, inputs, aux;
} c2_r1cs;

/* Expands a witness handed over as inputs (host, r->inputs Fr), ones (host
 * bitmap over the aux values equal to 1) and the ntail aux values not in
 * {0, 1} (host, increasing tail_idx and their values) into w (device,
 * inputs + aux Fr), then writes a = A·w, b = B·w, c = C·w into abc (device,
 * 3 * 2^log_n Fr: a, then b, then c; rows past the constraints are zero).
 * A dense witness comes as tail_idx = NULL and ntail = r->aux: tail_vals is
 * every aux value in order, and ones is ignored.
 * *first_bad receives the first row with a·b != c, or UINT64_MAX. */
int c2_r1cs_eval(c2_status* st, c2_stream* s, const c2_r1cs* r, void* w, const void* inputs, const uint64_t* ones,
                 const uint32_t* tail_idx, const void* tail_vals, uint64_t ntail, void* abc, int log_n,
                 uint64_t* first_bad);
/* Gathers the Fr values of src (device, n values) that bitmap (host,
 * (n + 63) / 64 words, bit i of word i / 64 for value i, no bit set at or
 * past n) selects into dst (device, count values), in order; count is the
 * number of set bits (C2_ERR_INVALID when it differs). dst and src must
 * not overlap. For a query's scalars taken from a witness left by
 * c2_r1cs_eval. */
int c2_select(c2_status* st, c2_stream* s, void* dst, const void* src, uint64_t n, const uint64_t* bitmap,
              uint64_t count);
/* Test/benchmark support: dst[i] = seeds[i % k] + seeds[k + (i / k) % k] as
 * affine points, for i < n (dst on device; seeds host, 2k points). */
int c2_fill_points(c2_status* st, c2_stream* s, int group, void* dst, uint64_t n,
                   const void* seeds, uint64_t k);

/* Fixed-base scalar multiplication (development keys made on the device).
 * c2_fixed_base_table writes into table (device memory) the multiples
 * d * 2^o_w * base of base (host memory, affine, not infinity) for the
 * nwindows windows of c2_msm's digit split (widths c_w, offsets o_w;
 * 11 <= nwindows <= 64): entry w * E + d - 1 for d in [1, 2^(c_w - 1)],
 * E = 2^(c_0 - 1), zero past a narrower window's range; the table holds
 * nwindows * E points of the group.
 * c2_fixed_base_mul writes scalars[i] * base (affine; zero for a zero
 * scalar) to point offset + i of out (device memory), i < n, from a table of
 * the same group and nwindows; scalars are Fr in host memory or on the
 * device, and the call uses at most C2_FIXED_BASE_SCRATCH bytes of device
 * scratch. In c2_fixed_base_mul, bits 8-15 of nwindows, when set, are log2
 * of the points per launch (a test knob). */
#define C2_FIXED_BASE_SCRATCH (768ull << 20)
int c2_fixed_base_table(c2_status* st, c2_stream* s, int group, const void* base, int nwindows, void* table);
int c2_fixed_base_mul(c2_status* st, c2_stream* s, int group, const void* table, int nwindows,
                      const void* scalars, int scalars_on_device, uint64_t n, void* out, uint64_t offset);

#ifdef __cplusplus
}
#endif
#endif
