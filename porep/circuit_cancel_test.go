package porep

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// TestSynthesizeContext: recording a 2 KiB partition (2.7 M constraints,
// seconds) stops within milliseconds of a cancellation.
func TestSynthesizeContext(t *testing.T) {
	p, err := SyntheticPartition(Shape2KiB, 1)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	const after = 100 * time.Millisecond
	time.AfterFunc(after, cancel)
	t0 := time.Now()
	err = synthesizeContext(ctx, r1cs.NewSystem(), Shape2KiB, p)
	late := time.Since(t0) - after
	require.ErrorIs(t, err, context.Canceled)
	t.Logf("recording cancelled after %v: returned %v later", after, late)
	require.Less(t, late, time.Second)

	// Uncancelled, it records the same system as Synthesize.
	if testing.Short() {
		return
	}
	a, b := r1cs.NewCounter(), r1cs.NewCounter()
	require.NoError(t, Synthesize(a, Shape2KiB, p))
	require.NoError(t, synthesizeContext(context.Background(), b, Shape2KiB, p))
	require.Equal(t, a.Counts(), b.Counts())
}

// TestWitnessContext: no segment starts once the context is done.
func TestWitnessContext(t *testing.T) {
	p, err := SyntheticPartition(Shape2KiB, 2)
	require.NoError(t, err)
	cancelBefore(t, func(ctx context.Context) (*r1cs.Witness, error) {
		return WitnessContext(ctx, Shape2KiB, p, 0)
	})
	cancelDuring(t, "witness (1 worker)", 20*time.Millisecond, func(ctx context.Context) (*r1cs.Witness, error) {
		return WitnessContext(ctx, Shape2KiB, p, 1)
	})
}

// cancelBefore requires run to fail with context.Canceled when its context
// is done before it starts.
func cancelBefore[T any](t *testing.T, run func(context.Context) (*T, error)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := run(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// cancelDuring runs run with a context cancelled after the given delay and
// requires either a result (run finished before the cancellation) or
// context.Canceled; it returns how long run took and its error.
func cancelDuring[T any](t *testing.T, what string, after time.Duration, run func(context.Context) (*T, error)) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(after, cancel)
	t0 := time.Now()
	v, err := run(ctx)
	took := time.Since(t0)
	t.Logf("%s cancelled after %v: returned after %v (err %v)", what, after, took, err)
	if err == nil {
		require.NotNil(t, v) // finished before the cancellation
	} else {
		require.ErrorIs(t, err, context.Canceled)
	}
	return took, err
}

// synthesizeContext is Synthesize stopped by ctx: once ctx is done it
// returns ctx's error within 4096 constraints (a few milliseconds of
// recording), leaving b partly built. It drives b through its Builder
// methods only, so a witness-only builder loses its fast path: use
// [WitnessContext] for witnesses.
func synthesizeContext(ctx context.Context, b r1cs.Builder, s Shape, p *Partition) error {
	if err := s.Check(p, 0); err != nil {
		return err
	}
	return r1cs.BuildContext(ctx, b, func(b r1cs.Builder) error { return synthesize(b, s, p) })
}
