//go:build linux

package parallel

import (
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
// GPU) takes to run Go code again, beside busy CPU-bound goroutines: as
// many as GOMAXPROCS (every P taken, as c2's parallel loops take them), or
// one fewer. The call gives up its P while it blocks; coming back, it waits
// for a free P, and with none free, for a busy goroutine's preemption.
func BenchmarkSyscallReturn(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	for _, busy := range []int{0, procs - 1, procs} {
		b.Run(fmt.Sprintf("busy=%d/procs=%d", busy, procs), func(b *testing.B) {
			var stop atomic.Bool
			var wg sync.WaitGroup
			for i := range busy {
				wg.Add(1)
				go func() {
					defer wg.Done()
					x := uint64(i + 1)
					for !stop.Load() {
						for range 1 << 16 {
							x = x*6364136223846793005 + 1442695040888963407
						}
					}
					_ = x
				}()
			}
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
			wg.Wait()
			b.ReportMetric(float64(late.Microseconds())/1e3/float64(b.N), "ms-late/return")
		})
	}
}
