package msm

import (
	"runtime"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Fixed-base scalar multiplication (for key generation): with a table of
// j·2^(c·w)·P for every c-bit digit j and window w, k·P costs ⌈256/c⌉
// additions instead of ~255 doublings and additions. c = 8 costs a table of
// 8,160 points; c = 16 costs 16 × 65,535 points (100 MB in G1) for half the
// additions.

// FixedBaseG1 is a table of multiples of one G1 point.
type FixedBaseG1 struct {
	c   uint
	win [][]bls.G1Affine // win[w][j-1] = j·2^(c·w)·P
}

// FixedBaseG2 is a table of multiples of one G2 point.
type FixedBaseG2 struct {
	c   uint
	win [][]bls.G2Affine
}

func windows(c uint) int { return int((256 + c - 1) / c) }

// NewFixedBaseG1 builds the table of p with c-bit windows (1 ≤ c ≤ 16).
func NewFixedBaseG1(p *bls.G1Affine, c uint) *FixedBaseG1 {
	t := &FixedBaseG1{c: c, win: make([][]bls.G1Affine, windows(c))}
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

// NewFixedBaseG2 builds the table of p with c-bit windows (1 ≤ c ≤ 16).
func NewFixedBaseG2(p *bls.G2Affine, c uint) *FixedBaseG2 {
	t := &FixedBaseG2{c: c, win: make([][]bls.G2Affine, windows(c))}
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
// Each window adds into a batch of affine accumulators with one addAffine
// (no conversion at the end). A window's table lookups all run before its
// arithmetic, so their cache misses overlap instead of stalling one
// addition each.
func fixedBaseAll[F any, PF coord[F]](scalars []fr.Element, t fixedBase[F], emit func(i int, x, y *F)) {
	parallelChunks(len(scalars), func(lo, hi int) {
		var (
			ks       [batch][4]uint64
			xs, ys   [batch]F
			den, pre [batch]F
			inf      [batch]bool
			idx      [batch]int32
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
				acc := func(j int) (x, y *F) { i := idx[j]; return &xs[i], &ys[i] }
				q := func(j int) (x, y *F) { return t.entry(w, digit(&ks[idx[j]], w, t.c)) }
				addAffine[F, PF](m, acc, q, den[:], pre[:])
			}
			for i := range n {
				if !inf[i] {
					emit(b+i, &xs[i], &ys[i])
				}
			}
		}
	})
}

// Mul returns k·P in affine form for every scalar k, P the table's base.
func (t *FixedBaseG1) Mul(scalars []fr.Element) []bls.G1Affine {
	return groupG1.mulFixed(groupG1.fixedBase(t.c, t.win), scalars)
}

// Mul returns k·P in affine form for every scalar k, P the table's base.
func (t *FixedBaseG2) Mul(scalars []fr.Element) []bls.G2Affine {
	return groupG2.mulFixed(groupG2.fixedBase(t.c, t.win), scalars)
}

func (g group[A, F, J, PA, PF, PJ]) mulFixed(t fixedBase[F], scalars []fr.Element) []A {
	out := make([]A, len(scalars))
	fixedBaseAll[F, PF](scalars, t, func(i int, x, y *F) { out[i] = g.point(x, y) })
	return out
}

// fixedBase describes the table win (win[w][j-1] = j·2^(c·w)·P) to
// fixedBaseAll.
func (g group[A, F, J, PA, PF, PJ]) fixedBase(c uint, win [][]A) fixedBase[F] {
	return fixedBase[F]{
		c: c, nw: len(win),
		entry: func(w int, d uint64) (x, y *F) { return g.xy(&win[w][d-1]) },
		add: func(x, y *F, w int, d uint64) bool {
			var acc J
			p := g.point(x, y)
			PJ(&acc).FromAffine(&p)
			PJ(&acc).AddMixed(&win[w][d-1])
			PA(&p).FromJacobian(&acc)
			px, py := g.xy(&p)
			*x, *y = *px, *py
			return PA(&p).IsInfinity()
		},
	}
}
