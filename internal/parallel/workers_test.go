package parallel

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peak tracks how many calls run at once.
type peak struct{ now, most atomic.Int64 }

func (p *peak) enter() {
	n := p.now.Add(1)
	for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
	}
}

func (p *peak) leave() { p.now.Add(-1) }

// The loops run no more goroutines at once than GOMAXPROCS less the
// reserved Ps, and all of them once the reservation is given back.
func TestReserve(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	require.Equal(t, 8, Room())
	release := Reserve(3)
	require.Equal(t, 5, Room())
	run := func() int64 {
		var p peak
		require.NoError(t, Each(context.Background(), 64, func(int) {
			p.enter()
			time.Sleep(2 * time.Millisecond)
			p.leave()
		}))
		return p.most.Load()
	}
	require.LessOrEqual(t, run(), int64(5))
	release()
	release() // once only
	require.Equal(t, 8, Room())
	require.Greater(t, run(), int64(5), "sleeping calls fill all eight")
	require.Zero(t, busy.Load(), "every loop gave its room back")

	// Room never falls below one: the caller's goroutine.
	release = Reserve(100)
	require.Equal(t, 1, Room())
	require.Equal(t, int64(1), run())
	release()
}

// Loops nested in loops finish when no room is left: each runs on its
// caller alone.
func TestNestedLoops(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var calls atomic.Int64
	err := FirstError(16, func(int) error {
		return Each(context.Background(), 16, func(int) {
			time.Sleep(100 * time.Microsecond)
			calls.Add(1)
		})
	})
	require.NoError(t, err)
	require.Equal(t, int64(256), calls.Load())
	require.Zero(t, busy.Load())
}
