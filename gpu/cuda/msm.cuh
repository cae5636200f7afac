// Multi-scalar multiplication (Pippenger, signed digits) and bitmap batch
// addition, generic over the group (G1 over Fp, G2 over Fp2).
//
// MSM outline, per chunk of points (chunks stream from the host while the
// previous chunk computes):
//   1. each scalar leaves Montgomery form and is cut into W signed digits of
//      near-equal widths (digits.cuh); digit d != 0 of window w becomes a
//      (key = w*nb + |d|-1, value = point index | sign) pair;
//   2. one radix sort of all pairs groups the points of every bucket;
//   3. buckets are ordered by size (largest first) and cut into tasks of at
//      most MSM_PIECE points (tasks.cuh), so that the threads of a warp walk
//      lists of about equal length whatever the scalars; tasks add affine
//      points into XYZZ accumulators kept across chunks (piece 0 into the
//      bucket, other pieces into extras summed in afterwards), each point
//      copied into shared memory while the previous one is added
//      (point_stage).
// Then each window's weighted bucket sum (sum (b+1) B_b) is computed by many
// threads, each owning a segment of buckets (running sums, plus a scalar
// multiple for the segment offset; the segment count fits the resident
// threads, tasks.cuh: window_segments), and the segments are summed by a tree.
// The host combines the W window sums (Horner, window_width doublings each).
// A split MSM (msm_impl's bases_hi: 2^128 times the bases, resident) cuts
// each scalar into two 128-bit halves over the two arrays; windows w and
// w + H of its 2H share bucket set w, so it pays the additions of 2H windows
// and the sums of H (digits.cuh: split_width).
#pragma once
#include <type_traits>
#include <cub/cub.cuh>
#include "common.cuh"
#include "digits.cuh"
#include "tasks.cuh"
#include "ec.cuh"

namespace c2 {

static constexpr uint64_t MSM_CHUNK = 1ull << 24;
// First chunk of an MSM whose scalars or bases are in host memory: short, so
// that the device waits only for its upload and the next chunk's copy overlaps
// its work.
static constexpr uint64_t MSM_FIRST_CHUNK = 1ull << 21;
static constexpr uint32_t MSM_PIECE = 128;  // most points one accumulation task adds

// Keys and values of the (bucket, point) pairs of W windows; nb buckets per
// window (2^(widest window - 1)). H = 0: the plain layout, window w's
// buckets are set w. H > 0: the split layout of W = 2H windows
// (digits.cuh), windows w and w + H share set w and window w + H's points
// carry MSM_HIGH. Key (sets * nb) marks a zero digit.
template <class F>
__global__ void k_digits(const fr_t* __restrict__ scalars, uint32_t n, uint32_t chunk_stride, int W, int H,
                         uint32_t nb, uint32_t* __restrict__ keys, uint32_t* __restrict__ vals) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t s = scalars[i].from_mont();
    uint32_t carry = 0;
    const uint32_t zero_key = (uint32_t)(H ? H : W) * nb;
    for (int w = 0; w < W; w++) {
        bool neg;
        uint32_t d, set = w, high = 0;
        if (H) {
            d = signed_digit_at(s.v, split_offset(w, H), split_width(w, H), carry, neg);
            if (w >= H) set = w - H, high = MSM_HIGH;
        } else {
            d = signed_digit(s.v, w, W, carry, neg);
        }
        keys[(size_t)w * chunk_stride + i] = d == 0 ? zero_key : set * nb + d - 1;
        vals[(size_t)w * chunk_stride + i] = i | high | (neg ? MSM_NEG : 0u);
    }
}

// Marks the first and one-past-last sorted position of each bucket.
static __global__ void k_bucket_bounds(const uint32_t* __restrict__ keys, uint64_t m, uint32_t nbuckets,
                                uint32_t* __restrict__ start, uint32_t* __restrict__ end) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    uint32_t k = keys[i];
    if (k >= nbuckets) return;
    if (i == 0 || keys[i - 1] != k) start[k] = (uint32_t)i;
    if (i == m - 1 || keys[i + 1] != k) end[k] = (uint32_t)(i + 1);
}

// The sort key of each bucket for the task order (largest first): its size,
// sizes of 2^MSM_SIZE_BITS - 1 and up as one, so that the order takes one
// radix pass (such buckets are cut into pieces of MSM_PIECE points anyway).
static constexpr int MSM_SIZE_BITS = 8;
static __global__ void k_bucket_sizes(const uint32_t* __restrict__ start, const uint32_t* __restrict__ end,
                               uint32_t nbuckets, uint32_t* __restrict__ size, uint32_t* __restrict__ id) {
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbuckets) return;
    size[b] = min(end[b] - start[b], (1u << MSM_SIZE_BITS) - 1);
    id[b] = b;
}

