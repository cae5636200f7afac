package groth16

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
// FormatError, and anything accepted is written back byte-identical (the
// encoding is canonical). The fuzzer decodes without subgroup checks (a
// millisecond per input, which kept it minimizing instead of fuzzing);
// TestParamsCorruptPoints and TestParamsSubgroupLocated cover them, and
// the seeds run the checked decode too.
func FuzzDecodeParams(f *testing.F) {
	f.Add(encodeParams(f, randomKey(20, tinyShape, true)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			t.Skip()
		}
		pk, err := decodeParams(b, readConfig{trusted: true, noSubgroups: true})
		if err != nil {
			checkDecodeError(t, err, len(b))
			return
		}
		require.Equal(t, b, encodeParams(t, pk))
	})
}

// TestDecodeParamsSeeds runs the fuzz seeds through the checked and
// trusted decoders: checked accepts only what trusted accepts, and they
// differ only by subgroup errors.
func TestDecodeParamsSeeds(t *testing.T) {
	for _, b := range fuzzSeeds(t, "FuzzDecodeParams") {
		trusted, errT := DecodeParams(b, TrustedFile())
		checked, errC := DecodeParams(b)
		if errT != nil {
			checkDecodeError(t, errT, len(b))
			require.Error(t, errC)
			continue
		}
		if errC != nil {
			require.ErrorIs(t, errC, ErrNotInSubgroup)
			checkDecodeError(t, errC, len(b))
			continue
		}
		require.Equal(t, trusted, checked)
	}
}

// FuzzDecodeVerifyingKey: decoding never panics, fails only with a
// well-formed FormatError, and anything accepted is written back
// byte-identical. Subgroup checks are skipped as in FuzzDecodeParams.
func FuzzDecodeVerifyingKey(f *testing.F) {
	vk := randomKey(21, tinyShape, false).VK
	f.Add(encodeVK(f, &vk))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			t.Skip()
		}
		vk, err := decodeVKConfig(b, readConfig{noSubgroups: true})
		if err != nil {
			checkDecodeError(t, err, len(b))
			return
		}
		require.Equal(t, b, encodeVK(t, vk))
	})
}

// fuzzSeeds reads the []byte seeds of a fuzz target's corpus directory.
func fuzzSeeds(t *testing.T, target string) [][]byte {
	dir := filepath.Join("testdata", "fuzz", target)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out [][]byte
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		lines := strings.SplitN(string(raw), "\n", 3)
		require.GreaterOrEqual(t, len(lines), 2, e.Name())
		s, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "[]byte(")
		require.True(t, ok, e.Name())
		s = strings.TrimSuffix(s, ")")
		b, err := strconv.Unquote(s)
		require.NoError(t, err, e.Name())
		out = append(out, []byte(b))
	}
	return out
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
