// sppark-hostcheck: what sppark-bench assumes about data layouts, checked
// without a GPU. sppark's CPU Pippenger (msm/pippenger.hpp, the one supraseal
// uses for its G2 tail) reads the bases and scalars exactly as sppark-bench
// hands them to the GPU (blst-generated affine points reinterpreted as
// sppark's affine_t, Montgomery-form Fr with mont=true), and its result goes
// through the same host conversion to affine as msm.cu's. Both are compared
// with blst's naive sum.
//
//   sppark-hostcheck [LOG2 N, default 10]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <ff/bls12-381.hpp>
#include <ff/bls12-381-fp2.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>
#include <msm/pippenger.hpp>

#include "driver.h"

template <class field_t>
static bool check(int group, size_t n)
{
	typedef jacobian_t<field_t> point_T;
	typedef xyzz_t<field_t> bucket_T;
	typedef typename bucket_T::affine_t affine_T;
	size_t pb = group == 1 ? G1_AFFINE_BYTES : G2_AFFINE_BYTES;
	static_assert(sizeof(affine_T) == 2 * sizeof(field_t), "affine layout");

	std::vector<unsigned char> pts(n * pb);
	host_gen_points(group, pts.data(), n, 7, 2);
	std::vector<uint64_t> sc(4 * n);
	uint64_t s = 42;
	for (auto& x : sc) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		x = s ^ (s >> 29);
	}
	for (size_t i = 0; i < n; i++)
		sc[4 * i + 3] >>= 2;

	point_T r;
	mult_pippenger<bucket_T>(r, reinterpret_cast<const affine_T*>(pts.data()), n,
	                         reinterpret_cast<const fr_t*>(sc.data()), true);
	affine_T got = r;
	unsigned char want[G2_AFFINE_BYTES];
	host_ref_msm(group, want, pts.data(), sc.data(), n, 1, 2);
	bool ok = host_affine_equal(group, &got, want);
	printf("%s G%d: sppark CPU Pippenger of 2^%d blst-generated points = blst naive sum\n", ok ? "ok  " : "FAIL",
	       group, __builtin_ctzll(n));
	return ok;
}

int main(int argc, char** argv)
{
	int lg = argc > 1 ? atoi(argv[1]) : 10;
	size_t n = (size_t)1 << lg;
	bool ok = check<fp_t>(1, n);
	ok &= check<fp2_t>(2, n);
	return ok ? 0 : 1;
}
