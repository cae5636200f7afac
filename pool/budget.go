// Package pool manages host memory for the proving pipeline: a byte budget
// with first-in-first-out, all-or-nothing reservations ([Budget]), reusable
// buffers drawn under such a budget ([Pool]) and the process's resident-set
// peak ([PeakRSS]).
//
// The same [Budget] type bounds device memory in package gpu: any resource
// counted in bytes whose holders must never exceed a fixed total.
package pool

import (
	"context"
	"fmt"
	"sync"
)

// OverBudgetError reports a reservation that cannot be granted: it exceeds
// the whole budget, or the part of it that pinned reservations leave (see
// [Reservation.Pin]), which it cannot have until they are released. It is
// returned without waiting for bytes that will not come.
type OverBudgetError struct {
	Budget    string // the budget's name, e.g. "host" or "cuda:0"
	Requested int64  // bytes asked for
	Total     int64  // bytes the budget holds in all
	Pinned    int64  // bytes held by pinned reservations when it was refused
}

func (e *OverBudgetError) Error() string {
	if e.Requested > e.Total {
		return fmt.Sprintf("pool: %s budget: reservation of %d bytes exceeds the whole budget of %d bytes",
			e.Budget, e.Requested, e.Total)
	}
	return fmt.Sprintf("pool: %s budget: reservation of %d bytes exceeds the %d bytes of the %d-byte budget that pinned reservations (%d bytes) leave",
		e.Budget, e.Requested, e.Total-e.Pinned, e.Total, e.Pinned)
}

// Budget is a counted pool of bytes. Reservations are all-or-nothing, so a
// holder never waits while holding part of what it needs, and are granted in
// strict arrival order: a large request at the head of the queue is not
// overtaken by smaller ones behind it. It is safe for concurrent use.
type Budget struct {
	name  string
	total int64

	mu      sync.Mutex
	used    int64
	pinned  int64 // of used, held by pinned reservations
	peak    int64
	waiters []*waiter // FIFO; granted, refused or cancelled entries are removed

	reclaimers map[int]func() // see OnWait; keyed by registration
	nextID     int
}

type waiter struct {
	n     int64
	ready chan struct{} // closed when granted or refused
	err   error         // set before ready is closed when refused
}

// NewBudget returns a budget of total bytes; name appears in errors.
func NewBudget(name string, total int64) *Budget {
	if total < 0 {
		total = 0
	}
	return &Budget{name: name, total: total}
}

// Total returns the budget's size in bytes.
func (b *Budget) Total() int64 { return b.total }

// Used returns the bytes currently reserved.
func (b *Budget) Used() int64 { return locked(b, func() int64 { return b.used }) }

// Peak returns the largest number of bytes reserved at once so far.
func (b *Budget) Peak() int64 { return locked(b, func() int64 { return b.peak }) }

// Pinned returns the bytes held by pinned reservations (see
// [Reservation.Pin]): Total minus Pinned is the most a reservation can be
// granted while they stay.
func (b *Budget) Pinned() int64 { return locked(b, func() int64 { return b.pinned }) }

// Waiting returns the number of reservations queued.
func (b *Budget) Waiting() int { return locked(b, func() int { return len(b.waiters) }) }

// locked returns what read returns when called with b.mu held: a
// consistent view of b's counters.
func locked[T any](b *Budget, read func() T) T {
	b.mu.Lock()
	defer b.mu.Unlock()
	return read()
}

// OnWait registers reclaim to be called whenever a reservation has to wait:
// reclaim should release bytes held only as cache (a [Pool]'s idle buffers,
// say), so that no reservation waits for bytes nobody will give back. It is
// called without the budget's lock, on the waiting goroutine, after the
// reservation has joined the queue, so bytes cached after reclaim returns are
// cached by code that can see [Budget.Waiting] is nonzero. The returned stop
// unregisters reclaim; it is idempotent.
func (b *Budget) OnWait(reclaim func()) (stop func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reclaimers == nil {
		b.reclaimers = make(map[int]func())
	}
	id := b.nextID
	b.nextID++
	b.reclaimers[id] = reclaim
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.reclaimers, id)
	}
}

// Reservation is a grant of bytes from a Budget. Release returns them.
type Reservation struct {
	b      *Budget
	n      int64
	once   sync.Once
	pinned bool // guarded by b.mu
	done   bool // released; guarded by b.mu
}

