package c2

import (
	"context"
	"sync"
)

// lazy holds a value built on first use by one caller while the others wait.
// A failed build is not kept: the next caller tries again (parameters
// installed after a failure are found). Waiters give up when their own
// context ends; the builder always finishes its attempt.
type lazy[T any] struct {
	mu   sync.Mutex
	busy chan struct{} // non-nil while a build is in progress; closed when it ends
	val  T
	ok   bool
}

// get returns the value, building it with build when no one has yet.
func (l *lazy[T]) get(ctx context.Context, build func() (T, error)) (T, error) {
	var zero T
	for {
		l.mu.Lock()
		if l.ok {
			v := l.val
			l.mu.Unlock()
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
func (l *lazy[T]) build(busy chan struct{}, build func() (T, error)) (v T, err error) {
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

// peek returns the value if it has been built.
func (l *lazy[T]) peek() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.val, l.ok
}