// The group law as tasks.cuh wants it.
template <class F>
struct ec_group {
    using acc_t = xyzz_t<F>;
    using point_t = affine_t<F>;
    C2_HD static acc_t zero() { return acc_t::inf(); }
    C2_HD static acc_t add_point(const acc_t& a, point_t p, bool neg) {
        if (neg) p.y = p.y.neg();
        return a.add_affine(p);
    }
    C2_HD static acc_t add(const acc_t& a, const acc_t& b) { return a.add(b); }
};

// pieces[t] for t < nbuckets, pieces[nbuckets] = 0 (so that the exclusive
// scan's last entry is the task count).
static __global__ void k_pieces(const uint32_t* __restrict__ order, const uint32_t* __restrict__ start,
                                const uint32_t* __restrict__ end, uint32_t nbuckets, uint32_t L,
                                uint32_t* __restrict__ pieces) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t > nbuckets) return;
    if (t == nbuckets) {
        pieces[t] = 0;
        return;
    }
    uint32_t b = order[t];
    pieces[t] = task_pieces(end[b] - start[b], L);
}

static __global__ void k_owner(const uint32_t* __restrict__ first, uint32_t nbuckets, uint32_t* __restrict__ owner) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < nbuckets) fill_owner(t, first, owner);
}

// Whether the batch addition of group F stages its points (point_stage);
// the bucket kernels of both groups do. G2's batch addition, which reads
// its bases in increasing order, is 4 % slower staged (BENCHMARKS.md,
// session 17).
template <class F>
struct staged_batch {
    static constexpr bool value = true;
};
template <>
struct staged_batch<fp2_t> {
    static constexpr bool value = false;
};

// A thread's points, one ahead: while the thread adds a point, the next one
// is copied from global into shared memory (cp.async), so that the
// addition's chain never starts by waiting for global memory. Each thread
// owns two slots of one affine point, stored word-major (16-byte word q of
// thread i at q * blockDim.x + i) so that a warp's reads of a word hit
// distinct banks. bytes(T): the dynamic shared memory of a block of T threads.
template <class F>
struct point_stage {
    static constexpr int Q = sizeof(affine_t<F>) / 16;
    static_assert(sizeof(affine_t<F>) == Q * 16, "affine point is whole 16-byte words");
    static constexpr size_t bytes(unsigned threads) { return 2 * Q * 16 * (size_t)threads; }
    uint4* slot0;
    __device__ explicit point_stage(uint4* smem) : slot0(smem + threadIdx.x) {}
    // Starts the copy of *p into slot (0 or 1).
    __device__ __forceinline__ void fetch(int slot, const affine_t<F>* p) const {
        const uint4* src = reinterpret_cast<const uint4*>(p);
        uint4* dst = slot0 + (size_t)slot * Q * blockDim.x;
#pragma unroll
        for (int q = 0; q < Q; q++) {
            const uint32_t a = (uint32_t)__cvta_generic_to_shared(dst + (size_t)q * blockDim.x);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(src + q) : "memory");
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    // Waits for every copy this thread started and returns slot's point.
    __device__ __forceinline__ affine_t<F> take(int slot) const {
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
        const uint4* src = slot0 + (size_t)slot * Q * blockDim.x;
        affine_t<F> p;
        uint32_t* w = reinterpret_cast<uint32_t*>(&p);
#pragma unroll
        for (int q = 0; q < Q; q++) {
            const uint4 u = src[(size_t)q * blockDim.x];
            w[4 * q] = u.x;
            w[4 * q + 1] = u.y;
            w[4 * q + 2] = u.z;
            w[4 * q + 3] = u.w;
        }
        return p;
    }
};

// Task k of the bucket accumulation (tasks.cuh: run_task), its points
// staged. bases_hi: the split MSM's second base array (else bases).
template <class F>
__global__ void __launch_bounds__(128) k_run_tasks(const uint32_t* __restrict__ first, uint32_t nbuckets,
                                                   const uint32_t* __restrict__ owner,
                                                   const uint32_t* __restrict__ order,
                                                   const uint32_t* __restrict__ start,
                                                   const uint32_t* __restrict__ end,
                                                   const uint32_t* __restrict__ vals,
                                                   const affine_t<F>* __restrict__ bases,
                                                   const affine_t<F>* __restrict__ bases_hi, xyzz_t<F>* buckets,
                                                   xyzz_t<F>* extra, uint32_t max_tasks) {
    using G = ec_group<F>;
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= max_tasks || k >= first[nbuckets]) return;
    extern __shared__ uint4 stage_mem[];
    const point_stage<F> st(stage_mem);
    task_span sp;
    if (!sp.of(k, owner, first, order, start, end)) return;
    xyzz_t<F> acc = sp.initial<G>(buckets);
    // v: the value of point j; vn: of point j + 1, loaded an addition ahead
    // of the copy that needs it
    uint32_t v = vals[sp.s];
    uint32_t vn = sp.s + 1 < sp.e ? vals[sp.s + 1] : 0;
    st.fetch(0, point_of(bases, bases_hi, v));
    int slot = 0;
    for (uint32_t j = sp.s; j < sp.e; j++) {
        const affine_t<F> p = st.take(slot);
        const bool neg = (v & MSM_NEG) != 0;
        if (j + 1 < sp.e) st.fetch(slot ^ 1, point_of(bases, bases_hi, vn));
        v = vn;
        if (j + 2 < sp.e) vn = vals[j + 2];
        acc = G::add_point(acc, p, neg);
        slot ^= 1;
    }
    sp.store<G>(k, acc, buckets, extra);
}

