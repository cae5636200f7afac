package cuda

import (
	"fmt"
	"math/big"
	"math/rand/v2"
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
func refNTT(v []fr.Element, kind nttKind) {
	n := uint64(len(v))
	dom := fft.NewDomain(n)
	switch kind {
	case nttForward:
		dom.FFT(v, fft.DIF)
		utils.BitReverse(v)
	case nttInverse:
		dom.FFTInverse(v, fft.DIF)
		utils.BitReverse(v)
	case nttCosetForward:
		scalePowers(v, dom.FrMultiplicativeGen)
		dom.FFT(v, fft.DIF)
		utils.BitReverse(v)
	case nttCosetInverse:
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
	refNTT(w, nttCosetForward)
	dom := fft.NewDomain(uint64(len(v)))
	dom.FFT(v, fft.DIF, fft.OnCoset())
	utils.BitReverse(v)
	requireFrEqual(t, w, v, "coset forward")
	dom.FFTInverse(v, fft.DIF, fft.OnCoset())
	utils.BitReverse(v)
	refNTT(w, nttCosetInverse)
	requireFrEqual(t, w, v, "coset inverse")
}

func TestNTT(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	kinds := []nttKind{nttForward, nttInverse, nttCosetForward, nttCosetInverse}
	for logN := 0; logN <= 22; logN++ {
		for _, kind := range kinds {
			v := randFr(rng, 1<<logN)
			want := append([]fr.Element(nil), v...)
			refNTT(want, kind)
			require.NoError(t, d.ntt(v, kind))
			requireFrEqual(t, want, v, fmt.Sprintf("NTT kind %d 2^%d", kind, logN))
		}
	}
}

// TestNTTNinePointPasses checks 2^25, the smallest size whose transform
// has a pass of 2^9-point columns (9 + 8 + 8 index bits): a column's 256
// threads then span eight warps, the most the thread roles of ntt_net.cuh
// draw on. Every kind and ComputeH, against gnark-crypto's FFTs.
func TestNTTNinePointPasses(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	const logN = 25
	for _, kind := range []nttKind{nttForward, nttInverse, nttCosetForward, nttCosetInverse} {
		v := randFr(rng, 1<<logN)
		want := cloneFr(v)
		refNTT(want, kind)
		require.NoError(t, d.ntt(v, kind))
		requireFrEqual(t, want, v, fmt.Sprintf("NTT kind %d 2^%d", kind, logN))
	}
	a, b, c := hInputs(rng, 1<<logN, true)
	want := refHLiteral(cloneFr(a), cloneFr(b), cloneFr(c))
	require.NoError(t, d.ComputeH(a, b, c))
	requireFrEqual(t, want, a, fmt.Sprintf("H 2^%d", logN))
}

func TestNTTRoundTripResident(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	for _, logN := range []int{5, 13, 19} {
		v := randFr(rng, 1<<logN)
		buf, err := d.uploadFr(v)
		require.NoError(t, err)
		require.NoError(t, d.nttResident(buf, logN, nttCosetForward))
		mid := make([]fr.Element, len(v))
		require.NoError(t, d.downloadFr(mid, buf))
		want := append([]fr.Element(nil), v...)
		refNTT(want, nttCosetForward)
		requireFrEqual(t, want, mid, "resident coset forward")
		require.NoError(t, d.nttResident(buf, logN, nttCosetInverse))
		got := make([]fr.Element, len(v))
		require.NoError(t, d.downloadFr(got, buf))
		requireFrEqual(t, v, got, "round trip")
		require.NoError(t, buf.Free())
	}
}

// hInputs returns random a, b and c of length n: unrelated, or with c = a·b
// (every constraint satisfied, as for a real witness).
func hInputs(rng *rand.Rand, n int, satisfied bool) (a, b, c []fr.Element) {
	a, b = randFr(rng, n), randFr(rng, n)
	if !satisfied {
		return a, b, randFr(rng, n)
	}
	c = make([]fr.Element, n)
	for i := range c {
		c[i].Mul(&a[i], &b[i])
	}
	return a, b, c
}

func cloneFr(v []fr.Element) []fr.Element { return append([]fr.Element(nil), v...) }

// TestComputeH checks both entry points, ComputeH (host vectors) and
// ComputeHResident (device buffers), on unsatisfied and satisfied inputs at
// every size up to 2^22, against the literal bellperson quotient and, up to
// 2^16, the CPU prover's own H (package ntt). At n = 1 ComputeH returns h
// empty (a[0] = 0) as package ntt does, while the library computes the coset
// formula, (a·b − c)/(g − 1).
func TestComputeH(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	for logN := 0; logN <= 22; logN++ {
		n := 1 << logN
		for _, satisfied := range []bool{false, true} {
			what := fmt.Sprintf("H 2^%d satisfied=%v", logN, satisfied)
			a, b, c := hInputs(rng, n, satisfied)
			want := refHLiteral(cloneFr(a), cloneFr(b), cloneFr(c))
			if satisfied && logN > 0 {
				require.True(t, want[n-1].IsZero(), "%s: reference h[n-1] = %s", what, want[n-1].String())
			}

			host, hb, hc := cloneFr(a), cloneFr(b), cloneFr(c)
			require.NoError(t, d.ComputeH(host, hb, hc))
			requireFrEqual(t, b, hb, what+": b after ComputeH")
			requireFrEqual(t, c, hc, what+": c after ComputeH")
			two, tb, tc := cloneFr(a), cloneFr(b), cloneFr(c)
			require.NoError(t, d.ComputeHTwoVectors(two, tb, tc))
			requireFrEqual(t, b, tb, what+": b after ComputeHTwoVectors")
			requireFrEqual(t, c, tc, what+": c after ComputeHTwoVectors")
			if logN == 0 {
				require.True(t, host[0].IsZero(), "%s: h = %s", what, host[0].String())
				require.True(t, two[0].IsZero(), "%s: h = %s in two vectors", what, two[0].String())
			} else {
				requireFrEqual(t, want, host, what)
				requireFrEqual(t, want, two, what+" in two vectors")
			}
			if logN <= 16 {
				lead := cloneFr(a)
				dom, err := ntt.NewDomain(n)
				require.NoError(t, err)
				require.NoError(t, dom.ComputeH(lead, cloneFr(b), cloneFr(c)))
				requireFrEqual(t, lead, host, what+" vs package ntt")
			}

			bufs := make([]*Buffer, 3)
			for i, v := range [][]fr.Element{a, b, c} {
				var err error
				bufs[i], err = d.uploadFr(v)
				require.NoError(t, err)
			}
			require.NoError(t, d.ComputeHResident(bufs[0], bufs[1], bufs[2], logN))
			got := make([]fr.Element, n)
			require.NoError(t, d.downloadFr(got, bufs[0]))
			requireFrEqual(t, want, got, what+" resident")
			for _, x := range bufs {
				require.NoError(t, x.Free())
			}
		}
	}
}

func TestComputeHSatisfiedSystem(t *testing.T) {
	// When a·b = c on the domain, A·B − C vanishes there and h has degree
	// < n − 1: its top coefficient is zero (bellperson's h[n−1]).
	d := testDevice(t)
	rng := testRand(t)
	n := 1 << 12
	a, b, c := hInputs(rng, n, true)
	lead := cloneFr(a)
	dom, err := ntt.NewDomain(n)
	require.NoError(t, err)
	require.NoError(t, dom.ComputeH(lead, cloneFr(b), cloneFr(c)))
	require.NoError(t, d.ComputeH(a, b, c))
	require.True(t, a[n-1].IsZero(), "h[n-1] = %s", a[n-1].String())
	nonzero := 0
	for i := 0; i < n-1; i++ {
		if !a[i].IsZero() {
			nonzero++
		}
	}
	require.Greater(t, nonzero, n/2)
	requireFrEqual(t, lead, a, "satisfied H vs package ntt")
}
