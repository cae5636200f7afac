package c2

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/sealc2/c2/gpu"
)

// Counters: stage times summed over partitions, device busy time, memory
// peaks.

// stats accumulates stage times over all partitions, in nanoseconds.
type stats struct {
	prep, h, batch, tail, bg2, epilogue, verify atomic.Int64
}

func (s *stats) add(acc *atomic.Int64, d time.Duration) { acc.Add(int64(d)) }

// name returns the stage an accumulator of s counts, for logs.
func (s *stats) name(acc *atomic.Int64) string {
	switch acc {
	case &s.prep:
		return "prep"
	case &s.h:
		return "h"
	case &s.batch:
		return "batch-add"
	case &s.tail:
		return "tail-msm"
	case &s.bg2:
		return "b_g2"
	case &s.epilogue:
		return "epilogue"
	case &s.verify:
		return "verify"
	}
	return "?"
}

// busyClock measures the time during which at least one stage runs on a
// device.
type busyClock struct {
	mu     sync.Mutex
	active int
	since  time.Time
	total  time.Duration
}

func (b *busyClock) start() {
	b.mu.Lock()
	if b.active == 0 {
		b.since = time.Now()
	}
	b.active++
	b.mu.Unlock()
}

func (b *busyClock) stop() {
	b.mu.Lock()
	b.active--
	if b.active == 0 {
		b.total += time.Since(b.since)
	}
	b.mu.Unlock()
}

func (b *busyClock) read() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.total
	if b.active > 0 {
		t += time.Since(b.since)
	}
	return t
}

// StageTimes are stage durations summed over partitions. Stages of
// different partitions overlap, so the sum may exceed the wall time.
type StageTimes struct {
	Prep     time.Duration // evaluate a, b, c; check; classify (CPU)
	H        time.Duration // NTTs and the H MSM (device)
	BatchAdd time.Duration // sums of unit-scalar bases (device)
	Tail     time.Duration // tail or full MSMs (device)
	BG2      time.Duration // B_G2 tail MSM on the CPU
	Epilogue time.Duration // randomization and assembly (CPU)
	Verify   time.Duration // batch verification (CPU)
}

// DeviceStats describes one device's share of the work.
type DeviceStats struct {
	Name       string
	Partitions int           // partitions completed
	Busy       time.Duration // time with at least one stage running (host clock)
	// DeviceBusy and DeviceOps are the device's own timing of its work
	// (CUDA events), for devices that measure it: the time at least one
	// operation ran, and the time by operation summed over calls.
	DeviceBusy time.Duration
	DeviceOps  map[string]time.Duration
	PeakMemory int64 // peak bytes reserved from its budget
	Budget     int64 // the budget's total
	Failed     error // why it left the rotation, nil if it did not
}

// Stats is a snapshot of a Prover's counters since New or ResetStats.
type Stats struct {
	Stages   StageTimes
	Devices  []DeviceStats
	HostPeak int64 // peak bytes of partition buffers on the host
}

// Stats returns the counters so far.
func (p *Prover) Stats() Stats {
	var s Stats
	s.Stages = StageTimes{
		Prep: time.Duration(p.st.prep.Load()), H: time.Duration(p.st.h.Load()),
		BatchAdd: time.Duration(p.st.batch.Load()), Tail: time.Duration(p.st.tail.Load()),
		BG2: time.Duration(p.st.bg2.Load()), Epilogue: time.Duration(p.st.epilogue.Load()),
		Verify: time.Duration(p.st.verify.Load()),
	}
	for _, d := range append(p.devs, p.fall) {
		if d == p.fall && d.done.Load() == 0 {
			continue
		}
		d.mu.Lock()
		failed := d.err
		d.mu.Unlock()
		ds := DeviceStats{
			Name: d.name, Partitions: int(d.done.Load()), Busy: d.busy.read(),
			PeakMemory: d.Budget().Peak(), Budget: d.Budget().Total(), Failed: failed,
		}
		if t, ok := d.Device.(gpu.Timed); ok {
			dt := t.DeviceTimes()
			ds.DeviceBusy, ds.DeviceOps = dt.Busy, dt.Ops
		}
		s.Devices = append(s.Devices, ds)
	}
	s.HostPeak = p.host.Stats().Peak
	return s
}
