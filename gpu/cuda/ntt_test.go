package cuda

import (
	"fmt"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/utils"
	"github.com/sealc2/c2/ntt"
	"github.com/stretchr/testify/require"
)

func frEqual(a, b []fr.Element) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func requireFrEqual(t *testing.T, want, got []fr.Element, what string) {
	t.Helper()
	for i := range want {
		if want[i] != got[i] {
			bad := 0
			for j := range want {
				if want[j] != got[j] {
					bad++
				}
			}
			t.Fatalf("%s: %d of %d elements differ, first at %d: want %s got %s", what, bad, len(want), i,
				want[i].String(), got[i].String())
		}
	}
}

// scalePowers multiplies v[i] by x^i.
func scalePowers(v []fr.Element, x fr.Element) {
	var p fr.Element
	p.SetOne()
	for i := range v {
		v[i].Mul(&v[i], &p)
		p.Mul(&p, &x)
	}
}

// refNTT computes the transform on the CPU with gnark-crypto's plain FFTs,
// natural order in and out, coset shift g = 7 applied literally.
func refNTT(v []fr.Element, kind NTTKind) {
	n := uint64(len(v))
	dom := fft.NewDomain(n)
	switch kind {
	case Forward:
		dom.FFT(v, fft.DIF)
		utils.BitReverse(v)
	case Inverse:
		dom.FFTInverse(v, fft.DIF)
		utils.BitReverse(v)
	case CosetForward:
		scalePowers(v, dom.FrMultiplicativeGen)
		dom.FFT(v, fft.DIF)
		utils.BitReverse(v)
	case CosetInverse:
		dom.FFTInverse(v, fft.DIF)
		utils.BitReverse(v)
		scalePowers(v, dom.FrMultiplicativeGenInv)
	}
}

// refHLiteral is the bellperson quotient computed on the CPU (see ComputeH).
func refHLiteral(a, b, c []fr.Element) []fr.Element {
	n := uint64(len(a))
	dom := fft.NewDomain(n)
	g := dom.FrMultiplicativeGen
	for _, v := range [][]fr.Element{a, b, c} {
		dom.FFTInverse(v, fft.DIF) // coefficients, bit-reversed
		utils.BitReverse(v)
		scalePowers(v, g)
		dom.FFT(v, fft.DIF) // coset evaluations, bit-reversed
		utils.BitReverse(v)
	}
	var gn, one, z fr.Element
	gn.Exp(g, new(big.Int).SetUint64(n))
	one.SetOne()
	z.Sub(&gn, &one).Inverse(&z)
	h := make([]fr.Element, n)
	for i := range h {
		h[i].Mul(&a[i], &b[i]).Sub(&h[i], &c[i]).Mul(&h[i], &z)
	}
	dom.FFTInverse(h, fft.DIF)
	utils.BitReverse(h)
	scalePowers(h, dom.FrMultiplicativeGenInv)
	return h
}

func TestRefCosetMatchesGnark(t *testing.T) {
	// Our literal coset convention equals gnark-crypto's OnCoset option.
	rng := testRand(t)
	v := randFr(rng, 1<<10)
	w := append([]fr.Element(nil), v...)
	refNTT(w, CosetForward)
	dom := fft.NewDomain(uint64(len(v)))
	dom.FFT(v, fft.DIF, fft.OnCoset())
	utils.BitReverse(v)
	requireFrEqual(t, w, v, "coset forward")
	dom.FFTInverse(v, fft.DIF, fft.OnCoset())
	utils.BitReverse(v)
	refNTT(w, CosetInverse)
	requireFrEqual(t, w, v, "coset inverse")
}

func TestNTT(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	kinds := []NTTKind{Forward, Inverse, CosetForward, CosetInverse}
	for logN := 0; logN <= 22; logN++ {
		for _, kind := range kinds {
			v := randFr(rng, 1<<logN)
			want := append([]fr.Element(nil), v...)
			refNTT(want, kind)
			require.NoError(t, d.NTT(v, kind))
			requireFrEqual(t, want, v, fmt.Sprintf("NTT kind %d 2^%d", kind, logN))
		}
	}
}

func TestNTTRoundTripResident(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	for _, logN := range []int{5, 13, 19} {
		v := randFr(rng, 1<<logN)
		buf, err := d.UploadFr(v)
		require.NoError(t, err)
		require.NoError(t, d.NTTResident(buf, logN, CosetForward))
		mid := make([]fr.Element, len(v))
		require.NoError(t, d.DownloadFr(mid, buf))
		want := append([]fr.Element(nil), v...)
		refNTT(want, CosetForward)
		requireFrEqual(t, want, mid, "resident coset forward")
		require.NoError(t, d.NTTResident(buf, logN, CosetInverse))
		got := make([]fr.Element, len(v))
		require.NoError(t, d.DownloadFr(got, buf))
		requireFrEqual(t, v, got, "round trip")
		require.NoError(t, buf.Free())
	}
}

func TestComputeH(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	for logN := 1; logN <= 22; logN++ {
		n := 1 << logN
		a, b, c := randFr(rng, n), randFr(rng, n), randFr(rng, n)
		want := refHLiteral(append([]fr.Element(nil), a...), append([]fr.Element(nil), b...),
			append([]fr.Element(nil), c...))
		var lead []fr.Element
		if logN <= 16 {
			// also against the CPU prover's own H (package ntt)
			lead = append([]fr.Element(nil), a...)
			dom, err := ntt.NewDomain(n)
			require.NoError(t, err)
			require.NoError(t, dom.ComputeH(lead, append([]fr.Element(nil), b...), append([]fr.Element(nil), c...)))
		}
		require.NoError(t, d.ComputeH(a, b, c))
		requireFrEqual(t, want, a, fmt.Sprintf("H 2^%d", logN))
		if lead != nil {
			requireFrEqual(t, lead, a, fmt.Sprintf("H 2^%d vs package ntt", logN))
		}
	}
}

func TestComputeHSatisfiedSystem(t *testing.T) {
	// When a·b = c on the domain, A·B − C vanishes there and h has degree
	// < n − 1: its top coefficient is zero (bellperson's h[n−1]).
	d := testDevice(t)
	rng := testRand(t)
	n := 1 << 12
	a, b := randFr(rng, n), randFr(rng, n)
	c := make([]fr.Element, n)
	for i := range c {
		c[i].Mul(&a[i], &b[i])
	}
	require.NoError(t, d.ComputeH(a, b, c))
	require.True(t, a[n-1].IsZero(), "h[n-1] = %s", a[n-1].String())
	nonzero := 0
	for i := 0; i < n-1; i++ {
		if !a[i].IsZero() {
			nonzero++
		}
	}
	require.Greater(t, nonzero, n/2)
}
