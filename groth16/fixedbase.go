package groth16

import (
	"runtime"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
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

// batch is how many scalars share one field inversion per window in
// fixedBaseAll: large enough to amortize the inversion, small enough that a
// batch's accumulators and the table entries it touched stay in L2.
const batch = 256

// coord is a coordinate field of a curve (fp for G1, E2 for G2).
type coord[F any] interface {
	*F
	Sub(x, y *F) *F
	Mul(x, y *F) *F
	Square(x *F) *F
	Inverse(x *F) *F
	IsZero() bool
}

// fixedBase describes a fixed-base table to fixedBaseAll: entry(w, d) is
// d·2^(c·w)·P in affine form (d ≥ 1); add sets (x, y) to (x, y) + entry(w, d)
// for the rare operands affine addition cannot take (equal or opposite
// points) and reports whether the sum is the point at infinity.
type fixedBase[F any] struct {
	c     uint
	nw    int
	entry func(w int, d uint64) (x, y *F)
	add   func(x, y *F, w int, d uint64) (inf bool)
}

// fixedBaseAll calls emit(i, x, y) with k·P in affine form for every scalar
// k = scalars[i] whose product is not the point at infinity.
//
// Each window adds into a batch of accumulators with affine additions that
// share one inversion (Montgomery's trick): about 5 multiplications and a
// square per addition, against 11 for a mixed Jacobian addition, and no
// conversion at the end. A window's table lookups all run before its
// arithmetic, so their cache misses overlap instead of stalling one
// addition each.
func fixedBaseAll[F any, PF coord[F]](scalars []fr.Element, t fixedBase[F], emit func(i int, x, y *F)) {
	parallelChunks(len(scalars), func(lo, hi int) {
		var (
			ks                 [batch][4]uint64
			xs, ys             [batch]F
			den, pre           [batch]F
			inf                [batch]bool
			idx                [batch]int32
			inv, dinv, lam, x3 F
		)
		for b := lo; b < hi; b += batch {
			n := min(batch, hi-b)
			for i := range n {
				ks[i] = scalars[b+i].Bits()
				inf[i] = true
			}
			for w := range t.nw {
				m := 0
				for i := range n {
					d := digit(&ks[i], w, t.c)
					if d == 0 {
						continue
					}
					tx, ty := t.entry(w, d)
					if inf[i] {
						xs[i], ys[i], inf[i] = *tx, *ty, false
						continue
					}
					PF(&den[m]).Sub(tx, &xs[i])
					if PF(&den[m]).IsZero() {
						inf[i] = t.add(&xs[i], &ys[i], w, d)
						continue
					}
					idx[m] = int32(i)
					m++
				}
				if m == 0 {
					continue
				}
				pre[0] = den[0]
				for j := 1; j < m; j++ {
					PF(&pre[j]).Mul(&pre[j-1], &den[j])
				}
				PF(&inv).Inverse(&pre[m-1]) // 1/(den[0]···den[m−1])
				for j := m - 1; j >= 0; j-- {
					if j > 0 {
						PF(&dinv).Mul(&inv, &pre[j-1]) // 1/den[j]
						PF(&inv).Mul(&inv, &den[j])
					} else {
						dinv = inv
					}
					i := idx[j]
					tx, ty := t.entry(w, digit(&ks[i], w, t.c))
					x, y := &xs[i], &ys[i]
					// λ = (ty − y)/(tx − x); x' = λ² − x − tx; y' = λ(x − x') − y.
					PF(&lam).Sub(ty, y)
					PF(&lam).Mul(&lam, &dinv)
					PF(&x3).Square(&lam)
					PF(&x3).Sub(&x3, x)
					PF(&x3).Sub(&x3, tx)
					PF(x).Sub(x, &x3)
					PF(x).Mul(x, &lam)
					PF(y).Sub(x, y)
					*x = x3
				}
			}
			for i := range n {
				if !inf[i] {
					emit(b+i, &xs[i], &ys[i])
				}
			}
		}
	})
}

// mulAll returns k·P in affine form for every scalar k, P the table's base.
func (t *g1Table) mulAll(scalars []fr.Element) []bls.G1Affine {
	out := make([]bls.G1Affine, len(scalars))
	fixedBaseAll(scalars, t.fixedBase(), func(i int, x, y *fp.Element) { out[i] = bls.G1Affine{X: *x, Y: *y} })
	return out
}

func (t *g1Table) fixedBase() fixedBase[fp.Element] {
	return fixedBase[fp.Element]{
		c: t.c, nw: len(t.win),
		entry: func(w int, d uint64) (x, y *fp.Element) { e := &t.win[w][d-1]; return &e.X, &e.Y },
		add: func(x, y *fp.Element, w int, d uint64) bool {
			var acc bls.G1Jac
			acc.FromAffine(&bls.G1Affine{X: *x, Y: *y})
			acc.AddMixed(&t.win[w][d-1])
			var a bls.G1Affine
			a.FromJacobian(&acc)
			*x, *y = a.X, a.Y
			return a.IsInfinity()
		},
	}
}

// mulAll returns k·P in affine form for every scalar k, P the table's base.
func (t *g2Table) mulAll(scalars []fr.Element) []bls.G2Affine {
	out := make([]bls.G2Affine, len(scalars))
	fixedBaseAll(scalars, fixedBase[bls.E2]{
		c: t.c, nw: len(t.win),
		entry: func(w int, d uint64) (x, y *bls.E2) { e := &t.win[w][d-1]; return &e.X, &e.Y },
		add: func(x, y *bls.E2, w int, d uint64) bool {
			var acc bls.G2Jac
			acc.FromAffine(&bls.G2Affine{X: *x, Y: *y})
			acc.AddMixed(&t.win[w][d-1])
			var a bls.G2Affine
			a.FromJacobian(&acc)
			*x, *y = a.X, a.Y
			return a.IsInfinity()
		},
	}, func(i int, x, y *bls.E2) { out[i] = bls.G2Affine{X: *x, Y: *y} })
	return out
}
