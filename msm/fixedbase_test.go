package msm

import (
	"math/big"
	"sync/atomic"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
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
	t1, t2 := NewFixedBaseG1(p1, c), NewFixedBaseG2(p2, min(c, 8))

	s := make([]fr.Element, 300)
	for i := range s {
		s[i].MustSetRandom()
	}
	s[0].SetZero()
	s[1].SetOne()
	s[2].SetOne()
	s[2].Neg(&s[2]) // r − 1: every window non-trivial
	got1, got2 := t1.Mul(s), t2.Mul(s)
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

// A table whose entries collide with the running sums (equal points: a
// doubling; opposite points: the point at infinity, mid-way or at the end)
// takes fixedBaseAll's slow path; every sum must still be exact. Real tables
// never collide for scalars below r, so the table here is made up.
func TestFixedBaseAllEqualAndOppositeOperands(t *testing.T) {
	_, _, g1, _ := bls.Generators()
	mul := func(k int64) bls.G1Affine {
		var p bls.G1Affine
		p.ScalarMultiplication(&g1, big.NewInt(k))
		return p
	}
	// c = 2, three windows: entry(w, d) for d = 1, 2, 3.
	table := [][]bls.G1Affine{
		{mul(1), mul(2), mul(3)},
		{mul(1), mul(-1), mul(2)}, // after d0 = 1: G+G doubles, G−G cancels
		{mul(5), mul(-3), mul(15)},
	}
	tb := &FixedBaseG1{c: 2, win: table}
	scalars := make([]fr.Element, 64)
	for k := range scalars {
		scalars[k].SetUint64(uint64(k))
	}
	fb := groupG1.fixedBase(tb.c, tb.win)
	var slow atomic.Int32
	add := fb.add
	fb.add = func(x, y *fp.Element, w int, d uint64) bool { slow.Add(1); return add(x, y, w, d) }
	got := make([]bls.G1Affine, len(scalars))
	fixedBaseAll(scalars, fb, func(i int, x, y *fp.Element) { got[i] = bls.G1Affine{X: *x, Y: *y} })
	collisions := 0
	for k := range scalars {
		var want bls.G1Jac
		for w := range 3 {
			if d := (k >> (2 * w)) & 3; d != 0 {
				var acc, neg bls.G1Affine
				acc.FromJacobian(&want)
				neg.Neg(&table[w][d-1])
				if !acc.IsInfinity() && (acc.Equal(&table[w][d-1]) || acc.Equal(&neg)) {
					collisions++
				}
				want.AddMixed(&table[w][d-1])
			}
		}
		var wa bls.G1Affine
		wa.FromJacobian(&want)
		require.True(t, got[k].Equal(&wa), "k=%d (digits %d %d %d)", k, k&3, k>>2&3, k>>4)
	}
	require.Positive(t, collisions)
	require.Equal(t, int32(collisions), slow.Load(), "additions through the slow path")
	require.True(t, got[1+4*2].IsInfinity(), "G − G")
	require.False(t, got[1+4*2+16].IsInfinity(), "G − G + 5G")
}
