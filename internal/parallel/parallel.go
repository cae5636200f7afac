// Package parallel runs independent checks and decodings of a proof's
// parts on all cores and reports failures as a sequential loop would.
package parallel

import (
	"runtime"

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
