// Package ntt computes Groth16's H polynomial on the CPU with bellperson's
// conventions, using gnark-crypto's FFT.
//
// Given the per-constraint evaluations a_j = ⟨A_j, w⟩, b_j, c_j over the
// domain {ωʲ} of size n (ω the standard 2^k-th root of unity of Fr, as in
// bellperson and gnark-crypto), h is the quotient (A(x)·B(x) − C(x))/(xⁿ − 1)
// in coefficient form, natural order. It has degree ≤ n−2, so it fills the
// n−1 entries of the h query. The quotient is computed on the coset g·{ωʲ}
// with g = 7, Fr's multiplicative generator, as bellperson does.
package ntt

import (
	"context"
	"fmt"
	"math/big"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// DomainSize returns bellperson's evaluation-domain size for a system with
// the given number of constraints (including the per-input constraints): the
// next power of two ≥ constraints, at least 1. It fails beyond 2^28,
// the largest size Fr's 2-adicity (32) and this package support.
func DomainSize(constraints int) (int, error) {
	if constraints < 0 || constraints > 1<<28 {
		return 0, fmt.Errorf("ntt: %d constraints: domain would exceed 2^28", constraints)
	}
	if constraints <= 1 {
		return 1, nil
	}
	return 1 << bits.Len(uint(constraints-1)), nil
}

// Domain is an evaluation domain of size n = 2^k with coset shift 7.
// It is safe for concurrent use.
//
// Its transforms check the context at a fine grain: the top layers of
// butterflies run here, in pieces, and gnark-crypto transforms the
// sub-blocks below them (at most subFFT elements each), one call at a time.
type Domain struct {
	n, logn int
	// split is the number of butterfly layers run here: the sub-blocks have
	// n >> split elements and sub transforms them.
	split int
	sub   *fft.Domain
	gen   fr.Element // ω
	// tw[s] and twInv[s]: ω^(2^s) and ω^(−2^s), the generators of layer s.
	tw, twInv []fr.Element
	// Coset factors by halves of the bit-reversed index (see cosetScale):
	// g^rev(i)·2^−split for the forward transforms, g^−rev(i)·zInv·2^−split
	// for h, with zInv = 1/(gⁿ − 1) (Z(x) = xⁿ − 1 is constant on the coset
	// g·{ωʲ}).
	fwdLo, fwdHi, invLo, invHi []fr.Element
	lowBits                    int
	cScale                     fr.Element // zInv·2^−split, c's factor in h
}

// subFFT is the largest block gnark-crypto transforms in one call (2^18
// elements: tens of milliseconds on 2 cores). Smaller blocks cost more (ComputeH at
// 2^22 on 2 cores: 5.9 s with blocks of 2^18, 6.4 s of 2^16, 6.9 s of
// 2^14, 7.1–7.5 s as whole-vector transforms; BENCHMARKS.md).
var subFFT = 1 << 18

// NewDomain returns the domain of size n, which must be a power of two in
// [1, 2^28]. Twiddle tables of the sub-blocks are cached process-wide by
// gnark-crypto.
func NewDomain(n int) (*Domain, error) {
	if n < 1 || n > 1<<28 || n&(n-1) != 0 {
		return nil, fmt.Errorf("ntt: domain size %d is not a power of two in [1, 2^28]", n)
	}
	d := &Domain{n: n, logn: bits.TrailingZeros(uint(n))}
	d.split = max(0, d.logn-bits.TrailingZeros(uint(subFFT)))
	var err error
	if d.gen, err = fr.Generator(uint64(n)); err != nil {
		return nil, fmt.Errorf("ntt: %w", err)
	}
	d.sub = fft.NewDomain(uint64(n>>d.split), fft.WithCache())

	d.tw = make([]fr.Element, d.split)
	d.twInv = make([]fr.Element, d.split)
	w := d.gen
	for s := range d.split {
		d.tw[s] = w
		d.twInv[s].Inverse(&w)
		w.Square(&w)
	}

	g := fft.GeneratorFullMultiplicativeGroup()
	var gInv, z, one, pow2 fr.Element
	gInv.Inverse(&g)
	z.Exp(g, big.NewInt(int64(n)))
	one.SetOne()
	z.Sub(&z, &one)
	z.Inverse(&z) // zInv
	pow2.SetUint64(1 << d.split)
	pow2.Inverse(&pow2)
	d.cScale.Mul(&z, &pow2)
	d.lowBits = d.logn / 2
	d.fwdLo, d.fwdHi = cosetTables(g, d.logn, d.lowBits, pow2)
	d.invLo, d.invHi = cosetTables(gInv, d.logn, d.lowBits, d.cScale)
	return d, nil
}

// cosetTables returns lo and hi with lo[i mod 2^b]·hi[i >> b] = s·x^rev(i)
// for i < 2^logn, rev reversing logn bits: rev(i) = rev_b(i mod 2^b)·2^(logn−b)
// + rev_(logn−b)(i >> b).
func cosetTables(x fr.Element, logn, b int, s fr.Element) (lo, hi []fr.Element) {
	hb := logn - b
	var xh fr.Element // x^(2^hb)
	xh.Exp(x, new(big.Int).Lsh(big.NewInt(1), uint(hb)))
	lo = make([]fr.Element, 1<<b)
	for i := range lo {
		lo[i].Exp(xh, big.NewInt(int64(rev(i, b))))
	}
	hi = make([]fr.Element, 1<<hb)
	for i := range hi {
		hi[i].Exp(x, big.NewInt(int64(rev(i, hb))))
		hi[i].Mul(&hi[i], &s)
	}
	return lo, hi
}

// rev reverses the low b bits of i.
func rev(i, b int) int {
	if b == 0 {
		return 0
	}
	return int(bits.Reverse64(uint64(i)) >> (64 - b))
}

// Size returns n.
func (d *Domain) Size() int { return d.n }

// Generator returns ω, the primitive n-th root of unity of the domain.
func (d *Domain) Generator() fr.Element { return d.gen }

// ComputeH overwrites a with the coefficients of h in natural order and uses
// b and c as scratch. a, b and c must have length n and hold the evaluations
// in natural order (zero beyond the last constraint). On return a[n−1] is 0
// when the constraints are satisfied; only a[:n−1] pairs with the h query.
func (d *Domain) ComputeH(a, b, c []fr.Element) error {
	return d.ComputeHContext(context.Background(), a, b, c)
}

// ComputeHContext is ComputeH that checks ctx at a fine grain (between
// pieces of a few thousand elements of its passes and between sub-block
// transforms of at most subFFT elements) and returns ctx's error, leaving
// a, b and c unspecified, once ctx ends. It starts no goroutine that
// outlives it.
func (d *Domain) ComputeHContext(ctx context.Context, a, b, c []fr.Element) error {
	if len(a) != d.n || len(b) != d.n || len(c) != d.n {
		return fmt.Errorf("ntt: ComputeH needs vectors of length %d, got %d, %d, %d", d.n, len(a), len(b), len(c))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.n == 1 {
		// Z(x) = x − 1 and deg h ≤ −1: h is empty.
		a[0].SetZero()
		return nil
	}
	// bellperson takes a, b and c to the coset (an inverse FFT and a coset
	// FFT each), forms (a·b − c)/Z there and comes back by one coset inverse
	// FFT: seven transforms. That last one is linear and undoes c's trip to
	// the coset, so c needs only its inverse FFT: six transforms, the same h
	// (satisfied or not). The inverse transforms here leave their results
	// 2^split·(the inverse), bit-reversed; the coset factors make up for it.
	steps := []func() error{
		func() error { return d.inverseDIF(ctx, a) },
		func() error { return d.cosetScale(ctx, a, nil, d.fwdLo, d.fwdHi) },
		func() error { return d.forwardDIT(ctx, a) }, // A on the coset, natural order
		func() error { return d.inverseDIF(ctx, b) },
		func() error { return d.cosetScale(ctx, b, nil, d.fwdLo, d.fwdHi) },
		func() error { return d.forwardDIT(ctx, b) },
		func() error { return d.inverseDIF(ctx, c) }, // C's coefficients, bit-reversed
		func() error {
			return pieces(ctx, d.n, piece, func(lo, hi int) {
				va := fr.Vector(a[lo:hi])
				va.Mul(va, b[lo:hi])
			})
		},
		func() error { return d.inverseDIF(ctx, a) }, // A·B's coset interpolant, bit-reversed
		// h = (A·B's interpolant·g^−i − C)·zInv, bit-reversed
		func() error { return d.cosetScale(ctx, a, c, d.invLo, d.invHi) },
		func() error { return bitReverse(ctx, a, d.logn) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// piece is the number of elements (or butterflies) a pass handles between
// two checks of the context.
const piece = 1 << 13

// pieces calls f on the pieces [lo, hi) of [0, n), of size elements each,
// on up to GOMAXPROCS goroutines that check ctx before each piece, and
// returns once they all stopped: ctx's error when it ended, else nil.
func pieces(ctx context.Context, n, size int, f func(lo, hi int)) error {
	np := (n + size - 1) / size
	run := func(next *atomic.Int64) {
		for ctx.Err() == nil {
			k := int(next.Add(1)) - 1
			if k >= np {
				return
			}
			f(k*size, min(n, (k+1)*size))
		}
	}
	var next atomic.Int64
	if w := min(runtime.GOMAXPROCS(0), np); w > 1 {
		var wg sync.WaitGroup
		for range w - 1 {
			wg.Go(func() { run(&next) })
		}
		run(&next)
		wg.Wait()
	} else {
		run(&next)
	}
	return ctx.Err()
}

// inverseDIF sets a to 2^split times its inverse transform (decimation in
// frequency: natural order in, bit-reversed out): split layers of
// butterflies here, then gnark-crypto's inverse transform of each
// sub-block, which divides by the sub-block's size.
func (d *Domain) inverseDIF(ctx context.Context, a []fr.Element) error {
	for s := range d.split {
		if err := d.layer(ctx, a, s, d.twInv[s], true); err != nil {
			return err
		}
	}
	m := d.n >> d.split
	for lo := 0; lo < d.n; lo += m {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.sub.FFTInverse(a[lo:lo+m], fft.DIF)
	}
	return nil
}

// forwardDIT sets a to its transform (decimation in time: bit-reversed
// order in, natural out): gnark-crypto's transform of each sub-block, then
// split layers of butterflies here.
func (d *Domain) forwardDIT(ctx context.Context, a []fr.Element) error {
	m := d.n >> d.split
	for lo := 0; lo < d.n; lo += m {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.sub.FFT(a[lo:lo+m], fft.DIT)
	}
	for s := d.split - 1; s >= 0; s-- {
		if err := d.layer(ctx, a, s, d.tw[s], false); err != nil {
			return err
		}
	}
	return nil
}

// layer runs layer s of the split butterflies over a, with h = n/2^(s+1)
// and twiddle root w: butterfly t pairs x[i] and x[i+h] of block t/h,
// i = t mod h, with twiddle w^i. A DIF butterfly (dif) multiplies the
// difference by the twiddle; a DIT one multiplies x[i+h] before.
func (d *Domain) layer(ctx context.Context, a []fr.Element, s int, w fr.Element, dif bool) error {
	h := d.n >> (s + 1)
	return pieces(ctx, d.n/2, min(piece, h), func(lo, hi int) {
		base := lo / h * 2 * h
		i0 := lo % h
		x := a[base : base+2*h]
		var tw fr.Element
		tw.Exp(w, big.NewInt(int64(i0)))
		for i := i0; i < i0+hi-lo; i++ {
			if dif {
				fr.Butterfly(&x[i], &x[i+h])
				x[i+h].Mul(&x[i+h], &tw)
			} else {
				x[i+h].Mul(&x[i+h], &tw)
				fr.Butterfly(&x[i], &x[i+h])
			}
			tw.Mul(&tw, &w)
		}
	})
}

// cosetScale sets a[i] = a[i]·lo[i mod 2^b]·hi[i >> b] (b = lowBits), minus
// c[i]·cScale when c is not nil.
func (d *Domain) cosetScale(ctx context.Context, a, c []fr.Element, lo, hi []fr.Element) error {
	b := d.lowBits
	return pieces(ctx, d.n, max(piece, 1<<b), func(l, h int) {
		var f, t fr.Element
		for i := l; i < h; i++ {
			f.Mul(&lo[i&(1<<b-1)], &hi[i>>b])
			a[i].Mul(&a[i], &f)
			if c != nil {
				t.Mul(&c[i], &d.cScale)
				a[i].Sub(&a[i], &t)
			}
		}
	})
}

// bitReverse permutes a (2^logn elements) into bit-reversed order. With
// i = (x, y, z), x and z of t bits each, rev(i) = (rev z, rev y, rev x):
// each piece takes one middle value y and swaps the tile of y with the
// tile of rev y, runs of 2^t contiguous elements.
func bitReverse(ctx context.Context, a []fr.Element, logn int) error {
	t := min(logn/2, 6)
	mb := logn - 2*t
	return pieces(ctx, 1<<mb, 1, func(y, _ int) {
		ry := rev(y, mb)
		if ry < y {
			return // the piece of ry swaps both tiles
		}
		for x := range 1 << t {
			rx := rev(x, t)
			for z := range 1 << t {
				i := x<<(logn-t) | y<<t | z
				j := rev(z, t)<<(logn-t) | ry<<t | rx
				if y != ry || i < j {
					a[i], a[j] = a[j], a[i]
				}
			}
		}
	})
}
