// Package gputest provides a fault-injecting [gpu.Device] for tests of the
// proving pipeline, as net/http/httptest does for HTTP handlers: [NewFake]
// wraps a device (the CPU reference by default), simulates a device memory
// of a chosen size and injects errors, corrupt results and hangs at chosen
// stages.
package gputest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/pool"
)

// Fault is a failure a Fake device injects into matching calls.
type Fault struct {
	Stage   gpu.Stage
	Section gpu.Section // the section an MSM stage must touch; zero matches all
	Skip    int         // matching calls let through before the first injection
	Times   int         // injections (0: one; < 0: every matching call from then on)
	// What happens; exactly one of:
	Err     error // returned wrapped in *gpu.Error (gpu.ErrOutOfMemory, gpu.ErrKernel…); gpu.ErrDeviceLost kills the device
	Corrupt bool  // the call succeeds with a wrong, well-formed result
	Hang    bool  // the call blocks until its context ends
}

// FakeOptions configures a Fake device.
type FakeOptions struct {
	Name  string     // default "fake"
	Inner gpu.Device // does the arithmetic; default gpu.NewCPU with a large budget
	// Memory is the simulated device memory (the budget's total); default
	// 1 GiB.
	Memory int64
	// SlotBytes and KeyBytes are what a slot and a loaded key occupy;
	// default Inner's slot size and 0.
	SlotBytes, KeyBytes int64
	G2                  bool          // Info().G2
	HostG2              float64       // Info().HostG2
	Delay               time.Duration // added to every stage call, honouring its context
	Faults              []Fault
	// HostAlloc is returned by HostAllocator (nil: the Go heap), to stand
	// for a device's pinned host memory.
	HostAlloc pool.Allocator
	// Streams names the sections whose batch additions a loaded key sums
	// itself ([gpu.StreamedKey]), each call in an inner slot of its own, as
	// a key streamed from the host does; faults match those calls as the
	// slots' batch additions.
	Streams []gpu.Section
}

// Fake wraps a device to simulate device memory and inject faults at chosen
// stages, for tests of the pipeline's budgets and failure handling. Besides
// the budget it keeps its own count of the memory it hands out and records
// any moment that would exceed the device (see Memory), so tests can check
// the budget discipline independently of the budget's own bookkeeping.
type Fake struct {
	o      FakeOptions
	budget *pool.Budget

	mu          sync.Mutex
	faults      []faultState
	calls       map[gpu.Stage]int
	lost        bool
	closed      bool
	phys, peak  int64
	overcommits int
	liveSlots   int
	liveKeys    int
	keyCalls    int
}

type faultState struct {
	Fault
	seen, fired int
}

// NewFake returns a Fake device.
func NewFake(o FakeOptions) *Fake {
	if o.Name == "" {
		o.Name = "fake"
	}
	if o.Inner == nil {
		o.Inner = gpu.NewCPU(gpu.CPUOptions{Memory: 1 << 40, Slots: 1 << 20})
	}
	if o.Memory <= 0 {
		o.Memory = 1 << 30
	}
	f := &Fake{o: o, budget: pool.NewBudget(o.Name, o.Memory), calls: make(map[gpu.Stage]int)}
	for _, x := range o.Faults {
		f.faults = append(f.faults, faultState{Fault: x})
	}
	return f
}

// Info implements [gpu.Device].
func (f *Fake) Info() gpu.Info {
	return gpu.Info{Name: f.o.Name, Kind: gpu.KindFake, Memory: f.o.Memory, G2: f.o.G2, HostG2: f.o.HostG2}
}

// Budget implements [gpu.Device].
func (f *Fake) Budget() *pool.Budget { return f.budget }

// HostAllocator implements [gpu.HostAllocator].
func (f *Fake) HostAllocator() pool.Allocator { return f.o.HostAlloc }

// Calls returns how many calls of stage were made (injected or not).
func (f *Fake) Calls(stage gpu.Stage) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[stage]
}

// KeyCalls returns how many batch additions went through a key
// (FakeOptions.Streams).
func (f *Fake) KeyCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keyCalls
}

// Lost reports whether an injected gpu.ErrDeviceLost killed the device.
func (f *Fake) Lost() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lost
}

// Live returns the slots and keys not yet released.
func (f *Fake) Live() (slots, keys int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.liveSlots, f.liveKeys
}

// Memory returns the simulated memory in use, its peak, and how many times
// an allocation would have exceeded the device.
func (f *Fake) Memory() (inUse, peak int64, overcommits int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.phys, f.peak, f.overcommits
}

func (f *Fake) alloc(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.phys += n
	if f.phys > f.peak {
		f.peak = f.phys
	}
	if f.phys > f.o.Memory {
		f.overcommits++
	}
}

func (f *Fake) free(n int64) {
	f.mu.Lock()
	f.phys -= n
	f.mu.Unlock()
}

