package cuda

import (
	"testing"
	"time"
)

func TestTimerUnion(t *testing.T) {
	var tm timer
	// Two overlapping calls [0, 10) and [5, 12), a separate one [20, 25).
	tm.add("MSMG1", span{0, 10}, 300)
	tm.add("NTT", span{20, 25}, 0)
	tm.add("MSMG1", span{5, 12}, 200)
	got := tm.read()
	if got.Busy != 17*time.Millisecond {
		t.Fatalf("busy %v, want 17ms", got.Busy)
	}
	if o := got.Ops["MSMG1"]; o.Calls != 2 || o.Time != 17*time.Millisecond || o.Scratch != 300 {
		t.Fatalf("MSMG1 %+v, want 2 calls, 17ms, 300 bytes of scratch at most", o)
	}
}

func TestTimerFold(t *testing.T) {
	var tm timer
	// Many back-to-back 1 ms calls on two streams, half overlapping: the
	// union is the covered time, also after folding old spans away.
	var want float64
	for i := range 10000 {
		s := float64(i) * 30
		tm.add("a", span{s, s + 10}, 0)
		tm.add("b", span{s + 5, s + 20}, 0)
		want += 20
	}
	if len(tm.spans) >= 4096 {
		t.Fatalf("%d spans kept: never folded", len(tm.spans))
	}
	got := tm.read()
	if d := got.Busy - time.Duration(want*float64(time.Millisecond)); d > time.Microsecond || d < -time.Microsecond {
		t.Fatalf("busy %v, want %vms", got.Busy, want)
	}
}

// TestDeviceTimings runs NTTs on two goroutines and checks the event
// timings: every call counted, the union no longer than the wall time and
// no shorter than the longest operation's share.
func TestDeviceTimings(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	before := d.Timings()
	t0 := time.Now()
	done := make(chan error, 2)
	for range 2 {
		v := randFr(rng, 1<<20)
		go func() {
			var err error
			for range 3 {
				if err = d.ntt(v, nttForward); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	wall := time.Since(t0)
	after := d.Timings()
	calls := after.Ops["NTT"].Calls - before.Ops["NTT"].Calls
	busy := after.Busy - before.Busy
	sum := after.Ops["NTT"].Time - before.Ops["NTT"].Time
	t.Logf("6 NTTs of 2^20: wall %v, device busy %v, summed %v", wall, busy, sum)
	if calls != 6 {
		t.Fatalf("%d NTT calls timed, want 6", calls)
	}
	if busy <= 0 || busy > wall || sum < busy-time.Microsecond { // float ms: sub-µs rounding
		t.Fatalf("busy %v, summed %v, wall %v: want 0 < busy ≤ wall and busy ≤ summed", busy, sum, wall)
	}
}