template <class F>
__global__ void __launch_bounds__(128) k_fold_extras(const uint32_t* __restrict__ first, uint32_t nbuckets,
                                                     const uint32_t* __restrict__ owner, xyzz_t<F>* extra,
                                                     uint32_t max_tasks) {
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= max_tasks || k >= first[nbuckets]) return;
    fold_extras<ec_group<F>>(k, owner, first, extra);
}

template <class F>
__global__ void __launch_bounds__(128) k_fix_up(const uint32_t* __restrict__ first, uint32_t nbuckets,
                                                const uint32_t* __restrict__ order, xyzz_t<F>* buckets,
                                                const xyzz_t<F>* extra) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < nbuckets) fix_up<ec_group<F>>(t, first, order, buckets, extra);
}

// k * p for k >= 1: doublings from k's top bit down.
template <class F>
__device__ __noinline__ xyzz_t<F> times(const xyzz_t<F>& p, uint32_t k) {
    xyzz_t<F> acc = p;
    for (int b = 30 - __clz(k); b >= 0; b--) {
        acc = acc.dbl();
        if ((k >> b) & 1) acc = acc.add(p);
    }
    return acc;
}

// The window sums' addition: inlined for G1 (xyzz_t::add_in, the sums 2 %
// faster at 2^24 than through calls, which pass both points through local
// memory), called for G2, whose inlined sums spill 4 KiB and run no faster
// (BENCHMARKS.md, session 18).
template <class F>
__device__ __forceinline__ xyzz_t<F> window_add(const xyzz_t<F>& a, const xyzz_t<F>& b) {
    if constexpr (std::is_same<F, fp2_t>::value) {
        return a.add(b);
    } else {
        return a.add_in(b);
    }
}

// Thread (w, seg) computes sum over b in its segment of (b+1) * B[w][b].
template <class F>
__global__ void __launch_bounds__(128) k_window_segments(const xyzz_t<F>* __restrict__ buckets, uint32_t nb,
                                                         int W, uint32_t nseg, xyzz_t<F>* __restrict__ out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint32_t)W * nseg) return;
    uint32_t w = t / nseg, seg = t % nseg;
    const uint32_t lo = (uint32_t)((uint64_t)seg * nb / nseg), hi = (uint32_t)((uint64_t)(seg + 1) * nb / nseg);
    const xyzz_t<F>* B = buckets + (size_t)w * nb;
    xyzz_t<F> run = xyzz_t<F>::inf(), acc = xyzz_t<F>::inf();
    for (uint32_t b = hi; b-- > lo;) {
        run = window_add(run, B[b]);
        acc = window_add(acc, run);
    }
    // (run and acc are passed to no call by address, so that inlined
    // additions keep them in registers through the loop)
    if (lo) {
        const xyzz_t<F> r = run;
        acc = window_add(acc, times(r, lo));
    }
    out[t] = acc.canonical();  // the host may read it (tree_sum)
}

// p[g*stride + j] += p[g*stride + j + half], j < pairs, for each group g,
// canonical (the host reads the sums).
template <class F>
__global__ void k_tree_step(xyzz_t<F>* p, uint32_t groups, uint32_t stride, uint32_t half, uint32_t pairs) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= groups * pairs) return;
    uint32_t g = t / pairs, j = t % pairs;
    xyzz_t<F>* q = p + (size_t)g * stride;
    q[j] = q[j].add(q[j + half]).canonical();
}

