// sppark-bench: supranational/sppark's BLS12-381 MSM and NTT timed on one GPU
// with the sizes and data kinds of c2's kernel benchmarks (gpu/cuda/bench_test.go),
// so that the two can be put side by side (scripts/gpu-sppark). Build: build.sh.
//
//   sppark-bench [-maxlog 26] [-reps 5] [-threads N] [-check 20] [-seed 1]
//                [-g1 "16 20 22 23 24 25 26 27"] [-g2 "16 20 22 24"]
//                [-ntt "20 22 23 24 25 26 27"] [-h "20 24 27"] [-batchadd "20 24"]
//
// Sizes follow c2's rules for C2_BENCH_MAXLOG (-maxlog): MSMs and batch
// additions up to maxlog (G2 up to min(maxlog, 24)), NTTs and H up to
// maxlog+1. A list "none" skips that family.
//
// Output, one line per measurement on stdout (diagnostics start with "#"):
//   sppark/<name>  <median> ms  min <min> ms  runs <reps>
// where <name> is c2's benchmark name without "Benchmark" and the -<procs>
// suffix: MSMG1/2^k, MSMG2/2^k, BatchAddG1/2^k, NTT/{NR,NN,iNN,coset-NN,coset-iNN}/2^k,
// ComputeH/2^k.
//
// What is timed (the method of c2's benchmarks and of the sppark anchors):
//   MSM: msm_t with the bases preloaded on the device (valid distinct subgroup
//     points generated with blst on the host), random scalars (Montgomery-form
//     Fr below 2^254, mont=true, as c2's fr.Element) copied from pinned host
//     memory at each call; wall clock around the blocking msm_t::invoke, which
//     includes sppark's host-side final reduction. One warm-up, then reps calls.
//   BatchAddG1: sppark's batch_addition kernel (supraseal's sum of the bases
//     whose scalar is 1) over the resident bases, a random bitmap of density
//     1/2 copied from host memory at each call, per-warp sums added on the host;
//     wall clock, as c2's BenchmarkBatchAddG1.
//   NTT: NTT::Base_dev_ptr on device-resident data, in place; CUDA events
//     around each call; one warm-up. NR = forward, natural in, bit-reversed out
//     (c2's NR); NN = forward natural->natural; iNN = its inverse; coset-NN /
//     coset-iNN = forward / inverse on the coset (sppark's LDE shift, g = 7).
//   ComputeH: supraseal C2's H transforms (c2/cuda/groth16_ntt_h.cu) on
//     device-resident a, b, c of 2^k: for each, inverse NTT (NR) then coset
//     forward NTT (RN); a = a*b; a = (a-c)*z; coset inverse NTT (NN) of a:
//     7 NTTs and 2 elementwise kernels, CUDA events around the whole.
//
// Checks (a failure prints "FAIL ..." and makes the exit status 1):
//   - sampled generated bases are in the prime-order subgroup (blst);
//   - G1 and G2 MSM of 2^10 points against a naive sum of blst_pN_mult;
//   - the timed MSM at 2^check (G1 and G2, when timed) and the smallest timed
//     batch addition against blst's Pippenger on the host (threaded, 0/1
//     scalars for the batch addition); every timed call's result equals the
//     warm-up's;
//   - NTT at the smallest NTT size: NR is NN bit-reversed, iNN(NN(x)) = x,
//     coset-iNN(coset-NN(x)) = x and coset-NN(x) != NN(x).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <ff/bls12-381.hpp>
#include <ntt/ntt.cuh>

#include "driver.h"

#ifndef SPPARK_COMMIT
#define SPPARK_COMMIT "unknown"
#endif
#ifndef BLST_COMMIT
#define BLST_COMMIT "unknown"
#endif

__global__ void coeff_wise_mult(fr_t* a, const fr_t* b, size_t n)
{
	for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += (size_t)blockDim.x * gridDim.x)
		a[i] = a[i] * b[i];
}

