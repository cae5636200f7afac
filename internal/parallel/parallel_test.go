package parallel

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FirstError runs every call and returns the lowest failing index's error,
// even when a higher one fails first.
func TestFirstError(t *testing.T) {
	require.NoError(t, FirstError(0, func(int) error { return errors.New("never called") }))
	var calls atomic.Int32
	err := FirstError(100, func(i int) error {
		calls.Add(1)
		switch i {
		case 7:
			time.Sleep(20 * time.Millisecond) // fails after 60 has
			return fmt.Errorf("item %d", i)
		case 60:
			return fmt.Errorf("item %d", i)
		}
		return nil
	})
	require.EqualError(t, err, "item 7")
	require.Equal(t, int32(100), calls.Load())
	require.NoError(t, FirstError(10, func(int) error { return nil }))
}

// Each calls f once for every index, and stops starting calls once its
// context ends.
func TestEach(t *testing.T) {
	seen := make([]atomic.Int32, 1000)
	require.NoError(t, Each(context.Background(), len(seen), func(k int) { seen[k].Add(1) }))
	for k := range seen {
		require.Equal(t, int32(1), seen[k].Load(), "index %d", k)
	}
	require.NoError(t, Each(context.Background(), 0, func(int) { t.Fatal("called for n = 0") }))

	// Once cancel has returned, each goroutine may start at most the one
	// call whose check of ctx came before it; how many calls start while
	// cancel runs depends on the scheduler, so only the later ones count.
	ctx, cancel := context.WithCancel(context.Background())
	var calls, late atomic.Int32
	var returned atomic.Bool
	err := Each(ctx, 1<<24, func(k int) {
		if returned.Load() {
			late.Add(1)
		}
		if calls.Add(1) == 10 {
			cancel()
			returned.Store(true)
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, calls.Load(), int32(1<<24), "Each stopped early")
	require.LessOrEqual(t, late.Load(), int32(runtime.GOMAXPROCS(0)), "calls started after the cancel returned")

	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	require.ErrorIs(t, Each(cancelled, 5, func(int) { t.Fatal("called after the context ended") }), context.Canceled)
}

// FirstUnsorted finds the lowest bad position across pieces, including one
// whose fault is against the last index of the piece before it.
func TestFirstUnsorted(t *testing.T) {
	const n = 3<<20 + 5
	idx := make([]uint32, n)
	for j := range idx {
		idx[j] = uint32(j)
	}
	require.Equal(t, -1, FirstUnsorted(idx, n))
	require.Equal(t, -1, FirstUnsorted(nil, 0))
	require.Equal(t, n-1, FirstUnsorted(idx, n-1), "an index at the bound")
	idx[2<<20+7] = n + 1
	idx[1<<20] = 0
	require.Equal(t, 1<<20, FirstUnsorted(idx, n))
	idx[1<<20] = 1 << 20
	require.Equal(t, 2<<20+7, FirstUnsorted(idx, n))
	idx[3] = 3 // equal to its own value, not below: still fine; a repeat is not
	idx[4] = 3
	require.Equal(t, 4, FirstUnsorted(idx, n))
}
