package gpu

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
)

// smallChunks makes the CPU device's MSM and batch-addition chunks tiny
// for the test's duration.
func smallChunks(t *testing.T, msm, sum int) {
	om, os := msmChunk, sumChunk
	msmChunk, sumChunk = msm, sum
	t.Cleanup(func() { msmChunk, sumChunk = om, os })
}

// TestCPUDeviceChunked runs every stage against the references with chunks
// that split every vector of the test key at uneven places (the key's
// vectors hold 30 to 100 points).
func TestCPUDeviceChunked(t *testing.T) {
	smallChunks(t, 7, 64)
	d := NewCPU(CPUOptions{Threads: 2})
	defer d.Close()
	checkSlot(t, d)
}

// repeated returns n G1 points cycling through 256 random ones: an MSM
// costs the same as over distinct points, without computing n of them.
func repeated(rng *rand.Rand, n int) []bls.G1Affine {
	_, _, g1, _ := bls.Generators()
	pts := bls.BatchScalarMultiplicationG1(&g1, synth.RandScalars(rng, 256))
	out := make([]bls.G1Affine, n)
	for i := range out {
		out[i] = pts[i%len(pts)]
	}
	return out
}

// TestCPUCancel: a cancelled context stops each stage with the context's
// error (not a device error), and a cancel during a long MSM (or H's NTTs
// and MSM) returns within a small part of the whole.
func TestCPUCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 1 << 16
	pts := repeated(rng, n)
	pk := &groth16.ProvingKey{H: pts[:n-1], L: pts, A: pts[:64], BG1: pts[:64], BG2: make([]bls.G2Affine, 64)}
	d := NewCPU(CPUOptions{Threads: 2})
	defer d.Close()
	bg := context.Background()
	slot, release := openSlot(t, bg, d, pk)
	defer release()

	done, cancel := context.WithCancel(bg)
	cancel()
	sc := synth.RandScalars(rng, n)
	ones := onesOf(n, rng)
	stages := map[string]func(ctx context.Context) error{
		"H": func(ctx context.Context) error {
			_, err := slot.ComputeH(ctx, synth.RandScalars(rng, n), synth.RandScalars(rng, n), synth.RandScalars(rng, n))
			return err
		},
		"batch G1": func(ctx context.Context) error { _, err := slot.BatchAddG1(ctx, SectionL, ones); return err },
		"batch G2": func(ctx context.Context) error { _, err := slot.BatchAddG2(ctx, ones[:1]); return err },
		"tail G1":  func(ctx context.Context) error { _, err := slot.TailG1(ctx, SectionL, nil, sc); return err },
		"tail G2":  func(ctx context.Context) error { _, err := slot.TailG2(ctx, nil, sc[:64]); return err },
	}
	for name, f := range stages {
		err := f(done)
		require.ErrorIs(t, err, context.Canceled, name)
		var de *Error
		require.NotErrorAs(t, err, &de, name)
	}

	// The whole MSM, then cancelled a quarter of the way through.
	t0 := time.Now()
	_, err := slot.TailG1(bg, SectionL, nil, sc)
	require.NoError(t, err)
	full := time.Since(t0)
	for _, name := range []string{"tail G1", "H"} {
		ctx, cancel := context.WithCancel(bg)
		timer := time.AfterFunc(full/4, cancel)
		t0 := time.Now()
		err := stages[name](ctx)
		total := time.Since(t0)
		timer.Stop()
		cancel()
		require.ErrorIs(t, err, context.Canceled, name)
		late := total - full/4
		t.Logf("%s: full MSM %v, cancelled after %v, returned %v later", name, full, full/4, late)
		// Generous: the MSM checks every 2^14 points of a window, 1/64 of
		// its work on 2 goroutines.
		assert.Less(t, late, full/4, name)
	}
}
