package pool

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/sealc2/c2/internal/stress"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitQueued blocks until b has n queued reservations.
func waitQueued(t *testing.T, b *Budget, n int) {
	t.Helper()
	for i := 0; b.Waiting() != n; i++ {
		if i > 10000 {
			t.Fatalf("budget never reached %d waiters (has %d)", n, b.Waiting())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func TestBudgetOverTotalFailsAtOnce(t *testing.T) {
	b := NewBudget("test", 100)
	_, err := b.Reserve(context.Background(), 101)
	var ob *OverBudgetError
	require.ErrorAs(t, err, &ob)
	assert.Equal(t, int64(101), ob.Requested)
	assert.Equal(t, int64(100), ob.Total)
	assert.Contains(t, err.Error(), "test budget")
	assert.Equal(t, 0, b.Waiting())

	_, err = b.Reserve(context.Background(), -1)
	require.Error(t, err)
}

// A pinned reservation (a resident key) bounds what others can be granted:
// a request larger than what pins leave fails at once, one already
// waiting is refused when the pin comes, and the bytes are back when the
// pinned reservation is released. Smaller requests still wait for
// unpinned holders.
func TestBudgetPinned(t *testing.T) {
	ctx := context.Background()
	b := NewBudget("dev", 100)
	key, err := b.Reserve(ctx, 50)
	require.NoError(t, err)
	work, err := b.Reserve(ctx, 30)
	require.NoError(t, err)

	refused := make(chan error, 1)
	go func() {
		_, err := b.Reserve(ctx, 60) // fits once work ends, unless key stays
		refused <- err
	}()
	waitQueued(t, b, 1)
	key.Pin()
	key.Pin() // idempotent
	var ob *OverBudgetError
	require.ErrorAs(t, <-refused, &ob, "the waiter is refused when the pin leaves it no room")
	assert.Equal(t, int64(50), ob.Pinned)
	assert.Contains(t, ob.Error(), "pinned")
	assert.Equal(t, int64(50), b.Pinned())
	assert.Equal(t, 0, b.Waiting())

	_, err = b.Reserve(ctx, 51)
	require.ErrorAs(t, err, &ob, "refused at once")
	assert.Equal(t, int64(80), b.Used(), "nothing taken")

	granted := make(chan *Reservation, 1)
	go func() {
		r, err := b.Reserve(ctx, 40) // within what the pin leaves: waits for work
		assert.NoError(t, err)
		granted <- r
	}()
	waitQueued(t, b, 1)
	work.Release()
	r := <-granted
	r.Release()

	key.Release()
	assert.Zero(t, b.Pinned())
	assert.Zero(t, b.Used())
	big, err := b.Reserve(ctx, 100)
	require.NoError(t, err, "the pinned bytes are back")
	big.Release()
	big.Pin() // after Release: nothing
	assert.Zero(t, b.Pinned())
}

func TestBudgetReserveRelease(t *testing.T) {
	b := NewBudget("test", 100)
	r1, err := b.Reserve(context.Background(), 60)
	require.NoError(t, err)
	r2, ok := b.TryReserve(40)
	require.True(t, ok)
	_, ok = b.TryReserve(1)
	require.False(t, ok)
	assert.Equal(t, int64(100), b.Used())
	r1.Release()
	r1.Release() // idempotent
	assert.Equal(t, int64(40), b.Used())
	r2.Release()
	assert.Equal(t, int64(0), b.Used())
	assert.Equal(t, int64(100), b.Peak())
}

// A large request at the head of the queue is not overtaken by smaller ones
// that would fit, and grants follow arrival order.
func TestBudgetFIFO(t *testing.T) {
	b := NewBudget("test", 10)
	hold, err := b.Reserve(context.Background(), 5)
	require.NoError(t, err)

	sizes := []int64{8, 1, 2}
	got := make([]chan *Reservation, len(sizes))
	for i, n := range sizes {
		got[i] = make(chan *Reservation, 1)
		go func() {
			r, err := b.Reserve(context.Background(), n)
			assert.NoError(t, err)
			got[i] <- r
		}()
		waitQueued(t, b, i+1) // enqueue in index order
	}
	granted := func(i int) *Reservation {
		select {
		case r := <-got[i]:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("reservation %d never granted", i)
			return nil
		}
	}
	// 1 and 2 would fit beside the 5 held, but 8 is ahead of them.
	_, ok := b.TryReserve(1)
	assert.False(t, ok, "TryReserve must not overtake the queue")
	assert.Equal(t, 3, b.Waiting())
	assert.Equal(t, int64(5), b.Used())

	hold.Release() // 8 then 1 fit (9); 2 must wait for 8
	r0, r1 := granted(0), granted(1)
	assert.Equal(t, 1, b.Waiting())
	assert.Equal(t, int64(9), b.Used())
	r1.Release() // 8 + 2 = 10 fits now
	r2 := granted(2)
	assert.Equal(t, int64(10), b.Used())
	r0.Release()
	r2.Release()
	assert.Equal(t, int64(0), b.Used())
}

func TestBudgetCancelReleasesQueue(t *testing.T) {
	b := NewBudget("test", 10)
	hold, err := b.Reserve(context.Background(), 5)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Reserve(ctx, 10) // head of queue, cannot fit
		errc <- err
	}()
	waitQueued(t, b, 1)
	got := make(chan *Reservation, 1)
	go func() {
		r, err := b.Reserve(context.Background(), 5) // fits, but queued behind
		assert.NoError(t, err)
		got <- r
	}()
	waitQueued(t, b, 2)
	select {
	case <-got:
		t.Fatal("second reservation overtook the head of the queue")
	default:
	}
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	r := <-got // the head's departure lets it through
	assert.Equal(t, int64(10), b.Used())
	r.Release()
	hold.Release()
	assert.Equal(t, int64(0), b.Used())
	assert.Equal(t, 0, b.Waiting())

	// An already-cancelled context never takes anything.
	_, err = b.Reserve(ctx, 1)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int64(0), b.Used())
}

// Reserve calls what OnWait registered only when it has to wait, and not
// after stop.
func TestBudgetOnWait(t *testing.T) {
	b := NewBudget("test", 100)
	var calls atomic.Int32
	var held *Reservation
	stop := b.OnWait(func() {
		calls.Add(1)
		if held != nil {
			held.Release()
		}
	})
	ctx := context.Background()
	r, err := b.Reserve(ctx, 60)
	require.NoError(t, err)
	assert.Zero(t, calls.Load(), "granted at once")
	held = r
	r2, err := b.Reserve(ctx, 60) // queues; the reclaimer releases r
	require.NoError(t, err)
	assert.Equal(t, int32(1), calls.Load())
	stop()
	stop()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err = b.Reserve(cctx, 60)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int32(1), calls.Load(), "stopped")
	r2.Release()
	assert.Zero(t, b.Used())
}

