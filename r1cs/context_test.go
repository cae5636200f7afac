package r1cs

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/parallel"
)

// squares builds n square gadgets (two constraints each) into b, calling
// after(i) after the i-th.
func squares(b Builder, n int, after func(i int)) error {
	for i := 0; i < n; i++ {
		square(b, int64(i), 1)
		after(i)
	}
	return nil
}

// TestBuildContext: a build runs to its end and records what it records
// without the wrapper; one whose context ends stops within 4096
// constraints with the context's error; a done context stops it before it
// starts; build's own error and panics reach the caller as they are.
func TestBuildContext(t *testing.T) {
	nop := func(int) {}
	want := NewCounter()
	require.NoError(t, squares(want, 10000, nop))
	got := NewCounter()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, BuildContext(ctx, got, func(b Builder) error { return squares(b, 10000, nop) }))
	require.Equal(t, want.Counts(), got.Counts())
	// A context that is never done: build gets b itself.
	require.NoError(t, BuildContext(context.Background(), got, func(b Builder) error {
		require.Same(t, got, b)
		return nil
	}))

	// Cancelled after 1000 gadgets (2000 constraints): the build stops at
	// the 4096th constraint.
	sys := NewSystem()
	ctx, cancel = context.WithCancel(context.Background())
	err := BuildContext(ctx, sys, func(b Builder) error {
		return squares(b, 1_000_000, func(i int) {
			if i == 999 {
				cancel()
			}
		})
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, ctxCheckEvery-1, sys.NumConstraints(), "stopped at the check of the 4096th constraint")

	ran := false
	require.ErrorIs(t, BuildContext(ctx, sys, func(Builder) error { ran = true; return nil }), context.Canceled)
	require.False(t, ran, "a done context: build never runs")

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	boom := errors.New("boom")
	require.ErrorIs(t, BuildContext(ctx, NewCounter(), func(Builder) error { return boom }), boom)
	require.PanicsWithValue(t, "other", func() {
		_ = BuildContext(ctx, NewCounter(), func(Builder) error { panic("other") })
	})
}

// TestBuildContextNested: an inner BuildContext whose own context is live
// lets the outer one's stop through, and the outer call returns it.
func TestBuildContextNested(t *testing.T) {
	outer, cancel := context.WithCancel(context.Background())
	live, stop := context.WithCancel(context.Background())
	defer stop()
	returned := false
	err := BuildContext(outer, NewCounter(), func(b Builder) error {
		err := BuildContext(live, b, func(b Builder) error {
			return squares(b, 1_000_000, func(i int) {
				if i == 10 {
					cancel()
				}
			})
		})
		returned = true
		return err
	})
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, returned, "the outer stop unwound the inner call")
}

// TestGroup: a Group runs no more parts at once than its limit, takes more
// parts after Wait, returns a part's error, and runs no part whose turn
// comes after its context is done.
func TestGroup(t *testing.T) {
	var p parts
	g := NewGroup(context.Background(), 2)
	p.run(t, g, 10)
	require.Equal(t, 10, p.ran)
	require.LessOrEqual(t, p.most, 2)
	p.run(t, g, 1)
	require.Equal(t, 11, p.ran)

	boom := errors.New("boom")
	g = NewGroup(context.Background(), 0)
	g.Go(func() error { return boom })
	require.ErrorIs(t, g.Wait(), boom)

	ctx, cancel := context.WithCancel(context.Background())
	g = NewGroup(ctx, 1)
	cancel()
	g.Go(func() error { t.Error("a part ran after its context was done"); return nil })
	require.ErrorIs(t, g.Wait(), context.Canceled)
}

// A Group's parts share the process's room for loop goroutines
// (parallel.Reserve): beyond it the caller waits for its own parts, and
// every part still runs.
func TestGroupRoom(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	release := parallel.Reserve(5) // room for 3
	defer release()
	var p parts
	p.run(t, NewGroup(context.Background(), 8), 40)
	require.Equal(t, 40, p.ran)
	require.LessOrEqual(t, p.most, 3, "three at once: the caller waits for its parts")
	require.GreaterOrEqual(t, p.most, 2, "parts on goroutines of their own")

	// Groups inside a loop's pieces, the room taken by the loop: each
	// runs its parts on its caller.
	var q parts
	require.NoError(t, parallel.Each(context.Background(), 6, func(int) { q.run(t, NewGroup(context.Background(), 4), 5) }))
	require.Equal(t, 30, q.ran)
}

// parts counts the parts its part method runs, of a millisecond each, and
// the most that ran at once.
type parts struct {
	mu                 sync.Mutex
	running, most, ran int
}

// run gives g n parts and waits for them.
func (p *parts) run(t *testing.T, g *Group, n int) {
	for range n {
		g.Go(p.part)
	}
	require.NoError(t, g.Wait())
}

func (p *parts) part() error {
	p.mu.Lock()
	p.running++
	p.ran++
	p.most = max(p.most, p.running)
	p.mu.Unlock()
	time.Sleep(time.Millisecond)
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	return nil
}
