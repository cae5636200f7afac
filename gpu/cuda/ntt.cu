// Number-theoretic transforms over BLS12-381 Fr and the Groth16 quotient
// ("H") pipeline.
//
// A transform of size N = 2^k runs as a few passes over device memory. A pass
// owns t index bits: viewing the current row of R elements as a 2^t x S
// matrix (S = R / 2^t), each column's 2^t-point transform runs in registers
// as a butterfly network (ntt_net.cuh: two elements per thread, exchanges by
// warp shuffles or, across warps, shared memory), and the pass applies the
// twiddles that couple it to the next one (the "four-step" decomposition,
// applied recursively to rows). Decimation in frequency (DIF)
// maps natural order to bit-reversed order; decimation in time (DIT), its
// transpose, maps bit-reversed order back to natural order, so pipelines
// chain DIF and DIT passes and never permute in between. Powers of a root are
// read from two small tables (low and high exponent bits) built per call, and
// the twiddles between the passes of rows of at most 2^C2_NTT_ROW_LOG
// elements from one table of such a row's powers; the pass over a whole
// longer row reads one table of every power of the root, built once a call
// (C2_NTT_FULL_ROW). The small tables and the stages' inner twiddles hold
// Shoup multipliers (field_shoup.cuh), so a product by such a power costs
// 186 IMAD slots instead of a Montgomery product's 246; the row and
// whole-row tables hold plain 32-byte elements (one Montgomery product a
// lookup, for fewer bytes read).
#include "common.cuh"
#include "field.cuh"
#include "ntt_net.cuh"
#include "field_shoup.cuh"

namespace c2 {

static constexpr int NTT_TMAX = 9;        // index bits per pass
static constexpr int NTT_THREADS = 256;

// Blocks of k_ntt_pass an SM is asked to hold at once (__launch_bounds__'s
// second argument; ptxas fits the registers to it: 64 for 4 blocks of 256
// threads, which the pass with Shoup products fills without spilling; at 5
// blocks, 48 registers, it spills 80-88 B). 0 leaves the count to ptxas.
#ifndef C2_NTT_MIN_BLOCKS
#define C2_NTT_MIN_BLOCKS 4
#endif

// 1: passes of NTT_TMAX stages run a k_ntt_pass whose stage loop is
// unrolled, so that the stages' index arithmetic is folded at compile
// time and each stage's twiddle load and exchange can be scheduled across
// the stage before it (NTT 2^27 -4.8 %, ComputeH 2^27 -3.7 % on an H100).
// 2 (default): passes of NTT_TMAX - 1 stages too (2^24's three, one of
// 2^26's: NTT 2^24 -7.5 %, 2^26 -2.9 % on an H100). 1: only passes of
// NTT_TMAX stages. 0: every pass runs the rolled loop.
#ifndef C2_NTT_UNROLL
#define C2_NTT_UNROLL 2
#endif

// 1 (default): the H pipeline fuses three pairs of passes over the same
// columns (k_ntt_pair), each saving one read and one write of the array: in
// each trip to the coset, the inverse transform's last pass with the
// forward one's first (the coset shift between them), and a's last forward
// pass with the product's first inverse pass (the product by b between
// them). Fifteen kernels for the eighteen passes of 2^27 (ComputeH 2^27
// -2.5 % on an H100). 0: every pass its own kernel.
#ifndef C2_NTT_FUSE
#define C2_NTT_FUSE 1
#endif
// With C2_NTT_FUSE, a pair of 9-stage passes runs the stage loop of its
// first (1, default) or second (2) network unrolled; 0: both loops rolled.
// Both unrolled, the pair spills 316 B a thread; one, 8-16 B.
#ifndef C2_NTT_PAIR_UNROLL
#define C2_NTT_PAIR_UNROLL 1
#endif

// One element of global memory as two 16-byte accesses (fr_t arrays are
// 32-byte aligned).
__device__ __forceinline__ fr_t ldg_fr(const fr_t* p) {
    const uint4* src = (const uint4*)p;
    uint4 a = src[0], b = src[1];
    fr_t x;
    x.v[0] = a.x; x.v[1] = a.y; x.v[2] = a.z; x.v[3] = a.w;
    x.v[4] = b.x; x.v[5] = b.y; x.v[6] = b.z; x.v[7] = b.w;
    return x;
}
__device__ __forceinline__ void stg_fr(fr_t* p, const fr_t& x) {
    uint4* dst = (uint4*)p;
    dst[0] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
    dst[1] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
}

// A table entry of the transforms: a power of a root as a Shoup multiplier
// (field_shoup.cuh: the power and its quotient, 17 words padded to five
// 16-byte words). A product by it takes 186 IMAD slots where a Montgomery
// product takes 246 (make sass).
struct alignas(16) fr_tw {
    shoup_t<FrParams> s;
    uint32_t pad[3];
};
__device__ __forceinline__ fr_tw ldg_tw(const fr_tw* p) {
    const uint4* src = (const uint4*)p;
    fr_tw z;
    uint32_t* d = z.s.w;  // w then wq: 17 consecutive words
    uint4 a = src[0], b = src[1], c = src[2], e = src[3], g = src[4];
    d[0] = a.x; d[1] = a.y; d[2] = a.z; d[3] = a.w;
    d[4] = b.x; d[5] = b.y; d[6] = b.z; d[7] = b.w;
    z.s.wq[0] = c.x; z.s.wq[1] = c.y; z.s.wq[2] = c.z; z.s.wq[3] = c.w;
    z.s.wq[4] = e.x; z.s.wq[5] = e.y; z.s.wq[6] = e.z; z.s.wq[7] = e.w;
    z.s.wq[8] = g.x;
    return z;
}
__device__ __forceinline__ fr_t operator*(const fr_t& x, const fr_tw& z) { return mul_shoup<FrParams>(x, z.s); }
// The table entry of x (fr_t: x itself; fr_tw: x's Shoup multiplier).
template <class T>
__device__ __forceinline__ T to_entry(const fr_t& x);
template <>
__device__ __forceinline__ fr_t to_entry<fr_t>(const fr_t& x) { return x; }
template <>
__device__ __forceinline__ fr_tw to_entry<fr_tw>(const fr_t& x) { return fr_tw{shoup_entry<FrParams>(x), {0, 0, 0}}; }

// Rows of at most 2^C2_NTT_ROW_LOG elements take their inter-pass twiddles
// from one table (2^C2_NTT_ROW_LOG entries, 8 MiB at 18); 0 turns it off.
#ifndef C2_NTT_ROW_LOG
#define C2_NTT_ROW_LOG 18
#endif

// 1 (default): the pass over a whole row of 2^k elements, k >
// C2_NTT_ROW_LOG (a transform's first DIF or last DIT pass), looks its
// twiddles up in one table of every power of the root below 2^(k-1)
// (k_full_roots: 2^(k-1) x 32 bytes, 2 GiB at k = 27) instead of
// multiplying lo * hi. Each c2_ntt and c2_compute_h call builds it once in
// its scratch; the H pipeline's inverse transforms read the forward root's
// table at -e. 0: the lo * hi products.
#ifndef C2_NTT_FULL_ROW
#define C2_NTT_FULL_ROW 1
#endif

// Powers of a base b for exponents below 2^k, as Shoup multipliers:
// x * scale * b^e (mul_at) is two products, (x * lo) * hi; row, when
// present, holds scale * b^(i << (k - row_log)) for i < 2^row_log as plain
// elements, so that mul_row (x times such a power) is one Montgomery
// product reading 32 bytes (a Shoup multiplier is 80; these lookups are
// most of a row pass's L2 reads).
struct pow_tables {
    const fr_tw* lo;  // scale * b^i, i < 2^h
    const fr_tw* hi;  // b^(i << h), i < 2^(k-h)
    int h;
    const fr_t* row;  // null: none
    int row_log;
#if C2_NTT_FULL_ROW
    // b^e for e < 2^(full_log-1) (build_full; scale 1), b a primitive
    // 2^full_log-th root, so that the other half is its negation; null:
    // none. full_inv: the table holds the powers of 1/b instead, and b^e is
    // read at -e.
    const fr_t* full;
    int full_log;
    bool full_inv;
#endif
    // x * scale * b^e
    __device__ __forceinline__ fr_t mul_at(const fr_t& x, uint32_t e) const {
        uint32_t m = (1u << h) - 1;
        return (x * ldg_tw(lo + (e & m))) * ldg_tw(hi + (e >> h));
    }
    // scale * b^e (for building tables)
    __device__ __forceinline__ fr_t at(uint32_t e) const { return mul_at(fr_t::one(), e); }
    // x * at(e << (k - r)) for e < 2^r: one product by the row table's entry
    // when r <= row_log.
    __device__ __forceinline__ fr_t mul_row(const fr_t& x, uint32_t e, int r, int k) const {
        if (row && r <= row_log) return x * ldg_fr(row + ((size_t)e << (row_log - r)));
#if C2_NTT_FULL_ROW
        if (full) {
            uint32_t y = e << (k - r);
            if (full_inv) y = (0u - y) & ((1u << full_log) - 1);
            const uint32_t half = 1u << (full_log - 1);
            const fr_t v = ldg_fr(full + (y & (half - 1)));
            return x * ((y & half) ? v.neg() : v);
        }
#endif
        return mul_at(x, e << (k - r));
    }
};

__device__ __forceinline__ uint32_t bitrev(uint32_t x, int bits) {
    return bits == 0 ? 0 : (__brev(x) >> (32 - bits));
}

// out[i] = scale * base^(i << shift) as a table entry (T: fr_t or a Shoup
// multiplier)
template <class T>
__global__ void k_pow_entries(T* out, fr_t base, uint32_t count, int shift, fr_t scale) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    out[i] = to_entry<T>(scale * base.pow((uint64_t)i << shift));
}

