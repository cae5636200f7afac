// Host check of the MSM task split (tasks.cuh): the per-thread bodies run
// sequentially on integers (the group law is addition mod 2^64, negation is
// two's complement) must give every bucket the sum of its points, for
// uniform and for heavily skewed bucket sizes, and no piece may be empty or
// hold more than L points.
// Build and run: make -C gpu/cuda hosttest
#include <stdio.h>
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>
#include "../tasks.cuh"

using namespace c2;

struct IntGroup {
    using acc_t = uint64_t;
    using point_t = uint64_t;
    static acc_t zero() { return 0; }
    static acc_t add_point(acc_t a, point_t p, bool neg) { return neg ? a - p : a + p; }
    static acc_t add(acc_t a, acc_t b) { return a + b; }
};

// Counts the points a task adds.
struct CountGroup {
    using acc_t = uint64_t;
    using point_t = uint64_t;
    static acc_t zero() { return 0; }
    static acc_t add_point(acc_t a, point_t, bool) { return a + 1; }
    static acc_t add(acc_t a, acc_t b) { return a + b; }
};

static int run_case(std::mt19937_64& rng, uint32_t nbuckets, uint32_t npoints, uint32_t L, bool skewed) {
    // points with random buckets (skewed: half of them in bucket 0)
    // (a split MSM's second base array: the points flagged MSM_HIGH)
    std::vector<uint64_t> bases(npoints), bases_hi(npoints);
    std::vector<uint32_t> key(npoints), idx(npoints);
    for (uint32_t i = 0; i < npoints; i++) {
        bases[i] = rng();
        bases_hi[i] = rng();
        key[i] = skewed && (rng() & 1) ? 0 : (uint32_t)(rng() % nbuckets);
        idx[i] = i | ((rng() & 1) ? MSM_NEG : 0) | ((rng() & 1) ? MSM_HIGH : 0);
    }
    // sort pairs by key (the radix sort), then bounds
    std::vector<uint32_t> perm(npoints);
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(), [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
    std::vector<uint32_t> vals(npoints), skeys(npoints);
    for (uint32_t i = 0; i < npoints; i++) {
        vals[i] = idx[perm[i]];
        skeys[i] = key[perm[i]];
    }
    std::vector<uint32_t> start(nbuckets, 0), end(nbuckets, 0);
    for (uint32_t i = 0; i < npoints; i++) {
        if (i == 0 || skeys[i - 1] != skeys[i]) start[skeys[i]] = i;
        if (i == npoints - 1 || skeys[i + 1] != skeys[i]) end[skeys[i]] = i + 1;
    }
    // order by size, descending
    std::vector<uint32_t> order(nbuckets);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return end[a] - start[a] > end[b] - start[b]; });
    // pieces and their exclusive scan (nbuckets + 1 entries)
    std::vector<uint32_t> first(nbuckets + 1, 0);
    for (uint32_t t = 0; t < nbuckets; t++)
        first[t + 1] = first[t] + task_pieces(end[order[t]] - start[order[t]], L);
    const uint32_t ntasks = first[nbuckets];
    std::vector<uint32_t> owner(ntasks);
    for (uint32_t t = 0; t < nbuckets; t++) fill_owner(t, first.data(), owner.data());
    // initial bucket values (state kept across chunks)
    std::vector<uint64_t> buckets(nbuckets), want(nbuckets);
    for (uint32_t b = 0; b < nbuckets; b++) want[b] = buckets[b] = rng();
    for (uint32_t i = 0; i < npoints; i++) {
        const uint64_t p = (idx[i] & MSM_HIGH) ? bases_hi[i] : bases[i];
        want[key[i]] += (idx[i] & MSM_NEG) ? (uint64_t)0 - p : p;
    }
    std::vector<uint64_t> extra(ntasks - nbuckets + 1);
    for (uint32_t k = 0; k < ntasks; k++)
        run_task<IntGroup>(k, owner.data(), first.data(), order.data(), start.data(), end.data(), vals.data(),
                           bases.data(), bases_hi.data(), buckets.data(), extra.data());
    // every piece of a non-empty bucket holds between 1 and L points
    {
        std::vector<uint64_t> count(nbuckets, 0), xcount(ntasks - nbuckets + 1, 0);
        for (uint32_t k = 0; k < ntasks; k++)
            run_task<CountGroup>(k, owner.data(), first.data(), order.data(), start.data(), end.data(), vals.data(),
                                 bases.data(), bases_hi.data(), count.data(), xcount.data());
        for (uint32_t k = 0; k < ntasks; k++) {
            const uint32_t t = owner[k], b = order[t], i = k - first[t];
            const uint64_t got = i == 0 ? count[b] : xcount[k - t - 1];
            if (end[b] > start[b] && (got < 1 || got > L)) {
                printf("bucket of %u points, L %u: piece %u holds %llu points\n", end[b] - start[b], L, i,
                       (unsigned long long)got);
                return 1;
            }
        }
    }
    for (uint32_t k = 0; k < ntasks; k++) fold_extras<IntGroup>(k, owner.data(), first.data(), extra.data());
    for (uint32_t t = 0; t < nbuckets; t++) fix_up<IntGroup>(t, first.data(), order.data(), buckets.data(), extra.data());
    int bad = 0;
    for (uint32_t b = 0; b < nbuckets; b++) bad += buckets[b] != want[b];
    if (bad)
        printf("buckets %u points %u L %u skewed %d: %d wrong buckets\n", nbuckets, npoints, L, (int)skewed, bad);
    return bad;
}