// Sums the groups (each of `count` entries, stride count) into entry 0: each
// step folds the upper half of the entries left (the larger half of an odd
// count stays below) onto the lower.
template <class F>
int tree_sum(c2_status* st, cudaStream_t s, xyzz_t<F>* p, uint32_t groups, uint32_t count) {
    for (uint32_t left = count; left > 1;) {
        const uint32_t half = (left + 1) / 2, pairs = left - half;
        const uint32_t nt = groups * pairs;
        k_tree_step<F><<<blocks_for(nt, 128), 128, 0, s>>>(p, groups, count, half, pairs);
        C2_CHECK_LAUNCH(k_tree_step);
        left = half;
    }
    return C2_OK;
}

// The widest window msm_impl picks for a split MSM (6 window pairs of 21-22
// bits, 2^21 buckets each, at 2^24 points and more).
static constexpr int MSM_SPLIT_MAX_C = 22;

// The MSM sum scalars[i] bases[i], i < n, as W window sums (out, *nwindows;
// *used_c: the widest window) that the host combines. bases_hi, when not
// null, holds 2^128 bases[i] (device memory, as bases must then be): the
// split MSM, whose *nwindows = H sums are those of the layout of H windows
// over 128 bits (digits.cuh: split_width), each the sum over a window pair.
template <class F>
int msm_impl(c2_status* st, stream_ctx* sc, const affine_t<F>* bases, bool bases_dev, const fr_t* scalars,
             bool scalars_dev, uint64_t n, int c, xyzz_t<F>* out, int* nwindows, int* used_c, int max_c,
             const affine_t<F>* bases_hi = nullptr) {
    using X = xyzz_t<F>;
    using A = affine_t<F>;
    cudaStream_t s = sc->s;
    *nwindows = 0;
    *used_c = 0;
    if (n == 0) return ok(st);
    if (n > (1ull << 31)) return set_status(st, C2_ERR_INVALID, 0, "msm: %llu points exceed 2^31", (unsigned long long)n);
    // window_bits carries the window in its low byte and, for tests, log2 of
    // the streaming chunk size in its second byte (0: default).
    const int chunk_log = (c >> 8) & 0xff;
    c &= 0xff;
    const bool split = bases_hi != nullptr;
    if (split && !bases_dev) return set_status(st, C2_ERR_INVALID, 0, "msm: a split MSM needs resident bases");
    // H: a split MSM's window pairs (0: the plain layout)
    int H = 0;
    if (split) {
        if (c >= 4) H = (128 + c - 1) / c;
        else if (c == 0) H = msm_pick_split(n, MSM_SPLIT_MAX_C);
        if (H > 0) c = split_width(0, H);
    } else if (c == 0) {
        c = msm_pick_window(n, max_c);
    }
    if (c < 4 || c > 24) return set_status(st, C2_ERR_INVALID, 0, "msm: window %d outside [4, 24]", c);
    // W windows of digits; NS sets of nb buckets (a split MSM's window
    // pairs share a set)
    const int W = split ? 2 * H : (256 + c - 1) / c;
    const int NS = split ? H : W;
    const int widest = split ? split_width(0, H) : window_width(0, W);
    const uint32_t nb = 1u << (widest - 1);
    const uint32_t TB = (uint32_t)NS * nb;
    const uint64_t chunk = chunk_log ? 1ull << chunk_log : MSM_CHUNK;
    const uint64_t CH = n < chunk ? n : chunk;
    if (CH > (uint64_t)MSM_INDEX + 1)
        return set_status(st, C2_ERR_INVALID, 0, "msm: chunk of %llu points exceeds 2^30", (unsigned long long)CH);
    // chunk 0 holds c0 points, every later chunk but the last CH
    uint64_t c0 = CH;
    if (!(scalars_dev && bases_dev) && MSM_FIRST_CHUNK < CH) c0 = MSM_FIRST_CHUNK;
    const uint64_t nchunks = 1 + (n - c0 + CH - 1) / CH;
    // chunk ci holds the points [off, off + cnt)
    auto chunk_at = [&](uint64_t ci, uint64_t& off, uint64_t& cnt) {
        off = ci == 0 ? 0 : c0 + (ci - 1) * CH;
        const uint64_t len = ci == 0 ? c0 : CH;
        cnt = n - off < len ? n - off : len;
    };
    const uint64_t M = (uint64_t)W * CH;
    int key_bits = 1;
    while ((1ull << key_bits) <= TB) key_bits++;

    scratch m_keys, m_vals, m_buckets, m_start, m_end, m_size, m_id, m_cub, m_sc, m_bs, m_part;
    scratch m_pieces, m_first, m_owner, m_extra;
    C2_CHECK(m_keys.alloc(2 * M * sizeof(uint32_t), s));
    C2_CHECK(m_vals.alloc(2 * M * sizeof(uint32_t), s));
    C2_CHECK(m_buckets.alloc((size_t)TB * sizeof(X), s));
    C2_CHECK(m_start.alloc((size_t)TB * sizeof(uint32_t), s));
    C2_CHECK(m_end.alloc((size_t)TB * sizeof(uint32_t), s));
    C2_CHECK(m_size.alloc(2 * (size_t)TB * sizeof(uint32_t), s));
    C2_CHECK(m_id.alloc(2 * (size_t)TB * sizeof(uint32_t), s));
    uint32_t* keys = m_keys.as<uint32_t>();
    uint32_t* vals = m_vals.as<uint32_t>();
    uint32_t* bstart = m_start.as<uint32_t>();
    uint32_t* bend = m_end.as<uint32_t>();
    uint32_t* bsize = m_size.as<uint32_t>();
    uint32_t* bid = m_id.as<uint32_t>();
    X* buckets = m_buckets.as<X>();

    size_t cub1 = 0, cub2 = 0;
    {
        cub::DoubleBuffer<uint32_t> dk(keys, keys + M), dv(vals, vals + M);
        C2_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, cub1, dk, dv, (int)M, 0, key_bits, s));
        cub::DoubleBuffer<uint32_t> sk(bsize, bsize + TB), sv(bid, bid + TB);
        C2_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, cub2, sk, sv, (int)TB, 0, MSM_SIZE_BITS, s));
    }
    size_t cub3 = 0;
    // tasks: at most one per bucket plus M / MSM_PIECE extra pieces
    const uint64_t max_tasks64 = (uint64_t)TB + M / MSM_PIECE + 1;
    if (max_tasks64 >= (1ull << 32)) return set_status(st, C2_ERR_INVALID, 0, "msm: too many tasks");
    const uint32_t max_tasks = (uint32_t)max_tasks64;
    C2_CHECK(m_pieces.alloc(((size_t)TB + 1) * sizeof(uint32_t), s));
    C2_CHECK(m_first.alloc(((size_t)TB + 1) * sizeof(uint32_t), s));
    C2_CHECK(m_owner.alloc((size_t)max_tasks * sizeof(uint32_t), s));
    C2_CHECK(m_extra.alloc((M / MSM_PIECE + 1) * sizeof(X), s));
    uint32_t* pieces = m_pieces.as<uint32_t>();
    uint32_t* first = m_first.as<uint32_t>();
    uint32_t* owner = m_owner.as<uint32_t>();
    X* extra = m_extra.as<X>();
    C2_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cub3, pieces, first, (int)TB + 1, s));
    size_t cub_bytes = cub1 > cub2 ? cub1 : cub2;
    if (cub3 > cub_bytes) cub_bytes = cub3;
    C2_CHECK(m_cub.alloc(cub_bytes, s));
    C2_CHECK(cudaMemsetAsync(buckets, 0, (size_t)TB * sizeof(X), s));

    // staging for host inputs (double-buffered)
    const fr_t* sc_slot[2] = {nullptr, nullptr};
    const A* bs_slot[2] = {nullptr, nullptr};
    if (!scalars_dev) {
        C2_CHECK(m_sc.alloc(2 * CH * sizeof(fr_t), s));
        sc_slot[0] = m_sc.as<fr_t>();
        sc_slot[1] = sc_slot[0] + CH;
    }
    if (!bases_dev) {
        C2_CHECK(m_bs.alloc(2 * CH * sizeof(A), s));
        bs_slot[0] = m_bs.as<A>();
        bs_slot[1] = bs_slot[0] + CH;
    }
    cudaEvent_t copied[2], used[2];
    for (int i = 0; i < 2; i++) {
        C2_CHECK(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
        C2_CHECK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
    struct ev_guard {
        cudaEvent_t* e;
        ~ev_guard() {
            for (int i = 0; i < 4; i++) cudaEventDestroy(e[i]);
        }
    };
    cudaEvent_t all_ev[4] = {copied[0], copied[1], used[0], used[1]};
    ev_guard guard{all_ev};
    // the copy stream must not touch staging before it is allocated on s
    C2_CHECK(cudaEventRecord(used[0], s));
    C2_CHECK(cudaEventRecord(used[1], s));

    auto issue_copy = [&](uint64_t ci) -> int {
        int slot = (int)(ci & 1);
        uint64_t off, cnt;
        chunk_at(ci, off, cnt);
        if (scalars_dev && bases_dev) return C2_OK;
        C2_CHECK(cudaStreamWaitEvent(sc->copy, used[slot], 0));
        if (!scalars_dev)
            C2_CHECK(cudaMemcpyAsync((void*)sc_slot[slot], scalars + off, cnt * sizeof(fr_t), cudaMemcpyHostToDevice,
                                     sc->copy));
        if (!bases_dev)
            C2_CHECK(cudaMemcpyAsync((void*)bs_slot[slot], bases + off, cnt * sizeof(A), cudaMemcpyHostToDevice,
                                     sc->copy));
        C2_CHECK(cudaEventRecord(copied[slot], sc->copy));
        return C2_OK;
    };

    int rc;
    if ((rc = issue_copy(0))) return rc;
    for (uint64_t ci = 0; ci < nchunks; ci++) {
        int slot = (int)(ci & 1);
        uint64_t off, cnt;
        chunk_at(ci, off, cnt);
        const fr_t* csc = scalars_dev ? scalars + off : sc_slot[slot];
        const A* cbs = bases_dev ? bases + off : bs_slot[slot];
        const A* cbs_hi = split ? bases_hi + off : cbs;
        if (!(scalars_dev && bases_dev)) C2_CHECK(cudaStreamWaitEvent(s, copied[slot], 0));
        // windows are stored with stride cnt so that the m pairs are dense
        k_digits<F><<<blocks_for(cnt, 256), 256, 0, s>>>(csc, (uint32_t)cnt, (uint32_t)cnt, W, H, nb, keys, vals);
        C2_CHECK_LAUNCH(k_digits);
        const uint64_t m = (uint64_t)W * cnt;
        cub::DoubleBuffer<uint32_t> dk(keys, keys + M), dv(vals, vals + M);
        C2_CHECK(cub::DeviceRadixSort::SortPairs(m_cub.p, cub_bytes, dk, dv, (int)m, 0, key_bits, s));
        trace_mark("sort_digits");
        C2_CHECK(cudaMemsetAsync(bstart, 0, (size_t)TB * sizeof(uint32_t), s));
        C2_CHECK(cudaMemsetAsync(bend, 0, (size_t)TB * sizeof(uint32_t), s));
        k_bucket_bounds<<<blocks_for(m, 256), 256, 0, s>>>(dk.Current(), m, TB, bstart, bend);
        C2_CHECK_LAUNCH(k_bucket_bounds);
        k_bucket_sizes<<<blocks_for(TB, 256), 256, 0, s>>>(bstart, bend, TB, bsize, bid);
        C2_CHECK_LAUNCH(k_bucket_sizes);
        cub::DoubleBuffer<uint32_t> sk(bsize, bsize + TB), sv(bid, bid + TB);
        C2_CHECK(cub::DeviceRadixSort::SortPairsDescending(m_cub.p, cub_bytes, sk, sv, (int)TB, 0, MSM_SIZE_BITS, s));
        trace_mark("sort_buckets");
        // cut buckets into tasks of at most MSM_PIECE points (tasks.cuh)
        const uint32_t* order = sv.Current();
        k_pieces<<<blocks_for((uint64_t)TB + 1, 256), 256, 0, s>>>(order, bstart, bend, TB, MSM_PIECE, pieces);
        C2_CHECK_LAUNCH(k_pieces);
        C2_CHECK(cub::DeviceScan::ExclusiveSum(m_cub.p, cub_bytes, pieces, first, (int)TB + 1, s));
        trace_mark("scan_pieces");
        k_owner<<<blocks_for(TB, 256), 256, 0, s>>>(first, TB, owner);
        C2_CHECK_LAUNCH(k_owner);
        k_run_tasks<F><<<blocks_for(max_tasks, 128), 128, point_stage<F>::bytes(128), s>>>(
            first, TB, owner, order, bstart, bend, dv.Current(), cbs, cbs_hi, buckets, extra, max_tasks);
        C2_CHECK_LAUNCH(k_run_tasks);
        k_fold_extras<F><<<blocks_for(max_tasks, 128), 128, 0, s>>>(first, TB, owner, extra, max_tasks);
        C2_CHECK_LAUNCH(k_fold_extras);
        k_fix_up<F><<<blocks_for(TB, 128), 128, 0, s>>>(first, TB, order, buckets, extra);
        C2_CHECK_LAUNCH(k_fix_up);
        if (!(scalars_dev && bases_dev)) {
            C2_CHECK(cudaEventRecord(used[slot], s));
            if (ci + 1 < nchunks && (rc = issue_copy(ci + 1))) return rc;
        }
    }

    // the sums of the NS bucket sets: NS * nseg threads, nseg from the
    // resident threads (tasks.cuh: window_segments)
    int per_sm = 0;
    C2_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_window_segments<F>, 128, 0));
    const uint32_t nseg = window_segments(NS, nb, (uint64_t)sc->sm_count * (per_sm > 0 ? per_sm : 1) * 128);
    C2_CHECK(m_part.alloc((size_t)NS * nseg * sizeof(X), s));
    X* part = m_part.as<X>();
    k_window_segments<F><<<blocks_for((uint64_t)NS * nseg, 128), 128, 0, s>>>(buckets, nb, NS, nseg, part);
    C2_CHECK_LAUNCH(k_window_segments);
    if ((rc = tree_sum<F>(st, s, part, (uint32_t)NS, nseg))) return rc;
    if ((rc = copy_out(st, sc, out, part, sizeof(X), nseg * sizeof(X), NS))) return rc;
    C2_CHECK(cudaGetLastError());
    *nwindows = NS;
    *used_c = widest;
    return ok(st);
}