// out[i] = w.at(i << shift), i < count: a table of every 2^shift-th power.
template <class T>
__global__ void k_row_table(T* out, pow_tables w, uint32_t count, int shift) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    out[i] = to_entry<T>(w.at(i << shift));
}

// Inner twiddles of the network passes (ntt_net.cuh): w_(2^(b+1))^a =
// w^(a << (k - b - 1)) at (2^b - 1) + a, for a < 2^b and b < bmax <= k.
__global__ void k_inner_twiddles(fr_tw* out, pow_tables w, int k, int bmax) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << bmax) - 1) return;
    const int b = 31 - __clz(i + 1);
    const uint32_t a = i + 1 - (1u << b);
    out[i] = to_entry<fr_tw>(w.at(a << (k - b - 1)));
}

// a if c, else b (limb by limb: no branch, no address taken).
__device__ __forceinline__ fr_t select_fr(bool c, const fr_t& a, const fr_t& b) {
    fr_t r;
#pragma unroll
    for (int l = 0; l < 8; l++) r.v[l] = c ? a.v[l] : b.v[l];
    return r;
}

__device__ __forceinline__ fr_t shfl_xor_fr(const fr_t& x, uint32_t mask, unsigned lanes) {
    fr_t r;
#pragma unroll
    for (int l = 0; l < 8; l++) r.v[l] = __shfl_xor_sync(lanes, x.v[l], mask);
    return r;
}

// What a pass does to an element between memory and its network. On load
// (position p, index n1 within the column): DIT multiplies by
// ps.at(bitrev_k(p)) when prescale, then by the inter-pass twiddle from w;
// DIF multiplies by mul[p] when mul is not null. On store: DIF multiplies by
// the inter-pass twiddle from w. col is the column's index in its row (n2).
template <bool DIT>
__device__ __forceinline__ void pass_on_load(fr_t& x, uint64_t p, uint32_t n1, uint64_t col, int t, int S_log,
                                             int row_log, int k, const pow_tables& w, bool prescale,
                                             const pow_tables& ps, const fr_t* mul) {
    if (DIT) {
        if (prescale) x = ps.mul_at(x, bitrev((uint32_t)p, k));
        if (S_log > 0) {
            const uint32_t e = (uint32_t)(col * bitrev(n1, t));
            if (e) x = w.mul_row(x, e, row_log, k);
        }
    } else if (mul) {
        x = x * ldg_fr(mul + p);
    }
}
template <bool DIT>
__device__ __forceinline__ void pass_on_store(fr_t& x, uint32_t n1, uint64_t col, int t, int S_log, int row_log,
                                              int k, const pow_tables& w) {
    if (!DIT && S_log > 0) {
        const uint32_t e = (uint32_t)(col * bitrev(n1, t));
        if (e) x = w.mul_row(x, e, row_log, k);
    }
}