int main() {
    std::random_device rd;
    uint64_t seed = ((uint64_t)rd() << 32) | rd();
    printf("seed %llu\n", (unsigned long long)seed);
    std::mt19937_64 rng(seed);
    int bad = 0, cases = 0;
    for (uint32_t nb : {1u, 2u, 7u, 64u, 1000u, 4096u})
        for (uint32_t n : {1u, 5u, 100u, 5000u, 70000u, 300000u})
            for (uint32_t L : {1u, 3u, 64u, 128u})
                for (bool sk : {false, true}) {
                    bad += run_case(rng, nb, n, L, sk) != 0;
                    cases++;
                }
    printf("tasks: %d cases, %d wrong\n", cases, bad);
    // window_segments: within [1, nb], and the counts the cost model asks for
    // on H200-sized devices (132 SMs, 2 or 3 blocks of 128 resident).
    int wbad = 0;
    for (int W : {1, 13, 16, 18, 20})
        for (uint32_t nb : {1u, 2u, 1u << 12, 1u << 14, 1u << 15, 1u << 19})
            for (uint64_t resident : {0ull, 1ull, 128ull, 33792ull, 1ull << 20}) {
                uint32_t s = window_segments(W, nb, resident);
                if (s < 1 || s > nb) wbad++, printf("window_segments(%d, %u, %llu) = %u\n", W, nb, (unsigned long long)resident, s);
            }
    // Worked by hand from the cost (latency waves * chain, throughput W *
    // nseg * chain / (0.6 resident)): (13, 2^19, 50,688, G1) at 3,899
    // segments (one full wave) max(297.5, 13 * 3,899 * 297.5 / 30,413 =
    // 495.8) = 495.8, at 2,048 max(540.5, 473.2) = 540.5: 3,899. (13, 2^19,
    // 33,792, G2): 2,599 max(432.5, 720.7), 2,048 max(540.5, 709.8): 2,048.
    // (16, 2^15, 50,688): 2,048 max(54.5, 58.7), 3,168 max(43.5, 72.5):
    // 2,048. (15, 2^17, 50,688): 2,048 max(153.5, 155.1), 3,379 max(103.5,
    // 172.5): 2,048.
    const uint64_t h200 = 132ull * 2 * 128, h200g1 = 132ull * 3 * 128;
    struct {
        int W;
        uint32_t nb;
        uint64_t resident;
        uint32_t want;
    } known[] = {{13, 1u << 19, h200g1, 3899}, {13, 1u << 19, h200, 2048}, {16, 1u << 15, h200g1, 2048}, {15, 1u << 17, h200g1, 2048}};
    for (auto& k : known) {
        uint32_t s = window_segments(k.W, k.nb, k.resident);
        if (s != k.want)
            wbad++, printf("window_segments(%d, %u, %llu) = %u, want %u\n", k.W, k.nb,
                           (unsigned long long)k.resident, s, k.want);
    }
    printf("window_segments: %d wrong\n", wbad);
    bad += wbad;
    return bad ? 1 : 0;
}
