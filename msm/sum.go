package msm

import (
	"math/bits"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// sumBlock is how many bases a task gathers before summing them: the
// additions of one level of the block share one field inversion.
const sumBlock = 512

// SumG1 returns Σ bases[i] over the bits i set in ones, using up to tasks
// goroutines (≤ 0: GOMAXPROCS). ones must cover len(bases) bits.
func SumG1(bases []bls.G1Affine, ones []uint64, tasks int) bls.G1Jac {
	parts := sumChunks(len(ones), tasks, func(lo, hi int) any {
		var (
			acc      bls.G1Jac
			xs, ys   [sumBlock]fp.Element
			den, pre [sumBlock / 2]fp.Element
		)
		aside := func(x, y *fp.Element) { acc.AddMixed(&bls.G1Affine{X: *x, Y: *y}) }
		flush := func(m int) {
			if treeSum(xs[:], ys[:], m, den[:], pre[:], aside) {
				aside(&xs[0], &ys[0])
			}
		}
		m := 0
		for w := lo; w < hi; w++ {
			for word := ones[w]; word != 0; word &= word - 1 {
				p := &bases[w<<6+bits.TrailingZeros64(word)]
				if p.IsInfinity() {
					continue
				}
				xs[m], ys[m] = p.X, p.Y
				if m++; m == sumBlock {
					flush(m)
					m = 0
				}
			}
		}
		flush(m)
		return acc
	})
	var total bls.G1Jac
	for _, p := range parts {
		pj := p.(bls.G1Jac)
		total.AddAssign(&pj)
	}
	return total
}

// SumG2 is SumG1 over G2.
func SumG2(bases []bls.G2Affine, ones []uint64, tasks int) bls.G2Jac {
	parts := sumChunks(len(ones), tasks, func(lo, hi int) any {
		var (
			acc      bls.G2Jac
			xs, ys   [sumBlock]bls.E2
			den, pre [sumBlock / 2]bls.E2
		)
		aside := func(x, y *bls.E2) { acc.AddMixed(&bls.G2Affine{X: *x, Y: *y}) }
		flush := func(m int) {
			if treeSum(xs[:], ys[:], m, den[:], pre[:], aside) {
				aside(&xs[0], &ys[0])
			}
		}
		m := 0
		for w := lo; w < hi; w++ {
			for word := ones[w]; word != 0; word &= word - 1 {
				p := &bases[w<<6+bits.TrailingZeros64(word)]
				if p.IsInfinity() {
					continue
				}
				xs[m], ys[m] = p.X, p.Y
				if m++; m == sumBlock {
					flush(m)
					m = 0
				}
			}
		}
		flush(m)
		return acc
	})
	var total bls.G2Jac
	for _, p := range parts {
		pj := p.(bls.G2Jac)
		total.AddAssign(&pj)
	}
	return total
}