// The network's t stages on thread j's two elements r (ntt_net.cuh), with
// the inner twiddles itw. Exchanges between threads of one warp are
// shuffles; others go through 32 * T bytes of shared memory at xs.
// TT > 0: t = TT, the stage loop unrolled (C2_NTT_UNROLL).
template <bool DIT, int TT>
__device__ __forceinline__ void pass_stages(fr_t (&r)[2], int t, uint32_t j, int q, unsigned lanes, uint32_t T,
                                            uint32_t* xs, const fr_tw* __restrict__ itw) {
    // TT = 0: unroll 1, the loop as ptxas schedules it with t unknown.
#pragma unroll(TT > 0 ? TT : 1)
    for (int i = 0; i < t; i++) {
        const int b = DIT ? i : t - 1 - i;
        if (i > 0) {
            const int cb = DIT ? b - 1 : b;
            const int keep = net_keep(j, cb);
            const fr_t out = select_fr(keep, r[0], r[1]);
            const int tb = net_thread_bit(cb, q);
            fr_t in;
            if (tb < 5) {
                in = shfl_xor_fr(out, 1u << tb, lanes);
            } else {
                __syncthreads();
#pragma unroll
                for (int e = 0; e < 8; e++) xs[e * T + threadIdx.x] = out.v[e];
                __syncthreads();
                const uint32_t from = threadIdx.x ^ (1u << tb);
#pragma unroll
                for (int e = 0; e < 8; e++) in.v[e] = xs[e * T + from];
            }
            r[0] = select_fr(keep, in, r[0]);
            r[1] = select_fr(keep, r[1], in);
        }
        const bool has_z = net_has_twiddle(j, b, q);
        fr_tw z;
        if (has_z) z = ldg_tw(itw + net_twiddle_index(j, b));
        if (DIT)
            net_dit(r[0], r[1], z, has_z);
        else
            net_dif(r[0], r[1], z, has_z);
    }
}

// One pass as a butterfly network (ntt_net.cuh), or two fused. Rows have
// 2^row_log elements; the pass owns t index bits: viewing a row as a 2^t x S
// matrix (S = 2^(row_log - t)), each column is one 2^t-point transform run by
// G = 2^(t-1) threads with two elements each, and a block takes 2^lb_log
// adjacent columns. The twiddles that couple a network to the next pass are
// applied on load (DIT) or on store (DIF); prescale and ps (DIT), mul (DIF):
// see pass_on_load. A column's threads play the network's threads in the
// roles of net_role (ntt_net.cuh), so that whole warps skip the stages'
// twiddles of 1.
//
// DIT_IN != DIT_OUT fuses two passes over the same columns: the DIT_IN
// network (inner twiddles itw, inter-pass twiddles w), then the other one
// (itw2, w2). A network stores slot s of thread j where the other kind
// loads it (DIF stores 2j + s, DIT loads 2j + s; DIT stores j + sG, DIF
// loads j + sG), so the elements stay in their registers: only the first
// network's store transform and the second's load transform run between.
// TT, TT2 > 0: t = TT (TT2), and the first (second) network's stage loop
// unrolled.
template <bool DIT_IN, bool DIT_OUT, int TT, int TT2>
__device__ __forceinline__ void ntt_pass_body(fr_t* data, int k, int row_log, int t_in, int lb_log,
                                              const fr_tw* __restrict__ itw, const pow_tables& w, bool prescale,
                                              const pow_tables& ps, const fr_t* mul, const fr_tw* __restrict__ itw2,
                                              const pow_tables& w2) {
    constexpr bool FUSED = DIT_IN != DIT_OUT;
    const int t = TT > 0 ? TT : TT2 > 0 ? TT2 : t_in;
    extern __shared__ uint32_t xs[];
    const int S_log = row_log - t;
    const int chunks_log = S_log - lb_log;
    const uint64_t row = (uint64_t)blockIdx.x >> chunks_log;
    const uint64_t n2_0 = ((uint64_t)blockIdx.x & ((1ull << chunks_log) - 1)) << lb_log;
    const int q = net_warp_bits(t);
    const uint32_t j = net_role(threadIdx.x & ((1u << (t - 1)) - 1), q);
    const uint32_t l = threadIdx.x >> (t - 1);  // column within the block
    const uint64_t base = (row << row_log) + n2_0 + l;
    const uint32_t T = blockDim.x;
    const unsigned lanes = T >= 32 ? 0xffffffffu : (1u << T) - 1;
    fr_t r[2];
#pragma unroll
    for (int s = 0; s < 2; s++) {
        const uint32_t n1 = net_load_index(DIT_IN, j, s, t);
        const uint64_t p = base + ((uint64_t)n1 << S_log);
        fr_t x = ldg_fr(data + p);
        pass_on_load<DIT_IN>(x, p, n1, n2_0 + l, t, S_log, row_log, k, w, prescale, ps, mul);
        r[s] = x;
    }
    pass_stages<DIT_IN, TT>(r, t, j, q, lanes, T, xs, itw);
    if (FUSED) {
#pragma unroll
        for (int s = 0; s < 2; s++) {
            const uint32_t n1 = net_load_index(DIT_OUT, j, s, t);
            const uint64_t p = base + ((uint64_t)n1 << S_log);
            pass_on_store<DIT_IN>(r[s], net_store_index(DIT_IN, j, s, t), n2_0 + l, t, S_log, row_log, k, w);
            pass_on_load<DIT_OUT>(r[s], p, n1, n2_0 + l, t, S_log, row_log, k, w2, prescale, ps, mul);
        }
        pass_stages<DIT_OUT, TT2>(r, t, j, q, lanes, T, xs, itw2);
    }
#pragma unroll
    for (int s = 0; s < 2; s++) {
        const uint32_t n1 = net_store_index(DIT_OUT, j, s, t);
        const uint64_t p = base + ((uint64_t)n1 << S_log);
        fr_t x = r[s];
        pass_on_store<DIT_OUT>(x, n1, n2_0 + l, t, S_log, row_log, k, FUSED ? w2 : w);
        stg_fr(data + p, x);
    }
}

