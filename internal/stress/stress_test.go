package stress

import (
	"math/rand/v2"
	"sync"
	"testing"
)

func TestRun(t *testing.T) {
	var mu sync.Mutex
	first := map[uint64]int{}
	passed, failed := Run(4, 10, 7, func(rng *rand.Rand) bool {
		v := rng.Uint64()
		mu.Lock()
		first[v]++
		mu.Unlock()
		return v%2 == 0
	})
	if passed+failed != 40 {
		t.Fatalf("%d + %d calls, want 40", passed, failed)
	}
	want := 0
	for i := range 4 {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		for range 10 {
			v := rng.Uint64()
			if first[v] == 0 {
				t.Fatalf("worker %d: value %x not drawn", i, v)
			}
			if v%2 == 0 {
				want++
			}
		}
	}
	if passed != want {
		t.Fatalf("%d calls passed, want %d", passed, want)
	}
}
