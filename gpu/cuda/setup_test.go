package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/msm"
)

// fixedBaseScalars returns n scalars: 0, 1, 2, r−1, r−2, (r−1)/2 and
// (r+1)/2 first, then uniform ones below r (all bits in use) mixed with
// small ones.
func fixedBaseScalars(rng *rand.Rand, n int) []fr.Element {
	v := make([]fr.Element, n)
	var one, two, half fr.Element
	one.SetOne()
	two.SetUint64(2)
	half.Inverse(&two) // (r+1)/2
	special := []fr.Element{{}, one, two}
	var x fr.Element
	special = append(special, *x.Neg(&one), *x.Neg(&two), *x.Sub(&half, &one), half)
	copy(v, special)
	for i := len(special); i < n; i++ {
		if i%5 == 0 {
			v[i].SetUint64(rng.Uint64N(1 << 20))
			continue
		}
		var b [48]byte
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		v[i].SetBytes(b[:])
	}
	return v
}

// The device's fixed-base products equal gnark-crypto's (msm.FixedBase*),
// written at an offset into a larger buffer, for several window counts, with
// host scalars in one or many chunks and with device scalars.
func TestFixedBaseMatchesCPU(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	_, _, g1, g2 := bls12381.Generators()
	const n, off = 5000, 7
	sc := fixedBaseScalars(rng, n)
	want1 := msm.NewFixedBaseG1(&g1, 8).Mul(sc)
	want2 := msm.NewFixedBaseG2(&g2, 8).Mul(sc)
	scBuf, err := d.uploadFr(sc)
	require.NoError(t, err)
	defer scBuf.Free()

	for _, tc := range []struct {
		group, windows, chunkLog int
		resident                 bool
	}{
		{1, DefaultFixedBaseWindows, 0, false}, {1, DefaultFixedBaseWindows, 10, false},
		{1, DefaultFixedBaseWindows, 11, true}, {1, 13, 0, false}, {1, 64, 0, true},
		{2, DefaultFixedBaseWindows, 0, false}, {2, DefaultFixedBaseWindows, 10, true}, {2, 32, 9, false},
	} {
		t.Run(fmt.Sprintf("G%d/W=%d/chunk=%d/resident=%v", tc.group, tc.windows, tc.chunkLog, tc.resident), func(t *testing.T) {
			fixedBaseChunkLog = tc.chunkLog
			defer func() { fixedBaseChunkLog = 0 }()
			var tab *FixedBase
			var err error
			if tc.group == 1 {
				tab, err = d.NewFixedBaseG1(&g1, tc.windows)
			} else {
				tab, err = d.NewFixedBaseG2(&g2, tc.windows)
			}
			require.NoError(t, err)
			defer tab.Free()
			require.Equal(t, FixedBaseTableBytes(tc.group, tc.windows), tab.bytes())
			point := uint64(g1Bytes)
			if tc.group == 2 {
				point = g2Bytes
			}
			dst, err := d.Alloc((n + off + 2) * point)
			require.NoError(t, err)
			defer dst.Free()
			if tc.resident {
				require.NoError(t, tab.mulResident(dst, off, scBuf, n))
			} else {
				require.NoError(t, tab.Mul(dst, off, sc))
			}
			if tc.group == 1 {
				got := make([]bls12381.G1Affine, n+off)
				require.NoError(t, CopyFrom(got, dst, 0))
				for i := range n {
					require.Equal(t, want1[i], got[off+i], "scalar %d = %s", i, sc[i].String())
				}
			} else {
				got := make([]bls12381.G2Affine, n+off)
				require.NoError(t, CopyFrom(got, dst, 0))
				for i := range n {
					require.Equal(t, want2[i], got[off+i], "scalar %d = %s", i, sc[i].String())
				}
			}
		})
	}
}

// Bad arguments are refused before any work.
func TestFixedBaseArguments(t *testing.T) {
	d := testDevice(t)
	_, _, g1, _ := bls12381.Generators()
	_, err := d.NewFixedBaseG1(&g1, 10)
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = d.NewFixedBaseG1(&bls12381.G1Affine{}, 16)
	require.ErrorIs(t, err, ErrInvalidArgument)
	tab, err := d.NewFixedBaseG1(&g1, 16)
	require.NoError(t, err)
	defer tab.Free()
	dst, err := d.Alloc(4 * g1Bytes)
	require.NoError(t, err)
	defer dst.Free()
	require.ErrorIs(t, tab.Mul(dst, 1, make([]fr.Element, 4)), ErrInvalidArgument)
	require.NoError(t, tab.Mul(dst, 4, nil))
}

// BenchmarkFixedBase: points per second of the device's fixed-base
// products (host scalars), G1 and G2.
func BenchmarkFixedBase(b *testing.B) {
	d := testDevice(b)
	rng := rand.New(rand.NewPCG(1, 2))
	_, _, g1, g2 := bls12381.Generators()
	for _, group := range []int{1, 2} {
		for _, logN := range []int{20, 24} {
			b.Run(fmt.Sprintf("G%d/2^%d", group, logN), func(b *testing.B) {
				n := 1 << logN
				sc := randFr(rng, n)
				var tab *FixedBase
				var err error
				point := uint64(g1Bytes)
				if group == 1 {
					tab, err = d.NewFixedBaseG1(&g1, DefaultFixedBaseWindows)
				} else {
					tab, err = d.NewFixedBaseG2(&g2, DefaultFixedBaseWindows)
					point = g2Bytes
				}
				require.NoError(b, err)
				defer tab.Free()
				dst, err := d.Alloc(uint64(n) * point)
				require.NoError(b, err)
				defer dst.Free()
				b.ResetTimer()
				for range b.N {
					require.NoError(b, tab.Mul(dst, 0, sc))
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoints/s")
			})
		}
	}
}