// One pass (ntt_pass_body with one network); TT > 0: a pass of t = TT
// stages, its stage loop unrolled (C2_NTT_UNROLL).
template <bool DIT, int TT = 0>
__global__ void __launch_bounds__(NTT_THREADS, C2_NTT_MIN_BLOCKS) k_ntt_pass(fr_t* data, int k, int row_log, int t_in, int lb_log,
                                                          const fr_tw* __restrict__ itw, pow_tables w, bool prescale,
                                                          pow_tables ps, const fr_t* mul) {
    ntt_pass_body<DIT, DIT, TT, 0>(data, k, row_log, t_in, lb_log, itw, w, prescale, ps, mul, nullptr, w);
}

#if C2_NTT_FUSE
// Two passes over the same columns fused (ntt_pass_body): the DIT_IN
// network, then the other kind; TT and TT2 > 0: the first or the second
// network's stage loop unrolled (C2_NTT_PAIR_UNROLL).
template <bool DIT_IN, int TT = 0, int TT2 = 0>
__global__ void __launch_bounds__(NTT_THREADS, C2_NTT_MIN_BLOCKS)
    k_ntt_pair(fr_t* data, int k, int row_log, int t, int lb_log, const fr_tw* __restrict__ itw, pow_tables w,
               bool prescale, pow_tables ps, const fr_t* mul, const fr_tw* __restrict__ itw2, pow_tables w2) {
    ntt_pass_body<DIT_IN, !DIT_IN, TT, TT2>(data, k, row_log, t, lb_log, itw, w, prescale, ps, mul, itw2, w2);
}
#endif

// In-place bit-reversal permutations that transform each element on its
// way: op(p, i) is the value that position i = bitrev_k(p) receives, made
// from what position p holds (and other arrays op reads at p). Every op
// reads before the kernel writes the positions it reads.

// The element that moves from p to i, with an optional scale. mode 0: none;
// 1: times c; 2: times ps.at(i) (the destination's natural index) or, with
// by_src, ps.at(p) (the source's).
struct bitrev_scale_op {
    const fr_t* d;
    int mode;
    fr_t c;
    pow_tables ps;
    bool by_src;
    __device__ __forceinline__ fr_t operator()(uint64_t p, uint32_t i) const {
        fr_t x = ldg_fr(d + p);
        if (mode == 1) return x * c;
        if (mode == 2) return ps.mul_at(x, by_src ? (uint32_t)p : i);
        return x;
    }
};

// The last step of the H pipeline. At position p, i = bitrev_k(p), a holds
// n*(coefficient i of the coset interpolant of A*B, before its shift by
// g^-i) and c holds n*(coefficient i of C); with gz.at(i) = g^-i/(n*Z) and
// nz = 1/(n*Z), position i receives a[p]*gz.at(i) - c[p]*nz: coefficient i
// of h in natural order. Three products per element: the table entry
// (lo*hi) and the two terms.
struct h_final_op {
    const fr_t* a;
    const fr_t* c;
    pow_tables gz;
    fr_t nz;
    __device__ __forceinline__ fr_t operator()(uint64_t p, uint32_t i) const {
        return gz.mul_at(ldg_fr(a + p), i) - ldg_fr(c + p) * nz;
    }
};

// Any k: thread p swaps the pair (p, bitrev_k(p)) once; its reads of
// scattered 32-byte elements are what the tiled kernel avoids.
template <class Op>
__global__ void k_bitrev_pairs(fr_t* data, int k, Op op) {
    uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >> k) return;
    uint32_t i = bitrev((uint32_t)p, k);
    if (i < p) return;
    fr_t x = op(p, i);
    if (i != p) {
        fr_t y = op(i, (uint32_t)p);
        stg_fr(data + p, y);
    }
    stg_fr(data + i, x);
}

// k >= 2*BR_T: a position is hi | m | lo (hi, lo of BR_T bits, m of k -
// 2*BR_T) and bitrev_k(hi | m | lo) = rev(lo) | rev(m) | rev(hi), so the
// tile of middle bits m (2^(2*BR_T) elements in runs of 2^BR_T consecutive
// ones) goes whole to the tile of rev(m). Block m (when m <= rev(m)) reads
// both tiles in runs, then writes each into the other in runs: every
// global access is part of a 2^BR_T * 32-byte run. Rows of the shared
// tiles are padded by one element so that a warp's column reads spread
// over all banks.
constexpr int BR_T = 4;
template <class Op>
__global__ void __launch_bounds__(1 << (2 * BR_T)) k_bitrev_tiles(fr_t* data, int k, Op op) {
    constexpr int side = 1 << BR_T, pitch = side + 1;
    __shared__ fr_t tile[2][side * pitch];
    const int mb = k - 2 * BR_T;
    const uint32_t m = blockIdx.x, m2 = bitrev(m, mb);
    if (m2 < m) return;
    const uint32_t hi = threadIdx.x >> BR_T, lo = threadIdx.x & (side - 1);
    const uint64_t p0 = ((uint64_t)hi << (k - BR_T)) | ((uint64_t)m << BR_T) | lo;
    const uint64_t p1 = ((uint64_t)hi << (k - BR_T)) | ((uint64_t)m2 << BR_T) | lo;
    tile[0][hi * pitch + lo] = op(p0, bitrev((uint32_t)p0, k));
    if (m2 != m) tile[1][hi * pitch + lo] = op(p1, bitrev((uint32_t)p1, k));
    __syncthreads();
    // Position p1 receives from (rev(lo), m, rev(hi)) of tile 0; p0 from
    // the same place of tile 1.
    const uint32_t from = bitrev(lo, BR_T) * pitch + bitrev(hi, BR_T);
    stg_fr(data + p1, tile[0][from]);
    if (m2 != m) stg_fr(data + p0, tile[1][from]);
}

