//go:build linux

package parallel

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkSyscallReturn measures how long a goroutine that comes back from
// a blocking call (a 20 ms nanosleep, as a library call that waits for the
// GPU) takes to run Go code again beside CPU-bound work: spinning
// goroutines (as many as GOMAXPROCS take every P, one fewer leave one), or
// an Each loop of spinning pieces with no P reserved or one (Reserve). The
// call gives up its P while it blocks; coming back, it waits for a free
// P, and with none free, for a busy goroutine's preemption.
func BenchmarkSyscallReturn(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	spinFor := func(stop *atomic.Bool, d time.Duration) {
		x, t0 := uint64(1), time.Now()
		for !stop.Load() && (d == 0 || time.Since(t0) < d) {
			for range 1 << 12 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		_ = x
	}
	for _, spin := range []int{0, procs - 1, procs} {
		b.Run(fmt.Sprintf("spin=%d/procs=%d", spin, procs), func(b *testing.B) {
			lateReturns(b, func(stop *atomic.Bool) {
				var wg sync.WaitGroup
				for range spin {
					wg.Add(1)
					go func() {
						defer wg.Done()
						spinFor(stop, 0)
					}()
				}
				wg.Wait()
			})
		})
	}
	for _, reserve := range []int{0, 1} {
		b.Run(fmt.Sprintf("each/reserve=%d/procs=%d", reserve, procs), func(b *testing.B) {
			defer Reserve(reserve)()
			lateReturns(b, func(stop *atomic.Bool) {
				_ = Each(context.Background(), 1<<30, func(int) {
					if !stop.Load() {
						spinFor(stop, time.Millisecond)
					}
				})
			})
		})
	}
}

// lateReturns runs load on a goroutine until the benchmark's sleeps are
// done and reports how late, on average, each 20 ms sleep returned.
func lateReturns(b *testing.B, load func(stop *atomic.Bool)) {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		load(&stop)
	}()
	time.Sleep(10 * time.Millisecond) // the load under way
	const sleep = 20 * time.Millisecond
	ts := unix.NsecToTimespec(int64(sleep))
	var late time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		left := ts
		for {
			// The runtime's preemption signals interrupt the sleep.
			err := unix.Nanosleep(&left, &left)
			if err == nil {
				break
			}
			if err != unix.EINTR {
				b.Fatal(err)
			}
		}
		late += time.Since(t0) - sleep
	}
	b.StopTimer()
	stop.Store(true)
	<-done
	b.ReportMetric(float64(late.Microseconds())/1e3/float64(b.N), "ms-late/return")
}
