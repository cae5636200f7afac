package c2

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
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

// getCtx: a caller whose context ends leaves at once, and a build nobody
// waits for any more is stopped (its context is cancelled).
func TestLazyCtxStopsAbandonedBuild(t *testing.T) {
	var l lazy[int]
	stopped := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := l.getCtx(ctx, func(bctx context.Context) (int, error) {
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
		v, err := l.getCtx(context.Background(), func(context.Context) (int, error) { return 5, nil })
		return err == nil && v == 5
	}, 5*time.Second, time.Millisecond)
}

// getCtx: a build goes on while another caller still waits for it, and a
// panic in a build is an error for its callers.
func TestLazyCtxSharedBuild(t *testing.T) {
	var l lazy[int]
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
		v, err := l.getCtx(context.Background(), build)
		if err == nil && v != 9 {
			err = errors.New("wrong value")
		}
		done <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := l.getCtx(ctx, build)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	require.NoError(t, <-done)
	require.Equal(t, int32(1), builds.Load())

	var m lazy[int]
	_, err = m.getCtx(context.Background(), func(context.Context) (int, error) { panic("circuit bug") })
	require.ErrorContains(t, err, "circuit bug")
}

// Close releases the proving keys and R1CS of every shape: nothing the
// Prover holds refers to them any more (they used to stay reachable until
// the Prover itself was dropped), and Prove after Close fails at once.
func TestCloseDropsShapes(t *testing.T) {
	p, err := New(Config{Backend: BackendCPU})
	require.NoError(t, err)
	pk := &groth16.ProvingKey{H: make([]bls.G1Affine, 1<<16)}
	sys := r1cs.NewSystem()
	wpk, wsys := weak.Make(pk), weak.Make(sys)
	c := p.shape(porep.Shape2KiB)
	_, err = c.pk.getCtx(context.Background(), func(context.Context) (*groth16.ProvingKey, error) { return pk, nil })
	require.NoError(t, err)
	_, err = c.sys.getCtx(context.Background(), func(context.Context) (*r1cs.System, error) { return sys, nil })
	require.NoError(t, err)
	pk, sys, c = nil, nil, nil
	runtime.GC()
	require.NotNil(t, wpk.Value(), "the open Prover keeps its key")

	require.NoError(t, p.Close())
	runtime.GC()
	require.True(t, wpk.Value() == nil, "the key is released by Close")
	require.True(t, wsys.Value() == nil, "the R1CS is released by Close")

	raw, err := os.ReadFile("testdata/refgen/out/porep-2k/c1.json")
	require.NoError(t, err)
	_, err = p.Prove(context.Background(), raw)
	require.ErrorIs(t, err, ErrClosed)
	require.Empty(t, p.shapes, "a call after Close caches nothing")
	runtime.KeepAlive(p)
}
