// Host check of the carry-chain Montgomery product (field.cuh, mul_chain)
// against the portable one, which the GPU tests compare with gnark-crypto.
// The PTX carry instructions are emulated on the host in the same statement
// order. Build and run: make -C gpu/cuda hosttest
#include <stdio.h>
#include <random>
#include "../field.cuh"

using namespace c2;

template <class P>
static int check(const char* name, std::mt19937_64& rng, int iters) {
    using F = Fe<P>;
    const int N = F::N;
    // random element: top limb below the modulus' top limb, so x < p
    auto rnd = [&]() {
        F x;
        for (int i = 0; i < N; i++) x.v[i] = (uint32_t)rng();
        x.v[N - 1] %= P::mod(N - 1);
        return x;
    };
    F pm1;  // p - 1 (largest element)
    for (int i = 0; i < N; i++) pm1.v[i] = P::mod(i);
    pm1.v[0] -= 1;
    F allones = pm1;  // p - 1 with as many set low limbs as p has
    F edge[6] = {F::zero(), F::one(), F::one().neg(), pm1, allones, rnd()};
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        F a = it < 36 ? edge[it % 6] : rnd();
        F b = it < 36 ? edge[it / 6] : rnd();
        F r1 = F::mul_portable(a, b);
        F r2 = F::mul_chain(a, b);
        if (r1 != r2 && bad++ < 5) printf("%s: mismatch at iteration %d\n", name, it);
    }
    printf("%s: %d products, %d mismatches\n", name, iters, bad);
    return bad;
}

int main() {
    std::random_device rd;
    uint64_t seed = ((uint64_t)rd() << 32) | rd();
    printf("seed %llu\n", (unsigned long long)seed);
    std::mt19937_64 rng(seed);
    int bad = check<FrParams>("fr", rng, 2000000) + check<FpParams>("fp", rng, 2000000);
    return bad ? 1 : 0;
}
