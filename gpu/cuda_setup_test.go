package gpu

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu/cuda"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

func setupCUDA(t *testing.T) *CUDA {
	t.Helper()
	devs, err := OpenCUDA([]int{0}, 1<<30, 0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	t.Cleanup(func() { require.NoError(t, devs[0].Close()) })
	return devs[0].(*CUDA)
}

// firstDiff returns the first index where a and b differ, or -1.
func firstDiff[P comparable](a, b []P) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// On a GPU: a key made on the device equals groth16.SetupWithWaste's for
// the same toxic waste, base for base and in its verifying key, holds the
// shape's R1CS, and proves a partition through the slot API (witness pass,
// tail MSMs on every section) into a proof that verifies. Skipped without
// libc2cuda or a GPU.
func TestCUDASetupMatchesCPU(t *testing.T) {
	c := setupCUDA(t)
	sys, inputs := synthSystem(t, 16, 16)
	tw, err := groth16.NewToxicWaste(rand.NewChaCha8([32]byte{7}))
	require.NoError(t, err)
	want, err := groth16.SetupWithWaste(sys, tw)
	require.NoError(t, err)

	ctx := context.Background()
	used := c.budget.Used()
	key, err := c.SetupKey(ctx, sys, tw)
	require.NoError(t, err)
	k := key.(*cudaKey)
	pk := key.ProvingKey()
	require.False(t, pk.HostBases())
	require.True(t, k.resident)
	require.Equal(t, want.VK, pk.VK)
	require.Equal(t, want.Sizes(), pk.Sizes())
	require.True(t, key.(ShapeKey).Records(sys), "the R1CS is resident")
	require.Equal(t, keyBytes(pk), k.res.Bytes())

	requireBases(t, c, k, want)

	// One partition through the slot API.
	s, err := c.Acquire(ctx, key)
	require.NoError(t, err)
	var sums groth16.Sums
	sums.H, err = s.(WitnessSlot).ComputeHWitness(ctx, newWitness(sys))
	require.NoError(t, err)
	pick := func(vals []fr.Element, d *r1cs.Density) []fr.Element {
		var out []fr.Element
		for i := range vals {
			if d == nil || d.Get(i) {
				out = append(out, vals[i])
			}
		}
		return out
	}
	aSc := append(pick(sys.Inputs(), nil), pick(sys.Aux(), sys.ADensity())...)
	bSc := append(pick(sys.Inputs(), sys.BInputDensity()), pick(sys.Aux(), sys.BAuxDensity())...)
	sums.L, err = s.TailG1(ctx, SectionL, nil, sys.Aux())
	require.NoError(t, err)
	sums.A, err = s.TailG1(ctx, SectionA, nil, aSc)
	require.NoError(t, err)
	sums.BG1, err = s.TailG1(ctx, SectionBG1, nil, bSc)
	require.NoError(t, err)
	sums.BG2, err = s.TailG2(ctx, nil, bSc)
	require.NoError(t, err)
	s.Release()
	var r, sr fr.Element
	r.SetUint64(11)
	sr.SetUint64(13)
	proof := groth16.Assemble(&pk.VK, &sums, r, sr)
	require.NoError(t, groth16.Verify(&pk.VK, &proof, inputs))
	cpuProof, _, err := groth16.ProveWith(want, sys, r, sr)
	require.NoError(t, err)
	require.Equal(t, cpuProof.Bytes(), proof.Bytes())

	// The device key written as a .params file equals the CPU key's file.
	var wantFile, gotFile bytes.Buffer
	_, err = want.WriteTo(&wantFile)
	require.NoError(t, err)
	n, err := c.WriteKey(key, &gotFile)
	require.NoError(t, err)
	require.Equal(t, int64(gotFile.Len()), n)
	require.True(t, bytes.Equal(wantFile.Bytes(), gotFile.Bytes()), "the .params files differ")

	key.Release()
	require.Equal(t, used, c.budget.Used(), "the key's reservations are returned")

	// Streamed in chunks of 777 scalars (offsets inside every query, B's
	// G1 and G2 chunks alike), the key is the same.
	setupSlab = 777
	defer func() { setupSlab = 1 << 24 }()
	key, err = c.SetupKey(ctx, sys, tw)
	require.NoError(t, err)
	require.Equal(t, want.VK, key.ProvingKey().VK)
	requireBases(t, c, key.(*cudaKey), want)
	key.Release()
	require.Equal(t, used, c.budget.Used())
}

// requireBases fails t unless the resident key k's bases equal want's.
func requireBases(t *testing.T, c *CUDA, k *cudaKey, want *groth16.ProvingKey) {
	t.Helper()
	for _, q := range []struct {
		name string
		buf  *cuda.Buffer
		want []bls.G1Affine
	}{{"H", k.h, want.H}, {"L", k.l, want.L}, {"A", k.a, want.A}, {"B_G1", k.bg1, want.BG1}} {
		got := make([]bls.G1Affine, len(q.want))
		require.NoError(t, cuda.CopyFrom(got, q.buf, 0))
		require.Equal(t, -1, firstDiff(q.want, got), "%s differs", q.name)
	}
	got2 := make([]bls.G2Affine, len(want.BG2))
	require.NoError(t, cuda.CopyFrom(got2, k.bg2, 0))
	require.Equal(t, -1, firstDiff(want.BG2, got2), "B_G2 differs")
}

// On a GPU: SetupKey refuses a key that cannot stay resident, and a
// context that has ended, holding nothing afterwards.
func TestCUDASetupRefuses(t *testing.T) {
	c := setupCUDA(t)
	sys, _ := synthSystem(t, 10, 10)
	tw, err := groth16.NewToxicWaste(rand.NewChaCha8([32]byte{1}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.SetupKey(ctx, sys, tw)
	require.ErrorIs(t, err, context.Canceled)

	small := c.withBudget(1 << 20)
	_, err = small.SetupKey(context.Background(), sys, tw)
	require.ErrorIs(t, err, ErrOutOfMemory)
	require.Zero(t, small.budget.Used())
	require.Zero(t, c.budget.Used())
}

// TestCUDASetupTimed (C2_SETUP_LOG=k, e.g. 27) times SetupKey on a
// synthetic PoRep-shaped circuit of 2^k constraints and logs its stages and
// the process's peak RSS. Skipped unless C2_SETUP_LOG is set.
func TestCUDASetupTimed(t *testing.T) {
	v := os.Getenv("C2_SETUP_LOG")
	if v == "" {
		t.Skip("C2_SETUP_LOG not set")
	}
	logSize, err := strconv.Atoi(v)
	require.NoError(t, err)
	c := setupCUDA(t)
	t0 := time.Now()
	sys, _ := synthSystem(t, logSize, uint64(logSize))
	t.Logf("2^%d: synthesis %.1f s (%v)", logSize, time.Since(t0).Seconds(), sys.Counts())
	tw, err := groth16.NewToxicWaste(rand.NewChaCha8([32]byte{27}))
	require.NoError(t, err)
	_ = pool.ResetPeakRSS()
	rss0, _ := pool.PeakRSS()
	t0 = time.Now()
	k, tm, err := c.setupKey(context.Background(), sys, tw)
	require.NoError(t, err)
	total := time.Since(t0)
	defer k.Release()
	rss, _ := pool.PeakRSS()
	z := k.pk.Sizes()
	g1 := z.H + z.L + z.A + z.BG1
	t.Logf("SetupKey 2^%d: total %.2f s: scalars %.2f s, vk %.2f s, G1 %.2f s (%d points, %.0f M/s), "+
		"G2 %.2f s (%d points, %.0f M/s), R1CS %.2f s; key %.2f GiB; peak RSS %.2f GiB (%.2f GiB before)",
		logSize, total.Seconds(), tm.Scalars.Seconds(), tm.VK.Seconds(), tm.G1.Seconds(), g1,
		float64(g1)/tm.G1.Seconds()/1e6, tm.G2.Seconds(), z.BG2, float64(z.BG2)/tm.G2.Seconds()/1e6,
		tm.Shape.Seconds(), float64(keyBytes(k.pk))/(1<<30), float64(rss)/(1<<30), float64(rss0)/(1<<30))
	for op, d := range c.d.Timings().Ops {
		t.Logf("  device %s: %d calls, %v", op, d.Calls, d.Time)
	}
}

// WriteKey writes a key with host bases through WriteTo.
func TestWriteKeyParamsHostKey(t *testing.T) {
	var tau fr.Element
	tau.SetUint64(5)
	pk := testKey(t, rand.New(rand.NewPCG(1, 2)), 16, 5, 6, 7, tau)
	cpu := NewCPU(CPUOptions{Threads: 1})
	defer cpu.Close()
	key, err := cpu.LoadKey(context.Background(), pk)
	require.NoError(t, err)
	defer key.Release()
	var want, got bytes.Buffer
	_, err = pk.WriteTo(&want)
	require.NoError(t, err)
	_, err = (&CUDA{}).WriteKey(key, &got)
	require.NoError(t, err)
	require.Equal(t, want.Bytes(), got.Bytes())
}