// Word i of the bitmap with the bits at or past n cleared.
__device__ __forceinline__ uint64_t word_at(const uint64_t* bitmap, uint64_t n, uint64_t i) {
    uint64_t w = bitmap[i];
    const uint64_t end = n - i * 64;
    return end < 64 ? w & ((1ull << end) - 1) : w;
}

// Selected points of each bitmap word (bits at or past n ignored).
static __global__ void k_word_counts(const uint64_t* __restrict__ bitmap, uint64_t n, uint64_t words,
                                     uint32_t* __restrict__ count) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= words) return;
    count[i] = __popcll(word_at(bitmap, n, i));
}

// Thread t sums the selected points numbered [t*per, (t+1)*per) in bitmap
// order, per = ceil(total / nthreads) (first[i] and count[i]: selected
// points before and in word i), so every thread of a warp adds in every
// step whatever the bitmap's pattern; the word holding its first point is
// found by binary search over first.
template <class F>
__global__ void __launch_bounds__(128) k_batch_add(const affine_t<F>* __restrict__ bases,
                                                   const uint64_t* __restrict__ bitmap, uint64_t n, uint64_t words,
                                                   const uint32_t* __restrict__ first, const uint32_t* __restrict__ count,
                                                   uint32_t nthreads, xyzz_t<F>* __restrict__ out) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nthreads) return;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    const uint64_t total = (uint64_t)first[words - 1] + count[words - 1];
    const uint64_t per = (total + nthreads - 1) / nthreads;
    const uint64_t k0 = (uint64_t)t * per;
    if (k0 < total) {
        const uint64_t k1 = k0 + per < total ? k0 + per : total;
        uint64_t lo = 0, hi = words - 1;  // the last word with first[i] <= k0
        while (lo < hi) {
            const uint64_t mid = (lo + hi + 1) / 2;
            if (first[mid] <= k0) lo = mid; else hi = mid - 1;
        }
        uint64_t i = lo, w = word_at(bitmap, n, i);
        for (uint64_t skip = k0 - first[i]; skip; skip--) w &= w - 1;
        // the index of the next selected base
        auto next = [&]() -> uint64_t {
            while (w == 0) w = word_at(bitmap, n, ++i);
            const int b = __ffsll((long long)w) - 1;
            w &= w - 1;
            return i * 64 + b;
        };
        if constexpr (staged_batch<F>::value) {
            extern __shared__ uint4 stage_mem[];
            const point_stage<F> st(stage_mem);
            st.fetch(0, bases + next());
            int slot = 0;
            for (uint64_t k = k0; k < k1; k++) {
                const affine_t<F> p = st.take(slot);
                if (k + 1 < k1) st.fetch(slot ^ 1, bases + next());
                acc = acc.add_affine(p);
                slot ^= 1;
            }
        } else {
            for (uint64_t k = k0; k < k1; k++) acc = acc.add_affine(bases[next()]);
        }
    }
    out[t] = acc.canonical();  // the host may read it (tree_sum)
}

