package route

import (
	"context"
	"sync"
)

// Places lends at most n places per circuit, so that one circuit's
// partitions never wait for another's: a Winning PoSt beside two C2s waits
// only for its own partitions. A circuit is any comparable value naming
// one (c2 uses the proving key); a circuit's count is dropped once it holds
// no place, so keys that are gone are not kept. Safe for concurrent use.
type Places struct {
	n     int
	mu    sync.Mutex
	held  map[any]int
	freed chan struct{} // closed (and replaced) whenever a place is given back
}

// NewPlaces returns Places of n places per circuit.
func NewPlaces(n int) *Places {
	return &Places{n: n, held: make(map[any]int), freed: make(chan struct{})}
}

// Take waits for a place of circuit and returns give, which gives it back
// (calls after the first do nothing). It returns ctx's error when ctx ends
// first.
func (p *Places) Take(ctx context.Context, circuit any) (give func(), err error) {
	for {
		p.mu.Lock()
		if p.held[circuit] < p.n {
			p.held[circuit]++
			p.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { p.give(circuit) }) }, nil
		}
		freed := p.freed
		p.mu.Unlock()
		if err := await(ctx, freed); err != nil {
			return nil, err
		}
	}
}

// await waits until ch is closed or ctx ends, and returns ctx's error in
// the second case.
func await(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Places) give(circuit any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[circuit]--; p.held[circuit] <= 0 {
		delete(p.held, circuit)
	}
	close(p.freed)
	p.freed = make(chan struct{})
}
