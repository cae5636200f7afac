// Work split of the MSM bucket accumulation.
//
// Buckets are visited in sorted order t (largest first). Bucket order[t]
// with s points is cut into p_t = max(1, ceil(s / L)) pieces of
// ceil(s / p_t) <= L points (the last one possibly shorter, never empty);
// first[t] = sum of p_u for u < t numbers the pieces ("tasks"), so one
// thread per task does bounded work whatever the scalar distribution (many
// equal scalars put all points of a window into one bucket), and the pieces
// of one bucket, which neighbour each other in a warp, are about equally
// long (a bucket of L + 1 points is two pieces of about L/2, not L and 1). Piece 0
// adds into the bucket itself; piece i >= 1 of bucket t writes
// extra[first[t] + i - t - 1] (a dense index, since every bucket owns exactly
// one piece 0), and a two-level fix-up adds the extras of each split bucket
// into it.
// The functions below are the per-thread bodies, generic over the group so
// that hosttest/tasks_test.cc can run them on integers; the bucket kernel
// runs run_task's loop with its points staged (msm.cuh: k_run_tasks),
// over the same task_span.
#pragma once
#include <stdint.h>
#include "field.cuh"

namespace c2 {

C2_HD uint32_t task_pieces(uint32_t size, uint32_t L) { return size <= L ? 1 : (size + L - 1) / L; }

// The sorted points [s, e) task k adds, and where its sum goes: piece i of
// the bucket b at sorted position t.
struct task_span {
    uint32_t t, b, i, s, e;
    // Fills the span of task k; false for the one piece of an empty bucket.
    C2_HD bool of(uint32_t k, const uint32_t* owner, const uint32_t* first, const uint32_t* order,
                  const uint32_t* start, const uint32_t* end) {
        t = owner[k];
        b = order[t];
        i = k - first[t];
        const uint32_t p = first[t + 1] - first[t];
        const uint32_t size = end[b] - start[b];
        const uint32_t q = (size + p - 1) / p;  // points per piece, <= L
        s = start[b] + i * q;
        const uint32_t e0 = end[b];
        if (s >= e0) return false;
        e = e0 - s > q ? s + q : e0;
        return true;
    }
    template <class G>
    C2_HD typename G::acc_t initial(const typename G::acc_t* buckets) const {
        return i == 0 ? buckets[b] : G::zero();
    }
    template <class G>
    C2_HD void store(uint32_t k, const typename G::acc_t& acc, typename G::acc_t* buckets,
                     typename G::acc_t* extra) const {
        if (i == 0)
            buckets[b] = acc;
        else
            extra[k - t - 1] = acc;
    }
};

// A (bucket, point) pair's value: the point's index in its chunk, the flag
// of the second base array (a split MSM's, msm.cuh) and the digit's sign.
static constexpr uint32_t MSM_INDEX = 0x3fffffffu;
static constexpr uint32_t MSM_HIGH = 0x40000000u;
static constexpr uint32_t MSM_NEG = 0x80000000u;

// The point a pair's value v names: in bases, or in bases_hi when v carries
// MSM_HIGH.
template <class P>
C2_HD const P* point_of(const P* bases, const P* bases_hi, uint32_t v) {
    return ((v & MSM_HIGH) ? bases_hi : bases) + (v & MSM_INDEX);
}

// One task. G provides acc_t, point_t, zero(), add_point(acc, point, neg)
// and add(acc, acc). bases_hi: the second base array (else bases).
template <class G>
C2_HD void run_task(uint32_t k, const uint32_t* owner, const uint32_t* first, const uint32_t* order,
                    const uint32_t* start, const uint32_t* end, const uint32_t* vals,
                    const typename G::point_t* bases, const typename G::point_t* bases_hi,
                    typename G::acc_t* buckets, typename G::acc_t* extra) {
    task_span sp;
    if (!sp.of(k, owner, first, order, start, end)) return;
    typename G::acc_t acc = sp.initial<G>(buckets);
    for (uint32_t j = sp.s; j < sp.e; j++) {
        const uint32_t v = vals[j];
        acc = G::add_point(acc, *point_of(bases, bases_hi, v), (v & MSM_NEG) != 0);
    }
    sp.store<G>(k, acc, buckets, extra);
}

// Owner of each task of sorted position t.
C2_HD void fill_owner(uint32_t t, const uint32_t* first, uint32_t* owner) {
    for (uint32_t k = first[t]; k < first[t + 1]; k++) owner[k] = t;
}

// Extras are summed in two levels so that one bucket with very many pieces
// does not serialize: fold_extras (one thread per task) sums each run of
// FOLD consecutive extras of a bucket into the run's first slot, then fix_up
// (one thread per sorted position) adds the run heads into the bucket.
static constexpr uint32_t FOLD = 64;

template <class G>
C2_HD void fold_extras(uint32_t k, const uint32_t* owner, const uint32_t* first, typename G::acc_t* extra) {
    const uint32_t t = owner[k];
    const uint32_t i = k - first[t];  // piece index
    const uint32_t p = first[t + 1] - first[t];
    if (i == 0 || (i - 1) % FOLD != 0) return;
    typename G::acc_t* x = extra + (k - t - 1);
    const uint32_t n = p - i < FOLD ? p - i : FOLD;  // extras in this run
    typename G::acc_t acc = x[0];
    for (uint32_t j = 1; j < n; j++) acc = G::add(acc, x[j]);
    x[0] = acc;
}

template <class G>
C2_HD void fix_up(uint32_t t, const uint32_t* first, const uint32_t* order, typename G::acc_t* buckets,
                  const typename G::acc_t* extra) {
    const uint32_t p = first[t + 1] - first[t];
    if (p <= 1) return;
    const uint32_t b = order[t];
    typename G::acc_t acc = buckets[b];
    for (uint32_t i = 1; i < p; i += FOLD) acc = G::add(acc, extra[first[t] + i - t - 1]);
    buckets[b] = acc;
}

// Segments per window of the weighted bucket sums (k_window_segments): any
// count in [1, nb]; segment i of nseg owns buckets [i*nb/nseg, (i+1)*nb/nseg).
// Thread (w, seg) adds its buckets in one dependent chain (two additions a
// bucket), then the offset multiple of its running sum (about 1.5 log2(nb)
// additions). Time is modelled as the larger of the latency of the chains,
// waves * chain with waves = ceil(W nseg / resident) (resident: the threads
// the device holds at once), and their throughput, W nseg chain / (0.6
// resident): the device runs out of issue slots before every resident
// thread is busy, and each segment's offset multiple is work added, not
// latency hidden. The 0.6 fits the H200's measurements (BENCHMARKS.md,
// session 17): G1 at 2^24 and 2^27 (13 windows of 2^19 buckets) gains from
// filling the device, G1 at 2^20 (16 of 2^15) and 2^22 (15 of 2^17) loses,
// which 0.75 did not foresee. For a given number of waves k
// the chains are shortest at the most segments k waves hold, floor(k
// resident / W), so those counts, the powers of two and nb are the
// candidates; of equal costs the fewest segments win (fewer partial sums).
inline uint32_t window_segments(int W, uint32_t nb, uint64_t resident) {
    if (resident == 0) resident = 1;
    if (W < 1) W = 1;
    int lb = 0;
    while ((1u << lb) < nb) lb++;
    auto cost = [&](uint64_t s) {
        const uint64_t waves = ((uint64_t)W * s + resident - 1) / resident;
        const double chain = 2.0 * (double)((nb + s - 1) / s) + 1.5 * lb;
        const double latency = (double)waves * chain;
        const double throughput = (double)W * (double)s * chain / (0.6 * (double)resident);
        return latency > throughput ? latency : throughput;
    };
    uint32_t best = 1;
    double best_cost = cost(1);
    auto consider = [&](uint64_t s) {
        if (s < 1 || s > nb) return;
        const double c = cost(s);
        if (c < best_cost || (c == best_cost && s < best)) best = (uint32_t)s, best_cost = c;
    };
    for (uint64_t s = 1; s <= nb; s *= 2) consider(s);
    for (uint64_t k = 1; k * resident / (uint64_t)W < nb; k++) consider(k * resident / (uint64_t)W);
    consider(nb);
    return best;
}

}  // namespace c2