// Permutes data (2^k elements) in place by bit reversal through op.
template <class Op>
static int bitrev_permute(c2_status* st, cudaStream_t s, fr_t* data, int k, const Op& op) {
    if (k >= 2 * BR_T) {
        k_bitrev_tiles<<<1u << (k - 2 * BR_T), 1 << (2 * BR_T), 0, s>>>(data, k, op);
        C2_CHECK_LAUNCH(k_bitrev_tiles);
    } else {
        k_bitrev_pairs<<<blocks_for(1ull << k, 256), 256, 0, s>>>(data, k, op);
        C2_CHECK_LAUNCH(k_bitrev_pairs);
    }
    return C2_OK;
}

// a = a*b (n elements)
__global__ void k_mul(fr_t* a, const fr_t* b, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    a[i] = a[i] * b[i];
}

static fr_t load_fr(const uint64_t* v) {
    fr_t r;
    memcpy(r.v, v, 32);
    return r;
}

// Tables of powers of one base for exponents < 2^k; with rows, also the
// row table of a transform's roots (pow_tables.row).
struct table_set {
    scratch mem;
    pow_tables t{};
    int build(c2_status* st, cudaStream_t s, int k, fr_t base, fr_t scale, bool rows = false) {
        int h = (k + 1) / 2;
        uint32_t nlo = 1u << h, nhi = 1u << (k - h);
        const int R = rows && k > 0 ? (k < C2_NTT_ROW_LOG ? k : C2_NTT_ROW_LOG) : 0;
        const uint32_t nrow = R > 0 ? 1u << R : 0;
        C2_CHECK(mem.alloc(((size_t)nlo + nhi) * sizeof(fr_tw) + (size_t)nrow * sizeof(fr_t), s));
        fr_tw* lo = mem.as<fr_tw>();
        fr_tw* hi = lo + nlo;
        k_pow_entries<<<blocks_for(nlo, 256), 256, 0, s>>>(lo, base, nlo, 0, scale);
        C2_CHECK_LAUNCH(k_pow_entries);
        k_pow_entries<<<blocks_for(nhi, 256), 256, 0, s>>>(hi, base, nhi, h, fr_t::one());
        C2_CHECK_LAUNCH(k_pow_entries);
        t.lo = lo;
        t.hi = hi;
        t.h = h;
        if (nrow) {
            fr_t* row = (fr_t*)(hi + nhi);
            k_row_table<<<blocks_for(nrow, 256), 256, 0, s>>>(row, t, nrow, k - R);
            C2_CHECK_LAUNCH(k_row_table);
            t.row = row;
            t.row_log = R;
        }
        return C2_OK;
    }
};

#if C2_NTT_FULL_ROW
// out[e] = b^e for e = (i << h) + j, j < 2^h and i < nhi, with b's tables w
// (scale 1): thread j takes b^j once, then one product an entry for the per
// values of i from blockIdx.y * per. A warp stores whole 32-byte sectors
// (stg_fr): stored word by word, the table takes about six times as long.
__global__ void k_full_roots(fr_t* out, pow_tables w, uint32_t nhi, uint32_t per) {
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= (1u << w.h)) return;
    const fr_t bj = fr_t::one() * ldg_tw(w.lo + j);
    const uint32_t end = min(nhi, (blockIdx.y + 1) * per);
#pragma unroll 2
    for (uint32_t i = blockIdx.y * per; i < end; i++) stg_fr(out + ((size_t)i << w.h) + j, bj * ldg_tw(w.hi + i));
}

// Builds in m the table of every power below 2^(k-1) of w's root (w from
// table_set::build with rows and scale 1, k > C2_NTT_ROW_LOG) and points w
// at it (C2_NTT_FULL_ROW).
static int build_full(c2_status* st, cudaStream_t s, scratch& m, int k, pow_tables& w) {
    const uint32_t n = 1u << (k - 1), nhi = n >> w.h, per = 16;
    C2_CHECK(m.alloc((size_t)n * sizeof(fr_t), s));
    const dim3 grid(blocks_for(1u << w.h, 256), (nhi + per - 1) / per);
    k_full_roots<<<grid, 256, 0, s>>>(m.as<fr_t>(), w, nhi, per);
    C2_CHECK_LAUNCH(k_full_roots);
    w.full = m.as<fr_t>();
    w.full_log = k;
    w.full_inv = false;
    return C2_OK;
}
#endif

struct pass_plan {
    int np;
    int t[4];
};

static pass_plan plan_passes(int k) {
    pass_plan p;
    p.np = (k + NTT_TMAX - 1) / NTT_TMAX;
    int rem = k;
    for (int i = 0; i < p.np; i++) {
        int left = p.np - i;
        p.t[i] = (rem + left - 1) / left;
        rem -= p.t[i];
    }
    return p;
}

// The launch of a pass of t bits over 2^k elements in rows of 2^row_log:
// 2^(t-1) threads per column, as many columns per block (2^lb_log) as fit
// in NTT_THREADS threads and the row has, and the shared memory of the
// exchanges across warps (32 bytes a thread).
struct pass_geometry {
    int lb_log;
    unsigned threads, nblocks;
    size_t sm;
    pass_geometry(int k, int row_log, int t) {
        const int S_log = row_log - t;
        lb_log = 0;
        while (((1u << (t - 1)) << (lb_log + 1)) <= (uint32_t)NTT_THREADS && lb_log + 1 <= S_log) lb_log++;
        threads = (1u << (t - 1)) << lb_log;
        nblocks = (unsigned)((1ull << k) >> (t + lb_log));
        sm = t >= 7 ? (size_t)32 * threads : 0;
    }
};

