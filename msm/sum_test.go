package msm

import (
	"math/rand/v2"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"
)

// SumG1/SumG2 against one mixed addition per selected base, on bases with
// repeats (doublings inside the tree), opposite points (cancellations),
// points at infinity, and selections of every size around the block.
func TestSumsEqualNaiveSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g1, g2 := randomBases(3000)
	// Collisions: repeats and negations at various distances.
	for _, i := range []int{1, 2, 3, 100, 511, 512, 513, 1025, 2999} {
		src := rng.IntN(i)
		g1[i], g2[i] = g1[src], g2[src]
		if i%2 == 1 {
			g1[i].Neg(&g1[i])
			g2[i].Neg(&g2[i])
		}
	}
	g1[7], g2[7] = bls.G1Affine{}, bls.G2Affine{} // infinity
	for _, n := range []int{0, 1, 2, 3, 64, 511, 512, 513, 1024, 1537, 3000} {
		for _, density := range []int{1, 2, 100} { // every base, every other, 1 %
			ones := make([]uint64, (n+63)/64)
			var want1 bls.G1Jac
			var want2 bls.G2Jac
			for i := range n {
				if density == 1 || (density == 2 && i%2 == 0) || (density == 100 && rng.IntN(100) == 0) {
					ones[i/64] |= 1 << (i % 64)
					want1.AddMixed(&g1[i])
					want2.AddMixed(&g2[i])
				}
			}
			for _, tasks := range []int{1, 3} {
				got1 := SumG1(g1[:n], ones, tasks)
				got2 := SumG2(g2[:n], ones, tasks)
				require.True(t, got1.Equal(&want1), "G1 n=%d density=%d tasks=%d", n, density, tasks)
				require.True(t, got2.Equal(&want2), "G2 n=%d density=%d tasks=%d", n, density, tasks)
			}
		}
	}
	// Everything cancels: P, −P, P, −P …
	for i := range 1000 {
		g1[i] = g1[1000]
		if i%2 == 1 {
			g1[i].Neg(&g1[i])
		}
	}
	ones := make([]uint64, 1000/64+1)
	for i := range 1000 {
		ones[i/64] |= 1 << (i % 64)
	}
	got := SumG1(g1[:1000], ones, 1)
	require.True(t, got.Z.IsZero(), "P − P + … is the point at infinity")
}

func BenchmarkSumG1(b *testing.B) {
	n := 1 << 16
	g1, _ := randomBases(n)
	ones := make([]uint64, n/64)
	for i := range ones {
		ones[i] = 0x5555555555555555 // half the bases
	}
	b.ResetTimer()
	for range b.N {
		SumG1(g1, ones, 0)
	}
}
