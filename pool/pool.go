package pool

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"
)

// Allocator provides the memory behind a Pool's buffers: the Go heap by
// default, page-locked ("pinned") memory when a device can provide it, so
// that host-to-device copies run at full PCIe speed.
type Allocator interface {
	// Alloc returns n bytes aligned to at least 8 bytes.
	Alloc(n int) ([]byte, error)
	// Free gives back a slice obtained from Alloc. It may be slow (pinned
	// memory), so the pool calls it off the hot path.
	Free(b []byte)
}

// HeapAllocator allocates from the Go heap; Free drops the reference and
// leaves the rest to the garbage collector.
type HeapAllocator struct{}

// Alloc implements [Allocator]. The memory is backed by []uint64, so it is
// 8-byte aligned.
func (HeapAllocator) Alloc(n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("pool: negative allocation %d", n)
	}
	if n == 0 {
		return []byte{}, nil
	}
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n), nil
}

// Free implements [Allocator].
func (HeapAllocator) Free([]byte) {}

// ErrClosed is returned by Get after Close.
var ErrClosed = errors.New("pool: closed")

// Stats describes a pool's use so far. Sizes are in bytes.
type Stats struct {
	InUse  int64 // held by buffers not yet released
	Idle   int64 // cached for reuse
	Peak   int64 // largest InUse+Idle so far
	Allocs int   // buffers obtained from the allocator
	Reuses int   // Gets served from the cache
	Frees  int   // buffers handed back to the allocator
}

// Pool hands out reusable byte buffers under a Budget. Every byte it holds,
// in use or cached, is reserved from the budget, so the budget bounds the
// pool's real footprint. Buffers are cached by size class on Release and
// reused by later Gets; when the budget is short the cache is trimmed, and
// memory is given back to the allocator on a background goroutine so that
// large frees never stall a caller.
//
// A Pool is safe for concurrent use. Close it to stop its background
// goroutine.
type Pool struct {
	budget *Budget
	alloc  Allocator

	mu     sync.Mutex
	idle   map[int][]idleBuf
	stats  Stats
	closed bool

	queue    []idleBuf     // buffers waiting for the freer; guarded by mu
	wake     chan struct{} // capacity 1: the queue grew or the pool closed
	freerEnd chan struct{}
	stopWait func() // unregisters Trim from the budget's OnWait
}

type idleBuf struct {
	b   []byte
	res *Reservation
}

// New returns a pool drawing from budget and alloc (HeapAllocator when nil).
// The budget may be shared with other users.
func New(budget *Budget, alloc Allocator) *Pool {
	if alloc == nil {
		alloc = HeapAllocator{}
	}
	p := &Pool{
		budget:   budget,
		alloc:    alloc,
		idle:     make(map[int][]idleBuf),
		wake:     make(chan struct{}, 1),
		freerEnd: make(chan struct{}),
	}
	// Whoever waits on the budget (this pool or another user) first empties
	// the cache: put caches only while nobody waits, so after this no byte
	// of the budget sits idle while a reservation waits.
	p.stopWait = budget.OnWait(p.Trim)
	go p.freer()
	return p
}

// freer gives memory back to the allocator, one buffer at a time, so that
// slow frees (pinned memory) are serialized and off every caller's path.
func (p *Pool) freer() {
	defer close(p.freerEnd)
	for range p.wake {
		for {
			p.mu.Lock()
			q := p.queue
			p.queue = nil
			done := p.closed && len(q) == 0
			p.mu.Unlock()
			if done {
				return
			}
			if len(q) == 0 {
				break
			}
			for _, f := range q {
				p.alloc.Free(f.b)
				f.res.Release()
			}
		}
	}
}

