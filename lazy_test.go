package c2

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLazyBuildsOnceForConcurrentCallers(t *testing.T) {
	var l lazy[int]
	var builds atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := l.get(context.Background(), func() (int, error) {
				builds.Add(1)
				<-release
				return 42, nil
			})
			assert.NoError(t, err)
			got[i] = v
		}()
	}
	time.Sleep(10 * time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(1), builds.Load())
	for _, v := range got {
		assert.Equal(t, 42, v)
	}
	v, ok := l.peek()
	assert.True(t, ok)
	assert.Equal(t, 42, v)
}

func TestLazyForgetsFailures(t *testing.T) {
	var l lazy[string]
	boom := errors.New("no parameters yet")
	_, err := l.get(context.Background(), func() (string, error) { return "", boom })
	require.ErrorIs(t, err, boom)
	_, ok := l.peek()
	require.False(t, ok)
	v, err := l.get(context.Background(), func() (string, error) { return "found", nil })
	require.NoError(t, err)
	assert.Equal(t, "found", v)
}

// A waiter whose context ends leaves at once, while the build goes on and
// serves the next caller.
func TestLazyWaiterHonoursContext(t *testing.T) {
	var l lazy[int]
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := l.get(context.Background(), func() (int, error) {
			close(started)
			<-release
			return 7, nil
		})
		done <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := l.get(ctx, func() (int, error) { t.Error("a second build while one is in flight"); return 0, nil })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	require.NoError(t, <-done)
	v, err := l.get(context.Background(), func() (int, error) { return 0, errors.New("rebuilt") })
	require.NoError(t, err)
	assert.Equal(t, 7, v)

	// An ended context builds nothing.
	var m lazy[int]
	cancel()
	_, err = m.get(ctx, func() (int, error) { t.Error("built under an ended context"); return 0, nil })
	require.Error(t, err)
}

// A build that panics still ends its attempt: the panic reaches its caller,
// and the others build again instead of waiting forever.
func TestLazyPanicEndsTheAttempt(t *testing.T) {
	var l lazy[int]
	func() {
		defer func() { require.NotNil(t, recover()) }()
		_, _ = l.get(context.Background(), func() (int, error) { panic("circuit bug") })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := l.get(ctx, func() (int, error) { return 3, nil })
	require.NoError(t, err)
	assert.Equal(t, 3, v)
}
