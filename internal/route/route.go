// Package route sends partitions to devices and keeps the proving keys
// loaded on each.
//
// A [Rotation] holds the devices of a prover. [Rotation.Pick] sends a
// partition to the live device with the fewest partitions routed to it and
// not finished, among those below the per-device bound of the partition's
// circuit, and waits while every live device is full; a faster device
// therefore takes more partitions. The bounds (routed, prepared ahead,
// [Places]) are per circuit, so that one circuit's partitions never wait
// for another's. A device that fails leaves the rotation for good
// ([Rotation.Retire]). Once none is left, Pick returns the CPU fallback
// when the rotation has one, else no device.
//
// [Keys] loads each proving key onto each device at most once, on first
// use, and releases the loaded keys of a proving key on demand.
package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sealc2/c2/gpu"
)

// ErrNoDevice is returned (wrapped) when every device has failed and the
// rotation has no CPU fallback.
var ErrNoDevice = errors.New("c2: no usable device left")

// Device is one device of a Rotation with its counters.
type Device struct {
	gpu.Device
	Name string
	dead atomic.Bool
	load atomic.Int32 // partitions routed here and not finished
	busy clock
	done atomic.Int32 // partitions completed here
	// routed counts, by circuit, the partitions routed here and not
	// finished; guarded by the Rotation's mu.
	routed map[any]int32
	// ahead bounds, by circuit, the partitions prepared (or being
	// prepared) for this device and not yet admitted to it, so that host
	// buffers are not filled far ahead of what the device can take.
	ahead *Places
	mu    sync.Mutex
	err   error // why it left the rotation
}

func newDevice(d gpu.Device, name string, ahead int) *Device {
	return &Device{Device: d, Name: name, routed: make(map[any]int32), ahead: NewPlaces(ahead)}
}

// Live reports whether d is in the rotation.
func (d *Device) Live() bool { return !d.dead.Load() }

// Failure returns why d left the rotation, or nil.
func (d *Device) Failure() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Completed returns the partitions completed on d.
func (d *Device) Completed() int { return int(d.done.Load()) }

// Complete counts a partition completed on d.
func (d *Device) Complete() { d.done.Add(1) }

// Busy returns the time during which at least one stage ran on d.
func (d *Device) Busy() time.Duration { return d.busy.read() }

// Stage runs f as a stage on d, counted in d's busy time, and returns f's
// error and duration.
func (d *Device) Stage(f func() error) (time.Duration, error) {
	d.busy.start()
	defer d.busy.stop()
	t0 := time.Now()
	err := f()
	return time.Since(t0), err
}

// Ahead takes a place among the partitions of circuit prepared ahead for d
// (as many as the rotation's Options.Ahead) and returns admitted, which
// gives it back once the partition is admitted to d (more than one call
// does nothing). It returns ctx's error when ctx ends first.
func (d *Device) Ahead(ctx context.Context, circuit any) (admitted func(), err error) {
	return d.ahead.Take(ctx, circuit)
}

// Options configures a Rotation.
type Options struct {
	// Ahead is how many partitions of one circuit may be prepared for one
	// device and not yet admitted to it; a device takes at most 2×Ahead+1
	// partitions of one circuit routed and not finished. The bounds are a
	// circuit's, so that a short proof never queues behind another
	// circuit's partitions.
	Ahead int
	// Fallback, when not nil, takes the partitions once every device has
	// failed; it never leaves the rotation.
	Fallback gpu.Device
	// Log receives a warning when a device leaves and when the fallback
	// takes a partition; nil logs nothing.
	Log *slog.Logger
}

// Rotation routes partitions to its devices. It is safe for concurrent use.
type Rotation struct {
	devs []*Device
	fall *Device
	log  *slog.Logger
	most int32 // partitions of one circuit routed to one device and not finished

	mu    sync.Mutex
	freed chan struct{} // closed (and replaced) whenever a partition leaves a device
	last  error         // why the most recent device left
}

