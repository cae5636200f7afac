package pool

import (
	"context"
	"sync"
	"testing"
	"time"
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingAllocator records live allocations and slows frees down.
type countingAllocator struct {
	mu        sync.Mutex
	live      int64
	allocs    int
	frees     int
	freeDelay time.Duration
}

func (a *countingAllocator) Alloc(n int) ([]byte, error) {
	a.mu.Lock()
	a.live += int64(n)
	a.allocs++
	a.mu.Unlock()
	return HeapAllocator{}.Alloc(n)
}

func (a *countingAllocator) Free(b []byte) {
	time.Sleep(a.freeDelay)
	a.mu.Lock()
	a.live -= int64(len(b))
	a.frees++
	a.mu.Unlock()
}

func (a *countingAllocator) Live() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live
}

func TestSizeClass(t *testing.T) {
	for _, n := range []int{0, 1, 64, 65, 1000, 64 << 10, 64<<10 + 1, 3 << 20, 5<<30 + 17} {
		c := sizeClass(n)
		assert.GreaterOrEqual(t, c, n)
		switch {
		case n > 64<<10:
			assert.LessOrEqual(t, float64(c), float64(n)*1.125, "n=%d", n)
		case n > 64:
			assert.Less(t, c, 2*n, "n=%d", n)
		}
		assert.Equal(t, c, sizeClass(c), "class of a class is itself")
	}
}

func TestPoolReuse(t *testing.T) {
	a := &countingAllocator{}
	p := New(NewBudget("host", 1<<20), a)
	defer p.Close()
	ctx := context.Background()

	b1, err := p.Get(ctx, 1000)
	require.NoError(t, err)
	require.Len(t, b1.bytes(), 1000)
	b1.bytes()[999] = 42
	first := &b1.bytes()[0]
	b1.Release()
	b1.Release()

	b2, err := p.Get(ctx, 900) // same class (1024)
	require.NoError(t, err)
	assert.Same(t, first, &b2.bytes()[0], "buffer reused")
	s := p.Stats()
	assert.Equal(t, 1, s.Allocs)
	assert.Equal(t, 1, s.Reuses)
	assert.Equal(t, int64(1024), s.InUse)
	b2.Release()
	assert.Equal(t, int64(1024), p.Stats().Idle)
	assert.Equal(t, int64(1024), p.budget.Used(), "cached bytes stay charged to the budget")
}

func TestPoolOverBudget(t *testing.T) {
	p := New(NewBudget("host", 1<<20), nil)
	defer p.Close()
	_, err := p.Get(context.Background(), 2<<20)
	var ob *OverBudgetError
	require.ErrorAs(t, err, &ob)
}

// When the budget is short, a Get trims the cache; a Get that still does not
// fit waits until another buffer is released, and honours cancellation.
func TestPoolPressure(t *testing.T) {
	a := &countingAllocator{freeDelay: time.Millisecond}
	budget := NewBudget("host", 4096)
	p := New(budget, a)
	ctx := context.Background()

	small, err := p.Get(ctx, 1024)
	require.NoError(t, err)
	small.Release()              // cached
	big, err := p.Get(ctx, 4096) // needs the cached bytes back
	require.NoError(t, err)
	assert.Equal(t, int64(4096), budget.Used())
	assert.LessOrEqual(t, a.Live(), int64(4096))

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = p.Get(cctx, 2048)
	require.ErrorIs(t, err, context.Canceled)

	got := make(chan *Buffer)
	go func() {
		b, err := p.Get(ctx, 2048)
		assert.NoError(t, err)
		got <- b
	}()
	waitQueued(t, budget, 1)
	big.Release() // freed rather than cached: someone waits
	b := <-got
	assert.Equal(t, int64(2048), budget.Used())
	b.Release()
	p.Close()
	assert.Equal(t, int64(0), budget.Used())
	assert.Equal(t, int64(0), a.Live(), "Close frees everything")
	assert.Equal(t, a.allocs, a.frees)

	_, err = p.Get(ctx, 1)
	require.ErrorIs(t, err, ErrClosed)
}

