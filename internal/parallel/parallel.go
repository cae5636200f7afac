// Package parallel runs independent pieces of work on all cores: checks
// and decodings of a proof's parts, reporting failures as a sequential loop
// would, and passes over large vectors cut into pieces. Its loops, and
// r1cs.Group's parts, share one count of goroutines doing loop work, kept
// below GOMAXPROCS less the Ps a prover reserves for the goroutines that
// feed its GPUs (Reserve).
package parallel

import (
	"context"
	"runtime"
	"sync/atomic"
)

// FirstError calls f(i) for every i in [0, n) on up to GOMAXPROCS
// goroutines (see Reserve) and returns the error of the lowest i whose call
// failed, or nil: the error a loop stopping at the first failure returns,
// whatever the order the calls end in. Every call runs, even after a
// failure.
func FirstError(n int, f func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	spread(min(runtime.GOMAXPROCS(0), n), func() {
		for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
			errs[i] = f(i)
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Each calls f(k) for every k in [0, n) on up to GOMAXPROCS goroutines (see
// Reserve), each taking the next k when it has finished one, and returns
// once every call has returned. Once ctx ends no further call starts and
// Each returns ctx's error; pieces small enough to take about a millisecond
// bound how late that is.
func Each(ctx context.Context, n int, f func(k int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var next atomic.Int64
	spread(min(runtime.GOMAXPROCS(0), n), func() {
		for k := int(next.Add(1)) - 1; k < n && ctx.Err() == nil; k = int(next.Add(1)) - 1 {
			f(k)
		}
	})
	return ctx.Err()
}

// FirstUnsorted returns the lowest position j at which idx[j] ≥ n or
// idx[j] ≤ idx[j−1], or −1 when idx increases strictly below n. It reads
// idx in pieces on all cores (an index list of a 2^27-value witness).
func FirstUnsorted(idx []uint32, n int) int {
	const piece = 1 << 20
	pieces := (len(idx) + piece - 1) / piece
	first := make([]int, pieces)
	_ = Each(context.Background(), pieces, func(k int) {
		first[k] = -1
		for j := k * piece; j < min(len(idx), (k+1)*piece); j++ {
			if i := idx[j]; int(i) >= n || (j > 0 && i <= idx[j-1]) {
				first[k] = j
				break
			}
		}
	})
	for _, j := range first {
		if j >= 0 {
			return j
		}
	}
	return -1
}