__global__ void sub_mult_with_constant(fr_t* a, const fr_t* c, const fr_t* z, size_t n)
{
	fr_t zz = *z;
	for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += (size_t)blockDim.x * gridDim.x)
		a[i] = (a[i] - c[i]) * zz;
}

namespace {

struct Options {
	int maxlog = 26, reps = 5, threads = 0, check = 20;
	uint64_t seed = 1;
	std::vector<int> g1{16, 20, 22, 23, 24, 25, 26, 27};
	std::vector<int> g2{16, 20, 22, 24};
	std::vector<int> ntt{20, 22, 23, 24, 25, 26, 27};
	std::vector<int> h{20, 24, 27};
	std::vector<int> batchadd{20, 24};
};

int failures = 0;

void fail(const std::string& msg)
{
	printf("FAIL %s\n", msg.c_str());
	failures++;
}

std::vector<int> parse_list(const char* s)
{
	std::vector<int> v;
	if (strcmp(s, "none") == 0)
		return v;
	std::istringstream in(s);
	int x;
	while (in >> x)
		v.push_back(x);
	return v;
}

void usage()
{
	fprintf(stderr, "usage: sppark-bench [-maxlog N] [-reps N] [-threads N] [-check LOG|0] [-seed N]\n"
	                "                    [-g1 LOGS] [-g2 LOGS] [-ntt LOGS] [-h LOGS] [-batchadd LOGS]\n"
	                "                    (LOGS: \"20 22\" or none)\n");
	exit(2);
}

Options parse(int argc, char** argv)
{
	Options o;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (i + 1 >= argc)
			usage();
		const char* v = argv[++i];
		if (a == "-maxlog")
			o.maxlog = atoi(v);
		else if (a == "-reps")
			o.reps = std::max(1, atoi(v));
		else if (a == "-threads")
			o.threads = atoi(v);
		else if (a == "-check")
			o.check = atoi(v);
		else if (a == "-seed")
			o.seed = strtoull(v, nullptr, 0);
		else if (a == "-g1")
			o.g1 = parse_list(v);
		else if (a == "-g2")
			o.g2 = parse_list(v);
		else if (a == "-ntt")
			o.ntt = parse_list(v);
		else if (a == "-h")
			o.h = parse_list(v);
		else if (a == "-batchadd")
			o.batchadd = parse_list(v);
		else
			usage();
	}
	if (o.threads <= 0)
		o.threads = std::max(1u, std::thread::hardware_concurrency());
	auto cap = [](std::vector<int>& v, int hi) {
		v.erase(std::remove_if(v.begin(), v.end(), [=](int x) { return x < 1 || x > hi; }), v.end());
		std::sort(v.begin(), v.end());
		v.erase(std::unique(v.begin(), v.end()), v.end());
	};
	cap(o.g1, o.maxlog);
	cap(o.g2, std::min(o.maxlog, 24));
	cap(o.ntt, std::min(o.maxlog + 1, 28));
	cap(o.h, std::min(o.maxlog + 1, 28));
	cap(o.batchadd, std::min(o.maxlog, 31));
	o.batchadd.erase(std::remove_if(o.batchadd.begin(), o.batchadd.end(), [](int x) { return x < 10; }),
	                 o.batchadd.end());
	return o;
}

double seconds()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void report(const std::string& name, std::vector<double> ms)
{
	std::sort(ms.begin(), ms.end());
	size_t m = ms.size();
	double med = m % 2 ? ms[m / 2] : (ms[m / 2 - 1] + ms[m / 2]) / 2;
	printf("sppark/%-24s %10.3f ms  min %10.3f ms  runs %zu\n", name.c_str(), med, ms[0], m);
}

