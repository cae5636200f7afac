package c2_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/internal/devparams"
)

// requireTimes checks a successful timed call's stages: each positive
// (ParamsLoad, near zero once the circuit is cached, is not checked),
// parameters and proving within the call's wall time, synthesis and
// verification within the proving span.
func requireTimes(t *testing.T, tm c2.ProveTimes, wall time.Duration) {
	t.Helper()
	require.Positive(t, tm.Synthesis)
	require.Positive(t, tm.Prove)
	require.Positive(t, tm.Verify)
	require.LessOrEqual(t, tm.ParamsLoad+tm.Prove, wall)
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
	p, err = c2.New(c2.Config{Backend: c2.BackendCPU, Params: params, TrustParams: true})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
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
	p, err = c2.New(c2.Config{Backend: c2.BackendCPU, Params: dir, TrustParams: true})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p, c1
}
