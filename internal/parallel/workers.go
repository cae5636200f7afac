package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The loops of this package and r1cs.Group run on their caller's goroutine
// and on extra goroutines. An extra starts only while fewer than
// GOMAXPROCS less the reserved Ps (Reserve) goroutines do loop work, the
// loops' callers counted: a goroutine that comes back from a blocking call
// (a GPU library call waiting on its stream) then finds a P free instead
// of waiting for a busy goroutine's preemption, up to 10 ms
// (BenchmarkSyscallReturn). A loop that finds no room runs on its caller
// alone, so nested loops cannot deadlock.
var (
	busy     atomic.Int64 // goroutines doing loop work: callers and extras
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

// Room returns how many goroutines may do loop work at once now: GOMAXPROCS
// less the reserved Ps, at least one.
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

// Done gives back the room TryExtra or a loop's caller took.
func Done() { busy.Add(-1) }

// spread runs work on the caller's goroutine (counted as busy whatever the
// room) and on up to want−1 extra goroutines, as many as TryExtra allows,
// and returns when all have returned. Each runs work until it returns:
// work takes its own pieces.
func spread(want int, work func()) {
	busy.Add(1)
	defer Done()
	var wg sync.WaitGroup
	for range want - 1 {
		if !TryExtra() {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
