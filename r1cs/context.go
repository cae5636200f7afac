package r1cs

import (
	"context"
	"runtime"
	"sync"

	"github.com/sealc2/c2/internal/parallel"
)

// BuildContext runs build on a Builder that forwards every call to b and
// checks ctx every 4096 constraints (a few milliseconds of recording). Once
// ctx is done, the build stops at the next check, b is left partly built
// and BuildContext returns ctx's error; otherwise it returns build's. It
// returns ctx's error at once when ctx is already done.
//
// build must call the Builder it is given from its own goroutine only, as a
// sequential synthesis does: the stop unwinds build's stack. build sees a
// Builder of another type than b, so a witness-only b ([Witness]) loses the
// fast paths that test for it: BuildContext is for recording ([System]) and
// counting ([Counter]).
func BuildContext(ctx context.Context, b Builder, build func(Builder) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() == nil { // never cancelled
		return build(b)
	}
	cb := &ctxBuilder{Builder: b, ctx: ctx}
	defer func() {
		if r := recover(); r != nil {
			if r != any(cb) {
				panic(r) // not this call's stop
			}
			err = cb.err
		}
	}()
	return build(cb)
}

// ctxBuilder is the Builder BuildContext hands to its build: once its
// context is done it records the error and unwinds the build by panicking
// with itself, which only its own BuildContext recovers.
type ctxBuilder struct {
	Builder
	ctx context.Context
	n   int
	err error
}

// ctxCheckEvery is how many constraints ctxBuilder adds between checks of
// its context.
const ctxCheckEvery = 1 << 12

func (b *ctxBuilder) Enforce(x, y, z LC) {
	if b.n++; b.n%ctxCheckEvery == 0 {
		if err := b.ctx.Err(); err != nil {
			b.err = err
			panic(b)
		}
	}
	b.Builder.Enforce(x, y, z)
}

// Group runs the parts of a synthesis split across goroutines (the
// sectors, challenges or segments of a witness) on a bounded number of
// them, and starts none once its context is done. A part runs on a
// goroutine of its own while the process's parallel loops have room for
// one more (parallel.TryExtra); without room the caller waits for one of
// its group's parts to end, or, when none is running, runs the part itself.
type Group struct {
	ctx    context.Context
	room   chan struct{} // a place for each part running
	wg     sync.WaitGroup
	mu     sync.Mutex
	ended  sync.Cond // a part on its own goroutine ended
	active int       // parts on their own goroutines
	err    error     // the first a part returned
}

// NewGroup returns a Group that runs up to workers parts at once
// (GOMAXPROCS when workers ≤ 0), stopped by ctx.
func NewGroup(ctx context.Context, workers int) *Group {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	g := &Group{ctx: ctx, room: make(chan struct{}, workers)}
	g.ended.L = &g.mu
	return g
}

// Go runs part once fewer than the group's limit are running, blocking
// until then, on a goroutine of its own or, without room for one while no
// other part of g runs, on the caller's (returning when part has). A part
// whose turn comes after the context is done does not run: it fails with
// the context's error.
func (g *Group) Go(part func() error) {
	g.room <- struct{}{}
	run := func() {
		defer func() { <-g.room }()
		err := g.ctx.Err()
		if err == nil {
			err = part()
		}
		if err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = err
			}
			g.mu.Unlock()
		}
	}
	for {
		if parallel.TryExtra() {
			g.mu.Lock()
			g.active++
			g.mu.Unlock()
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				run()
				parallel.Done()
				g.mu.Lock()
				g.active--
				g.ended.Broadcast()
				g.mu.Unlock()
			}()
			return
		}
		g.mu.Lock()
		if g.active == 0 {
			g.mu.Unlock()
			parallel.Inline(run)
			return
		}
		g.ended.Wait() // a part's room is free again
		g.mu.Unlock()
	}
}

// Wait waits for every part given to Go so far and returns the first error
// a part of g returned, or nil. g takes more parts after Wait.
func (g *Group) Wait() error {
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