// Bytes a pool holds only as cache are given back to whoever waits on its
// budget: another pool sharing it, or a direct reservation. A buffer cached
// before the reservation queued is freed through the budget's OnWait, so the
// waiter never waits on a budget whose bytes sit idle.
func TestPoolCacheYieldsToWaiters(t *testing.T) {
	a := &countingAllocator{}
	budget := NewBudget("host", 4096)
	p, q := New(budget, a), New(budget, a)
	defer p.Close()
	defer q.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	b, err := p.Get(ctx, 4096)
	require.NoError(t, err)
	b.Release() // cached: nobody waits
	require.Equal(t, int64(4096), p.Stats().Idle)

	r, err := budget.Reserve(ctx, 1024) // waits only until p's cache is freed
	require.NoError(t, err)
	assert.Zero(t, p.Stats().Idle)
	r.Release()

	b, err = p.Get(ctx, 4096)
	require.NoError(t, err)
	b.Release()
	c, err := q.Get(ctx, 2048) // another pool on the same budget
	require.NoError(t, err)
	assert.Zero(t, p.Stats().Idle)
	c.Release()
}

// Concurrent users never push the allocator past the budget.
func TestPoolConcurrent(t *testing.T) {
	a := &countingAllocator{}
	const total = 1 << 16
	budget := NewBudget("host", total)
	p := New(budget, a)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				n := 100 + (i*977+j*131)%(total/4)
				b, err := p.Get(context.Background(), n)
				if !assert.NoError(t, err) {
					return
				}
				assert.LessOrEqual(t, a.Live(), int64(total))
				b.bytes()[n-1] = byte(j)
				b.Release()
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, p.Stats().Peak, int64(total))
	assert.LessOrEqual(t, budget.Peak(), int64(total))
	p.Close()
	assert.Equal(t, int64(0), a.Live())
	assert.Equal(t, int64(0), budget.Used())
}

func TestView(t *testing.T) {
	p := New(NewBudget("host", 1<<20), nil)
	defer p.Close()
	b, v, err := GetSlice[fr.Element](context.Background(), p, 10)
	require.NoError(t, err)
	require.Len(t, v, 10)
	assert.Zero(t, uintptr(unsafe.Pointer(&v[0]))%8, "8-byte aligned")
	v[9].SetUint64(7)
	w := View[fr.Element](b, 10)
	assert.True(t, w[9].Equal(new(fr.Element).SetUint64(7)))
	assert.Panics(t, func() { View[bls.G1Affine](b, 10) })
	b.Release()
}

func BenchmarkBudgetReserveRelease(b *testing.B) {
	budget := NewBudget("bench", 1<<30)
	benchGetRelease(b, func(ctx context.Context) (*Reservation, error) { return budget.Reserve(ctx, 1<<20) })
}

func BenchmarkPoolGetRelease(b *testing.B) {
	p := New(NewBudget("bench", 1<<30), nil)
	defer p.Close()
	benchGetRelease(b, func(ctx context.Context) (*Buffer, error) { return p.Get(ctx, 3<<20) })
}

// benchGetRelease times get and the release of what it returns, on
// parallel goroutines.
func benchGetRelease[R interface{ Release() }](b *testing.B, get func(context.Context) (R, error)) {
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := get(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			r.Release()
		}
	})
}

// bytes returns the buffer's n bytes. Their content is unspecified (a reused
// buffer keeps what it held).
func (b *Buffer) bytes() []byte { return b.b[:b.n] }

// TryGet takes a cached buffer or free bytes at once, and otherwise returns
// no buffer without waiting or queueing ahead of anyone.
func TestPoolTryGet(t *testing.T) {
	b := NewBudget("t", 1<<20)
	p := New(b, nil)
	defer p.Close()
	x, err := p.TryGet(600 << 10)
	if err != nil || x == nil {
		t.Fatalf("TryGet on an empty budget: %v, %v", x, err)
	}
	if y, err := p.TryGet(600 << 10); err != nil || y != nil {
		t.Fatalf("TryGet past the budget: %v, %v; want no buffer, no error", y, err)
	}
	if b.Waiting() != 0 {
		t.Fatalf("TryGet queued a reservation")
	}
	x.Release() // cached: nobody waits
	y, err := p.TryGet(600 << 10)
	if err != nil || y == nil {
		t.Fatalf("TryGet of a cached size: %v, %v", y, err)
	}
	if s := p.Stats(); s.Reuses != 1 {
		t.Fatalf("reuses = %d, want 1 (the cached buffer)", s.Reuses)
	}
	y.Release()
	if _, err := p.TryGet(-1); err == nil {
		t.Fatal("TryGet(-1): no error")
	}
}
