package groth16

import (
	"runtime"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Fixed-base scalar multiplication for key generation: with a table of
// j·2^(8w)·P for every byte value j and byte position w, k·P costs 32 mixed
// additions instead of ~255 doublings and additions.

const fbWindows = 32 // 8-bit windows over 256-bit scalars

type g1Table [fbWindows][255]bls.G1Affine
type g2Table [fbWindows][255]bls.G2Affine

func newG1Table(p *bls.G1Affine) *g1Table {
	t := new(g1Table)
	jac := make([]bls.G1Jac, 0, fbWindows*255)
	var base bls.G1Jac
	base.FromAffine(p)
	for w := 0; w < fbWindows; w++ {
		acc := base
		for j := 0; j < 255; j++ {
			jac = append(jac, acc)
			acc.AddAssign(&base)
		}
		base = acc // 256·base
	}
	aff := bls.BatchJacobianToAffineG1(jac)
	for w := range t {
		copy(t[w][:], aff[w*255:(w+1)*255])
	}
	return t
}

func newG2Table(p *bls.G2Affine) *g2Table {
	t := new(g2Table)
	var base bls.G2Jac
	base.FromAffine(p)
	for w := 0; w < fbWindows; w++ {
		acc := base
		for j := 0; j < 255; j++ {
			t[w][j].FromJacobian(&acc)
			acc.AddAssign(&base)
		}
		base = acc
	}
	return t
}

// parallelChunks runs f over [0, n) in GOMAXPROCS ranges.
func parallelChunks(n int, f func(lo, hi int)) {
	tasks := min(runtime.GOMAXPROCS(0), max(1, n/256))
	var wg sync.WaitGroup
	for t := 0; t < tasks; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*t/tasks, n*(t+1)/tasks)
		}()
	}
	wg.Wait()
}

func (t *g1Table) mulAll(scalars []fr.Element) []bls.G1Affine {
	jac := make([]bls.G1Jac, len(scalars))
	parallelChunks(len(scalars), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			limbs := scalars[i].Bits()
			for w := 0; w < fbWindows; w++ {
				if j := byte(limbs[w/8] >> (8 * (w % 8))); j != 0 {
					jac[i].AddMixed(&t[w][j-1])
				}
			}
		}
	})
	out := make([]bls.G1Affine, len(scalars))
	parallelChunks(len(scalars), func(lo, hi int) {
		copy(out[lo:hi], bls.BatchJacobianToAffineG1(jac[lo:hi]))
	})
	return out
}

func (t *g2Table) mulAll(scalars []fr.Element) []bls.G2Affine {
	out := make([]bls.G2Affine, len(scalars))
	parallelChunks(len(scalars), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var acc bls.G2Jac
			limbs := scalars[i].Bits()
			for w := 0; w < fbWindows; w++ {
				if j := byte(limbs[w/8] >> (8 * (w % 8))); j != 0 {
					acc.AddMixed(&t[w][j-1])
				}
			}
			out[i].FromJacobian(&acc)
		}
	})
	return out
}