func (f *Fake) err(stage gpu.Stage, sec gpu.Section, err error) error {
	return &gpu.Error{Device: f.o.Name, Stage: stage, Section: sec, Err: err}
}

// enter records a call and returns the fault to apply, if any.
func (f *Fake) enter(ctx context.Context, stage gpu.Stage, sec gpu.Section) (corrupt bool, err error) {
	f.mu.Lock()
	f.calls[stage]++
	if f.closed {
		f.mu.Unlock()
		return false, f.err(stage, sec, gpu.ErrClosed)
	}
	if f.lost {
		f.mu.Unlock()
		return false, f.err(stage, sec, gpu.ErrDeviceLost)
	}
	var hit *faultState
	for i := range f.faults {
		x := &f.faults[i]
		if x.Stage != stage || (x.Section != 0 && x.Section != sec) {
			continue
		}
		x.seen++
		if x.seen <= x.Skip || (x.Times >= 0 && x.fired >= max(x.Times, 1)) {
			continue
		}
		x.fired++
		hit = x
		break
	}
	if hit != nil && hit.Err == gpu.ErrDeviceLost {
		f.lost = true
	}
	f.mu.Unlock()

	if hit != nil {
		switch {
		case hit.Hang:
			<-ctx.Done()
			return false, ctx.Err()
		case hit.Corrupt:
			return true, nil
		case hit.Err != nil:
			return false, f.err(stage, sec, hit.Err)
		}
	}
	if f.o.Delay > 0 {
		t := time.NewTimer(f.o.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return false, ctx.Err()
}

type fakeKey struct {
	f     *Fake
	inner gpu.Key
	once  sync.Once
	res   *pool.Reservation
}

func (k *fakeKey) ProvingKey() *groth16.ProvingKey { return k.inner.ProvingKey() }

// Streams implements [gpu.StreamedKey] for the sections FakeOptions.Streams
// names.
func (k *fakeKey) Streams(sec gpu.Section) bool { return slices.Contains(k.f.o.Streams, sec) }

// BatchAddG1 implements [gpu.StreamedKey].
func (k *fakeKey) BatchAddG1(ctx context.Context, sec gpu.Section, ones []uint64) (bls.G1Jac, error) {
	return keyCall(ctx, k, sec, g1Gen, func(s gpu.Slot) (bls.G1Jac, error) { return s.BatchAddG1(ctx, sec, ones) })
}

// BatchAddG2 implements [gpu.StreamedKey].
func (k *fakeKey) BatchAddG2(ctx context.Context, ones []uint64) (bls.G2Jac, error) {
	return keyCall(ctx, k, gpu.SectionBG2, g2Gen, func(s gpu.Slot) (bls.G2Jac, error) { return s.BatchAddG2(ctx, ones) })
}

// keyCall is a batch addition of k over a section it streams, done by an
// inner slot of its own.
func keyCall[J any, PJ interface {
	*J
	AddAssign(*J) *J
}](ctx context.Context, k *fakeKey, sec gpu.Section, gen J, do func(gpu.Slot) (J, error)) (J, error) {
	var zero J
	if !k.Streams(sec) {
		return zero, k.f.err(gpu.StageBatchAdd, sec, fmt.Errorf("%w: the key does not stream %s", gpu.ErrBadArgument, sec))
	}
	k.f.mu.Lock()
	k.f.keyCalls++
	k.f.mu.Unlock()
	return call[J, PJ](ctx, k.f, gpu.StageBatchAdd, sec, gen, func() (J, error) {
		s, err := k.f.o.Inner.Acquire(ctx, k.inner)
		if err != nil {
			return zero, err
		}
		defer s.Release()
		return do(s)
	})
}

func (k *fakeKey) Release() {
	k.once.Do(func() {
		k.inner.Release()
		k.f.free(k.f.o.KeyBytes)
		k.res.Release()
		k.f.mu.Lock()
		k.f.liveKeys--
		k.f.mu.Unlock()
	})
}

// LoadKey implements [gpu.Device], charging KeyBytes.
func (f *Fake) LoadKey(ctx context.Context, pk *groth16.ProvingKey) (gpu.Key, error) {
	if _, err := f.enter(ctx, gpu.StageLoadKey, 0); err != nil {
		return nil, err
	}
	res, err := f.budget.Reserve(ctx, f.o.KeyBytes)
	if err != nil {
		return nil, err
	}
	inner, err := f.o.Inner.LoadKey(ctx, pk)
	if err != nil {
		res.Release()
		return nil, err
	}
	f.alloc(f.o.KeyBytes)
	f.mu.Lock()
	f.liveKeys++
	f.mu.Unlock()
	return &fakeKey{f: f, inner: inner, res: res}, nil
}

// SlotBytes implements [gpu.Device].
func (f *Fake) SlotBytes(key gpu.Key) int64 {
	if f.o.SlotBytes > 0 {
		return f.o.SlotBytes
	}
	if k, ok := key.(*fakeKey); ok {
		return f.o.Inner.SlotBytes(k.inner)
	}
	return 0
}

// Acquire implements [gpu.Device].
func (f *Fake) Acquire(ctx context.Context, key gpu.Key) (gpu.Slot, error) {
	k, ok := key.(*fakeKey)
	if !ok {
		return nil, f.err(gpu.StageAcquire, 0, fmt.Errorf("%w: key was not loaded by this device", gpu.ErrBadArgument))
	}
	if _, err := f.enter(ctx, gpu.StageAcquire, 0); err != nil {
		return nil, err
	}
	n := f.SlotBytes(key)
	res, err := f.budget.Reserve(ctx, n)
	if err != nil {
		return nil, err
	}
	inner, err := f.o.Inner.Acquire(ctx, k.inner)
	if err != nil {
		res.Release()
		return nil, err
	}
	f.alloc(n)
	f.mu.Lock()
	f.liveSlots++
	f.mu.Unlock()
	return &fakeSlot{f: f, inner: inner, res: res, n: n}, nil
}

// Close implements [gpu.Device].
func (f *Fake) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return f.o.Inner.Close()
}

type fakeSlot struct {
	f     *Fake
	inner gpu.Slot
	res   *pool.Reservation
	n     int64
	once  sync.Once
}

func (s *fakeSlot) Release() {
	s.once.Do(func() {
		s.inner.Release()
		s.f.free(s.n)
		s.res.Release()
		s.f.mu.Lock()
		s.f.liveSlots--
		s.f.mu.Unlock()
	})
}

// The generators, added to a result to corrupt it (well-formed and wrong).
var g1Gen, g2Gen, _, _ = bls.Generators()

// call runs a stage call on f: the fault enter injects, else do, its
// result corrupted by adding gen when the fault says so.
func call[J any, PJ interface {
	*J
	AddAssign(*J) *J
}](ctx context.Context, f *Fake, stage gpu.Stage, sec gpu.Section, gen J, do func() (J, error)) (J, error) {
	corrupt, err := f.enter(ctx, stage, sec)
	if err != nil {
		var zero J
		return zero, err
	}
	r, err := do()
	if corrupt && err == nil {
		PJ(&r).AddAssign(&gen)
	}
	return r, err
}

func (s *fakeSlot) ComputeH(ctx context.Context, a, b, c []fr.Element) (bls.G1Jac, error) {
	return call(ctx, s.f, gpu.StageH, gpu.SectionH, g1Gen, func() (bls.G1Jac, error) { return s.inner.ComputeH(ctx, a, b, c) })
}

func (s *fakeSlot) BatchAddG1(ctx context.Context, sec gpu.Section, ones []uint64) (bls.G1Jac, error) {
	return call(ctx, s.f, gpu.StageBatchAdd, sec, g1Gen, func() (bls.G1Jac, error) { return s.inner.BatchAddG1(ctx, sec, ones) })
}

func (s *fakeSlot) BatchAddG2(ctx context.Context, ones []uint64) (bls.G2Jac, error) {
	return call(ctx, s.f, gpu.StageBatchAdd, gpu.SectionBG2, g2Gen, func() (bls.G2Jac, error) { return s.inner.BatchAddG2(ctx, ones) })
}

func (s *fakeSlot) TailG1(ctx context.Context, sec gpu.Section, idx []uint32, scalars []fr.Element) (bls.G1Jac, error) {
	return call(ctx, s.f, gpu.StageTail, sec, g1Gen, func() (bls.G1Jac, error) { return s.inner.TailG1(ctx, sec, idx, scalars) })
}

func (s *fakeSlot) TailG2(ctx context.Context, idx []uint32, scalars []fr.Element) (bls.G2Jac, error) {
	return call(ctx, s.f, gpu.StageTail, gpu.SectionBG2, g2Gen, func() (bls.G2Jac, error) { return s.inner.TailG2(ctx, idx, scalars) })
}

// ReadBasesG2 implements [gpu.G2Reader] when the inner slot does; faults
// match it as the B_G2 tail stage (Corrupt: the first base is replaced by
// the generator).
func (s *fakeSlot) ReadBasesG2(ctx context.Context, idx []uint32, dst []bls.G2Affine) error {
	corrupt, err := s.f.enter(ctx, gpu.StageTail, gpu.SectionBG2)
	if err != nil {
		return err
	}
	r, ok := s.inner.(gpu.G2Reader)
	if !ok {
		return s.f.err(gpu.StageTail, gpu.SectionBG2, fmt.Errorf("%w: the inner slot cannot read bases", gpu.ErrBadArgument))
	}
	if err := r.ReadBasesG2(ctx, idx, dst); err != nil {
		return err
	}
	if corrupt && len(dst) > 0 {
		dst[0].FromJacobian(&g2Gen)
	}
	return nil
}
