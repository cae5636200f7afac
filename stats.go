package c2

import (
	"time"

	"github.com/sealc2/c2/gpu"
)

// StageTimes are stage durations summed over partitions. Stages of
// different partitions overlap, so the sum may exceed the wall time.
type StageTimes struct {
	Prep     time.Duration // evaluate a, b, c; check; classify (CPU)
	H        time.Duration // NTTs and the H MSM (device)
	BatchAdd time.Duration // sums of unit-scalar bases (device)
	Tail     time.Duration // tail or full MSMs (device)
	BG2      time.Duration // B_G2 tail MSM on the CPU (all of it, or the host's share)
	BG2Wait  time.Duration // waiting for the host's share once the device was done
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
	// DeviceScratch is, by operation, the most device memory one call
	// allocated for its own use at once, in bytes, since the device opened.
	DeviceScratch map[string]int64
	PeakMemory    int64 // peak bytes reserved from its budget
	Budget        int64 // the budget's total
	Failed        error // why it left the rotation, nil if it did not
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
		Prep: time.Duration(p.st.Prep.Load()), H: time.Duration(p.st.H.Load()),
		BatchAdd: time.Duration(p.st.Batch.Load()), Tail: time.Duration(p.st.Tail.Load()),
		BG2: time.Duration(p.st.BG2.Load()), BG2Wait: time.Duration(p.st.BG2Wait.Load()),
		Epilogue: time.Duration(p.st.Epilogue.Load()),
		Verify:   time.Duration(p.st.Verify.Load()),
	}
	devs := p.rot.Devices()
	if f := p.rot.Fallback(); f != nil && f.Completed() > 0 {
		devs = append(devs[:len(devs):len(devs)], f)
	}
	for _, d := range devs {
		ds := DeviceStats{
			Name: d.Name, Partitions: d.Completed(), Busy: d.Busy(),
			PeakMemory: d.Budget().Peak(), Budget: d.Budget().Total(), Failed: d.Failure(),
		}
		if t, ok := d.Device.(gpu.Timed); ok {
			dt := t.DeviceTimes()
			ds.DeviceBusy, ds.DeviceOps, ds.DeviceScratch = dt.Busy, dt.Ops, dt.Scratch
		}
		s.Devices = append(s.Devices, ds)
	}
	s.HostPeak = p.host.Stats().Peak
	return s
}
