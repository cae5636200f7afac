package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	c2 "github.com/sealc2/c2"
	"github.com/sealc2/c2/internal/devparams"
)

// c2 bench -sector-size without parameters for the shape names what to do,
// before generating or proving anything; flags that cannot go together are
// refused.
func TestBenchSectorNeedsParams(t *testing.T) {
	empty := t.TempDir()
	err := run(t, "bench", "-sector-size", "2KiB", "-params", empty, "-devices", "cpu")
	require.ErrorContains(t, err, "c2 setup --sector-size 2KiB")
	require.Error(t, run(t, "bench", "-sector-size", "2KiB", "-c1", "x.json"))
	require.Error(t, run(t, "bench", "-sector-size", "2KiB", "-proofs", "0"))
	require.Error(t, run(t, "bench", "-sector-size", "2KiB", "-memlimit", "-1"))
	require.Error(t, run(t, "bench", "-sector-size", "2KiB", "-host-memory", "-1"))
	require.Error(t, run(t, "bench", "-sector-size", "3KiB", "-params", empty))
	require.Error(t, run(t, "bench", "-sector-size", "2KiB", "stray"))
}

// c2 bench -sector-size proves synthetic C1 outputs end to end on the CPU
// with the shared 2 KiB development parameters (each proof verified by
// Prove). It proves two 2 KiB sectors (~1 CPU-minute beyond what the root
// package's TestProveC1 already covers), so it runs when
// C2_TEST_BENCH_SECTOR=1. The two are timed in flight together
// (-concurrency 2).
func TestBenchSector2KiB(t *testing.T) {
	if os.Getenv("C2_TEST_BENCH_SECTOR") != "1" {
		t.Skip("set C2_TEST_BENCH_SECTOR=1 to prove two 2 KiB sectors through c2 bench")
	}
	dir, err := devparams.Dir()
	require.NoError(t, err)
	stdout := os.Stdout
	out, err := os.Create(filepath.Join(t.TempDir(), "bench.json"))
	require.NoError(t, err)
	defer out.Close()
	os.Stdout = out
	defer func() { os.Stdout = stdout }()
	require.NoError(t, run(t, "bench", "-sector-size", "2KiB", "-v1_1", "-params", dir, "-devices", "cpu",
		"-proofs", "2", "-concurrency", "2", "-json"))
	var res sectorResult
	_, err = out.Seek(0, io.SeekStart)
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(out).Decode(&res))
	require.Equal(t, "StackedDrg2KiBV1_1", res.Proof)
	require.Equal(t, 2, res.InFlight)
	require.Len(t, res.ProofSeconds, 2)
	for _, s := range res.ProofSeconds {
		require.Positive(t, s)
		require.LessOrEqual(t, s, res.TimedSeconds)
	}
	// Two proofs of synthesis, proving and verification use the CPU, and
	// no more of it than every core for the whole timed span.
	require.Positive(t, res.HostCPUSeconds)
	require.LessOrEqual(t, res.HostCPUSeconds, res.TimedSeconds*float64(runtime.NumCPU())*1.05)
	require.GreaterOrEqual(t, res.HostGCSeconds, 0.0)
	require.LessOrEqual(t, res.HostGCSeconds, res.HostCPUSeconds*1.05)
}

// c2 bench -c1 reads its input as prove does (porep.ReadC1): a directory
// is refused as not a regular file, naming it.
func TestBenchC1RefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	err := run(t, "bench", "-c1", dir, "-params", t.TempDir(), "-devices", "cpu")
	require.ErrorContains(t, err, "not a regular file")
	require.ErrorContains(t, err, dir)
}

// deviceDeltas reports the work between two snapshots: partitions, busy
// shares of the given wall and device ms by operation, all as differences.
func TestDeviceDeltas(t *testing.T) {
	before := c2.Stats{Devices: []c2.DeviceStats{{
		Name: "cuda:0", Partitions: 10, Busy: 2 * time.Second, DeviceBusy: time.Second,
		DeviceOps: map[string]time.Duration{"MSMG1": 500 * time.Millisecond, "NTT": time.Second},
	}}}
	after := c2.Stats{Devices: []c2.DeviceStats{{
		Name: "cuda:0", Partitions: 30, Busy: 11 * time.Second, DeviceBusy: 9 * time.Second,
		DeviceOps:     map[string]time.Duration{"MSMG1": 4500 * time.Millisecond, "NTT": time.Second},
		DeviceScratch: map[string]int64{"MSMG1": 3 << 20, "NTT": 0},
		PeakMemory:    1 << 30,
	}}}
	got := deviceDeltas(after, before, 10*time.Second)
	require.Len(t, got, 1)
	d := got[0]
	require.Equal(t, 20, d.Partitions)
	require.InDelta(t, 90.0, d.BusyPct, 1e-9)
	require.InDelta(t, 80.0, d.EventBusyPct, 1e-9)
	require.Equal(t, map[string]float64{"MSMG1": 4000}, d.OpsMS) // NTT did not run in between
	require.Equal(t, int64(1<<30), d.PeakMemory)
	require.Equal(t, map[string]float64{"MSMG1": 3}, d.ScratchMiB) // the most since the device opened, in MiB

	// Without a wall there are no shares.
	d = deviceDeltas(after, before, 0)[0]
	require.Zero(t, d.BusyPct)
	require.Zero(t, d.EventBusyPct)
}
