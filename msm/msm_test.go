package msm

import (
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

func randomBases(n int) ([]bls.G1Affine, []bls.G2Affine) {
	s := make([]fr.Element, n)
	for i := range s {
		s[i].MustSetRandom()
	}
	_, _, g1, g2 := bls.Generators()
	return bls.BatchScalarMultiplicationG1(&g1, s), bls.BatchScalarMultiplicationG2(&g2, s)
}

// porepLike returns n scalars: ~49 % zeros, ~49 % ones, the rest random.
func porepLike(rng *rand.Rand, n int) []fr.Element {
	s := make([]fr.Element, n)
	for i := range s {
		switch r := rng.IntN(100); {
		case r < 49:
		case r < 98:
			s[i].SetOne()
		default:
			s[i].MustSetRandom()
		}
	}
	return s
}

// splitDense returns the split of a dense segment and a sparse one selected
// by dens, and the same query written out densely.
func splitDense(t *testing.T, dense, sparse []fr.Element, dens *r1cs.Density) (*Split, []fr.Element) {
	t.Helper()
	sp, err := NewSplit(Segment{Scalars: dense}, Segment{Scalars: sparse, Density: dens})
	require.NoError(t, err)
	full := append([]fr.Element(nil), dense...)
	for i := range sparse {
		if dens.Get(i) {
			full = append(full, sparse[i])
		}
	}
	return sp, full
}

func TestSplitMSMEqualsFullMSM(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 5000} {
		inputs := porepLike(rng, 3)
		aux := porepLike(rng, n)
		dens := r1cs.NewDensity(n, func(int) bool { return rng.IntN(4) == 0 })
		sp, full := splitDense(t, inputs, aux, &dens)
		require.Equal(t, len(full), sp.N)
		require.Equal(t, sp.N, sp.NumOnes+sp.NumZeros+len(sp.Tail))

		g1, g2 := randomBases(sp.N)
		got1, err := G1(g1, sp, 0)
		require.NoError(t, err)
		got2, err := G2(g2, sp, 0)
		require.NoError(t, err)

		var want1 bls.G1Jac
		var want2 bls.G2Jac
		if sp.N > 0 {
			_, err = want1.MultiExp(g1, full, ecc.MultiExpConfig{})
			require.NoError(t, err)
			_, err = want2.MultiExp(g2, full, ecc.MultiExpConfig{})
			require.NoError(t, err)
		}
		require.True(t, got1.Equal(&want1), "G1 n=%d", n)
		require.True(t, got2.Equal(&want2), "G2 n=%d", n)
	}
}

func TestSplitRejectsMismatch(t *testing.T) {
	d := r1cs.NewDensity(3, func(int) bool { return true })
	_, err := NewSplit(Segment{Scalars: make([]fr.Element, 4), Density: &d})
	require.Error(t, err)
	sp, err := NewSplit(Segment{Scalars: make([]fr.Element, 4)})
	require.NoError(t, err)
	_, err = G1(make([]bls.G1Affine, 3), sp, 0)
	require.Error(t, err)
}

func BenchmarkSplitG1(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 1 << 16
	scalars := porepLike(rng, n)
	g1, _ := randomBases(n)
	b.Run("split", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sp, _ := NewSplit(Segment{Scalars: scalars})
			_, _ = G1(g1, sp, 0)
		}
	})
	b.Run("gnark", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var r bls.G1Jac
			_, _ = r.MultiExp(g1, scalars, ecc.MultiExpConfig{})
		}
	})
}
