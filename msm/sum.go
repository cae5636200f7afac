package msm

import (
	"math/bits"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// sumBlock is how many bases a task gathers before summing them: the
// additions of one level of the block share one field inversion.
const sumBlock = 512

// sumOnes gathers the bases selected by ones[lo:hi] (words), sumBlock at a
// time, sums each block with treeSum and hands every block's sum, and every
// point the tree set aside, to add. coords returns a base's affine
// coordinates, or false for the point at infinity.
func sumOnes[P, F any, PF coord[F]](bases []P, ones []uint64, lo, hi int, coords func(*P) (x, y *F, ok bool), add func(x, y *F)) {
	var (
		xs, ys   [sumBlock]F
		den, pre [sumBlock / 2]F
	)
	flush := func(m int) {
		if treeSum[F, PF](xs[:], ys[:], m, den[:], pre[:], add) {
			add(&xs[0], &ys[0])
		}
	}
	m := 0
	for w := lo; w < hi; w++ {
		for word := ones[w]; word != 0; word &= word - 1 {
			x, y, ok := coords(&bases[w<<6+bits.TrailingZeros64(word)])
			if !ok {
				continue
			}
			xs[m], ys[m] = *x, *y
			if m++; m == sumBlock {
				flush(m)
				m = 0
			}
		}
	}
	flush(m)
}

// SumG1 returns Σ bases[i] over the bits i set in ones, using up to tasks
// goroutines (≤ 0: GOMAXPROCS). ones must cover len(bases) bits.
func SumG1(bases []bls.G1Affine, ones []uint64, tasks int) bls.G1Jac {
	coords := func(p *bls.G1Affine) (x, y *fp.Element, ok bool) { return &p.X, &p.Y, !p.IsInfinity() }
	var total bls.G1Jac
	for _, part := range sumChunks(len(ones), tasks, func(lo, hi int) any {
		var acc bls.G1Jac
		sumOnes(bases, ones, lo, hi, coords, func(x, y *fp.Element) { acc.AddMixed(&bls.G1Affine{X: *x, Y: *y}) })
		return acc
	}) {
		acc := part.(bls.G1Jac)
		total.AddAssign(&acc)
	}
	return total
}

// SumG2 is SumG1 over G2.
func SumG2(bases []bls.G2Affine, ones []uint64, tasks int) bls.G2Jac {
	coords := func(p *bls.G2Affine) (x, y *bls.E2, ok bool) { return &p.X, &p.Y, !p.IsInfinity() }
	var total bls.G2Jac
	for _, part := range sumChunks(len(ones), tasks, func(lo, hi int) any {
		var acc bls.G2Jac
		sumOnes(bases, ones, lo, hi, coords, func(x, y *bls.E2) { acc.AddMixed(&bls.G2Affine{X: *x, Y: *y}) })
		return acc
	}) {
		acc := part.(bls.G2Jac)
		total.AddAssign(&acc)
	}
	return total
}