// One pass of k_ntt_pass (pass_geometry).
template <bool DIT>
static int launch_pass(c2_status* st, cudaStream_t s, fr_t* d, int k, int row_log, int t, const fr_tw* itw,
                       const pow_tables& w, bool prescale, const pow_tables& ps, const fr_t* mul) {
    const pass_geometry g(k, row_log, t);
    const int lb_log = g.lb_log;
    const unsigned threads = g.threads, nblocks = g.nblocks;
    const size_t sm = g.sm;
    bool unrolled = false;  // a k_ntt_pass<DIT, t> launched
#if C2_NTT_UNROLL
    if (t == NTT_TMAX) {
        k_ntt_pass<DIT, NTT_TMAX><<<nblocks, threads, sm, s>>>(d, k, row_log, t, lb_log, itw, w, prescale, ps, mul);
        unrolled = true;
    }
#endif
#if C2_NTT_UNROLL >= 2
    if (t == NTT_TMAX - 1) {
        k_ntt_pass<DIT, NTT_TMAX - 1><<<nblocks, threads, sm, s>>>(d, k, row_log, t, lb_log, itw, w, prescale, ps,
                                                                   mul);
        unrolled = true;
    }
#endif
    if (!unrolled)
        k_ntt_pass<DIT><<<nblocks, threads, sm, s>>>(d, k, row_log, t, lb_log, itw, w, prescale, ps, mul);
    C2_CHECK_LAUNCH(k_ntt_pass);
    return C2_OK;
}

#if C2_NTT_FUSE
// Two passes fused (k_ntt_pair): the DIT_IN network with itw and w, then the
// other kind with itw2 and w2, over the pass of t bits on rows of 2^row_log.
template <bool DIT_IN>
static int launch_pair(c2_status* st, cudaStream_t s, fr_t* d, int k, int row_log, int t, const fr_tw* itw,
                       const pow_tables& w, bool prescale, const pow_tables& ps, const fr_t* mul,
                       const fr_tw* itw2, const pow_tables& w2) {
    const pass_geometry g(k, row_log, t);
    const int lb_log = g.lb_log;
    const unsigned threads = g.threads, nblocks = g.nblocks;
    const size_t sm = g.sm;
#if C2_NTT_PAIR_UNROLL
    constexpr int T1 = C2_NTT_PAIR_UNROLL == 1 ? NTT_TMAX : 0, T2 = C2_NTT_PAIR_UNROLL == 2 ? NTT_TMAX : 0;
#else
    constexpr int T1 = 0, T2 = 0;
#endif
    if (T1 + T2 > 0 && t == NTT_TMAX)
        k_ntt_pair<DIT_IN, T1, T2><<<nblocks, threads, sm, s>>>(d, k, row_log, t, lb_log, itw, w, prescale, ps, mul,
                                                               itw2, w2);
    else
        k_ntt_pair<DIT_IN><<<nblocks, threads, sm, s>>>(d, k, row_log, t, lb_log, itw, w, prescale, ps, mul, itw2, w2);
    C2_CHECK_LAUNCH(k_ntt_pair);
    return C2_OK;
}
#endif

// The row length 2^rows_log[i] of each pass i of pl over 2^k elements.
static void pass_rows(const pass_plan& pl, int k, int* rows_log) {
    for (int i = 0; i < pl.np; i++) {
        rows_log[i] = k;
        k -= pl.t[i];
    }
}

// The inner twiddles of a transform of 2^k (k >= 1) with root w
// (k_inner_twiddles): 2^min(k, NTT_TMAX) - 1 entries in m.
static int build_inner(c2_status* st, cudaStream_t s, scratch& m, int k, const pow_tables& w) {
    const int bmax = k < NTT_TMAX ? k : NTT_TMAX;
    const uint32_t nitw = (1u << bmax) - 1;
    C2_CHECK(m.alloc((size_t)nitw * sizeof(fr_tw), s));
    k_inner_twiddles<<<blocks_for(nitw, 256), 256, 0, s>>>(m.as<fr_tw>(), w, k, bmax);
    C2_CHECK_LAUNCH(k_inner_twiddles);
    return C2_OK;
}

// Passes from <= ii < to of a transform of 2^k (k >= 1), ii counting them in
// the order they run: DIF runs pass i = ii, DIT pass i = np - 1 - ii.
// itw: the inner twiddles of w (build_inner). prescale applies at ii = 0.
static int run_passes(c2_status* st, cudaStream_t s, fr_t* d, int k, bool dit, const fr_tw* itw,
                      const pow_tables& w, bool prescale, const pow_tables& ps, const fr_t* mul, int from, int to) {
    const pass_plan pl = plan_passes(k);
    int rows_log[4];
    pass_rows(pl, k, rows_log);
    for (int ii = from; ii < to; ii++) {
        const int i = dit ? pl.np - 1 - ii : ii;
        const int rc = dit ? launch_pass<true>(st, s, d, k, rows_log[i], pl.t[i], itw, w, prescale && ii == 0, ps,
                                               nullptr)
                           : launch_pass<false>(st, s, d, k, rows_log[i], pl.t[i], itw, w, false, ps,
                                                ii == 0 ? mul : nullptr);
        if (rc) return rc;
    }
    return C2_OK;
}

// DIF (natural -> bit-reversed) or DIT (bit-reversed -> natural) with root w.
// prescale (DIT): see k_ntt_pass. mul (DIF; null for none): the input is
// first multiplied pointwise by mul (2^k elements).
static int run_ntt(c2_status* st, cudaStream_t s, fr_t* d, int k, bool dit, const pow_tables& w,
                   bool prescale, const pow_tables& ps, const fr_t* mul = nullptr) {
    if (k == 0) {
        if (!dit && mul) {
            k_mul<<<1, 32, 0, s>>>(d, mul, 1);
            C2_CHECK_LAUNCH(k_mul);
        }
        return C2_OK;
    }
    scratch m_itw;
    int rc = build_inner(st, s, m_itw, k, w);
    if (rc) return rc;
    return run_passes(st, s, d, k, dit, m_itw.as<fr_tw>(), w, prescale, ps, mul, 0, plan_passes(k).np);
}

static int bitrev_scale(c2_status* st, cudaStream_t s, fr_t* d, int k, int mode, fr_t c, const pow_tables& ps,
                        bool by_src) {
    return bitrev_permute(st, s, d, k, bitrev_scale_op{d, mode, c, ps, by_src});
}

