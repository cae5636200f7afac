package lazy

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
	var l Value[int]
	var builds atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Go(func() {
			v, err := l.Get(context.Background(), func() (int, error) {
				builds.Add(1)
				<-release
				return 42, nil
			})
			assert.NoError(t, err)
			got[i] = v
		})
	}
	time.Sleep(10 * time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(1), builds.Load())
	for _, v := range got {
		assert.Equal(t, 42, v)
	}
	v, ok := l.Peek()
	assert.True(t, ok)
	assert.Equal(t, 42, v)
}

func TestLazyForgetsFailures(t *testing.T) {
	var l Value[string]
	boom := errors.New("no parameters yet")
	_, err := l.Get(context.Background(), func() (string, error) { return "", boom })
	require.ErrorIs(t, err, boom)
	_, ok := l.Peek()
	require.False(t, ok)
	v, err := l.Get(context.Background(), func() (string, error) { return "found", nil })
	require.NoError(t, err)
	assert.Equal(t, "found", v)
}

// A waiter whose context ends leaves at once, while the build goes on and
// serves the next caller.
func TestLazyWaiterHonoursContext(t *testing.T) {
	var l Value[int]
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := l.Get(context.Background(), func() (int, error) {
			close(started)
			<-release
			return 7, nil
		})
		done <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := l.Get(ctx, func() (int, error) { t.Error("a second build while one is in flight"); return 0, nil })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	require.NoError(t, <-done)
	v, err := l.Get(context.Background(), func() (int, error) { return 0, errors.New("rebuilt") })
	require.NoError(t, err)
	assert.Equal(t, 7, v)

	// An ended context builds nothing.
	var m Value[int]
	cancel()
	_, err = m.Get(ctx, func() (int, error) { t.Error("built under an ended context"); return 0, nil })
	require.Error(t, err)
}

// A build that panics still ends its attempt: the panic reaches its caller,
// and the others build again instead of waiting forever.
func TestLazyPanicEndsTheAttempt(t *testing.T) {
	var l Value[int]
	func() {
		defer func() { require.NotNil(t, recover()) }()
		_, _ = l.Get(context.Background(), func() (int, error) { panic("circuit bug") })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := l.Get(ctx, func() (int, error) { return 3, nil })
	require.NoError(t, err)
	assert.Equal(t, 3, v)
}

// getCtx: a caller whose context ends leaves at once, and a build nobody
// waits for any more is stopped (its context is cancelled).
func TestLazyCtxStopsAbandonedBuild(t *testing.T) {
	var l Value[int]
	stopped := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := l.GetCtx(ctx, func(bctx context.Context) (int, error) {
		<-bctx.Done()
		close(stopped)
		return 0, bctx.Err()
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(t0), time.Second)
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned build was not stopped")
	}
	// The next caller builds again.
	require.Eventually(t, func() bool {
		v, err := l.GetCtx(context.Background(), func(context.Context) (int, error) { return 5, nil })
		return err == nil && v == 5
	}, 5*time.Second, time.Millisecond)
}

// getCtx: a build goes on while another caller still waits for it, and a
// panic in a build is an error for its callers.
func TestLazyCtxSharedBuild(t *testing.T) {
	var l Value[int]
	started, release := make(chan struct{}), make(chan struct{})
	var builds atomic.Int32
	build := func(bctx context.Context) (int, error) {
		builds.Add(1)
		close(started)
		select {
		case <-release:
			return 9, nil
		case <-bctx.Done():
			return 0, bctx.Err()
		}
	}
	done := make(chan error, 1)
	go func() {
		v, err := l.GetCtx(context.Background(), build)
		if err == nil && v != 9 {
			err = errors.New("wrong value")
		}
		done <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := l.GetCtx(ctx, build)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	require.NoError(t, <-done)
	require.Equal(t, int32(1), builds.Load())

	var m Value[int]
	_, err = m.GetCtx(context.Background(), func(context.Context) (int, error) { panic("circuit bug") })
	require.ErrorContains(t, err, "circuit bug")
}
