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
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = WitnessContext(ctx, Shape2KiB, p, 0)
	require.ErrorIs(t, err, context.Canceled)

	ctx, cancel = context.WithCancel(context.Background())
	const after = 20 * time.Millisecond
	time.AfterFunc(after, cancel)
	t0 := time.Now()
	w, err := WitnessContext(ctx, Shape2KiB, p, 1)
	took := time.Since(t0)
	t.Logf("witness (1 worker) cancelled after %v: returned after %v (err %v)", after, took, err)
	if err == nil {
		require.NotNil(t, w) // finished before the cancellation
	} else {
		require.ErrorIs(t, err, context.Canceled)
	}
}
