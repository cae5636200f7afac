package ntt

import (
	"context"
	"errors"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/utils"
	"github.com/stretchr/testify/require"
)

// rootOfUnity2to32 is Fr's primitive 2^32-th root of unity as published by
// the zkcrypto bls12_381 / blstrs crates (ROOT_OF_UNITY = 7^((r−1)/2^32)),
// which bellperson's EvaluationDomain squares down to each size.
const rootOfUnity2to32 = "16a2a19edfe81f20d09b681922c813b4b63683508c2280b93829971f439f0d2b"

func TestGeneratorMatchesBellperson(t *testing.T) {
	var root fr.Element
	_, err := root.SetString("0x" + rootOfUnity2to32)
	require.NoError(t, err)
	for k := 1; k <= 20; k++ {
		d, err := NewDomain(1 << k)
		require.NoError(t, err)
		want := root
		for i := k; i < 32; i++ {
			want.Square(&want)
		}
		require.Equal(t, want, d.Generator(), "k=%d", k)
	}
}

func horner(coeffs []fr.Element, x *fr.Element) fr.Element {
	var acc fr.Element
	for i := len(coeffs) - 1; i >= 0; i-- {
		acc.Mul(&acc, x)
		acc.Add(&acc, &coeffs[i])
	}
	return acc
}

// interpolate returns the coefficients of the polynomial taking vals[j] at ωʲ
// by the O(n²) definition, independent of the FFT under test.
func interpolate(vals []fr.Element, omega fr.Element) []fr.Element {
	n := len(vals)
	var omegaInv, nInv fr.Element
	omegaInv.Inverse(&omega)
	nInv.SetUint64(uint64(n))
	nInv.Inverse(&nInv)
	coeffs := make([]fr.Element, n)
	for i := 0; i < n; i++ {
		// c_i = (1/n) Σ_j vals[j]·ω^(−ij)
		var wi, w, acc, t fr.Element
		wi.Exp(omegaInv, big.NewInt(int64(i)))
		w.SetOne()
		for j := 0; j < n; j++ {
			t.Mul(&vals[j], &w)
			acc.Add(&acc, &t)
			w.Mul(&w, &wi)
		}
		coeffs[i].Mul(&acc, &nInv)
	}
	return coeffs
}

func TestComputeHIsExactQuotient(t *testing.T) {
	for _, n := range []int{2, 4, 16, 64} {
		d, err := NewDomain(n)
		require.NoError(t, err)
		a := make([]fr.Element, n)
		b := make([]fr.Element, n)
		c := make([]fr.Element, n)
		for j := 0; j < n-1; j++ { // the last row stays zero, as padding would
			a[j].MustSetRandom()
			b[j].MustSetRandom()
			c[j].Mul(&a[j], &b[j])
		}
		A := interpolate(a, d.Generator())
		B := interpolate(b, d.Generator())
		C := interpolate(c, d.Generator())

		require.NoError(t, d.ComputeH(a, b, c))
		require.True(t, a[n-1].IsZero(), "deg h ≤ n−2")

		var x fr.Element
		x.MustSetRandom()
		lhs := horner(A, &x)
		bx := horner(B, &x)
		cx := horner(C, &x)
		lhs.Mul(&lhs, &bx)
		lhs.Sub(&lhs, &cx)
		var z, one fr.Element
		one.SetOne()
		z.Exp(x, big.NewInt(int64(n)))
		z.Sub(&z, &one)
		rhs := horner(a, &x)
		rhs.Mul(&rhs, &z)
		require.Equal(t, lhs, rhs, "n=%d", n)
	}
}

// bellperson's recipe written out literally (evaluate A, B, C on the coset
// g·{ωʲ}, divide by Z there, interpolate over the coset) on random vectors
// that satisfy nothing: ComputeH must return the same h, not merely a valid
// quotient.
func TestComputeHMatchesBellpersonRecipe(t *testing.T) {
	for _, n := range []int{2, 8, 32} {
		d, err := NewDomain(n)
		require.NoError(t, err)
		a := make([]fr.Element, n)
		b := make([]fr.Element, n)
		c := make([]fr.Element, n)
		for j := range n {
			a[j].MustSetRandom()
			b[j].MustSetRandom()
			c[j].MustSetRandom()
		}
		A := interpolate(a, d.Generator())
		B := interpolate(b, d.Generator())
		C := interpolate(c, d.Generator())
		g := fr.NewElement(7)
		var gn, one, zInv fr.Element
		one.SetOne()
		gn.Exp(g, big.NewInt(int64(n)))
		zInv.Sub(&gn, &one)
		zInv.Inverse(&zInv)
		// vals[j] = (A·B − C)(g·ωʲ) / Z(g·ωʲ); interpolating over {ωʲ} gives
		// the coefficients of h(g·x), so coefficient i is scaled by g^−i.
		vals := make([]fr.Element, n)
		omega := d.Generator()
		x := g
		for j := range n {
			ax, bx, cx := horner(A, &x), horner(B, &x), horner(C, &x)
			vals[j].Mul(&ax, &bx)
			vals[j].Sub(&vals[j], &cx)
			vals[j].Mul(&vals[j], &zInv)
			x.Mul(&x, &omega)
		}
		want := interpolate(vals, omega)
		var gInv, s fr.Element
		gInv.Inverse(&g)
		s.SetOne()
		for i := range want {
			want[i].Mul(&want[i], &s)
			s.Mul(&s, &gInv)
		}

		require.NoError(t, d.ComputeH(a, b, c))
		require.Equal(t, want, a, "n=%d", n)
	}
}