// enqueue schedules buffers for freeing. p.mu is held.
func (p *Pool) enqueue(f ...idleBuf) {
	p.queue = append(p.queue, f...)
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// drainIdle moves the whole cache to the free queue. p.mu is held.
func (p *Pool) drainIdle() {
	for c, l := range p.idle {
		p.enqueue(l...)
		p.stats.Idle -= int64(c) * int64(len(l))
		p.stats.Frees += len(l)
		delete(p.idle, c)
	}
}

// sizeClass rounds n up so that buffers of similar size are interchangeable:
// to a power of two up to 64 KiB, beyond that to a multiple of an eighth of
// the largest power of two ≤ n (at most 12.5 % waste).
func sizeClass(n int) int {
	if n <= 64<<10 {
		if n <= 64 {
			return 64
		}
		return 1 << bits.Len(uint(n-1))
	}
	step := (1 << (bits.Len(uint(n)) - 1)) / 8
	return (n + step - 1) / step * step
}

// Buffer is a byte buffer from a Pool, of the length asked for (the
// capacity behind it may be larger); [View] reads it as values of a type.
type Buffer struct {
	p    *Pool
	b    []byte
	res  *Reservation
	n    int
	once sync.Once
}

// Release returns the buffer to its pool; the caller must not touch its
// bytes (or views of them) afterwards. It is idempotent.
func (b *Buffer) Release() {
	b.once.Do(func() { b.p.put(b) })
}

// Get returns a buffer of n bytes, reusing a cached one of the same size class
// when possible. When the budget is short, every pool drawing from it frees
// its cache (see [Budget.OnWait]) and Get waits, first-in-first-out, until
// enough memory is released or ctx ends. A request larger than the whole
// budget fails at once with an *OverBudgetError.
func (p *Pool) Get(ctx context.Context, n int) (*Buffer, error) {
	return p.get(ctx, n, true)
}

// TryGet is Get without waiting: it returns a nil buffer and a nil error
// when no cached buffer fits and the budget cannot grant n bytes at once.
func (p *Pool) TryGet(n int) (*Buffer, error) {
	return p.get(context.Background(), n, false)
}

// get is Get, or TryGet without wait.
func (p *Pool) get(ctx context.Context, n int, wait bool) (*Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("pool: negative buffer size %d", n)
	}
	c := sizeClass(n)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if l := p.idle[c]; len(l) > 0 {
		ib := l[len(l)-1]
		p.idle[c] = l[:len(l)-1]
		p.stats.Idle -= int64(c)
		p.stats.InUse += int64(c)
		p.stats.Reuses++
		p.mu.Unlock()
		return &Buffer{p: p, b: ib.b, res: ib.res, n: n}, nil
	}
	p.mu.Unlock()

	var res *Reservation
	if !wait {
		var ok bool
		if res, ok = p.budget.TryReserve(int64(c)); !ok {
			return nil, nil
		}
	} else {
		var err error
		if res, err = p.budget.Reserve(ctx, int64(c)); err != nil {
			return nil, err
		}
	}
	b, err := p.alloc.Alloc(c)
	if err != nil {
		res.Release()
		return nil, fmt.Errorf("pool: allocating %d bytes: %w", c, err)
	}
	if len(b) < c {
		p.alloc.Free(b)
		res.Release()
		return nil, fmt.Errorf("pool: allocator returned %d bytes, want %d", len(b), c)
	}
	p.mu.Lock()
	p.stats.Allocs++
	p.stats.InUse += int64(c)
	if t := p.stats.InUse + p.stats.Idle; t > p.stats.Peak {
		p.stats.Peak = t
	}
	closed := p.closed
	p.mu.Unlock()
	buf := &Buffer{p: p, b: b[:c], res: res, n: n}
	if closed {
		buf.Release()
		return nil, ErrClosed
	}
	return buf, nil
}

func (p *Pool) put(b *Buffer) {
	c := len(b.b)
	p.mu.Lock()
	p.stats.InUse -= int64(c)
	// Cache unless someone is waiting on the budget (they need bytes, maybe
	// of another size) or the pool is closing.
	if !p.closed && p.budget.Waiting() == 0 {
		p.idle[c] = append(p.idle[c], idleBuf{b: b.b, res: b.res})
		p.stats.Idle += int64(c)
		p.mu.Unlock()
		return
	}
	p.stats.Frees++
	if p.closed {
		p.mu.Unlock()
		p.alloc.Free(b.b)
		b.res.Release()
		return
	}
	p.enqueue(idleBuf{b: b.b, res: b.res})
	p.mu.Unlock()
}

// Trim frees every cached buffer in the background; their bytes return to
// the budget as each free completes.
func (p *Pool) Trim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.drainIdle()
	}
}

// Stats returns a snapshot of the pool's counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Close frees the cache and stops the background goroutine, waiting for
// pending frees. Buffers still held are freed when released. Get fails with
// ErrClosed afterwards. Close is idempotent.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.drainIdle()
	p.closed = true
	p.mu.Unlock()
	p.stopWait()
	close(p.wake)
	<-p.freerEnd
}

// View returns the first n values of type T stored in b. T must contain no
// Go pointers (field elements, curve points, integers) and need at most
// 8-byte alignment; b must hold at least n·sizeof(T) bytes, else View panics
// (a programming error, not an input error).
func View[T any](b *Buffer, n int) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if n < 0 || n*size > b.n {
		panic(fmt.Sprintf("pool: view of %d × %d bytes exceeds a %d-byte buffer", n, size, b.n))
	}
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b.b[0])), n)
}

// GetSlice returns a buffer holding n values of type T and a view of them;
// see View for the constraints on T.
func GetSlice[T any](ctx context.Context, p *Pool, n int) (*Buffer, []T, error) {
	var zero T
	b, err := p.Get(ctx, n*int(unsafe.Sizeof(zero)))
	if err != nil {
		return nil, nil, err
	}
	return b, View[T](b, n), nil
}