// 100 concurrent reservers with random sizes, hold times and cancellations:
// the budget is never exceeded and everything is returned at the end.
func TestBudgetRandomReservers(t *testing.T) {
	const total = 1000
	b := NewBudget("test", total)
	var inUse, maxInUse atomic.Int64
	granted, cancelled := stress.Run(100, 20, 7, func(rng *rand.Rand) bool {
		n := rng.Int64N(total) + 1
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if rng.IntN(4) == 0 {
			d := time.Duration(rng.IntN(200)) * time.Microsecond // rng is not safe to share
			go func() { time.Sleep(d); cancel() }()
		}
		r, err := b.Reserve(ctx, n)
		if err != nil {
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
			return false
		}
		v := inUse.Add(n)
		for {
			m := maxInUse.Load()
			if v <= m || maxInUse.CompareAndSwap(m, v) {
				break
			}
		}
		assert.LessOrEqual(t, b.Used(), int64(total))
		time.Sleep(time.Duration(rng.IntN(50)) * time.Microsecond)
		inUse.Add(-n)
		r.Release()
		return true
	})
	assert.LessOrEqual(t, maxInUse.Load(), int64(total))
	assert.LessOrEqual(t, b.Peak(), int64(total))
	assert.Equal(t, int64(0), b.Used())
	assert.Equal(t, 0, b.Waiting())
	assert.Equal(t, 2000, granted+cancelled)
	assert.Positive(t, granted)
}