// New returns a rotation of devs, named by their Info, in this order.
func New(devs []gpu.Device, o Options) *Rotation {
	r := &Rotation{log: o.Log, most: int32(2*o.Ahead + 1), freed: make(chan struct{})}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	for _, d := range devs {
		r.devs = append(r.devs, newDevice(d, d.Info().Name, o.Ahead))
	}
	if o.Fallback != nil {
		r.fall = newDevice(o.Fallback, "cpu", o.Ahead)
	}
	return r
}

// Devices returns the devices in rotation order, live or not.
func (r *Rotation) Devices() []*Device { return r.devs }

// Fallback returns the CPU fallback, or nil.
func (r *Rotation) Fallback() *Device { return r.fall }

// IsFallback reports whether d is the CPU fallback.
func (r *Rotation) IsFallback(d *Device) bool { return d != nil && d == r.fall }

// Pick routes a partition of circuit (any comparable value naming it; c2
// uses the proving key): to the live device not in exclude with the fewest
// partitions routed to it (of any circuit; lowest index on ties) among
// those below the per-device bound for circuit, waiting for one to free a
// place when all are full; to the CPU fallback when no device is left; or
// nowhere (nil, nil). The caller calls Unload once the partition leaves
// the device. Pick returns ctx's error when ctx ends while it waits.
func (r *Rotation) Pick(ctx context.Context, circuit any, exclude map[*Device]bool) (*Device, error) {
	for {
		r.mu.Lock()
		var best *Device
		live := false
		for _, d := range r.devs {
			if d.dead.Load() || exclude[d] {
				continue
			}
			live = true
			if d.routed[circuit] >= r.most {
				continue
			}
			if best == nil || d.load.Load() < best.load.Load() {
				best = d
			}
		}
		if !live && r.fall != nil {
			best = r.fall
			r.log.Warn("c2: no device left: proving on the CPU fallback")
		}
		if best != nil || !live {
			if best != nil {
				best.load.Add(1)
				best.routed[circuit]++
			}
			r.mu.Unlock()
			return best, nil
		}
		freed := r.freed
		r.mu.Unlock()
		if err := await(ctx, freed); err != nil {
			return nil, err
		}
	}
}

// Unload records that a partition of circuit Pick routed to d left it, and
// wakes the partitions waiting for a device.
func (r *Rotation) Unload(d *Device, circuit any) {
	r.mu.Lock()
	d.load.Add(-1)
	if d.routed[circuit]--; d.routed[circuit] <= 0 {
		delete(d.routed, circuit)
	}
	close(r.freed)
	r.freed = make(chan struct{})
	r.mu.Unlock()
}

// Retire takes d out of the rotation for good; why is its Failure. The
// fallback and nil are never retired.
func (r *Rotation) Retire(d *Device, why error) {
	if d == nil || d == r.fall {
		return
	}
	r.log.Warn("c2: device taken out of rotation", "device", d.Name, "reason", why)
	r.mu.Lock()
	r.last = fmt.Errorf("%s: %w", d.Name, why)
	r.mu.Unlock()
	d.mu.Lock()
	if d.err == nil {
		d.err = why
	}
	d.mu.Unlock()
	d.dead.Store(true)
}

// NoDevice returns ErrNoDevice with the reason the last device left.
func (r *Rotation) NoDevice() error {
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	if last == nil {
		return ErrNoDevice
	}
	return fmt.Errorf("%w (last failure: %v)", ErrNoDevice, last)
}

// clock measures the time during which at least one stage runs on a
// device.
type clock struct {
	mu     sync.Mutex
	active int
	since  time.Time
	total  time.Duration
}

func (b *clock) start() {
	b.mu.Lock()
	if b.active == 0 {
		b.since = time.Now()
	}
	b.active++
	b.mu.Unlock()
}

func (b *clock) stop() {
	b.mu.Lock()
	b.active--
	if b.active == 0 {
		b.total += time.Since(b.since)
	}
	b.mu.Unlock()
}

func (b *clock) read() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.total
	if b.active > 0 {
		t += time.Since(b.since)
	}
	return t
}