func TestComputeHRejectsBadInput(t *testing.T) {
	_, err := NewDomain(3)
	require.Error(t, err)
	d, err := NewDomain(8)
	require.NoError(t, err)
	require.Error(t, d.ComputeH(make([]fr.Element, 8), make([]fr.Element, 4), make([]fr.Element, 8)))
	n, err := DomainSize(1025)
	require.NoError(t, err)
	require.Equal(t, 2048, n)
	n, err = DomainSize(1024)
	require.NoError(t, err)
	require.Equal(t, 1024, n)
}

func BenchmarkComputeH(b *testing.B) {
	for _, k := range []int{16, 18} {
		n := 1 << k
		d, _ := NewDomain(n)
		a := make([]fr.Element, n)
		bb := make([]fr.Element, n)
		c := make([]fr.Element, n)
		b.Run("2^"+string(rune('0'+k/10))+string(rune('0'+k%10)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for j := range a {
					a[j].SetUint64(uint64(j))
					bb[j].SetUint64(uint64(j + 1))
					c[j].Mul(&a[j], &bb[j])
				}
				_ = d.ComputeH(a, bb, c)
			}
		})
	}
}

// ComputeHContext equals ComputeH with a live context and stops with the
// context's error once it ends: before the first transform, and between
// transforms when the context ends mid-way.
func TestComputeHContext(t *testing.T) {
	const n = 1 << 12
	d, err := NewDomain(n)
	if err != nil {
		t.Fatal(err)
	}
	vec := func(seed uint64) []fr.Element {
		v := make([]fr.Element, n)
		for i := range v {
			v[i].SetUint64(seed*1000003 + uint64(i))
		}
		return v
	}
	a, b, c := vec(1), vec(2), vec(3)
	wa := append([]fr.Element(nil), a...)
	if err := d.ComputeH(wa, append([]fr.Element(nil), b...), append([]fr.Element(nil), c...)); err != nil {
		t.Fatal(err)
	}
	ga := append([]fr.Element(nil), a...)
	if err := d.ComputeHContext(context.Background(), ga, append([]fr.Element(nil), b...), append([]fr.Element(nil), c...)); err != nil {
		t.Fatal(err)
	}
	for i := range wa {
		if wa[i] != ga[i] {
			t.Fatalf("coefficient %d differs", i)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.ComputeHContext(ctx, a, b, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: got %v", err)
	}
	// A deadline that passes during the transforms of a large domain.
	large, err := NewDomain(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	x, y, z := make([]fr.Element, 1<<20), make([]fr.Element, 1<<20), make([]fr.Element, 1<<20)
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if err := large.ComputeHContext(ctx, x, y, z); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline mid-way: got %v", err)
	}
}

// computeHGnark is ComputeH as gnark-crypto's whole-vector transforms
// compute it: the reference for the split transforms.
func computeHGnark(n int, a, b, c []fr.Element) {
	d := fft.NewDomain(uint64(n))
	var z, one fr.Element
	z.Exp(d.FrMultiplicativeGen, big.NewInt(int64(n)))
	one.SetOne()
	z.Sub(&z, &one)
	z.Inverse(&z)
	d.FFTInverse(a, fft.DIF)
	d.FFT(a, fft.DIT, fft.OnCoset())
	d.FFTInverse(b, fft.DIF)
	d.FFT(b, fft.DIT, fft.OnCoset())
	d.FFTInverse(c, fft.DIF)
	va := fr.Vector(a)
	va.Mul(va, b)
	d.FFTInverse(a, fft.DIF, fft.OnCoset())
	va.Sub(va, c)
	va.ScalarMul(va, &z)
	utils.BitReverse(a)
}

// TestComputeHSplit: with the top layers run here (sub-blocks of every
// size from 1 to the whole domain), h equals gnark-crypto's whole-vector
// transforms, element for element.
func TestComputeHSplit(t *testing.T) {
	old := subFFT
	defer func() { subFFT = old }()
	for _, logn := range []int{1, 2, 3, 5, 8, 13} {
		n := 1 << logn
		a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
		for j := range n {
			a[j].MustSetRandom()
			b[j].MustSetRandom()
			c[j].MustSetRandom()
		}
		want := slices.Clone(a)
		computeHGnark(n, want, slices.Clone(b), slices.Clone(c))
		for sub := 1; sub <= n; sub *= 2 {
			subFFT = sub
			d, err := NewDomain(n)
			require.NoError(t, err)
			got := slices.Clone(a)
			require.NoError(t, d.ComputeH(got, slices.Clone(b), slices.Clone(c)))
			require.Equal(t, want, got, "n=2^%d, sub-blocks of %d", logn, sub)
		}
	}
}

func TestBitReverse(t *testing.T) {
	for logn := range 16 {
		n := 1 << logn
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		utils.BitReverse(want)
		v := make([]fr.Element, n)
		for i := range v {
			v[i].SetUint64(uint64(i))
		}
		require.NoError(t, bitReverse(context.Background(), v, logn))
		for i := range v {
			require.Equal(t, fr.NewElement(uint64(want[i])), v[i], "n=2^%d, i=%d", logn, i)
		}
	}
}
