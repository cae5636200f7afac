// Interfaces between the parts of the sppark benchmark driver (see build.sh).
//
// Points cross these interfaces as raw bytes in blst's affine layout, which is
// also sppark's: X then Y, each a Montgomery-form Fp (G1, 48 bytes) or Fp2
// (G2, 96 bytes) in little-endian 64-bit limbs. Scalars are Fr elements in
// Montgomery form (4 little-endian 64-bit limbs), what sppark reads with
// mont=true and what c2's benchmarks pass (fr.Element).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

static const size_t G1_AFFINE_BYTES = 96, G2_AFFINE_BYTES = 192, FR_BYTES = 32;

// SplitMix64's output for state x (x plus the golden gamma, mixed): the
// driver's pseudo-random numbers, seeded, the same on every run.
static inline uint64_t splitmix64(uint64_t x)
{
	uint64_t z = x + 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

// Runs f(part, lo, hi) on at most `threads` threads, over contiguous parts of
// [0, n) (part < threads).
template <class F>
inline void parallel(size_t n, int threads, F f)
{
	threads = std::max(1, std::min<int>(threads, (int)std::min<size_t>(n, 1024)));
	size_t per = (n + threads - 1) / threads;
	std::vector<std::thread> ts;
	for (int t = 0; t < threads && t * per < n; t++)
		ts.emplace_back([=] { f(t, t * per, std::min(n, (t + 1) * per)); });
	for (auto& t : ts)
		t.join();
}

extern "C" {

// blst_host.cpp (host only, blst)

// Fills pts[0..n) with distinct points of the prime-order subgroup (G1 if
// group == 1, G2 if 2): P_i = A_{i/k} + B_{i%k}, k*k >= n, where A_j and B_j
// are arithmetic progressions of multiples of the generator with random start
// and step (seeded).
void host_gen_points(int group, void* pts, size_t n, uint64_t seed, int threads);
// out = sum_i s_i * P_i over n points, computed with blst on the host: one
// blst_pN_mult per point if naive, else blst's Pippenger on `threads` chunks.
void host_ref_msm(int group, void* out_affine, const void* pts, const void* scalars,
                  size_t n, int naive, int threads);
// Number of points among pts[idx[0..m)] that are not in the subgroup.
size_t host_count_bad_points(int group, const void* pts, const size_t* idx, size_t m);
int host_affine_equal(int group, const void* a, const void* b);

// msm.cu (both groups in one translation unit)

// sppark's msm_t with the n bases preloaded on the device (copied from pts,
// untimed) and the scalars read from host memory at every call (pinned by the
// caller), as in c2's BenchmarkMSMG1/G2. One untimed warm-up call, then reps
// timed calls (wall clock around msm_t::invoke, which returns with the result
// on the host). Every result must equal the warm-up's; out_affine gets it.
// Returns 0, or -1 with a message in err.
int sppark_msm_g1(const void* pts, const void* scalars, size_t n, int reps,
                  double* ms, void* out_affine, char* err, size_t errlen);
// sppark's batch_addition over n bases (a multiple of 1024) selected by a
// bitmap (bit i of 64-bit word i/64 selects point i), timed like the MSMs.
int sppark_batch_add_g1(const void* pts, const uint64_t* bitmap, size_t n, int reps,
                        double* ms, void* out_affine, char* err, size_t errlen);
int sppark_msm_g2(const void* pts, const void* scalars, size_t n, int reps,
                  double* ms, void* out_affine, char* err, size_t errlen);
}