static int ntt_device(c2_status* st, cudaStream_t s, fr_t* d, int k, int kind, const c2_ntt_consts* kc) {
    int rc;
    fr_t one = fr_t::one();
    pow_tables none{};
    bool inv = kind == C2_NTT_INVERSE || kind == C2_NTT_COSET_INVERSE;
    table_set w;
    if ((rc = w.build(st, s, k, load_fr(inv ? kc->omega_inv : kc->omega), one, true))) return rc;
#if C2_NTT_FULL_ROW
    scratch mfull;
    if (k > C2_NTT_ROW_LOG && (rc = build_full(st, s, mfull, k, w.t))) return rc;
#endif
    switch (kind) {
    case C2_NTT_FORWARD:
        if ((rc = run_ntt(st, s, d, k, false, w.t, false, none))) return rc;
        return bitrev_scale(st, s, d, k, 0, one, none, false);
    case C2_NTT_FORWARD_NR:
        return run_ntt(st, s, d, k, false, w.t, false, none);
    case C2_NTT_INVERSE:
        if ((rc = run_ntt(st, s, d, k, false, w.t, false, none))) return rc;
        return bitrev_scale(st, s, d, k, 1, load_fr(kc->n_inv), none, false);
    case C2_NTT_COSET_FORWARD: {
        table_set g;
        if ((rc = g.build(st, s, k, load_fr(kc->g), one))) return rc;
        if ((rc = bitrev_scale(st, s, d, k, 2, one, g.t, true))) return rc;
        return run_ntt(st, s, d, k, true, w.t, false, none);
    }
    case C2_NTT_COSET_INVERSE: {
        table_set g;
        if ((rc = g.build(st, s, k, load_fr(kc->g_inv), load_fr(kc->n_inv)))) return rc;
        if ((rc = run_ntt(st, s, d, k, false, w.t, false, none))) return rc;
        return bitrev_scale(st, s, d, k, 2, one, g.t, false);
    }
    }
    return set_status(st, C2_ERR_INVALID, 0, "ntt kind %d", kind);
}

// The H pipeline. With A, B, C the interpolants of a, b, c over the domain
// <w> and Z = x^n - 1, which is the constant g^n - 1 on the coset g<w>,
//   h = (coset interpolant of A*B's coset values - C) / Z:
// the coset inverse transform is linear and takes C's coset values back to C,
// so c needs only its inverse transform. Six transforms: a and b go to the
// coset (two each), a*b comes back (one), c is interpolated (one). The steps
// are separate calls so that host uploads can overlap the transforms.
//
// Products per element outside the transforms' butterflies and twiddles:
// 2 for each of a's and b's coset shift (table entry, product), 1 for a*b
// and 3 in h_final_op: 8.
struct h_pipeline {
    table_set wf, wi, gs, gz;
#if C2_NTT_FULL_ROW
    scratch mfull;  // build_full's table of wf's root
#endif
    fr_t nz;  // 1/(n*Z)
    int k;
    // Pairs of passes fused (C2_NTT_FUSE, transforms of two passes or more):
    // a's trip to the coset leaves its last forward pass to product.
    bool fuse = false;
#if C2_NTT_FUSE
    scratch mf, mi;  // inner twiddles of wf and wi
    pass_plan pl;
    int rows_log[4];
#endif
    int init(c2_status* st, cudaStream_t s, int log_n, const c2_ntt_consts* kc) {
        int rc;
        k = log_n;
        fr_t one = fr_t::one();
        nz = load_fr(kc->n_inv) * load_fr(kc->z_inv);
        if ((rc = wf.build(st, s, k, load_fr(kc->omega), one, true))) return rc;
        if ((rc = wi.build(st, s, k, load_fr(kc->omega_inv), one, true))) return rc;
#if C2_NTT_FULL_ROW
        if (k > C2_NTT_ROW_LOG) {  // one table: the inverse root's powers read at -e
            if ((rc = build_full(st, s, mfull, k, wf.t))) return rc;
            wi.t.full = wf.t.full;
            wi.t.full_log = k;
            wi.t.full_inv = true;
        }
#endif
        // iNTT scale 1/n and coset shift g^i folded into one table
        if ((rc = gs.build(st, s, k, load_fr(kc->g), load_fr(kc->n_inv)))) return rc;
        // iNTT scale 1/n, coset shift g^-i and 1/Z folded into one table
        if ((rc = gz.build(st, s, k, load_fr(kc->g_inv), nz))) return rc;
#if C2_NTT_FUSE
        pl = plan_passes(k);
        fuse = k > 0 && pl.np >= 2;
        if (fuse) {
            pass_rows(pl, k, rows_log);
            if ((rc = build_inner(st, s, mf, k, wf.t))) return rc;
            if ((rc = build_inner(st, s, mi, k, wi.t))) return rc;
        }
#endif
        return C2_OK;
    }
    // natural values -> bit-reversed n*coefficients -> natural coset values.
    // With fuse and !whole, the forward transform's last pass is left to
    // product: to_coset(a, !fuse), to_coset(b, true), product(a, b).
    int to_coset(c2_status* st, cudaStream_t s, fr_t* v, bool whole) {
        int rc;
#if C2_NTT_FUSE
        if (fuse) {
            const int np = pl.np, i = np - 1;
            const fr_tw *itf = mf.as<fr_tw>(), *iti = mi.as<fr_tw>();
            if ((rc = run_passes(st, s, v, k, false, iti, wi.t, false, gs.t, nullptr, 0, np - 1))) return rc;
            if ((rc = launch_pair<false>(st, s, v, k, rows_log[i], pl.t[i], iti, wi.t, true, gs.t, nullptr, itf,
                                         wf.t)))
                return rc;
            return run_passes(st, s, v, k, true, itf, wf.t, false, gs.t, nullptr, 1, whole ? np : np - 1);
        }
#endif
        (void)whole;
        if ((rc = run_ntt(st, s, v, k, false, wi.t, false, gs.t))) return rc;
        return run_ntt(st, s, v, k, true, wf.t, true, gs.t);
    }
    // a, b natural coset values (each as to_coset leaves it) -> a =
    // bit-reversed n*(coefficients of the coset interpolant of a*b before
    // the shift by g^-i); b is unchanged
    int product(c2_status* st, cudaStream_t s, fr_t* a, const fr_t* b) {
#if C2_NTT_FUSE
        if (fuse) {
            int rc;
            const fr_tw *itf = mf.as<fr_tw>(), *iti = mi.as<fr_tw>();
            if ((rc = launch_pair<true>(st, s, a, k, rows_log[0], pl.t[0], itf, wf.t, false, gs.t, b, iti, wi.t)))
                return rc;
            return run_passes(st, s, a, k, false, iti, wi.t, false, gs.t, nullptr, 1, pl.np);
        }
#endif
        return run_ntt(st, s, a, k, false, wi.t, false, gs.t, b);
    }
    // c natural values -> bit-reversed n*coefficients of C (clobbered); a (as
    // product leaves it) -> h's coefficients in natural order
    int finish(c2_status* st, cudaStream_t s, fr_t* a, fr_t* c) {
        int rc;
#if C2_NTT_FUSE
        if (fuse) {
            if ((rc = run_passes(st, s, c, k, false, mi.as<fr_tw>(), wi.t, false, gs.t, nullptr, 0, pl.np)))
                return rc;
            return bitrev_permute(st, s, a, k, h_final_op{a, c, gz.t, nz});
        }
#endif
        if ((rc = run_ntt(st, s, c, k, false, wi.t, false, gs.t))) return rc;
        return bitrev_permute(st, s, a, k, h_final_op{a, c, gz.t, nz});
    }
};

}  // namespace c2