// Random Montgomery-form Fr values below 2^254 (like c2's benchmark scalars).
void fill_scalars(uint64_t* s, size_t n, uint64_t seed, int threads)
{
	parallel(n, threads, [=](int, size_t lo, size_t hi) {
		for (size_t i = lo; i < hi; i++) {
			uint64_t x = splitmix64(seed * 0x100000001b3ULL + i);
			for (int j = 0; j < 4; j++)
				s[4 * i + j] = x = splitmix64(x);
			s[4 * i + 3] >>= 2;
		}
	});
}

void* pinned(size_t bytes)
{
	void* p = nullptr;
	if (cudaMallocHost(&p, bytes) != cudaSuccess) {
		fprintf(stderr, "cudaMallocHost(%zu) failed\n", bytes);
		exit(1);
	}
	return p;
}

typedef int (*msm_fn)(const void*, const void*, size_t, int, double*, void*, char*, size_t);

// BatchAddG1 at each of logs over pts: a random bitmap of density 1/2 (fixed
// seed), the smallest size checked against blst with 0/1 scalars.
void bench_batch_add(const Options& o, const std::vector<int>& logs, const unsigned char* pts)
{
	if (logs.empty())
		return;
	size_t n = (size_t)1 << logs.back();
	std::vector<uint64_t> bits(n / 64);
	for (size_t i = 0; i < bits.size(); i++)
		bits[i] = splitmix64(i ^ (o.seed << 40));
	char err[512];
	unsigned char got[G1_AFFINE_BYTES], want[G1_AFFINE_BYTES];
	for (int lg : logs) {
		size_t m = (size_t)1 << lg;
		std::string name = "BatchAddG1/2^" + std::to_string(lg);
		std::vector<double> ms(o.reps);
		if (sppark_batch_add_g1(pts, bits.data(), m, o.reps, ms.data(), got, err, sizeof err) != 0) {
			fail(name + ": " + err);
			continue;
		}
		report(name, ms);
		if (lg != logs.front())
			continue;
		// Montgomery-form 1 (2^256 mod r) where the bit is set, 0 elsewhere.
		static const uint64_t one[4] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
		                                0x1824b159acc5056fULL};
		std::vector<uint64_t> sc(4 * m, 0);
		for (size_t i = 0; i < m; i++)
			if (bits[i / 64] >> (i % 64) & 1)
				memcpy(&sc[4 * i], one, sizeof one);
		double t = seconds();
		host_ref_msm(1, want, pts, sc.data(), m, 0, o.threads);
		if (host_affine_equal(1, got, want))
			printf("# check %s against blst's Pippenger with 0/1 scalars (%.1f s): ok\n", name.c_str(),
			       seconds() - t);
		else
			fail(name + " differs from blst's sum of the selected bases");
	}
}

