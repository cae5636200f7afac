// Package stress runs randomized rounds from many goroutines at once, for
// tests of shared state under contention.
package stress

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Run starts workers goroutines; worker i calls round rounds times with a
// generator of its own, seeded (i, seed). Once all have finished it
// returns how many calls returned true and how many false.
func Run(workers, rounds int, seed uint64, round func(rng *rand.Rand) bool) (passed, failed int) {
	var wg sync.WaitGroup
	var ok, not atomic.Int64
	for i := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), seed))
			for range rounds {
				if round(rng) {
					ok.Add(1)
				} else {
					not.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(ok.Load()), int(not.Load())
}
