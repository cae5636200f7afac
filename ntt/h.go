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

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/utils"
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
type Domain struct {
	d *fft.Domain
	n int
	// zInv = 1/(gⁿ − 1): Z(x) = xⁿ − 1 is constant on the coset g·{ωʲ}.
	zInv fr.Element
}

// NewDomain returns the domain of size n, which must be a power of two in
// [1, 2^28]. Twiddle tables are cached process-wide by gnark-crypto.
func NewDomain(n int) (*Domain, error) {
	if n < 1 || n > 1<<28 || n&(n-1) != 0 {
		return nil, fmt.Errorf("ntt: domain size %d is not a power of two in [1, 2^28]", n)
	}
	d := fft.NewDomain(uint64(n), fft.WithCache())
	var z fr.Element
	z.Exp(d.FrMultiplicativeGen, new(big.Int).SetUint64(uint64(n)))
	var one fr.Element
	one.SetOne()
	z.Sub(&z, &one)
	z.Inverse(&z)
	return &Domain{d: d, n: n, zInv: z}, nil
}

// Size returns n.
func (d *Domain) Size() int { return d.n }

// Generator returns ω, the primitive n-th root of unity of the domain.
func (d *Domain) Generator() fr.Element { return d.d.Generator }

// ComputeH overwrites a with the coefficients of h in natural order and uses
// b and c as scratch. a, b and c must have length n and hold the evaluations
// in natural order (zero beyond the last constraint). On return a[n−1] is 0
// when the constraints are satisfied; only a[:n−1] pairs with the h query.
func (d *Domain) ComputeH(a, b, c []fr.Element) error {
	return d.ComputeHContext(context.Background(), a, b, c)
}

// ComputeHContext is ComputeH that checks ctx before each of its six
// transforms and returns ctx's error, leaving a, b and c unspecified, once
// ctx ends.
func (d *Domain) ComputeHContext(ctx context.Context, a, b, c []fr.Element) error {
	if len(a) != d.n || len(b) != d.n || len(c) != d.n {
		return fmt.Errorf("ntt: ComputeH needs vectors of length %d, got %d, %d, %d", d.n, len(a), len(b), len(c))
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
	// (satisfied or not).
	steps := []func(){
		// Coefficients come out bit-reversed, which is what DIT takes in;
		// evaluations on the coset come out in natural order.
		func() { d.d.FFTInverse(a, fft.DIF) },
		func() { d.d.FFT(a, fft.DIT, fft.OnCoset()) },
		func() { d.d.FFTInverse(b, fft.DIF) },
		func() { d.d.FFT(b, fft.DIT, fft.OnCoset()) },
		func() { d.d.FFTInverse(c, fft.DIF) }, // C's coefficients, bit-reversed
		func() {
			va := fr.Vector(a)
			va.Mul(va, b)
			d.d.FFTInverse(a, fft.DIF, fft.OnCoset()) // A·B's coset interpolant, bit-reversed
		},
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		step()
	}
	va := fr.Vector(a)
	va.Sub(va, c)
	va.ScalarMul(va, &d.zInv)
	utils.BitReverse(a)
	return nil
}
