// Random and edge operands for the programs in hosttest/, and the seed of the
// randomized checks.
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <random>
#include <vector>
#include "../field.cuh"

namespace c2 {

// The seed of a randomized check: argv[1] when given (any base strtoull
// reads), else 64 bits from std::random_device. It is printed as "seed N" so
// that a failing run can be repeated with N.
inline uint64_t check_seed(int argc, char** argv) {
    uint64_t seed;
    if (argc > 1) {
        seed = strtoull(argv[1], nullptr, 0);
    } else {
        std::random_device rd;
        seed = ((uint64_t)rd() << 32) | rd();
    }
    printf("seed %llu\n", (unsigned long long)seed);
    return seed;
}

// A 64-bit mixer (MurmurHash3's finalizer) cut to 32 bits: pseudo-random
// words from an index, the same on the host and the device.
C2_HD uint32_t mix32(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (uint32_t)x;
}

// The device benches' product chains (f64_bench, mma_bench): thread t's
// chain c starts at chain_element(5t + c) and multiplies by
// chain_element(5t + 4) each round; every word is pseudo-random and the
// value below p.
C2_HD fp_t chain_element(uint64_t i) {
    fp_t a;
    for (int l = 0; l < 12; l++) a.v[l] = mix32(i * 16 + l);
    a.v[11] &= 0x0fffffff;  // below p
    return a;
}

// Whether ref, thread 0's chain 0 after rounds products on the device,
// equals the same chain on the host (portable products); prints a failure.
inline bool chain_matches_host(const fp_t& ref, int rounds) {
    fp_t x = chain_element(0), y = chain_element(4);
    for (int r = 0; r < rounds; r++) x = fp_t::mul_portable(x, y);
    if (x != ref) printf("FAIL: chain 0 differs from the host\n");
    return x == ref;
}

template <class P>
struct gen {
    using F = Fe<P>;
    static constexpr int N = P::N;
    std::mt19937_64& rng;

    static bool below_p(const F& x) {
        for (int k = N - 1; k >= 0; k--)
            if (x.v[k] != P::mod(k)) return x.v[k] < P::mod(k);
        return false;
    }
    // x < 2p when the arithmetic is lazy, else x < p: the bound every
    // result must keep.
    static bool in_bound(const F& x) {
        if (!F::LAZY) return below_p(x);
        for (int k = N - 1; k >= 0; k--)
            if (x.v[k] != F::mod2(k)) return x.v[k] < F::mod2(k);
        return false;
    }
    // x + p for x < p (another representation of x in the lazy arithmetic).
    static F plus_p(const F& x) {
        F r;
        uint64_t c = 0;
        for (int i = 0; i < N; i++) {
            c += (uint64_t)x.v[i] + P::mod(i);
            r.v[i] = (uint32_t)c;
            c >>= 32;
        }
        return r;
    }
    // x, or x + p with probability 1/2 when the arithmetic is lazy (with
    // always, whenever it is lazy): an operand in the representation range.
    F lift(const F& x, bool always = false) { return F::LAZY && (always || (rng() & 1)) ? plus_p(x) : x; }
    static F from_words(const uint32_t* w) {
        F x;
        for (int i = 0; i < N; i++) x.v[i] = w[i];
        return x;
    }
    // uniform in [0, p)
    F uniform() {
        uint32_t top = P::mod(N - 1), mask = 1;
        while (mask < top) mask = mask << 1 | 1;
        for (;;) {
            F x;
            for (int i = 0; i < N; i++) x.v[i] = (uint32_t)rng();
            x.v[N - 1] &= mask;
            if (below_p(x)) return x;
        }
    }
    // limbs drawn from {0, 1, 2^31, 2^32-1, random}: long carry runs
    F sparse() {
        for (;;) {
            F x;
            for (int i = 0; i < N; i++) {
                switch (rng() % 5) {
                case 0: x.v[i] = 0; break;
                case 1: x.v[i] = 1; break;
                case 2: x.v[i] = 0x80000000u; break;
                case 3: x.v[i] = 0xffffffffu; break;
                default: x.v[i] = (uint32_t)rng();
                }
            }
            if (rng() & 1) x.v[N - 1] = P::mod(N - 1) - (uint32_t)(rng() % 2);
            if (below_p(x)) return x;
        }
    }
    // p - d for a small d >= 1, p - 2^k, 2^k, and friends
    std::vector<F> edges() {
        std::vector<F> e;
        uint32_t w[N];
        auto p_minus = [&](uint32_t d) {
            uint64_t br = d;
            for (int i = 0; i < N; i++) {
                uint64_t t = (uint64_t)P::mod(i) - br;
                w[i] = (uint32_t)t;
                br = (t >> 63) & 1;
            }
            e.push_back(from_words(w));
        };
        e.push_back(F::zero());
        F one_plain = F::zero();
        one_plain.v[0] = 1;
        e.push_back(one_plain);
        one_plain.v[0] = 2;
        e.push_back(one_plain);
        e.push_back(F::one());
        e.push_back(F::one().neg().canonical());
        for (uint32_t d = 1; d <= 3; d++) p_minus(d);
        // (p - 1) / 2 and (p + 1) / 2
        for (int i = 0; i < N; i++) w[i] = (P::mod(i) >> 1) | (i + 1 < N ? P::mod(i + 1) << 31 : 0);
        e.push_back(from_words(w));
        w[0] += 1;
        e.push_back(from_words(w));
        int bits = 32 * (N - 1);
        for (uint32_t t = P::mod(N - 1); t; t >>= 1) bits++;
        for (int k : {31, 32, 63, 64, 95, 128, 200, 254, 255, 300, 352, 379, 380}) {
            if (k >= bits) continue;
            for (int i = 0; i < N; i++) w[i] = 0;
            w[k / 32] = 1u << (k % 32);
            F pk = from_words(w);
            e.push_back(pk);
            e.push_back((F::zero() - pk).canonical());  // p - 2^k
        }
        // all-ones low limbs under p's top limb; p's top limb alone
        for (int i = 0; i < N; i++) w[i] = 0xffffffffu;
        w[N - 1] = P::mod(N - 1) - 1;
        e.push_back(from_words(w));
        for (int i = 0; i < N; i++) w[i] = 0;
        w[N - 1] = P::mod(N - 1);
        e.push_back(from_words(w));
        for (const F& x : e)
            if (!below_p(x)) {
                printf("bad edge value\n");
                exit(2);
            }
        return e;
    }
};

}  // namespace c2
