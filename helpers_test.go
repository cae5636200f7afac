package c2_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/devparams"
)

// requireTimes checks a successful timed call's stages: each positive
// (ParamsLoad, near zero once the circuit is cached, is not checked),
// parameters and proving within the call's wall time, synthesis and
// verification within the proving span.
func requireTimes(t *testing.T, tm c2.ProveTimes, wall time.Duration) {
	t.Helper()
	require.Positive(t, tm.Checks)
	require.Positive(t, tm.Synthesis)
	require.Positive(t, tm.Prove)
	require.Positive(t, tm.Verify)
	require.LessOrEqual(t, tm.Checks+tm.ParamsLoad+tm.Prove, wall, "checks, then parameters, then the partitions")
	require.LessOrEqual(t, tm.Synthesis+tm.Verify, tm.Prove, "synthesis and verification happen inside the proving span")
}

// linkedProver returns a CPU Prover (closed at the test's end) whose
// Config.Params is a fresh directory, with link, which puts a link to the
// parameter file src there, and unlink, which removes it.
func linkedProver(t *testing.T, src string) (p *c2.Prover, link, unlink func()) {
	t.Helper()
	src, err := filepath.Abs(src)
	require.NoError(t, err)
	params := t.TempDir()
	file := filepath.Join(params, filepath.Base(src))
	p = cpuProver(t, params)
	return p, func() { require.NoError(t, os.Symlink(src, file)) }, func() { require.NoError(t, os.Remove(file)) }
}

// devProver2KiB returns a CPU Prover (closed at the test's end) on the
// shared development parameters (internal/devparams: generated once, then
// cached) and the 2 KiB C1 output refgen recorded.
func devProver2KiB(t *testing.T) (p *c2.Prover, c1 []byte) {
	t.Helper()
	dir, err := devparams.Dir()
	require.NoError(t, err)
	c1, err = os.ReadFile(c1Path2KiB)
	require.NoError(t, err)
	return cpuProver(t, dir), c1
}

// cpuProver returns a CPU Prover (closed at the test's end) that reads
// parameters from params as trusted (Config.TrustParams).
func cpuProver(t *testing.T, params string) *c2.Prover {
	t.Helper()
	p, err := c2.New(c2.Config{Backend: c2.BackendCPU, Params: params, TrustParams: true})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// writeDummyKey writes to path a well-formed proving key for numInputs
// public inputs (ONE included) that proves nothing: its bases are
// multiples of the generators, hPoints of them in H (its checked read
// takes about a second at 2^17). The cancellation tests need only its read
// and its input count.
func writeDummyKey(t *testing.T, path string, numInputs, hPoints int) {
	g, _, _, _ := bls.Generators()
	jac := make([]bls.G1Jac, max(hPoints, numInputs, 1))
	acc := g
	for i := range jac {
		jac[i] = acc
		acc.AddAssign(&g)
	}
	pts := bls.BatchJacobianToAffineG1(jac)
	_, _, g1, g2 := bls.Generators()
	pk := &groth16.ProvingKey{VK: groth16.VerifyingKey{AlphaG1: g1, BetaG1: g1, BetaG2: g2, GammaG2: g2, DeltaG1: g1, DeltaG2: g2, IC: pts[:numInputs]},
		H: pts[:max(hPoints, 1)], L: pts[:1], A: pts[:1], BG1: pts[:1], BG2: []bls.G2Affine{g2}}
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = pk.WriteTo(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// cancelLoad runs load (a first call, which reads a key and records an
// R1CS) under a context cancelled after after (before the call when after
// is 0), requires context.Canceled, and returns how long after the
// cancellation load returned and the goroutines it started (the read, the
// recording) had ended, waiting for those at most 10 s.
func cancelLoad(t *testing.T, after time.Duration, load func(context.Context) error) (returned, stopped time.Duration) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if after == 0 {
		cancel()
	} else {
		time.AfterFunc(after, cancel)
	}
	t0 := time.Now()
	err := load(ctx)
	returned = time.Since(t0) - after
	require.ErrorIs(t, err, context.Canceled)
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return returned, time.Since(t0) - after
}