template <class F>
int batch_add_impl(c2_status* st, stream_ctx* sc, const affine_t<F>* bases, bool bases_dev, const uint64_t* bitmap,
                   uint64_t n, xyzz_t<F>* out) {
    using X = xyzz_t<F>;
    using A = affine_t<F>;
    cudaStream_t s = sc->s;
    if (n == 0) {
        *out = X::inf();
        return ok(st);
    }
    if (n > 0xffffffffull) return set_status(st, C2_ERR_INVALID, 0, "batch add: %llu bases", (unsigned long long)n);
    const uint64_t words = (n + 63) / 64;
    scratch m_bits, m_bases, m_part, m_count, m_cub;
    C2_CHECK(m_bits.alloc(words * 8, s));
    C2_CHECK(cudaMemcpyAsync(m_bits.p, bitmap, words * 8, cudaMemcpyHostToDevice, s));
    const A* d_bases = bases;
    if (!bases_dev) {
        C2_CHECK(m_bases.alloc(n * sizeof(A), s));
        C2_CHECK(cudaMemcpyAsync(m_bases.p, bases, n * sizeof(A), cudaMemcpyHostToDevice, s));
        d_bases = m_bases.as<A>();
    }
    // first[i] = selected points before word i
    C2_CHECK(m_count.alloc(2 * words * sizeof(uint32_t), s));
    uint32_t* count = m_count.as<uint32_t>();
    uint32_t* first = count + words;
    k_word_counts<<<blocks_for(words, 256), 256, 0, s>>>(m_bits.as<uint64_t>(), n, words, count);
    C2_CHECK_LAUNCH(k_word_counts);
    size_t cub_bytes = 0;
    C2_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, count, first, (int)words, s));
    C2_CHECK(m_cub.alloc(cub_bytes, s));
    C2_CHECK(cub::DeviceScan::ExclusiveSum(m_cub.p, cub_bytes, count, first, (int)words, s));
    // As many threads as the SMs hold at once (one wave: every thread adds
    // an equal share, so a second, partial wave would leave most SMs idle
    // for as long as the first), and at least 64 bases each.
    const size_t smem = staged_batch<F>::value ? point_stage<F>::bytes(128) : 0;
    int per_sm = 0;
    C2_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_batch_add<F>, 128, smem));
    const uint64_t resident = (uint64_t)sc->sm_count * (per_sm > 0 ? per_sm : 1) * 128;
    const uint64_t by_bases = n / 64 > 0 ? n / 64 : 1;
    const uint32_t nthreads = (uint32_t)(resident < by_bases ? resident : by_bases);
    C2_CHECK(m_part.alloc((size_t)nthreads * sizeof(X), s));
    k_batch_add<F><<<blocks_for(nthreads, 128), 128, smem, s>>>(d_bases, m_bits.as<uint64_t>(), n, words, first,
                                                                count, nthreads, m_part.as<X>());
    C2_CHECK_LAUNCH(k_batch_add);
    int rc = tree_sum<F>(st, s, m_part.as<X>(), 1, nthreads);
    if (rc) return rc;
    if ((rc = copy_out(st, sc, out, m_part.p, sizeof(X), sizeof(X), 1))) return rc;
    C2_CHECK(cudaGetLastError());
    return ok(st);
}