void bench_msm(int group, const Options& o, const std::vector<int>& logs, const void* scalars)
{
	const std::vector<int> none;
	const std::vector<int>& adds = group == 1 ? o.batchadd : none;
	if (logs.empty() && adds.empty())
		return;
	msm_fn msm = group == 1 ? sppark_msm_g1 : sppark_msm_g2;
	size_t pb = group == 1 ? G1_AFFINE_BYTES : G2_AFFINE_BYTES;
	size_t n = 1024;
	if (!logs.empty())
		n = std::max(n, (size_t)1 << logs.back());
	if (!adds.empty())
		n = std::max(n, (size_t)1 << adds.back());
	char err[512];
	unsigned char got[G2_AFFINE_BYTES], want[G2_AFFINE_BYTES];

	double t = seconds();
	unsigned char* pts = static_cast<unsigned char*>(pinned(n * pb));
	host_gen_points(group, pts, n, o.seed * 31 + group, o.threads);
	printf("# G%d: %zu bases generated on the host in %.1f s\n", group, n, seconds() - t);

	std::vector<size_t> idx;
	for (size_t i = 0; i < 256; i++)
		idx.push_back(splitmix64(i + 77 * group) % n);
	idx.push_back(0);
	idx.push_back(n - 1);
	size_t bad = host_count_bad_points(group, pts, idx.data(), idx.size());
	if (bad)
		fail("G" + std::to_string(group) + " bases: " + std::to_string(bad) + " sampled points not in the subgroup");
	else
		printf("# check G%d bases: %zu sampled points in the subgroup: ok\n", group, idx.size());

	// Small check against the naive sum.
	double ms1[1];
	if (msm(pts, scalars, 1024, 1, ms1, got, err, sizeof err) != 0) {
		fail("G" + std::to_string(group) + " MSM 2^10: " + err);
	} else {
		host_ref_msm(group, want, pts, scalars, 1024, 1, o.threads);
		if (host_affine_equal(group, got, want))
			printf("# check G%d MSM 2^10 against blst (naive sum of blst_p%d_mult): ok\n", group, group);
		else
			fail("G" + std::to_string(group) + " MSM 2^10 differs from blst's naive sum");
	}

	for (int lg : logs) {
		std::vector<double> ms(o.reps);
		std::string name = (group == 1 ? "MSMG1/2^" : "MSMG2/2^") + std::to_string(lg);
		if (msm(pts, scalars, (size_t)1 << lg, o.reps, ms.data(), got, err, sizeof err) != 0) {
			fail(name + ": " + err);
			continue;
		}
		report(name, ms);
		fflush(stdout);
		if (lg == o.check) {
			t = seconds();
			host_ref_msm(group, want, pts, scalars, (size_t)1 << lg, 0, o.threads);
			if (host_affine_equal(group, got, want))
				printf("# check %s against blst's Pippenger on the host (%.1f s): ok\n", name.c_str(), seconds() - t);
			else
				fail(name + " differs from blst's Pippenger on the host");
		}
	}
	bench_batch_add(o, adds, pts);
	cudaFreeHost(pts);
}

typedef NTT::InputOutputOrder Order;
typedef NTT::Direction Dir;
typedef NTT::Type Type;

struct NTTKind {
	const char* name;
	Order order;
	Dir dir;
	Type type;
};

const NTTKind ntt_kinds[] = {
	{"NR", Order::NR, Dir::forward, Type::standard},
	{"NN", Order::NN, Dir::forward, Type::standard},
	{"iNN", Order::NN, Dir::inverse, Type::standard},
	{"coset-NN", Order::NN, Dir::forward, Type::coset},
	{"coset-iNN", Order::NN, Dir::inverse, Type::coset},
};

struct Events {
	cudaEvent_t a, b;
	Events()
	{
		CUDA_OK(cudaEventCreate(&a));
		CUDA_OK(cudaEventCreate(&b));
	}
	~Events()
	{
		cudaEventDestroy(a);
		cudaEventDestroy(b);
	}
	float ms()
	{
		CUDA_OK(cudaEventSynchronize(b));
		float x;
		CUDA_OK(cudaEventElapsedTime(&x, a, b));
		return x;
	}
};

// x mod r, for comparing possibly unreduced outputs.
void canon(uint64_t v[4])
{
	static const uint64_t r[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
	                              0x73eda753299d7d48ULL};
	for (;;) {
		int ge = 1;
		for (int i = 3; i >= 0; i--)
			if (v[i] != r[i]) {
				ge = v[i] > r[i];
				break;
			}
		if (!ge)
			return;
		unsigned __int128 borrow = 0;
		for (int i = 0; i < 4; i++) {
			unsigned __int128 d = (unsigned __int128)v[i] - r[i] - borrow;
			v[i] = (uint64_t)d;
			borrow = (d >> 64) & 1;
		}
	}
}

bool same(const uint64_t* a, const uint64_t* b)
{
	uint64_t x[4], y[4];
	memcpy(x, a, 32);
	memcpy(y, b, 32);
	canon(x);
	canon(y);
	return memcmp(x, y, 32) == 0;
}

