package groth16

import (
	"math/big"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

func TestFixedBaseMatchesScalarMultiplication(t *testing.T) {
	_, _, g1, g2 := bls.Generators()
	var p1 bls.G1Affine
	var p2 bls.G2Affine
	p1.ScalarMultiplication(&g1, big.NewInt(987654321))
	p2.ScalarMultiplication(&g2, big.NewInt(123456789))
	for _, c := range []uint{5, 8, 16} {
		checkTables(t, &p1, &p2, c)
	}
}

func checkTables(t *testing.T, p1 *bls.G1Affine, p2 *bls.G2Affine, c uint) {
	t1, t2 := newG1Table(p1, c), newG2Table(p2, min(c, 8))

	s := make([]fr.Element, 300)
	for i := range s {
		s[i].MustSetRandom()
	}
	s[0].SetZero()
	s[1].SetOne()
	s[2].SetOne()
	s[2].Neg(&s[2]) // r − 1: every window non-trivial
	got1, got2 := t1.mulAll(s), t2.mulAll(s)
	for i := range s {
		var k big.Int
		s[i].BigInt(&k)
		var w1 bls.G1Affine
		var w2 bls.G2Affine
		w1.ScalarMultiplication(p1, &k)
		w2.ScalarMultiplication(p2, &k)
		require.True(t, got1[i].Equal(&w1), "G1 c=%d %d", c, i)
		require.True(t, got2[i].Equal(&w2), "G2 c=%d %d", c, i)
	}
	require.True(t, got1[0].IsInfinity())
}
