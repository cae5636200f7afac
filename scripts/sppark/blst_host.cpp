// Host side of the sppark benchmark driver: bases and reference MSMs with blst.
// Only blst.h here: sppark's host field types (blst_t.hpp) stay in the .cu files.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "blst.h"
#include "driver.h"

namespace {

// BLST_GROUP(NAME, PT, GRP) defines struct NAME: blst's functions for one
// group under the names the templates below call, where blst spells the
// group's points PT (p1, p2) and its subgroup check *_in_GRP (g1, g2).
#define BLST_GROUP(NAME, PT, GRP)                                                                        \
struct NAME {                                                                                            \
	typedef blst_##PT P;                                                                             \
	typedef blst_##PT##_affine A;                                                                    \
	static const P* gen() { return blst_##PT##_generator(); }                                        \
	static void mult(P* o, const P* p, const byte* s, size_t nb) { blst_##PT##_mult(o, p, s, nb); }  \
	static void add(P* o, const P* a, const P* b) { blst_##PT##_add_or_double(o, a, b); }            \
	static void add_aff(P* o, const P* a, const A* b) { blst_##PT##_add_or_double_affine(o, a, b); } \
	static void from_aff(P* o, const A* a) { blst_##PT##_from_affine(o, a); }                        \
	static void to_aff(A* o, const P* p) { blst_##PT##_to_affine(o, p); }                            \
	static void batch_to_aff(A* o, const P* p, size_t n)                                             \
	{                                                                                                \
		const P* ptrs[2] = {p, nullptr};                                                         \
		blst_##PT##s_to_affine(o, ptrs, n);                                                      \
	}                                                                                                \
	static bool in_group(const A* a) { return blst_##PT##_affine_in_##GRP(a); }                      \
	static bool equal(const A* a, const A* b) { return blst_##PT##_affine_is_equal(a, b); }          \
	static size_t scratch(size_t n) { return blst_##PT##s_mult_pippenger_scratch_sizeof(n); }        \
	static void pippenger(P* o, const A* pts, size_t n, const byte* sc, limb_t* scr)                 \
	{                                                                                                \
		const A* p[2] = {pts, nullptr};                                                          \
		const byte* s[2] = {sc, nullptr};                                                        \
		blst_##PT##s_mult_pippenger(o, p, n, s, 255, scr);                                       \
	}                                                                                                \
}

BLST_GROUP(G1, p1, g1);
BLST_GROUP(G2, p2, g2);
#undef BLST_GROUP

uint64_t next(uint64_t& s)
{
	return splitmix64(s++);
}

// A random 254-bit scalar (little-endian bytes), below the group order.
blst_scalar rand_scalar(uint64_t& s)
{
	uint64_t v[4] = {next(s), next(s), next(s), next(s) >> 2};
	blst_scalar r;
	blst_scalar_from_uint64(&r, v);
	return r;
}

// progression(n, seed): c0*G, (c0+d)*G, (c0+2d)*G, ... as affine points.
template <class G>
std::vector<typename G::A> progression(size_t n, uint64_t& seed)
{
	typename G::P start, step;
	blst_scalar c0 = rand_scalar(seed), d = rand_scalar(seed);
	G::mult(&start, G::gen(), c0.b, 255);
	G::mult(&step, G::gen(), d.b, 255);
	std::vector<typename G::P> jac(n);
	jac[0] = start;
	for (size_t i = 1; i < n; i++)
		G::add(&jac[i], &jac[i - 1], &step);
	std::vector<typename G::A> out(n);
	G::batch_to_aff(out.data(), jac.data(), n);
	return out;
}

template <class G>
void gen_points(void* pts_, size_t n, uint64_t seed, int threads)
{
	auto* pts = static_cast<typename G::A*>(pts_);
	size_t k = 1;
	while (k * k < n)
		k *= 2;
	auto a = progression<G>(k, seed);
	auto b = progression<G>(k, seed);
	parallel(n, threads, [&](int, size_t lo, size_t hi) {
		const size_t chunk = 1024;
		std::vector<typename G::P> jac(chunk);
		for (size_t c = lo; c < hi; c += chunk) {
			size_t m = std::min(chunk, hi - c);
			for (size_t j = 0; j < m; j++) {
				size_t i = c + j;
				G::from_aff(&jac[j], &a[i / k]);
				G::add_aff(&jac[j], &jac[j], &b[i % k]);
			}
			G::batch_to_aff(&pts[c], jac.data(), m);
		}
	});
}

template <class G>
void ref_msm(void* out, const void* pts_, const void* scalars_, size_t n, int naive, int threads)
{
	auto* pts = static_cast<const typename G::A*>(pts_);
	auto* sc = static_cast<const blst_fr*>(scalars_);
	std::vector<typename G::P> partial(std::max(1, threads));
	std::memset(partial.data(), 0, partial.size() * sizeof(typename G::P)); // Z = 0: infinity
	parallel(n, threads, [&](int t, size_t lo, size_t hi) {
		std::vector<blst_scalar> s(hi - lo);
		for (size_t i = lo; i < hi; i++)
			blst_scalar_from_fr(&s[i - lo], &sc[i]); // out of Montgomery form
		typename G::P& acc = partial[t];
		if (naive) {
			for (size_t i = lo; i < hi; i++) {
				typename G::P p;
				G::from_aff(&p, &pts[i]);
				G::mult(&p, &p, s[i - lo].b, 255);
				G::add(&acc, &acc, &p);
			}
		} else {
			std::vector<limb_t> scratch(G::scratch(hi - lo) / sizeof(limb_t) + 1);
			G::pippenger(&acc, &pts[lo], hi - lo, s[0].b, scratch.data());
		}
	});
	typename G::P sum;
	std::memset(&sum, 0, sizeof sum);
	for (auto& p : partial)
		G::add(&sum, &sum, &p);
	G::to_aff(static_cast<typename G::A*>(out), &sum);
}

template <class G>
size_t count_bad(const void* pts_, const size_t* idx, size_t m)
{
	auto* pts = static_cast<const typename G::A*>(pts_);
	size_t bad = 0;
	for (size_t i = 0; i < m; i++)
		bad += !G::in_group(&pts[idx[i]]);
	return bad;
}

} // namespace

extern "C" void host_gen_points(int group, void* pts, size_t n, uint64_t seed, int threads)
{
	if (group == 1)
		gen_points<G1>(pts, n, seed, threads);
	else
		gen_points<G2>(pts, n, seed, threads);
}

extern "C" void host_ref_msm(int group, void* out, const void* pts, const void* scalars, size_t n,
                             int naive, int threads)
{
	if (group == 1)
		ref_msm<G1>(out, pts, scalars, n, naive, threads);
	else
		ref_msm<G2>(out, pts, scalars, n, naive, threads);
}

extern "C" size_t host_count_bad_points(int group, const void* pts, const size_t* idx, size_t m)
{
	return group == 1 ? count_bad<G1>(pts, idx, m) : count_bad<G2>(pts, idx, m);
}

extern "C" int host_affine_equal(int group, const void* a, const void* b)
{
	if (group == 1)
		return G1::equal(static_cast<const G1::A*>(a), static_cast<const G1::A*>(b));
	return G2::equal(static_cast<const G2::A*>(a), static_cast<const G2::A*>(b));
}
