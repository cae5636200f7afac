package groth16

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// tinyShape is the key shape of the fuzz seeds (testdata/fuzz/...).
var tinyShape = keyShape{ic: 2, h: 3, l: 2, a: 2, b: 1}

// checkDecodeError asserts what every decoding error must satisfy: a
// *FormatError naming a known section, an offset inside the input and one
// of the package's sentinel errors.
func checkDecodeError(t *testing.T, err error, n int) {
	t.Helper()
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	require.Contains(t, []string{"vk", "h", "l", "a", "b_g1", "b_g2", "trailer"}, fe.Section)
	require.GreaterOrEqual(t, fe.Offset, int64(0))
	require.LessOrEqual(t, fe.Offset, int64(n))
	known := slices.ContainsFunc([]error{ErrTruncated, ErrTrailingData, ErrInvalidEncoding, ErrNotOnCurve, ErrNotInSubgroup},
		func(e error) bool { return errors.Is(err, e) })
	require.True(t, known, "unexpected error %v", err)
}

// FuzzDecodeParams: decoding never panics, fails only with a well-formed
// FormatError, accepts in checked mode only what it accepts in trusted
// mode, and anything accepted is written back byte-identical (the
// encoding is canonical).
func FuzzDecodeParams(f *testing.F) {
	f.Add(encodeParams(f, randomKey(20, tinyShape, true)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			t.Skip()
		}
		trusted, errT := DecodeParams(b, TrustedFile())
		checked, errC := DecodeParams(b)
		if errT != nil {
			checkDecodeError(t, errT, len(b))
			require.Error(t, errC)
			return
		}
		require.Equal(t, b, encodeParams(t, trusted))
		if errC != nil {
			require.ErrorIs(t, errC, ErrNotInSubgroup)
			checkDecodeError(t, errC, len(b))
			return
		}
		require.Equal(t, trusted, checked)
	})
}

// FuzzDecodeVerifyingKey: decoding never panics, fails only with a
// well-formed FormatError, and anything accepted is written back
// byte-identical.
func FuzzDecodeVerifyingKey(f *testing.F) {
	vk := randomKey(21, tinyShape, false).VK
	f.Add(encodeVK(f, &vk))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			t.Skip()
		}
		vk, err := DecodeVerifyingKey(b)
		if err != nil {
			checkDecodeError(t, err, len(b))
			return
		}
		require.Equal(t, b, encodeVK(t, vk))
	})
}

// FuzzReadProofs: decoding a proof concatenation never panics, fails only
// with a *ProofError whose offset lies inside the input, and what it
// accepts re-encodes to the same bytes (the encoding is canonical).
func FuzzReadProofs(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzReadProofs (bellperson's interop proofs,
	// truncations and flag flips) plus these.
	f.Add([]byte{})
	f.Add(make([]byte, ProofSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := ReadProofs(b)
		if err != nil {
			var pe *ProofError
			require.ErrorAs(t, err, &pe)
			require.GreaterOrEqual(t, pe.Offset, 0)
			require.LessOrEqual(t, pe.Offset, len(b))
			return
		}
		require.Equal(t, b, MarshalProofs(ps))
	})
}
