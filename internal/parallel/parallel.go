// Package parallel runs independent pieces of work on all cores: checks
// and decodings of a proof's parts, reporting failures as a sequential loop
// would, and passes over large vectors cut into pieces.
package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// FirstError calls f(i) for every i in [0, n) on up to GOMAXPROCS
// goroutines and returns the error of the lowest i whose call failed, or
// nil: the error a loop stopping at the first failure returns, whatever
// the order the calls end in. Every call runs, even after a failure.
func FirstError(n int, f func(i int) error) error {
	errs := make([]error, n)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error {
			errs[i] = f(i)
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Each calls f(k) for every k in [0, n) on up to GOMAXPROCS goroutines,
// each taking the next k when it has finished one, and returns once every
// call has returned. Once ctx ends no further call starts and Each returns
// ctx's error; pieces small enough to take about a millisecond bound how
// late that is.
func Each(ctx context.Context, n int, f func(k int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int(next.Add(1)) - 1; k < n && ctx.Err() == nil; k = int(next.Add(1)) - 1 {
				f(k)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// FirstUnsorted returns the lowest position j at which idx[j] ≥ n or
// idx[j] ≤ idx[j−1], or −1 when idx increases strictly below n. It reads
// idx in pieces on all cores (an index list of a 2^27-value witness).
func FirstUnsorted(idx []uint32, n int) int {
	const piece = 1 << 20
	pieces := (len(idx) + piece - 1) / piece
	first := make([]int, pieces)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k := range pieces {
		g.Go(func() error {
			first[k] = -1
			for j := k * piece; j < min(len(idx), (k+1)*piece); j++ {
				if i := idx[j]; int(i) >= n || (j > 0 && i <= idx[j-1]) {
					first[k] = j
					break
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	for _, j := range first {
		if j >= 0 {
			return j
		}
	}
	return -1
}