template <class F>
__global__ void k_fill(affine_t<F>* dst, uint64_t n, const affine_t<F>* seeds, uint64_t k) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    xyzz_t<F> p = xyzz_t<F>::from_affine(seeds[i % k]);
    p = p.add_affine(seeds[k + (i / k) % k]);
    dst[i] = p.to_affine();
}

template <class F>
int fill_impl(c2_status* st, stream_ctx* sc, affine_t<F>* dst, uint64_t n, const affine_t<F>* seeds, uint64_t k) {
    cudaStream_t s = sc->s;
    if (k == 0) return set_status(st, C2_ERR_INVALID, 0, "fill: no seeds");
    scratch m;
    C2_CHECK(m.alloc(2 * k * sizeof(affine_t<F>), s));
    C2_CHECK(cudaMemcpyAsync(m.p, seeds, 2 * k * sizeof(affine_t<F>), cudaMemcpyHostToDevice, s));
    k_fill<F><<<blocks_for(n, 128), 128, 0, s>>>(dst, n, m.as<affine_t<F>>(), k);
    C2_CHECK_LAUNCH(k_fill);
    C2_CHECK(cudaStreamSynchronize(s));
    C2_CHECK(cudaGetLastError());
    return ok(st);
}

// dst[i] = 2^k src[i] for i < n, affine and canonical (dst may be src).
template <class F>
__global__ void __launch_bounds__(128) k_shift(affine_t<F>* dst, const affine_t<F>* src, uint64_t n, int k) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    xyzz_t<F> p = xyzz_t<F>::from_affine(src[i]);
    for (int j = 0; j < k; j++) p = p.dbl();
    dst[i] = p.to_affine();
}

// dst[i] = 2^k src[i] for i < n, both in device memory: the second base
// array of a split MSM (k = 128).
template <class F>
int shift_impl(c2_status* st, stream_ctx* sc, affine_t<F>* dst, const affine_t<F>* src, uint64_t n, int k) {
    cudaStream_t s = sc->s;
    if (k < 0 || k > 256) return set_status(st, C2_ERR_INVALID, 0, "shift: %d doublings", k);
    if (n == 0) return ok(st);
    k_shift<F><<<blocks_for(n, 128), 128, 0, s>>>(dst, src, n, k);
    C2_CHECK_LAUNCH(k_shift);
    C2_CHECK(cudaStreamSynchronize(s));
    C2_CHECK(cudaGetLastError());
    return ok(st);
}

}  // namespace c2
