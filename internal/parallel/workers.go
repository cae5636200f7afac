package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The loops of this package and r1cs.Group run their pieces on extra
// goroutines, which start only while fewer than GOMAXPROCS less the
// reserved Ps (Reserve) goroutines do loop work; the loop's caller waits
// for them, and does the work itself only when none could start. So a
// goroutine that comes back from a blocking call (a GPU library call
// waiting on its stream) finds a P free instead of waiting for a busy
// goroutine's preemption, up to 10 ms (BenchmarkSyscallReturn), and a loop
// nested in another's piece still runs: on its caller, when no room is left.
var (
	busy     atomic.Int64 // goroutines doing loop work: extras, and callers working inline
	reserved atomic.Int64 // Ps kept free by Reserve
)

// Reserve keeps n more Ps free of the loops' goroutines until release is
// called (once; later calls do nothing). A prover reserves Ps for the
// goroutines that feed its GPUs.
func Reserve(n int) (release func()) {
	reserved.Add(int64(n))
	var once sync.Once
	return func() { once.Do(func() { reserved.Add(-int64(n)) }) }
}

// Room returns how many goroutines may do loop work at once now (callers
// working inline may exceed it): GOMAXPROCS less the reserved Ps, at least
// one.
func Room() int {
	return max(1, runtime.GOMAXPROCS(0)-int(reserved.Load()))
}

// TryExtra takes room for one extra goroutine and reports whether it did;
// the goroutine calls Done when it ends.
func TryExtra() bool {
	limit := int64(Room())
	for {
		n := busy.Load()
		if n >= limit {
			return false
		}
		if busy.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Done gives back the room TryExtra took.
func Done() { busy.Add(-1) }

// Inline runs f on the caller's goroutine, counted as loop work (beyond the
// room if need be): a loop's work when no extra goroutine could start.
func Inline(f func()) {
	busy.Add(1)
	defer Done()
	f()
}

// spread runs work on up to want extra goroutines, as many as TryExtra
// allows, or on the caller's when none could start, and returns when all
// have returned. Each runs work until it returns: work takes its own
// pieces.
func spread(want int, work func()) {
	var wg sync.WaitGroup
	n := 0
	for ; n < want && TryExtra(); n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer Done()
			work()
		}()
	}
	if n == 0 {
		Inline(work)
	}
	wg.Wait()
}
