package cuda

import (
	"fmt"
	"math/big"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"
)

// TestHighBasesG1 checks 2^k·P on the device against gnark-crypto for k = 0,
// 1, 3 and 128 (the split MSM's high bases), infinity included, into
// another buffer and in place.
func TestHighBasesG1(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	pts := testG1.random(rng, 257)
	pts[5] = bls12381.G1Affine{}
	src := testG1.uploadIf(t, d, pts, true)
	dst, err := d.Alloc(uint64(len(pts)) * g1Bytes)
	require.NoError(t, err)
	defer dst.Free()
	check := func(buf *Buffer, k int, what string) {
		t.Helper()
		got := make([]bls12381.G1Affine, len(pts))
		require.NoError(t, CopyFrom(got, buf, 0))
		e := new(big.Int).Lsh(big.NewInt(1), uint(k))
		for i := range pts {
			var want bls12381.G1Affine
			want.ScalarMultiplication(&pts[i], e)
			require.True(t, want.Equal(&got[i]), "%s: 2^%d·P[%d]", what, k, i)
		}
	}
	for _, k := range []int{0, 1, 3, splitShift} {
		require.NoError(t, g1.shift(d, "ShiftG1", dst, src, len(pts), k))
		check(dst, k, "into another buffer")
	}
	require.NoError(t, d.HighBasesG1(src, src, len(pts)))
	check(src, splitShift, "in place")
	require.ErrorIs(t, d.HighBasesG1(dst, src, len(pts)+1), ErrInvalidArgument)
}

// TestMSMSplitG1 checks the split MSM (each scalar's high half over
// 2^128-fold bases) against gnark-crypto's MSM: random scalars at several
// sizes with the library's own layout, then the edge scalars with forced
// window pairs (from 32 pairs of 4 bits to 6 of 22) in chunks of 2^10
// points, so that carries cross the halves and the high bases are read at
// every chunk's offset.
func TestMSMSplitG1(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	const maxN = 1 << 16
	bases := testG1.points(t, d, rng, maxN)
	lo := testG1.uploadIf(t, d, bases, true)
	hi, err := d.Alloc(maxN * g1Bytes)
	require.NoError(t, err)
	defer hi.Free()
	require.NoError(t, d.HighBasesG1(hi, lo, maxN))
	scd, err := d.Alloc(maxN * frBytes)
	require.NoError(t, err)
	defer scd.Free()
	for _, n := range []int{1, 2, 3, 100, 1000, 4097, maxN} {
		sc := randScalars(rng, n)
		got, err := d.msmG1Split(lo, hi, sc)
		require.NoError(t, err)
		want := testG1.ref(t, bases, sc)
		testG1.requireEqual(t, want, got, fmt.Sprintf("n=%d", n))
		// The same with the scalars on the device (the witness pass's H).
		require.NoError(t, CopyTo(scd, 0, sc))
		got, err = d.MSMG1SplitOnDevice(lo, hi, scd, n)
		require.NoError(t, err)
		testG1.requireEqual(t, want, got, fmt.Sprintf("n=%d, scalars on the device", n))
	}
	_, err = d.MSMG1SplitOnDevice(lo, hi, scd, maxN+1)
	require.ErrorIs(t, err, ErrInvalidArgument, "more scalars than the buffer holds")
	defer func() { msmWindow, msmChunkLog = 0, 0 }()
	for _, w := range []int{4, 11, 16, 22} {
		msmWindow, msmChunkLog = w, 10
		for name, sc := range edgeScalars(rng, 3000) {
			got, err := d.msmG1Split(lo, hi, sc)
			require.NoError(t, err)
			testG1.requireEqual(t, testG1.ref(t, bases, sc), got, fmt.Sprintf("window %d, %s", w, name))
		}
	}
	msmWindow, msmChunkLog = 0, 0
	short, err := d.Alloc(100 * g1Bytes)
	require.NoError(t, err)
	defer short.Free()
	_, err = d.msmG1Split(lo, short, randScalars(rng, 101))
	require.ErrorIs(t, err, ErrInvalidArgument)
}

// TestMSMSplitG2 checks the split MSM in G2 (the library serves both
// groups) at a few sizes and forced window pairs.
func TestMSMSplitG2(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	const maxN = 3000
	bases := testG2.points(t, d, rng, maxN)
	lo := testG2.uploadIf(t, d, bases, true)
	hi, err := d.Alloc(maxN * g2Bytes)
	require.NoError(t, err)
	defer hi.Free()
	require.NoError(t, g2.shift(d, "ShiftG2", hi, lo, maxN, splitShift))
	defer func() { msmWindow, msmChunkLog = 0, 0 }()
	for _, w := range []int{0, 9, 16} {
		msmWindow, msmChunkLog = w, 10
		for _, n := range []int{1, 777, maxN} {
			sc := randScalars(rng, n)
			got, err := g2.msmSplit(d, "MSMG2Split", lo, hi, hostPtr(sc), n)
			require.NoError(t, err)
			testG2.requireEqual(t, testG2.ref(t, bases, sc), got, fmt.Sprintf("window %d, n=%d", w, n))
		}
	}
}