using namespace c2;

extern "C" {

int c2_ntt(c2_status* st, c2_stream* h, void* data, int on_device, int log_n, int kind, const c2_ntt_consts* kc) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || !data || !kc || log_n < 0 || log_n > 31 || kind < 0 || kind > 4)
        return set_status(st, C2_ERR_INVALID, 0, "c2_ntt: bad argument (log_n %d, kind %d)", log_n, kind);
    C2_ENTER(sc->ordinal);
    trace_call trace(sc->ordinal, sc->s, "ntt");
    size_t bytes = sizeof(fr_t) << log_n;
    scratch buf;
    fr_t* d = (fr_t*)data;
    if (!on_device) {
        C2_CHECK(buf.alloc(bytes, sc->s));
        d = buf.as<fr_t>();
        C2_CHECK(cudaMemcpyAsync(d, data, bytes, cudaMemcpyHostToDevice, sc->s));
    }
    if (int rc = drained(sc->s, ntt_device(st, sc->s, d, log_n, kind, kc))) return rc;
    if (!on_device) C2_CHECK(cudaMemcpyAsync(data, d, bytes, cudaMemcpyDeviceToHost, sc->s));
    C2_CHECK(cudaStreamSynchronize(sc->s));
    C2_CHECK(cudaGetLastError());
    return ok(st);
}

int c2_compute_h(c2_status* st, c2_stream* h, void* a, void* b, void* c, int flags, int log_n,
                 const c2_ntt_consts* kc) {
    stream_ctx* sc = (stream_ctx*)h;
    const bool on_device = flags & C2_H_ON_DEVICE;
    // two vectors: c staged into b's once the product is done with b
    const bool two = !on_device && (flags & C2_H_TWO_VECTORS);
    if (!sc || !a || !b || !c || !kc || log_n < 0 || log_n > 31 || (flags & ~(C2_H_ON_DEVICE | C2_H_TWO_VECTORS)))
        return set_status(st, C2_ERR_INVALID, 0, "c2_compute_h: bad argument (log_n %d, flags %d)", log_n, flags);
    C2_ENTER(sc->ordinal);
    trace_call trace(sc->ordinal, sc->s, "compute_h");
    size_t bytes = sizeof(fr_t) << log_n;
    scratch buf;
    fr_t *da = (fr_t*)a, *db = (fr_t*)b, *dc = (fr_t*)c;
    call_events<4> ev;
    h_pipeline hp;
    int rc = hp.init(st, sc->s, log_n, kc);
    if (rc == C2_OK && !on_device) {
        C2_CHECK(buf.alloc((two ? 2 : 3) * bytes, sc->s));
        da = buf.as<fr_t>();
        db = da + ((size_t)1 << log_n);
        dc = two ? db : db + ((size_t)1 << log_n);
        for (int i = 0; i < 4; i++) C2_CHECK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
        C2_CHECK(cudaEventRecord(ev[0], sc->s));  // the buffer exists from here on
        C2_CHECK(cudaMemcpyAsync(da, a, bytes, cudaMemcpyHostToDevice, sc->s));
    }
    // Each upload is queued after the work that does not need it (a pageable
    // copy blocks the host), so b's upload overlaps a's transforms and c's
    // overlaps b's and a*b's (in two vectors, c's waits for a*b, which reads
    // the vector it goes to). b and c go on the copy stream (a pageable upload
    // on s would first wait for the work queued there); s waits for each
    // before using it.
    if (rc == C2_OK) rc = hp.to_coset(st, sc->s, da, !hp.fuse);
    if (rc == C2_OK && !on_device) {
        C2_CHECK(cudaStreamWaitEvent(sc->copy, ev[0], 0));
        C2_CHECK(cudaMemcpyAsync(db, b, bytes, cudaMemcpyHostToDevice, sc->copy));
        C2_CHECK(cudaEventRecord(ev[1], sc->copy));
        C2_CHECK(cudaStreamWaitEvent(sc->s, ev[1], 0));
    }
    if (rc == C2_OK) rc = hp.to_coset(st, sc->s, db, true);
    if (rc == C2_OK) rc = hp.product(st, sc->s, da, db);
    if (rc == C2_OK && two) {
        C2_CHECK(cudaEventRecord(ev[3], sc->s));
        C2_CHECK(cudaStreamWaitEvent(sc->copy, ev[3], 0));
    }
    if (rc == C2_OK && !on_device) {
        C2_CHECK(cudaMemcpyAsync(dc, c, bytes, cudaMemcpyHostToDevice, sc->copy));
        C2_CHECK(cudaEventRecord(ev[2], sc->copy));
        C2_CHECK(cudaStreamWaitEvent(sc->s, ev[2], 0));
    }
    if (rc == C2_OK) rc = hp.finish(st, sc->s, da, dc);
    if (drained(sc->s, rc)) return rc;
    if (!on_device) C2_CHECK(cudaMemcpyAsync(a, da, bytes, cudaMemcpyDeviceToHost, sc->s));
    C2_CHECK(cudaStreamSynchronize(sc->s));
    C2_CHECK(cudaGetLastError());
    return ok(st);
}

}  // extern "C"
