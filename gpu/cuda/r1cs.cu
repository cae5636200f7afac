// Witness expansion and R1CS evaluation on the device: the first steps of a
// partition's GPU pass.
//
// The witness arrives as {inputs, a bitmap of the aux values equal to 1, the
// (index, value) list of the aux values not in {0, 1}} and is expanded into
// w = inputs ‖ aux (one Fr per variable) in device memory. Each constraint
// row j then gets a_j = ⟨A_j, w⟩, b_j = ⟨B_j, w⟩, c_j = ⟨C_j, w⟩ by one
// thread, which also checks a_j·b_j = c_j; rows m..n-1 of the domain are
// zero. Coefficients come from a small table; ±1 coefficients and 0/1
// witness values take no multiplication.
#include <vector>

#include "common.cuh"
#include "field.cuh"

namespace c2 {

// w_aux[i] = bit i of ones ? 1 : 0, for i < naux.
__global__ void k_expand_bits(fr_t* __restrict__ w_aux, const uint64_t* __restrict__ ones, uint64_t naux) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= naux) return;
    bool one = (ones[i >> 6] >> (i & 63)) & 1;
    w_aux[i] = one ? fr_t::one() : fr_t::zero();
}

// w_aux[idx[t]] = vals[t], for t < count.
__global__ void k_scatter(fr_t* __restrict__ w_aux, const uint32_t* __restrict__ idx, const fr_t* __restrict__ vals,
                          uint64_t count, uint64_t naux) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    uint32_t i = idx[t];
    if (i < naux) w_aux[i] = vals[t];
}

// dst[first[i / 64] + (set bits of word i / 64 below bit i % 64)] = src[i]
// for every i < n whose bit is set: one thread a value, so that reads and
// most writes are coalesced.
__global__ void k_select(fr_t* __restrict__ dst, const fr_t* __restrict__ src, const uint64_t* __restrict__ bitmap,
                         const uint32_t* __restrict__ first, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t word = bitmap[i >> 6];
    unsigned b = (unsigned)(i & 63);
    if (!((word >> b) & 1)) return;
    uint64_t below = word & ((1ull << b) - 1);
    dst[(uint64_t)first[i >> 6] + __popcll(below)] = src[i];
}

// Rows read an aux term's 0/1 status from two bitmaps (one bit a variable
// each: 2 x 16 MB at 32 GiB, within L2) and gather its 32-byte value from w
// only when it is neither 0 nor 1 (1.3 % of a 32 GiB partition's aux values,
// 2 % of its terms). A witness handed over dense has no bitmaps: every term
// gathers.

// other[i / 64] bit i % 64 = 1 for every tail index i < naux: the values
// k_scatter writes, which row_dot then reads from w.
__global__ void k_scatter_bits(unsigned long long* __restrict__ other, const uint32_t* __restrict__ idx,
                               uint64_t count, uint64_t naux) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count) return;
    uint32_t i = idx[t];
    if (i < naux) atomicOr(other + (i >> 6), 1ull << (i & 63));
}

// The 0/1 status of the aux variables (w_bits.ones null: none; every term
// gathers). Variables below inputs are inputs and always gathered.
struct w_bits {
    const uint64_t* __restrict__ ones;   // bit set: w_aux[i] == 1 (unless in other)
    const uint64_t* __restrict__ other;  // bit set: w_aux[i] is a tail value
    uint32_t inputs;
};

struct csr_view {
    const uint32_t* __restrict__ row;
    const uint32_t* __restrict__ col;
    const uint16_t* __restrict__ coef;
};

// Adds term k of m to acc. Coefficient kinds, as written by the host: 1 =
// one, 2 = minus one, 0 = other.
__device__ __forceinline__ void add_term(fr_t& acc, const csr_view& m, uint32_t k, const fr_t* __restrict__ w,
                                         const fr_t* __restrict__ coeffs, const uint8_t* __restrict__ kinds,
                                         const w_bits& bits) {
    const fr_t one = fr_t::one();
    const uint32_t col = m.col[k];
    if (bits.ones && col >= bits.inputs) {
        const uint32_t i = col - bits.inputs;
        const uint64_t bit = 1ull << (i & 63);
        if (!(bits.other[i >> 6] & bit)) {
            if (!(bits.ones[i >> 6] & bit)) return;  // zero
            const uint16_t ci = m.coef[k];
            const uint8_t kind = kinds[ci];
            if (kind == 1)
                acc = acc + one;
            else if (kind == 2)
                acc = acc - one;
            else
                acc = acc + coeffs[ci];
            return;
        }
    }
    fr_t x = w[col];
    if (x.is_zero()) return;
    uint16_t ci = m.coef[k];
    uint8_t kind = kinds[ci];
    if (kind == 1) {
        acc = acc + x;
    } else if (kind == 2) {
        acc = acc - x;
    } else if (x == one) {
        acc = acc + coeffs[ci];
    } else {
        acc = acc + x * coeffs[ci];
    }
}

