package msm

import (
	"math/bits"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
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
	return groupG1.sum(bases, ones, tasks)
}

// SumG2 is SumG1 over G2.
func SumG2(bases []bls.G2Affine, ones []uint64, tasks int) bls.G2Jac {
	return groupG2.sum(bases, ones, tasks)
}

func (g group[A, F, J, PA, PF, PJ]) sum(bases []A, ones []uint64, tasks int) J {
	coords := func(p *A) (x, y *F, ok bool) {
		x, y = g.xy(p)
		return x, y, !PA(p).IsInfinity()
	}
	var total J
	for _, part := range sumChunks(len(ones), tasks, func(lo, hi int) J {
		var acc J
		sumOnes[A, F, PF](bases, ones, lo, hi, coords, func(x, y *F) {
			p := g.point(x, y)
			PJ(&acc).AddMixed(&p)
		})
		return acc
	}) {
		PJ(&total).AddAssign(&part)
	}
	return total
}