size_t bitrev(size_t i, int lg)
{
	size_t r = 0;
	for (int b = 0; b < lg; b++)
		r |= ((i >> b) & 1) << (lg - 1 - b);
	return r;
}

void check_ntt(stream_t& s, int lg, const uint64_t* x)
{
	size_t n = (size_t)1 << lg;
	std::vector<uint64_t> nn(4 * n), nr(4 * n), back(4 * n), coset(4 * n);
	dev_ptr_t<fr_t> d{n};
	auto run = [&](const uint64_t* in, std::vector<uint64_t>& out, std::initializer_list<NTTKind> ks) {
		CUDA_OK(cudaMemcpyAsync(&d[0], in, n * FR_BYTES, cudaMemcpyHostToDevice, s));
		for (auto& k : ks)
			NTT::Base_dev_ptr(s, &d[0], lg, k.order, k.dir, k.type);
		CUDA_OK(cudaMemcpyAsync(out.data(), &d[0], n * FR_BYTES, cudaMemcpyDeviceToHost, s));
		s.sync();
	};
	run(x, nn, {ntt_kinds[1]});
	run(x, nr, {ntt_kinds[0]});
	size_t bad_nr = 0, bad_inv = 0, bad_coset = 0, same_coset = 0;
	for (size_t i = 0; i < n; i++)
		bad_nr += !same(&nr[4 * bitrev(i, lg)], &nn[4 * i]);
	run(nn.data(), back, {ntt_kinds[2]});
	for (size_t i = 0; i < n; i++)
		bad_inv += !same(&back[4 * i], &x[4 * i]);
	run(x, coset, {ntt_kinds[3]});
	for (size_t i = 0; i < n; i++)
		same_coset += same(&coset[4 * i], &nn[4 * i]);
	run(coset.data(), back, {ntt_kinds[4]});
	for (size_t i = 0; i < n; i++)
		bad_coset += !same(&back[4 * i], &x[4 * i]);
	if (bad_nr || bad_inv || bad_coset || same_coset > 1)
		fail("NTT 2^" + std::to_string(lg) + ": NR vs bit-reversed NN " + std::to_string(bad_nr) +
		     " differ, iNN(NN(x)) " + std::to_string(bad_inv) + " differ, coset round trip " +
		     std::to_string(bad_coset) + " differ, coset-NN = NN at " + std::to_string(same_coset));
	else
		printf("# check NTT 2^%d: NR = bit-reversed NN, iNN(NN(x)) = x, coset-iNN(coset-NN(x)) = x, "
		       "coset-NN != NN: ok\n", lg);
}

void bench_ntt(const Options& o, const uint64_t* scalars)
{
	if (o.ntt.empty())
		return;
	const gpu_t& gpu = select_gpu(0);
	stream_t& s = gpu;
	check_ntt(s, o.ntt.front(), scalars);
	Events ev;
	for (int lg : o.ntt) {
		size_t n = (size_t)1 << lg;
		dev_ptr_t<fr_t> d{n};
		CUDA_OK(cudaMemcpyAsync(&d[0], scalars, n * FR_BYTES, cudaMemcpyHostToDevice, s));
		for (const auto& k : ntt_kinds) {
			NTT::Base_dev_ptr(s, &d[0], lg, k.order, k.dir, k.type); // warm-up
			std::vector<double> ms;
			for (int i = 0; i < o.reps; i++) {
				CUDA_OK(cudaEventRecord(ev.a, s));
				NTT::Base_dev_ptr(s, &d[0], lg, k.order, k.dir, k.type);
				CUDA_OK(cudaEventRecord(ev.b, s));
				ms.push_back(ev.ms());
			}
			report(std::string("NTT/") + k.name + "/2^" + std::to_string(lg), ms);
		}
		s.sync();
		fflush(stdout);
	}
}