// Bytes returns the size of the reservation.
func (r *Reservation) Bytes() int64 { return r.n }

// Release returns the bytes to the budget. It is idempotent and safe to call
// from any goroutine.
func (r *Reservation) Release() {
	r.once.Do(func() { r.b.put(r) })
}

// Pin marks the reservation as long-lived: held until it is released, not
// for the span of one piece of work (a key resident on a device, say, and
// the buffers that live with it). A reservation larger than what pinned
// ones leave of the budget is then refused at once instead of waiting for
// bytes that will not come, and those already waiting are refused. Pin is
// idempotent; it does nothing after Release.
func (r *Reservation) Pin() {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.pinned || r.done {
		return
	}
	r.pinned = true
	b.pinned += r.n
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if w.n > b.total-b.pinned {
			w.err = b.overBudget(w.n)
			close(w.ready)
			continue
		}
		kept = append(kept, w)
	}
	clear(b.waiters[len(kept):])
	b.waiters = kept
	b.grant()
}

// Reserve waits until n bytes are free and no earlier reservation is waiting,
// then takes them; before it waits it calls the functions registered with
// [Budget.OnWait]. It fails at once with an *OverBudgetError when n exceeds
// the total, and with ctx's error when ctx ends first (nothing is then held).
func (b *Budget) Reserve(ctx context.Context, n int64) (*Reservation, error) {
	if n < 0 {
		return nil, fmt.Errorf("pool: %s budget: negative reservation %d", b.name, n)
	}
	if n > b.total {
		return nil, &OverBudgetError{Budget: b.name, Requested: n, Total: b.total}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if n > b.total-b.pinned {
		err := b.overBudget(n)
		b.mu.Unlock()
		return nil, err
	}
	if len(b.waiters) == 0 && b.used+n <= b.total {
		b.take(n)
		b.mu.Unlock()
		return &Reservation{b: b, n: n}, nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	reclaim := make([]func(), 0, len(b.reclaimers))
	for _, f := range b.reclaimers {
		reclaim = append(reclaim, f)
	}
	b.mu.Unlock()
	for _, f := range reclaim {
		f()
	}

	select {
	case <-w.ready:
		if w.err != nil {
			return nil, w.err
		}
		return &Reservation{b: b, n: n}, nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready:
			// Granted (or refused) while we were giving up.
			b.mu.Unlock()
			if w.err == nil {
				b.put(&Reservation{b: b, n: n})
			}
		default:
			b.remove(w)
			// Our departure may unblock the waiters behind us.
			b.grant()
			b.mu.Unlock()
		}
		return nil, ctx.Err()
	}
}

// TryReserve takes n bytes if they are free and nobody is waiting, without
// blocking; it reports whether it did.
func (b *Budget) TryReserve(n int64) (*Reservation, bool) {
	if n < 0 || n > b.total {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 || b.used+n > b.total {
		return nil, false
	}
	b.take(n)
	return &Reservation{b: b, n: n}, true
}

func (b *Budget) take(n int64) {
	b.used += n
	if b.used > b.peak {
		b.peak = b.used
	}
}

func (b *Budget) put(r *Reservation) {
	b.mu.Lock()
	r.done = true
	b.used -= r.n
	if r.pinned {
		b.pinned -= r.n
	}
	if b.used < 0 || b.pinned < 0 {
		panic("pool: budget released more than it reserved") // internal invariant
	}
	b.grant()
	b.mu.Unlock()
}

// overBudget is the refusal of a reservation of n bytes. b.mu is held.
func (b *Budget) overBudget(n int64) *OverBudgetError {
	return &OverBudgetError{Budget: b.name, Requested: n, Total: b.total, Pinned: b.pinned}
}

// grant wakes waiters from the head of the queue while they fit. b.mu is held.
func (b *Budget) grant() {
	for len(b.waiters) > 0 {
		w := b.waiters[0]
		if b.used+w.n > b.total {
			return
		}
		b.take(w.n)
		b.waiters[0] = nil
		b.waiters = b.waiters[1:]
		close(w.ready)
	}
}

func (b *Budget) remove(w *waiter) {
	for i, x := range b.waiters {
		if x == w {
			copy(b.waiters[i:], b.waiters[i+1:])
			b.waiters[len(b.waiters)-1] = nil
			b.waiters = b.waiters[:len(b.waiters)-1]
			return
		}
	}
}
