package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/c1gen"
	"github.com/sealc2/c2/porep/inputs"
)

// TestC1genWritesValidC1 runs the command for 2 KiB and 8 MiB and checks
// the files as C2 reads them: the proof type the flags ask for, every
// partition verified, the circuit of the first satisfied with the derived
// public inputs, and the bytes of the library with the same seed.
func TestC1genWritesValidC1(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		proof inputs.Proof
	}{
		{[]string{"--sector-size", "2KiB"}, inputs.StackedDrg2KiBV1},
		{[]string{"--sector-size", "8MiB", "--v1_1"}, inputs.StackedDrg8MiBV1_1},
		{[]string{"--proof", "StackedDrg2KiBV1_1"}, inputs.StackedDrg2KiBV1_1},
	} {
		out := filepath.Join(dir, tc.proof.String()+".json")
		check := "--check"
		if !testing.Short() && tc.proof == inputs.StackedDrg2KiBV1 {
			check = "--check-circuit" // every partition's circuit, as the block below does for the first
		}
		require.NoError(t, run(t, "c1gen", append(tc.args, "--seed", "c0ffee", check, "--out", out)...))
		raw, err := os.ReadFile(out)
		require.NoError(t, err)
		c1, err := porep.DecodeC1(raw)
		require.NoError(t, err)
		require.Equal(t, tc.proof.String(), c1.RegisteredProof)
		shape, parts, err := porep.Partitions(c1)
		require.NoError(t, err)
		for k, p := range parts {
			require.NoError(t, shape.Verify(p, k))
		}
		if !testing.Short() {
			in, err := c1gen.CheckCircuit(shape, parts[0])
			require.NoError(t, err)
			is, err := tc.proof.Shape()
			require.NoError(t, err)
			want, err := inputs.Partition(is, c1.ReplicaID, c1.CommD, c1.CommR, c1.Seed, tc.proof.PoRepID(), 0)
			require.NoError(t, err)
			require.Equal(t, want, in[1:])
		}

		sec, err := c1gen.Generate(tc.proof, [32]byte{0xc0, 0xff, 0xee}, nil)
		require.NoError(t, err)
		lib, err := sec.JSON()
		require.NoError(t, err)
		require.True(t, bytes.Equal(lib, raw), "%s: the command's bytes differ from the library's", tc.proof)
	}
	left, err := filepath.Glob(filepath.Join(dir, ".*"))
	require.NoError(t, err)
	require.Empty(t, left, "temporary files left behind")
}

// TestC1genCommit2InAndSectorID checks the wrapped output and --sector-id.
func TestC1genCommit2InAndSectorID(t *testing.T) {
	dir := t.TempDir()
	plain, wrapped := filepath.Join(dir, "c1.json"), filepath.Join(dir, "c2in.json")
	args := []string{"--sector-size", "2KiB", "--v1_1", "--sector-id", "77"}
	require.NoError(t, run(t, "c1gen", append(args, "--out", plain)...))
	require.NoError(t, run(t, "c1gen", append(args, "--commit2in", "--out", wrapped)...))
	a, err := os.ReadFile(plain)
	require.NoError(t, err)
	b, err := os.ReadFile(wrapped)
	require.NoError(t, err)
	require.Contains(t, string(b), `"SectorNum":77,`)
	require.Contains(t, string(b), `"SectorSize":2048}`)
	ca, err := porep.DecodeC1(a)
	require.NoError(t, err)
	cb, err := porep.DecodeC1(b)
	require.NoError(t, err)
	require.Equal(t, ca, cb)

	sid := uint64(77)
	sec, err := c1gen.Generate(inputs.StackedDrg2KiBV1_1, [32]byte{}, &c1gen.Options{SectorID: &sid})
	require.NoError(t, err)
	require.Equal(t, sec.C1, ca, "--sector-id is the library's SectorID option")
}

// TestC1genRefusesBadFlags checks the errors, and that a bad destination
// is refused before any work, leaving nothing behind.
func TestC1genRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c1.json")
	for _, args := range [][]string{
		{"--out", out},                          // no size
		{"--sector-size", "3KiB", "--out", out}, // no such shape
		{"--sector-size", "2KiB", "--proof", "StackedDrg2KiBV1", "--out", out},
		{"--proof", "StackedDrg512MiBV1_1_Feat_SyntheticPoRep", "--out", out}, // too large to label whole
		{"--proof", "StackedDrg3KiBV1", "--out", out},
		{"--sector-size", "2KiB", "--seed", "xyz", "--out", out},
		{"--sector-size", "2KiB", "--seed", "abc", "--out", out}, // odd digit count
		{"--sector-size", "2KiB", "--seed", string(bytes.Repeat([]byte("00"), 33)), "--out", out},
		{"--sector-size", "2KiB", "--out", out, "stray"},
		{"--sector-size", "2KiB", "--out", filepath.Join(dir, "missing", "c1.json")},
		{"--sector-size", "2KiB", "--out", dir}, // a directory
	} {
		require.Error(t, run(t, "c1gen", args...), "%q", args)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}
