// sppark's MSM (msm/pippenger.cuh, msm_t) for G1 and G2, timed.
// One translation unit for both groups: pippenger.cuh defines a non-template
// kernel (sort) and instantiates its kernels for the global typedefs below
// (G1); the G2 kernels are instantiated through msm_t, as in supraseal's C2.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <ff/bls12-381.hpp>
#include <ff/bls12-381-fp2.hpp>

#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef fr_t scalar_t;

#include <msm/pippenger.cuh>

typedef jacobian_t<fp2_t> point_fp2_t;
typedef xyzz_t<fp2_t> bucket_fp2_t;
typedef bucket_fp2_t::affine_t affine_fp2_t;

#include "driver.h"

// Kernels that pippenger.cuh does not instantiate for the global typedefs:
// G2's (msm_t for G2 is only named in host code below, which the device pass
// never sees) and the bitmap form of batch_addition. Without these explicit
// instantiations the device code has no image for them, and their launches
// fail ("invalid device function", "invalid resource handle").
template __global__ void accumulate<bucket_fp2_t, affine_fp2_t::mem_t>(
    bucket_fp2_t::mem_t buckets_[], uint32_t nwins, uint32_t wbits, affine_fp2_t::mem_t points_[],
    const vec2d_t<uint32_t> digits, const vec2d_t<uint32_t> histogram, uint32_t sid);
template __global__ void batch_addition<bucket_fp2_t>(bucket_fp2_t::mem_t buckets[],
                                                      const affine_fp2_t::mem_t points[], size_t npoints,
                                                      const uint32_t digits[], const uint32_t& ndigits);
template __global__ void integrate<bucket_fp2_t>(bucket_fp2_t::mem_t buckets_[], uint32_t nwins, uint32_t wbits,
                                                 uint32_t nbits);
template __global__ void batch_addition<bucket_t, affine_t::mem_t>(bucket_t::mem_t ret[],
                                                                   const affine_t::mem_t points[],
                                                                   uint32_t npoints, const uint32_t bitmap[],
                                                                   bool accumulate, uint32_t sid);

#ifndef __CUDA_ARCH__
static_assert(sizeof(affine_t) == G1_AFFINE_BYTES, "G1 affine layout");
static_assert(sizeof(affine_fp2_t) == G2_AFFINE_BYTES, "G2 affine layout");
static_assert(sizeof(scalar_t) == FR_BYTES, "scalar layout");

// body() with sppark's exceptions turned into -1 and a message in err.
template <class F>
static int guarded(F body, char* err, size_t errlen)
{
	try {
		return body();
	} catch (const cuda_error& e) {
		snprintf(err, errlen, "cuda error %d: %s", e.code(), e.what());
	} catch (const std::exception& e) {
		snprintf(err, errlen, "%s", e.what());
	}
	return -1;
}

// One untimed warm-up call of once() (which returns an affine point), then
// reps timed calls (wall clock), each result compared with the warm-up's,
// which goes to out. Returns 0, or -1 with a message in err.
template <class affine_T, class F>
static int timed_calls(F once, int reps, double* ms, void* out, char* err, size_t errlen)
{
	affine_T want = once();
	for (int i = 0; i < reps; i++) {
		auto t0 = std::chrono::steady_clock::now();
		affine_T got = once();
		auto t1 = std::chrono::steady_clock::now();
		ms[i] = std::chrono::duration<double, std::milli>(t1 - t0).count();
		if (memcmp(&got, &want, sizeof got) != 0) {
			snprintf(err, errlen, "call %d: result differs from the warm-up's", i);
			return -1;
		}
	}
	memcpy(out, &want, sizeof want);
	return 0;
}

template <class bucket_T, class point_T, class affine_T>
static int run_msm(const void* pts, const void* scalars, size_t n, int reps, double* ms,
                   void* out_affine, char* err, size_t errlen)
{
	return guarded(
	    [&] {
		    // The bases are copied to the device here, outside the timed calls.
		    msm_t<bucket_T, point_T, affine_T, scalar_t> msm{static_cast<const affine_T*>(pts), n};
		    const affine_T* resident = nullptr; // null: use the preloaded bases
		    const scalar_t* sc = static_cast<const scalar_t*>(scalars);
		    auto once = [&]() -> affine_T {
			    point_T r;
			    RustError e = msm.invoke(r, resident, n, sc, true);
			    if (e.code != 0)
				    throw std::runtime_error("msm_t::invoke: code " + std::to_string(e.code) + ": " +
				                             (e.message ? e.message : ""));
			    return r;
		    };
		    return timed_calls<affine_T>(once, reps, ms, out_affine, err, errlen);
	    },
	    err, errlen);
}

// sppark's batch_addition (the bitmap-selected sum supraseal's C2 uses for the
// scalars equal to 1), as c2's BenchmarkBatchAddG1: bases resident, the bitmap
// copied from host memory at each call, one cooperative launch over all n
// points, the per-warp sums copied back and added up on the host (sum_up), as
// in supraseal's execute_batch_addition.
extern "C" int sppark_batch_add_g1(const void* pts, const uint64_t* bitmap, size_t n, int reps, double* ms,
                                   void* out_affine, char* err, size_t errlen)
{
	typedef affine_t::mem_t affine_h;
	typedef bucket_t::mem_t bucket_h;
	if (n % 1024 != 0 || n >> 32) {
		snprintf(err, errlen, "batch addition of %zu points: want a multiple of 1024 below 2^32", n);
		return -1;
	}
	return guarded(
	    [&] {
		    const gpu_t& gpu = select_gpu(0);
		    stream_t& s = gpu[0];
		    uint32_t nbuckets = gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
		    dev_ptr_t<affine_h> d_points{n};
		    dev_ptr_t<uint32_t> d_bits{n / 32};
		    dev_ptr_t<bucket_h> d_buckets{nbuckets};
		    s.HtoD(&d_points[0], pts, n, sizeof(affine_t));
		    std::vector<bucket_t> buckets(nbuckets);
		    auto once = [&]() -> affine_t {
			    s.HtoD(&d_bits[0], bitmap, n / 32);
			    s.launch_coop(batch_addition<bucket_t>, {gpu.sm_count(), BATCH_ADD_BLOCK_SIZE},
			                  (bucket_h*)&d_buckets[0], (const affine_h*)&d_points[0], (uint32_t)n,
			                  (const uint32_t*)&d_bits[0], false, (uint32_t)0);
			    s.DtoH(buckets, &d_buckets[0]);
			    s.sync();
			    return sum_up(buckets);
		    };
		    return timed_calls<affine_t>(once, reps, ms, out_affine, err, errlen);
	    },
	    err, errlen);
}

extern "C" int sppark_msm_g1(const void* pts, const void* scalars, size_t n, int reps, double* ms,
                             void* out_affine, char* err, size_t errlen)
{
	return run_msm<bucket_t, point_t, affine_t>(pts, scalars, n, reps, ms, out_affine, err, errlen);
}

extern "C" int sppark_msm_g2(const void* pts, const void* scalars, size_t n, int reps, double* ms,
                             void* out_affine, char* err, size_t errlen)
{
	return run_msm<bucket_fp2_t, point_fp2_t, affine_fp2_t>(pts, scalars, n, reps, ms, out_affine, err,
	                                                        errlen);
}
#endif