void bench_h(const Options& o, const uint64_t* scalars)
{
	if (o.h.empty())
		return;
	const gpu_t& gpu = select_gpu(0);
	stream_t& s = gpu;
	Events ev;
	dev_ptr_t<fr_t> z{1};
	CUDA_OK(cudaMemcpyAsync(&z[0], scalars + 4 * 12345, FR_BYTES, cudaMemcpyHostToDevice, s));
	for (int lg : o.h) {
		size_t n = (size_t)1 << lg;
		dev_ptr_t<fr_t> a{n}, b{n}, c{n};
		fr_t* abc[3] = {&a[0], &b[0], &c[0]};
		for (int j = 0; j < 3; j++)
			CUDA_OK(cudaMemcpyAsync(abc[j], scalars + 4 * j, n * FR_BYTES, cudaMemcpyHostToDevice, s));
		unsigned blocks = gpu.sm_count() * 8; // of 256 threads, grid-stride
		auto once = [&] {
			for (int j = 0; j < 3; j++) {
				NTT::Base_dev_ptr(s, abc[j], lg, Order::NR, Dir::inverse, Type::standard);
				NTT::Base_dev_ptr(s, abc[j], lg, Order::RN, Dir::forward, Type::coset);
			}
			coeff_wise_mult<<<blocks, 256, 0, s>>>(abc[0], abc[1], n);
			CUDA_OK(cudaGetLastError());
			sub_mult_with_constant<<<blocks, 256, 0, s>>>(abc[0], abc[2], &z[0], n);
			CUDA_OK(cudaGetLastError());
			NTT::Base_dev_ptr(s, abc[0], lg, Order::NN, Dir::inverse, Type::coset);
		};
		once(); // warm-up
		std::vector<double> ms;
		for (int i = 0; i < o.reps; i++) {
			CUDA_OK(cudaEventRecord(ev.a, s));
			once();
			CUDA_OK(cudaEventRecord(ev.b, s));
			ms.push_back(ev.ms());
		}
		report("ComputeH/2^" + std::to_string(lg), ms);
		s.sync();
		fflush(stdout);
	}
}

} // namespace

int main(int argc, char** argv)
{
	setvbuf(stdout, nullptr, _IOLBF, 0);
	Options o = parse(argc, argv);
	if (ngpus() == 0) {
		fprintf(stderr, "no CUDA device usable by sppark\n");
		return 1;
	}
	const gpu_t& gpu = select_gpu(0);
	const cudaDeviceProp& p = gpu.props();
	printf("# sppark %s, blst %s, nvcc %d.%d; %s, %d SMs, %.0f MiB; %d host threads; maxlog %d, %d runs each\n",
	       SPPARK_COMMIT, BLST_COMMIT, __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, p.name, p.multiProcessorCount,
	       p.totalGlobalMem / 1048576.0, o.threads, o.maxlog, o.reps);

	int top = 16;
	for (auto* v : {&o.g1, &o.g2, &o.ntt, &o.h})
		if (!v->empty())
			top = std::max(top, v->back());
	size_t nsc = (size_t)1 << top;
	nsc += 16; // ComputeH reads a, b, c at offsets 0, 1, 2
	double t = seconds();
	auto* scalars = static_cast<uint64_t*>(pinned(nsc * FR_BYTES));
	fill_scalars(scalars, nsc, o.seed, o.threads);
	printf("# %zu scalars in pinned memory in %.1f s\n", nsc, seconds() - t);

	try {
		bench_msm(1, o, o.g1, scalars);
		bench_msm(2, o, o.g2, scalars);
		bench_ntt(o, scalars);
		bench_h(o, scalars);
	} catch (const cuda_error& e) {
		fail(std::string("cuda error: ") + e.what());
	}
	cudaFreeHost(scalars);
	if (failures) {
		printf("FAIL: %d check(s) failed\n", failures);
		return 1;
	}
	printf("# all checks passed\n");
	return 0;
}
