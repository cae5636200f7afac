package groth16

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sealc2/c2/internal/fuzzpatch"

	"github.com/stretchr/testify/require"
)

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

// The key fuzzers mutate a valid key through a short list of edits
// (applyPatch) instead of fuzzing the key's bytes: an input is a few bytes
// rather than the 1-2 KB of a key, so Go's minimizer, quadratic in the
// input's length, no longer takes the fuzzing time (FuzzDecodeParams ran
// 62 inputs in 30 s on 2 cores with whole keys as inputs). The bases are
// testdata/fuzz/{params,vk}-base.bin, keys with 2 IC points and 3 H, 2 L,
// 2 A and 1 B points.

// maxPatch bounds the edit list of one fuzz input.
var maxPatch = fuzzpatch.Binary.Max()

// applyPatch edits a key by a fuzz input's edit list (fuzzpatch.Binary).
func applyPatch(base, patch []byte) []byte { return fuzzpatch.Binary.Apply(base, patch) }

// fuzzBase reads a fuzz target's base key, testdata/fuzz/<name>-base.bin.
func fuzzBase(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", "fuzz", name+"-base.bin"))
	require.NoError(t, err)
	return b
}

// FuzzDecodeParams: decoding a patched valid .params never panics, fails
// only with a well-formed FormatError, and anything accepted is written
// back byte-identical (the encoding is canonical). The fuzzer decodes
// without subgroup checks (a millisecond per input); TestParamsCorruptPoints
// and TestParamsSubgroupLocated cover them, and TestDecodeParamsSeeds runs
// the seeds through the checked decode too.
func FuzzDecodeParams(f *testing.F) {
	fuzzRoundTrip(f, "params", func(b []byte) (*ProvingKey, error) {
		return decodeParams(b, readConfig{trusted: true, noSubgroups: true})
	})
}

// fuzzRoundTrip fuzzes decode on patches of the base key name: it never
// panics, fails only with a well-formed FormatError, and anything it
// accepts is written back byte-identical.
func fuzzRoundTrip[K io.WriterTo](f *testing.F, name string, decode func(b []byte) (K, error)) {
	base := fuzzBase(f, name)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, patch []byte) {
		if len(patch) > maxPatch {
			t.Skip()
		}
		b := applyPatch(base, patch)
		k, err := decode(b)
		if err != nil {
			checkDecodeError(t, err, len(b))
			return
		}
		require.Equal(t, b, encode(t, k))
	})
}

// TestDecodeParamsSeeds runs the fuzz seeds through the checked and
// trusted decoders: checked accepts only what trusted accepts, and they
// differ only by subgroup errors. The unpatched base decodes.
func TestDecodeParamsSeeds(t *testing.T) {
	base := fuzzBase(t, "params")
	_, err := decodeParamsOpts(base)
	require.NoError(t, err)
	for _, patch := range fuzzSeeds(t, "FuzzDecodeParams") {
		b := applyPatch(base, patch)
		trusted, errT := decodeParamsOpts(b, TrustedFile())
		checked, errC := decodeParamsOpts(b)
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

// FuzzDecodeVerifyingKey: decoding a patched valid .vk never panics, fails
// only with a well-formed FormatError, and anything accepted is written
// back byte-identical. Subgroup checks are skipped as in FuzzDecodeParams.
func FuzzDecodeVerifyingKey(f *testing.F) {
	fuzzRoundTrip(f, "vk", func(b []byte) (*VerifyingKey, error) {
		return decodeVKConfig(b, readConfig{noSubgroups: true})
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

// decodeParamsOpts decodes a whole .params file held in b, as ReadParams
// reads one with opts.
func decodeParamsOpts(b []byte, opts ...ReadOption) (*ProvingKey, error) {
	return decodeParams(b, configure(opts))
}
