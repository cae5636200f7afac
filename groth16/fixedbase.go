package groth16

import (
	"runtime"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Fixed-base scalar multiplication for key generation: with a table of
// j·2^(c·w)·P for every c-bit digit j and window w, k·P costs ⌈256/c⌉ mixed
// additions instead of ~255 doublings and additions. c = 8 costs a table of
// 8,160 points; c = 16, used for large keys in G1, 16 × 65,535 points
// (100 MB) for half the additions.

type g1Table struct {
	c   uint
	win [][]bls.G1Affine // win[w][j-1] = j·2^(c·w)·P
}

type g2Table struct {
	c   uint
	win [][]bls.G2Affine
}

func windows(c uint) int { return int((256 + c - 1) / c) }

func newG1Table(p *bls.G1Affine, c uint) *g1Table {
	t := &g1Table{c: c, win: make([][]bls.G1Affine, windows(c))}
	per := 1<<c - 1
	jac := make([]bls.G1Jac, len(t.win)*per)
	var base bls.G1Jac
	base.FromAffine(p)
	for w := range t.win {
		row := jac[w*per : (w+1)*per]
		row[0] = base
		for j := 1; j < per; j++ {
			row[j] = row[j-1]
			row[j].AddAssign(&base)
		}
		base = row[per-1]
		base.AddAssign(&row[0]) // 2^c·base
	}
	aff := make([]bls.G1Affine, len(jac))
	parallelChunks(len(jac), func(lo, hi int) {
		copy(aff[lo:hi], bls.BatchJacobianToAffineG1(jac[lo:hi]))
	})
	for w := range t.win {
		t.win[w] = aff[w*per : (w+1)*per]
	}
	return t
}

func newG2Table(p *bls.G2Affine, c uint) *g2Table {
	t := &g2Table{c: c, win: make([][]bls.G2Affine, windows(c))}
	per := 1<<c - 1
	var base bls.G2Jac
	base.FromAffine(p)
	for w := range t.win {
		t.win[w] = make([]bls.G2Affine, per)
		acc := base
		for j := 0; j < per; j++ {
			t.win[w][j].FromJacobian(&acc)
			acc.AddAssign(&base)
		}
		base = acc // 2^c·base
	}
	return t
}

// digit returns the w-th c-bit digit of the little-endian limbs k.
func digit(k *[4]uint64, w int, c uint) uint64 {
	bit := uint(w) * c
	if bit >= 256 {
		return 0
	}
	d := k[bit/64] >> (bit % 64)
	if bit%64+c > 64 && bit/64+1 < 4 {
		d |= k[bit/64+1] << (64 - bit%64)
	}
	return d & (1<<c - 1)
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
			k := scalars[i].Bits()
			for w := range t.win {
				if j := digit(&k, w, t.c); j != 0 {
					jac[i].AddMixed(&t.win[w][j-1])
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
			k := scalars[i].Bits()
			for w := range t.win {
				if j := digit(&k, w, t.c); j != 0 {
					acc.AddMixed(&t.win[w][j-1])
				}
			}
			out[i].FromJacobian(&acc)
		}
	})
	return out
}
