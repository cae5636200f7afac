package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/devparams"
)

// c2 bench -sector-size without parameters for the shape names what to do,
// before generating or proving anything; flags that cannot go together are
// refused.
func TestBenchSectorNeedsParams(t *testing.T) {
	empty := t.TempDir()
	err := runBench([]string{"-sector-size", "2KiB", "-params", empty, "-devices", "cpu"})
	require.ErrorContains(t, err, "c2 setup --sector-size 2KiB")
	require.Error(t, runBench([]string{"-sector-size", "2KiB", "-c1", "x.json"}))
	require.Error(t, runBench([]string{"-sector-size", "2KiB", "-proofs", "0"}))
	require.Error(t, runBench([]string{"-sector-size", "2KiB", "-memlimit", "-1"}))
	require.Error(t, runBench([]string{"-sector-size", "2KiB", "-host-memory", "-1"}))
	require.Error(t, runBench([]string{"-sector-size", "3KiB", "-params", empty}))
	require.Error(t, runBench([]string{"-sector-size", "2KiB", "stray"}))
}

// c2 bench -sector-size proves synthetic C1 outputs end to end on the CPU
// with the shared 2 KiB development parameters (each proof verified by
// Prove). It proves two 2 KiB sectors (~1 CPU-minute beyond what the root
// package's TestProveC1 already covers), so it runs when
// C2_TEST_BENCH_SECTOR=1.
func TestBenchSector2KiB(t *testing.T) {
	if os.Getenv("C2_TEST_BENCH_SECTOR") != "1" {
		t.Skip("set C2_TEST_BENCH_SECTOR=1 to prove two 2 KiB sectors through c2 bench")
	}
	dir, err := devparams.Dir()
	require.NoError(t, err)
	stdout := os.Stdout
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer devnull.Close()
	os.Stdout = devnull
	defer func() { os.Stdout = stdout }()
	require.NoError(t, runBench([]string{"-sector-size", "2KiB", "-v1_1", "-params", dir, "-devices", "cpu", "-proofs", "1", "-json"}))
}

// c2 bench -c1 reads its input as prove does (porep.ReadC1): a directory
// is refused as not a regular file, naming it.
func TestBenchC1RefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	err := runBench([]string{"-c1", dir, "-params", t.TempDir(), "-devices", "cpu"})
	require.ErrorContains(t, err, "not a regular file")
	require.ErrorContains(t, err, dir)
}