__device__ __forceinline__ fr_t row_dot(const csr_view& m, uint64_t j, const fr_t* __restrict__ w,
                                        const fr_t* __restrict__ coeffs, const uint8_t* __restrict__ kinds,
                                        const w_bits& bits) {
    fr_t acc = fr_t::zero();
    uint32_t end = m.row[j + 1];
    for (uint32_t k = m.row[j]; k < end; k++) add_term(acc, m, k, w, coeffs, kinds, bits);
    return acc;
}

// Rows of more than EVAL_LONG terms (A, B and C together) are left by
// k_eval_rows to k_eval_long, a warp a row: a warp of k_eval_rows runs as long
// as its longest row, and at 32 GiB 0.13 % of the rows hold 20 % of the terms
// (up to 1,169 a row).
static constexpr uint32_t EVAL_LONG = 64;

__global__ void k_eval_rows(csr_view A, csr_view B, csr_view C, const fr_t* __restrict__ coeffs,
                            const uint8_t* __restrict__ kinds, const fr_t* __restrict__ w, uint64_t m, uint64_t n,
                            fr_t* __restrict__ a, fr_t* __restrict__ b, fr_t* __restrict__ c,
                            unsigned long long* __restrict__ first_bad, w_bits bits, uint32_t* __restrict__ long_rows,
                            unsigned int* __restrict__ long_count) {
    uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    if (j >= m) {
        a[j] = fr_t::zero();
        b[j] = fr_t::zero();
        c[j] = fr_t::zero();
        return;
    }
    const uint32_t len = (A.row[j + 1] - A.row[j]) + (B.row[j + 1] - B.row[j]) + (C.row[j + 1] - C.row[j]);
    if (len > EVAL_LONG) {
        long_rows[atomicAdd(long_count, 1u)] = (uint32_t)j;
        return;
    }
    fr_t va = row_dot(A, j, w, coeffs, kinds, bits);
    fr_t vb = row_dot(B, j, w, coeffs, kinds, bits);
    fr_t vc = row_dot(C, j, w, coeffs, kinds, bits);
    if (va * vb != vc) atomicMin(first_bad, (unsigned long long)j);
    a[j] = va;
    b[j] = vb;
    c[j] = vc;
}

__device__ __forceinline__ fr_t shfl_down_fr(const fr_t& x, unsigned off) {
    fr_t r;
#pragma unroll
    for (int l = 0; l < 8; l++) r.v[l] = __shfl_down_sync(0xffffffffu, x.v[l], off);
    return r;
}

// The rows k_eval_rows left in long_rows (*long_count of them), a warp a
// row: lane t adds the row's terms t, t + 32, ... of A, B and C, the warp
// sums the lanes' parts, and lane 0 writes a_j, b_j, c_j and checks them.
// Warps stride over the list (blockDim.x a multiple of 32).
__global__ void k_eval_long(csr_view A, csr_view B, csr_view C, const fr_t* __restrict__ coeffs,
                            const uint8_t* __restrict__ kinds, const fr_t* __restrict__ w, fr_t* __restrict__ a,
                            fr_t* __restrict__ b, fr_t* __restrict__ c, unsigned long long* __restrict__ first_bad,
                            w_bits bits, const uint32_t* __restrict__ long_rows,
                            const unsigned int* __restrict__ long_count) {
    const uint32_t lane = threadIdx.x & 31;
    const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const uint32_t nwarps = (gridDim.x * blockDim.x) >> 5;
    const uint32_t count = *long_count;
    for (uint32_t i = warp; i < count; i += nwarps) {
        const uint32_t j = long_rows[i];
        fr_t v[3];
#pragma unroll
        for (int q = 0; q < 3; q++) {
            const csr_view& mq = q == 0 ? A : (q == 1 ? B : C);
            fr_t acc = fr_t::zero();
            const uint32_t end = mq.row[j + 1];
            for (uint32_t k = mq.row[j] + lane; k < end; k += 32) add_term(acc, mq, k, w, coeffs, kinds, bits);
            for (unsigned off = 16; off > 0; off >>= 1) acc = acc + shfl_down_fr(acc, off);
            v[q] = acc;
        }
        if (lane == 0) {
            if (v[0] * v[1] != v[2]) atomicMin(first_bad, (unsigned long long)j);
            a[j] = v[0];
            b[j] = v[1];
            c[j] = v[2];
        }
    }
}

}  // namespace c2

