// Package lazy holds a value built on first use while other callers wait
// for it. A failed build is not kept: the next caller tries again. Waiters
// give up when their own context ends. With [Value.Get] the builder is the
// first caller and always finishes its attempt; with [Value.GetCtx] the
// build runs on its own goroutine and stops once no caller waits for it.
// A panic in a build ends the attempt: Get's builder panics on, GetCtx
// returns the panic as an error.
package lazy

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
)

// Value is a value of type T built on first use. The zero Value is empty
// and ready to use; a Value must not be copied after first use.
type Value[T any] struct {
	mu   sync.Mutex
	busy chan struct{} // non-nil while a build is in progress; closed when it ends
	att  *attempt[T]   // the build in progress when getCtx started it
	val  T
	ok   bool
}

// attempt is one build started by getCtx: how many callers wait for it,
// how to stop it, and its result once done is closed.
type attempt[T any] struct {
	done    chan struct{}
	waiters int
	stop    context.CancelFunc
	stopped bool // no caller waited any more: stop was called
	val     T
	err     error
}

// Get returns the value, building it with build when no one has yet.
func (l *Value[T]) Get(ctx context.Context, build func() (T, error)) (T, error) {
	var zero T
	for {
		if v, ok := l.lockUnbuilt(); ok {
			return v, nil
		}
		if busy := l.busy; busy != nil {
			l.mu.Unlock()
			select {
			case <-busy: // built, or failed: look again
				continue
			case <-ctx.Done():
				return zero, ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			l.mu.Unlock()
			return zero, err
		}
		busy := make(chan struct{})
		l.busy = busy
		l.mu.Unlock()

		v, err := l.build(busy, build)
		if err != nil {
			return zero, err
		}
		return v, nil
	}
}

// build runs one attempt and ends it, even if build panics (the waiters then
// try again rather than wait forever).
func (l *Value[T]) build(busy chan struct{}, build func() (T, error)) (v T, err error) {
	ok := false
	defer func() {
		l.mu.Lock()
		if ok && err == nil {
			l.val, l.ok = v, true
		}
		l.busy = nil
		l.mu.Unlock()
		close(busy)
	}()
	v, err = build()
	ok = true
	return v, err
}

// lockUnbuilt returns the value if it has been built; otherwise it
// returns with l.mu held.
func (l *Value[T]) lockUnbuilt() (T, bool) {
	l.mu.Lock()
	if !l.ok {
		var zero T
		return zero, false
	}
	v := l.val
	l.mu.Unlock()
	return v, true
}

// Peek returns the value if it has been built.
func (l *Value[T]) Peek() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.val, l.ok
}

// GetCtx returns the value, building it with build when no one has yet.
// The build runs on its own goroutine under a context that carries ctx's
// values but is cancelled only when every caller waiting for it has left
// (their contexts ended): a caller leaves at once when its context ends,
// and a build nobody waits for stops as soon as build honours its context.
// Callers that join a build receive its result, error included; a panic in
// build becomes an error.
func (l *Value[T]) GetCtx(ctx context.Context, build func(context.Context) (T, error)) (T, error) {
	var zero T
	for {
		if v, ok := l.lockUnbuilt(); ok {
			return v, nil
		}
		if err := ctx.Err(); err != nil {
			l.mu.Unlock()
			return zero, err
		}
		if busy := l.busy; busy != nil && (l.att == nil || l.att.stopped) {
			// A build of get's, or one being stopped: wait for its end.
			l.mu.Unlock()
			select {
			case <-busy:
				continue
			case <-ctx.Done():
				return zero, ctx.Err()
			}
		}
		a := l.att
		if a == nil {
			bctx, stop := context.WithCancel(context.WithoutCancel(ctx))
			a = &attempt[T]{done: make(chan struct{}), stop: stop}
			l.busy, l.att = a.done, a
			go l.run(bctx, a, build)
		}
		a.waiters++
		l.mu.Unlock()

		select {
		case <-a.done:
			return a.val, a.err
		case <-ctx.Done():
			l.mu.Lock()
			if a.waiters--; a.waiters == 0 && l.att == a {
				a.stopped = true
				a.stop()
			}
			l.mu.Unlock()
			return zero, ctx.Err()
		}
	}
}

// run builds for attempt a and publishes the result.
func (l *Value[T]) run(ctx context.Context, a *attempt[T], build func(context.Context) (T, error)) {
	defer func() {
		if r := recover(); r != nil {
			a.err = fmt.Errorf("lazy: build panicked: %v\n%s", r, debug.Stack())
		}
		a.stop()
		l.mu.Lock()
		if a.err == nil {
			l.val, l.ok = a.val, true
		}
		l.busy, l.att = nil, nil
		l.mu.Unlock()
		close(a.done)
	}()
	a.val, a.err = build(ctx)
}

// Set stores v as the built value (a value made elsewhere, such as a key
// made on a device); it must not race with a build.
func (l *Value[T]) Set(v T) {
	l.mu.Lock()
	l.val, l.ok = v, true
	l.mu.Unlock()
}
