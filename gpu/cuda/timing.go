package cuda

import (
	"slices"
	"sync"
	"time"
)

// OpTime is the device time of one kind of library call.
type OpTime struct {
	Calls int64
	Time  time.Duration // summed over the calls
	// Scratch is the most device scratch one call held at once, in bytes:
	// the library's stream-ordered allocations of the call, counted from
	// allocation to release in the order the host issued them.
	Scratch uint64
}

// Timings is what a Device's library calls took on the GPU, measured with
// CUDA events on each call's stream: a call's span runs from an event
// recorded on its stream as it starts to one recorded when it has finished.
// Busy is the union of all spans — the time at least one call was on the
// device — so Busy over a wall-clock interval is the device's occupancy,
// whatever the number of concurrent calls. Figures accumulate from Open;
// subtract two readings for an interval.
type Timings struct {
	Ops  map[string]OpTime // by operation name ("MSMG1", "R1CSEval", …)
	Busy time.Duration
}

// span is one call's time on the device, in ms since the device's epoch.
type span struct{ start, end float64 }

// timer accumulates the spans of a device's calls.
type timer struct {
	mu     sync.Mutex
	ops    map[string]OpTime
	spans  []span  // not yet folded into busy, in arrival order
	busy   float64 // ms of union folded so far, all before folded
	folded float64 // spans ending before this have been folded
}

// keepMS is how long a span stays unfolded after the latest end seen: a
// call that started earlier and finishes later than this is counted from
// the fold point on.
const keepMS = 120e3

func (t *timer) add(op string, s span, scratch uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ops == nil {
		t.ops = make(map[string]OpTime)
	}
	o := t.ops[op]
	o.Calls++
	o.Time += time.Duration((s.end - s.start) * float64(time.Millisecond))
	o.Scratch = max(o.Scratch, scratch)
	t.ops[op] = o
	t.spans = append(t.spans, s)
	if len(t.spans) >= 4096 {
		t.fold()
	}
}

// fold merges the spans and moves those that ended more than keepMS before
// the latest end into busy.
func (t *timer) fold() {
	merged := union(t.spans)
	if len(merged) == 0 {
		return
	}
	cut := merged[len(merged)-1].end - keepMS
	var rest []span
	for _, m := range merged {
		switch {
		case m.end <= cut:
			if m.end > t.folded {
				t.busy += m.end - max(m.start, t.folded)
			}
		default:
			rest = append(rest, m)
		}
	}
	t.folded = max(t.folded, cut)
	t.spans = rest
}

// union sorts spans and merges the overlapping ones.
func union(spans []span) []span {
	s := slices.Clone(spans)
	slices.SortFunc(s, func(a, b span) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	var out []span
	for _, x := range s {
		if n := len(out); n > 0 && x.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}

func (t *timer) read() Timings {
	t.mu.Lock()
	defer t.mu.Unlock()
	busy := t.busy
	for _, m := range union(t.spans) {
		if m.end > t.folded {
			busy += m.end - max(m.start, t.folded)
		}
	}
	ops := make(map[string]OpTime, len(t.ops))
	for k, v := range t.ops {
		ops[k] = v
	}
	return Timings{Ops: ops, Busy: time.Duration(busy * float64(time.Millisecond))}
}

// Timings returns the device time of the calls made so far.
func (d *Device) Timings() Timings { return d.timer.read() }