using namespace c2;

extern "C" {

int c2_r1cs_eval(c2_status* st, c2_stream* h, const c2_r1cs* r, void* w, const void* inputs, const uint64_t* ones,
                 const uint32_t* tail_idx, const void* tail_vals, uint64_t ntail, void* abc, int log_n,
                 uint64_t* first_bad) {
    stream_ctx* sc = (stream_ctx*)h;
    // A dense witness: every aux value in tail_vals, in order.
    bool dense = !tail_idx && ntail > 0 && ntail == r->aux;
    if (!sc || !r || !w || !abc || !first_bad || log_n < 0 || log_n > 31 || (r->aux > 0 && !ones && !dense) ||
        (ntail > 0 && ((!tail_idx && !dense) || !tail_vals)) || (r->inputs > 0 && !inputs))
        return set_status(st, C2_ERR_INVALID, 0, "c2_r1cs_eval: bad argument");
    uint64_t n = 1ull << log_n;
    if (r->constraints > n)
        return set_status(st, C2_ERR_INVALID, 0, "c2_r1cs_eval: %llu constraints exceed the domain of 2^%d",
                          (unsigned long long)r->constraints, log_n);
    C2_ENTER(sc->ordinal);
    trace_call trace(sc->ordinal, sc->s, "r1cs_eval");
    cudaStream_t s = sc->s;
    fr_t* dw = (fr_t*)w;
    fr_t* daux = dw + r->inputs;
    uint64_t words = dense ? 0 : (r->aux + 63) / 64;
    uint64_t nscatter = dense ? 0 : ntail;

    // One scratch block for the uploaded handoff and the failure flag; a
    // dense witness goes straight to its place in w.
    size_t off_ones = 0;
    size_t off_other = off_ones + words * 8;
    size_t off_idx = off_other + words * 8;
    size_t off_vals = (off_idx + nscatter * 4 + 31) & ~(size_t)31;
    size_t off_bad = off_vals + nscatter * sizeof(fr_t);
    // the count and list of the rows k_eval_long takes (at most every row)
    size_t off_long = off_bad + 8;
    scratch buf;
    C2_CHECK(buf.alloc(off_long + 4 + r->constraints * 4, s));
    char* base = buf.as<char>();
    uint64_t* d_ones = (uint64_t*)(base + off_ones);
    uint64_t* d_other = (uint64_t*)(base + off_other);
    uint32_t* d_idx = (uint32_t*)(base + off_idx);
    fr_t* d_vals = (fr_t*)(base + off_vals);
    unsigned long long* d_bad = (unsigned long long*)(base + off_bad);
    unsigned int* d_long_count = (unsigned int*)(base + off_long);
    uint32_t* d_long = (uint32_t*)(base + off_long + 4);

    if (r->inputs) C2_CHECK(cudaMemcpyAsync(dw, inputs, r->inputs * sizeof(fr_t), cudaMemcpyHostToDevice, s));
    if (words) C2_CHECK(cudaMemcpyAsync(d_ones, ones, words * 8, cudaMemcpyHostToDevice, s));
    if (dense) {
        C2_CHECK(cudaMemcpyAsync(daux, tail_vals, ntail * sizeof(fr_t), cudaMemcpyHostToDevice, s));
    } else if (ntail) {
        C2_CHECK(cudaMemcpyAsync(d_idx, tail_idx, ntail * 4, cudaMemcpyHostToDevice, s));
        C2_CHECK(cudaMemcpyAsync(d_vals, tail_vals, ntail * sizeof(fr_t), cudaMemcpyHostToDevice, s));
    }
    C2_CHECK(cudaMemsetAsync(d_bad, 0xff, 8, s));
    C2_CHECK(cudaMemsetAsync(d_long_count, 0, 4, s));
    if (words) {
        k_expand_bits<<<blocks_for(r->aux, 256), 256, 0, s>>>(daux, d_ones, r->aux);
        C2_CHECK_LAUNCH(k_expand_bits);
    }
    if (nscatter) {
        k_scatter<<<blocks_for(nscatter, 256), 256, 0, s>>>(daux, d_idx, d_vals, nscatter, r->aux);
        C2_CHECK_LAUNCH(k_scatter);
    }
    w_bits bits = {nullptr, nullptr, (uint32_t)r->inputs};
    if (words) {
        C2_CHECK(cudaMemsetAsync(d_other, 0, words * 8, s));
        if (nscatter) {
            k_scatter_bits<<<blocks_for(nscatter, 256), 256, 0, s>>>((unsigned long long*)d_other, d_idx, nscatter,
                                                                     r->aux);
            C2_CHECK_LAUNCH(k_scatter_bits);
        }
        bits = {d_ones, d_other, (uint32_t)r->inputs};
    }
    csr_view m3[3];
    for (int i = 0; i < 3; i++) m3[i] = {r->m[i].row_start, r->m[i].col, r->m[i].coeff};
    fr_t* da = (fr_t*)abc;
    fr_t* db = da + n;
    fr_t* dc = db + n;
    k_eval_rows<<<blocks_for(n, 128), 128, 0, s>>>(m3[0], m3[1], m3[2], (const fr_t*)r->coeffs, r->kinds, dw,
                                                   r->constraints, n, da, db, dc, d_bad, bits, d_long, d_long_count);
    C2_CHECK_LAUNCH(k_eval_rows);
    k_eval_long<<<(unsigned)sc->sm_count * 8, 256, 0, s>>>(m3[0], m3[1], m3[2], (const fr_t*)r->coeffs, r->kinds, dw,
                                                           da, db, dc, d_bad, bits, d_long, d_long_count);
    C2_CHECK_LAUNCH(k_eval_long);
    unsigned long long bad = 0;
    if (int rc = copy_out(st, sc, &bad, d_bad, 8, 8, 1)) return rc;
    C2_CHECK(cudaGetLastError());
    *first_bad = bad;
    return ok(st);
}

int c2_select(c2_status* st, c2_stream* h, void* dst, const void* src, uint64_t n, const uint64_t* bitmap,
              uint64_t count) {
    stream_ctx* sc = (stream_ctx*)h;
    if (!sc || (n > 0 && (!dst || !src || !bitmap)) || n > UINT32_MAX)
        return set_status(st, C2_ERR_INVALID, 0, "c2_select: bad argument");
    uint64_t words = (n + 63) / 64;
    // Where each word's values start in dst, counted on the host (a
    // bitmap of 2^27 values is 2 Mi words).
    std::vector<uint32_t> first(words);
    uint64_t total = 0;
    for (uint64_t k = 0; k < words; k++) {
        uint64_t x = bitmap[k];
        if (k == words - 1 && (n & 63)) {
            if (x >> (n & 63))
                return set_status(st, C2_ERR_INVALID, 0, "c2_select: bits set past the %llu values",
                                  (unsigned long long)n);
        }
        first[k] = (uint32_t)total;
        total += __builtin_popcountll(x);
    }
    if (total != count)
        return set_status(st, C2_ERR_INVALID, 0, "c2_select: the bitmap selects %llu values, not %llu",
                          (unsigned long long)total, (unsigned long long)count);
    if (n == 0 || count == 0) return ok(st);
    C2_ENTER(sc->ordinal);
    trace_call trace(sc->ordinal, sc->s, "select");
    cudaStream_t s = sc->s;
    scratch buf;
    C2_CHECK(buf.alloc(words * 12, s));
    uint64_t* d_bits = buf.as<uint64_t>();
    uint32_t* d_first = (uint32_t*)(d_bits + words);
    C2_CHECK(cudaMemcpyAsync(d_bits, bitmap, words * 8, cudaMemcpyHostToDevice, s));
    C2_CHECK(cudaMemcpyAsync(d_first, first.data(), words * 4, cudaMemcpyHostToDevice, s));
    k_select<<<blocks_for(n, 256), 256, 0, s>>>((fr_t*)dst, (const fr_t*)src, d_bits, d_first, n);
    C2_CHECK_LAUNCH(k_select);
    C2_CHECK(cudaStreamSynchronize(s));
    return ok(st);
}

}  // extern "C"
