// Package c2 proves Filecoin PoRep commit phase 2 (C2) and Window/Winning
// PoSt: Groth16 proofs over BLS12-381, bit-compatible with bellperson, on
// GPUs when present and on the CPU otherwise.
//
// A [Prover] owns the devices and the memory budgets. Every partition goes
// through the same stages: preparation on the CPU (classify the witness into
// zeros, ones and a tail; on a device without the shape's R1CS also
// evaluate a, b, c), the device stages (a, b, c from the witness on a device
// that holds the R1CS, H, batch additions of the unit-scalar bases, tail
// MSMs), the B_G2 tail MSM on the CPU beside a device that leaves G2 to the
// CPU, and the epilogue. Partitions of one call and of concurrent calls
// share the devices: each partition waits for a live device with room and
// goes to the least loaded, which admits as many partitions at once as its
// memory budget holds, while the CPU prepares the next ones and finishes the
// previous ones. Every proof is verified before it is returned.
package c2

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// ErrNoDevice is returned (wrapped in a *PartitionError) when every device
// has failed and Config.CPUFallback is off.
var ErrNoDevice = errors.New("c2: no usable device left")

// ErrClosed is returned by calls on a closed Prover.
var ErrClosed = errors.New("c2: prover closed")

// PartitionError reports the failure of one partition.
type PartitionError struct {
	Index  int    // partition index within the call
	Device string // device it last ran on, "" if none
	Err    error
}

func (e *PartitionError) Error() string {
	if e.Device == "" {
		return fmt.Sprintf("c2: partition %d: %v", e.Index, e.Err)
	}
	return fmt.Sprintf("c2: partition %d on %s: %v", e.Index, e.Device, e.Err)
}

func (e *PartitionError) Unwrap() error { return e.Err }

// Prover proves partitions on a set of devices. It is safe for concurrent
// use; Close it when done.
type Prover struct {
	cfg  Config
	log  *slog.Logger // cfg.Logger, or one that discards
	cpu  *gpu.CPU     // b_g2 beside devices, and the fallback device
	devs []*device
	fall *device // the CPU as a device, used after every device failed
	host *pool.Pool
	prep chan struct{} // prep semaphore
	// serial is held through a whole partition when overlap is disabled.
	serial sync.Mutex

	pickMu sync.Mutex
	freed  chan struct{} // closed (and replaced) whenever a partition leaves a device
	keyMu  sync.Mutex    // guards the keys map, not the loads
	mu     sync.Mutex
	keys   map[keyID]*lazy[gpu.Key]
	files  map[*groth16.ProvingKey]*fileKey // keys read from .params files, by their key without bases
	closed bool
	// lastFailure is why the most recent device left the rotation.
	lastFailure error
	calls       sync.WaitGroup

	st stats

	shapesMu sync.Mutex
	shapes   map[string]*shapeCache // per sector shape: key and recorded R1CS
}

type keyID struct {
	pk  *groth16.ProvingKey
	dev *device
}

type device struct {
	gpu.Device
	name string
	dead atomic.Bool
	load atomic.Int32 // partitions routed here and not finished
	busy busyClock
	done atomic.Int32 // partitions completed here
	// ahead bounds the partitions prepared (or being prepared) for this
	// device and not yet admitted to it, so that host buffers are not
	// filled far ahead of what the device can take.
	ahead chan struct{}
	mu    sync.Mutex
	err   error // why it was taken out of rotation
}

// New returns a Prover for cfg.
func New(cfg Config) (*Prover, error) { return newProver(cfg, nil) }

// newProver is New proving on devs, when not nil, instead of the devices
// cfg's Backend and Devices select (test doubles); Close closes them.
func newProver(cfg Config, devs []gpu.Device) (*Prover, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Prover{
		cfg:   c,
		log:   log,
		cpu:   gpu.NewCPU(gpu.CPUOptions{Threads: c.Threads, Memory: c.HostMemory}),
		prep:  make(chan struct{}, c.PrepWorkers),
		keys:  make(map[keyID]*lazy[gpu.Key]),
		freed: make(chan struct{}),
	}
	switch {
	case devs != nil:
	case c.Backend == BackendCPU:
		devs = []gpu.Device{p.cpu}
	default:
		devs, err = openCUDA(c)
		if err != nil && c.Backend == BackendCUDA {
			return nil, err
		}
		if len(devs) == 0 {
			if c.Backend == BackendCUDA {
				return nil, ErrNoCUDA
			}
			devs = []gpu.Device{p.cpu}
		}
	}
	if len(devs) == 0 {
		return nil, errors.New("c2: no devices configured")
	}
	// Partition buffers in pinned memory when a device offers it.
	var alloc pool.Allocator
	for _, d := range devs {
		if h, ok := d.(gpu.HostAllocator); ok {
			alloc = h.HostAllocator()
			break
		}
	}
	p.host = pool.New(pool.NewBudget("host", c.HostMemory), alloc)
	for _, d := range devs {
		p.devs = append(p.devs, &device{Device: d, name: d.Info().Name, ahead: make(chan struct{}, c.PrepWorkers)})
	}
	p.fall = &device{Device: p.cpu, name: "cpu", ahead: make(chan struct{}, c.PrepWorkers)}
	return p, nil
}

// openCUDA opens the CUDA devices of c.
func openCUDA(c Config) ([]gpu.Device, error) {
	devs, err := gpu.OpenCUDA(c.Devices, c.VRAMMargin, c.VRAMBudget)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCUDA, err)
	}
	if c.SlotsPerDevice > 0 {
		for _, d := range devs {
			d.(*gpu.CUDA).SetSlots(c.SlotsPerDevice)
		}
	}
	return devs, nil
}

// Devices returns the names of the devices in rotation order.
func (p *Prover) Devices() []string {
	var out []string
	for _, d := range p.devs {
		out = append(out, d.name)
	}
	return out
}

// Close releases keys and devices, after the calls in progress return.
func (p *Prover) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.calls.Wait()
	p.dropShapes()
	p.keyMu.Lock()
	defer p.keyMu.Unlock()
	for pk, fk := range p.files {
		_ = fk.f.Close()
		delete(p.files, pk)
	}
	for id, l := range p.keys { // no load is in flight once the calls returned
		if k, ok := l.peek(); ok {
			k.Release()
		}
		delete(p.keys, id)
	}
	var errs []error
	for _, d := range p.devs {
		if d.Device != gpu.Device(p.cpu) {
			errs = append(errs, d.Close())
		}
	}
	errs = append(errs, p.cpu.Close())
	p.host.Close()
	return errors.Join(errs...)
}

// ProvePartitions proves each finalized, satisfied system under pk and
// returns the proofs in order, verified as a batch. The systems must fit pk
// (same shape); they are only read. On error it returns nil and a
// *PartitionError naming the first partition that failed, or ctx's error.
func (p *Prover) ProvePartitions(ctx context.Context, pk *groth16.ProvingKey, parts []*r1cs.System) ([]groth16.Proof, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.calls.Add(1)
	p.mu.Unlock()
	defer p.calls.Done()

	for i, sys := range parts {
		if !sys.Finalized() {
			return nil, &PartitionError{Index: i, Err: errors.New("system is not finalized")}
		}
		if err := groth16.CheckShape(pk, sys); err != nil {
			return nil, &PartitionError{Index: i, Err: err}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	proofs := make([]groth16.Proof, len(parts))
	origin := make([]*device, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	run := func(i int, exclude map[*device]bool) {
		defer wg.Done()
		var err error
		proofs[i], origin[i], err = p.provePartition(ctx, pk, parts[i], exclude)
		if err != nil {
			name := ""
			if origin[i] != nil {
				name = origin[i].name
			}
			errs[i] = &PartitionError{Index: i, Device: name, Err: err}
			cancel()
		}
	}
	for i := range parts {
		wg.Add(1)
		go run(i, nil)
	}
	wg.Wait()
	if err := firstError(ctx, errs); err != nil {
		return nil, err
	}

	inputs := make([][]fr.Element, len(parts))
	for i, sys := range parts {
		inputs[i] = sys.Inputs()[1:]
	}
	// A proof that does not verify came from a faulty device (the witness
	// was checked during preparation): take the device out of rotation and
	// prove the partition again elsewhere, as long as devices remain.
	for attempt := 0; ; attempt++ {
		t0 := time.Now()
		err := groth16.VerifyBatch(&pk.VK, proofs, inputs)
		p.st.add(&p.st.verify, time.Since(t0))
		if err == nil {
			return proofs, nil
		}
		var ve *groth16.VerifyError
		if !errors.As(err, &ve) || !errors.Is(err, groth16.ErrInvalidProof) || attempt > len(parts)+len(p.devs) {
			return nil, &PartitionError{Index: indexOf(ve), Err: err}
		}
		bad := origin[ve.Index]
		p.retire(bad, fmt.Errorf("partition %d: proof failed verification", ve.Index))
		wg.Add(1)
		run(ve.Index, map[*device]bool{bad: true})
		if err := firstError(ctx, errs); err != nil {
			return nil, err
		}
	}
}

func indexOf(ve *groth16.VerifyError) int {
	if ve == nil {
		return -1
	}
	return ve.Index
}

// firstError returns the error of the lowest failed partition, preferring a
// real failure over the cancellations it caused, or ctx's error.
func firstError(ctx context.Context, errs []error) error {
	var cancelled error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if cancelled == nil {
				cancelled = err
			}
			continue
		}
		return err
	}
	if cancelled != nil {
		return cancelled
	}
	return ctx.Err()
}

// noDevice returns ErrNoDevice with the reason the last device left.
func (p *Prover) noDevice() error {
	p.mu.Lock()
	last := p.lastFailure
	p.mu.Unlock()
	if last == nil {
		return ErrNoDevice
	}
	return fmt.Errorf("%w (last failure: %v)", ErrNoDevice, last)
}

// retire takes d out of rotation for good.
func (p *Prover) retire(d *device, why error) {
	if d == nil || d == p.fall {
		return
	}
	p.log.Warn("c2: device taken out of rotation", "device", d.name, "reason", why)
	p.mu.Lock()
	p.lastFailure = fmt.Errorf("%s: %w", d.name, why)
	p.mu.Unlock()
	d.mu.Lock()
	if d.err == nil {
		d.err = why
	}
	d.mu.Unlock()
	d.dead.Store(true)
}

// pick routes a partition: to the live device with the fewest partitions
// routed to it (lowest index on ties) among those with fewer than
// p.perDevice() in flight, waiting for one to free a place when all are
// full, so that a faster device takes more partitions; to the CPU fallback
// when no device is left and the config allows it; or nowhere (nil, nil).
// The caller calls p.unload(d) when the partition leaves the device.
func (p *Prover) pick(ctx context.Context, exclude map[*device]bool) (*device, error) {
	for {
		p.pickMu.Lock()
		var best *device
		live := false
		for _, d := range p.devs {
			if d.dead.Load() || exclude[d] {
				continue
			}
			live = true
			if d.load.Load() >= p.perDevice() {
				continue
			}
			if best == nil || d.load.Load() < best.load.Load() {
				best = d
			}
		}
		if !live && p.cfg.CPUFallback {
			best = p.fall
			p.log.Warn("c2: no device left: proving on the CPU fallback")
		}
		if best != nil || !live {
			if best != nil {
				best.load.Add(1)
			}
			p.pickMu.Unlock()
			return best, nil
		}
		freed := p.freed
		p.pickMu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// perDevice bounds the partitions routed to one device and not finished:
// those it proves plus those prepared ahead for it.
func (p *Prover) perDevice() int32 { return int32(2*p.cfg.PrepWorkers + 1) }

// unload records that a partition left d and wakes partitions waiting for
// a device.
func (p *Prover) unload(d *device) {
	p.pickMu.Lock()
	d.load.Add(-1)
	close(p.freed)
	p.freed = make(chan struct{})
	p.pickMu.Unlock()
}

// prepared is one partition after the CPU preparation stage. The
// classification (l, A, B) may still be running: it is valid once
// classified is closed, and classErr is nil. For the device's witness pass
// there are no a, b, c (buf is nil): the witness goes as l's split.
type prepared struct {
	buf        *pool.Buffer
	a, b, c    []fr.Element
	l, A, B    *split
	classified chan struct{}
	classErr   error
	// lDone is closed once l is classified (before A and B may be), with
	// lErr its error: the witness pass can start then.
	lDone chan struct{}
	lErr  error
}

// release waits for the classification and returns the host buffer.
func (pr *prepared) release() {
	<-pr.classified
	pr.freeABC()
}

func (pr *prepared) freeABC() {
	if pr.buf != nil {
		pr.buf.Release()
	}
}

// witness is the partition's assignment as the device takes it: L's
// classification covers every aux value, in order.
func (pr *prepared) witness(sys *r1cs.System) *gpu.Witness {
	return &gpu.Witness{Inputs: sys.Inputs(), NumAux: sys.NumAux(), Ones: pr.l.Ones, TailIdx: pr.l.TailIdx, Tail: pr.l.Tail}
}

// split is the classification of one MSM's scalars, or, when too few of
// them are 0 or 1 for splitting to pay, the dense scalar vector.
type split struct {
	*msm.Split
	full []fr.Element // non-nil: run one full MSM over these
}

// provePartition runs one partition to its (unverified) proof, retrying on
// another device when a device fails. It returns the device that computed it.
func (p *Prover) provePartition(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System, exclude map[*device]bool) (groth16.Proof, *device, error) {
	if exclude == nil {
		exclude = make(map[*device]bool)
	}
	for {
		if err := ctx.Err(); err != nil {
			return groth16.Proof{}, nil, err
		}
		d, err := p.pick(ctx, exclude)
		if err != nil {
			return groth16.Proof{}, nil, err
		}
		if d == nil {
			return groth16.Proof{}, nil, p.noDevice()
		}
		if !pk.HostBases() && p.fileOf(pk) == nil && !p.holds(pk, d) {
			// Only the device that made it has this key's bases.
			p.unload(d)
			exclude[d] = true
			if d == p.fall {
				return groth16.Proof{}, d, fmt.Errorf("%w: %w", ErrNoDevice, groth16.ErrNoHostBases)
			}
			continue
		}
		proof, err := p.proveOn(ctx, d, pk, sys)
		p.unload(d)
		if err == nil {
			return proof, d, nil
		}
		var de *gpu.Error
		if !errors.As(err, &de) || errors.Is(err, gpu.ErrBadArgument) || d == p.fall {
			return groth16.Proof{}, d, err
		}
		// The device failed: out of rotation, and this partition goes
		// elsewhere.
		p.retire(d, err)
		exclude[d] = true
	}
}

// proveOn runs the stages of one partition with d as its device.
func (p *Prover) proveOn(ctx context.Context, d *device, pk *groth16.ProvingKey, sys *r1cs.System) (groth16.Proof, error) {
	if p.cfg.DisableOverlap {
		p.serial.Lock()
		defer p.serial.Unlock()
	}
	key, err := p.key(ctx, d, pk, sys)
	if err != nil {
		return groth16.Proof{}, err
	}
	sk, ok := key.(gpu.ShapeKey)
	onDevice := ok && sk.Records(sys) // the device evaluates a, b, c

	// Look ahead by at most PrepWorkers partitions per device.
	select {
	case d.ahead <- struct{}{}:
	case <-ctx.Done():
		return groth16.Proof{}, ctx.Err()
	}
	var once sync.Once
	admitted := func() { once.Do(func() { <-d.ahead }) }
	defer admitted()

	select {
	case p.prep <- struct{}{}:
	case <-ctx.Done():
		return groth16.Proof{}, ctx.Err()
	}
	pr, err := p.prepare(ctx, pk, sys, !onDevice, func() { <-p.prep })
	if err != nil {
		return groth16.Proof{}, err
	}
	defer pr.release()

	// B_G2's tail on the CPU, when the device leaves it to us: started as
	// soon as the witness is classified, so it runs while the partition
	// waits for and uses the device (after the device stages without
	// overlap).
	var g2 *g2Job
	if !d.Info().G2 {
		g2 = &g2Job{done: make(chan struct{})}
		run := func() { p.runG2(ctx, key.ProvingKey(), pr, g2) }
		if p.cfg.DisableOverlap {
			g2.start = run
		} else {
			go run()
		}
		defer g2.join()
	}
	sums, err := p.deviceStages(ctx, d, key, pk, sys, pr, onDevice, admitted, g2)
	if err != nil {
		return groth16.Proof{}, err
	}

	t0 := time.Now()
	var r, s fr.Element
	if err := randomNonZero(&r); err != nil {
		return groth16.Proof{}, err
	}
	if err := randomNonZero(&s); err != nil {
		return groth16.Proof{}, err
	}
	proof := groth16.Assemble(&pk.VK, sums, r, s)
	p.st.add(&p.st.epilogue, time.Since(t0))
	d.done.Add(1)
	return proof, nil
}

func randomNonZero(e *fr.Element) error {
	for {
		if _, err := e.SetRandom(); err != nil {
			return fmt.Errorf("c2: randomness: %w", err)
		}
		if !e.IsZero() {
			return nil
		}
	}
}

// prepare, when abc is set, evaluates a, b, c into one host buffer
// (zero-padded to the domain) and checks that the constraints hold (else the
// device does both from the witness); then it classifies the scalars of L,
// A and B in the background (so that H can start on the device meanwhile)
// and calls done when everything is finished or failed.
func (p *Prover) prepare(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System, abc bool, done func()) (*prepared, error) {
	t0 := time.Now()
	pr := &prepared{classified: make(chan struct{}), lDone: make(chan struct{})}
	fail := func(err error) (*prepared, error) {
		close(pr.lDone)
		close(pr.classified)
		pr.release()
		done()
		return nil, err
	}
	if sys.Inputs()[0] != fr.One() {
		return fail(errors.New("input 0 (ONE) is not 1"))
	}
	if abc {
		n := pk.DomainSize()
		// One reservation for the three vectors: no hold-and-wait between them.
		buf, v, err := pool.GetSlice[fr.Element](ctx, p.host, 3*n)
		if err != nil {
			return fail(err)
		}
		pr.buf, pr.a, pr.b, pr.c = buf, v[:n:n], v[n:2*n:2*n], v[2*n:]
		m := sys.NumConstraints()
		if err := sys.EvaluateChecked(pr.a, pr.b, pr.c, p.cfg.Threads); err != nil {
			return fail(err) // names the failing constraint
		}
		for _, x := range [][]fr.Element{pr.a, pr.b, pr.c} {
			clear(x[m:])
		}
	}

	segL := []msm.Segment{{Scalars: sys.Aux()}}
	segA := []msm.Segment{{Scalars: sys.Inputs()}, {Scalars: sys.Aux(), Density: sys.ADensity()}}
	segB := []msm.Segment{{Scalars: sys.Inputs(), Density: sys.BInputDensity()}, {Scalars: sys.Aux(), Density: sys.BAuxDensity()}}
	go func() {
		defer done()
		defer close(pr.classified)
		var wg sync.WaitGroup
		var errs [3]error
		for i, x := range []struct {
			dst  **split
			segs []msm.Segment
		}{{&pr.l, segL}, {&pr.A, segA}, {&pr.B, segB}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				*x.dst, errs[i] = classify(x.segs)
				if i == 0 {
					pr.lErr = errs[0]
					close(pr.lDone)
				}
			}()
		}
		wg.Wait()
		pr.classErr = errors.Join(errs[:]...)
		p.st.add(&p.st.prep, time.Since(t0))
		p.log.Debug("c2: partition prepared", "evaluated_on_host", abc, "duration", time.Since(t0), "err", pr.classErr)
	}()
	if p.cfg.DisableOverlap {
		<-pr.classified
	}
	return pr, nil
}

// classify splits one MSM's scalars, or keeps them dense when more than half
// of the bases would go to the tail (SupraSeal's rule: splitting then saves
// less than the gathering costs).
func classify(segs []msm.Segment) (*split, error) {
	sp, err := msm.NewSplit(segs...)
	if err != nil {
		return nil, err
	}
	if 2*len(sp.Tail) <= sp.N {
		return &split{Split: sp}, nil
	}
	full := make([]fr.Element, 0, sp.N)
	for _, s := range segs {
		if s.Density == nil {
			full = append(full, s.Scalars...)
			continue
		}
		for i := range s.Scalars {
			if s.Density.Get(i) {
				full = append(full, s.Scalars[i])
			}
		}
	}
	return &split{Split: sp, full: full}, nil
}

// deviceStages acquires a slot on d and runs H, the batch additions and the
// tail MSMs there; the B_G2 tail runs on the CPU meanwhile unless d does G2.
// With onDevice, H starts from the witness on the device once it is
// classified; otherwise from the prepared a, b, c.
func (p *Prover) deviceStages(ctx context.Context, d *device, key gpu.Key, pk *groth16.ProvingKey, sys *r1cs.System, pr *prepared, onDevice bool, admitted func(), g2 *g2Job) (*groth16.Sums, error) {
	slot, err := d.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	defer slot.Release()
	admitted()

	var sums groth16.Sums
	stage := func(acc *atomic.Int64, f func() error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.busy.start()
		t0 := time.Now()
		err := f()
		dt := time.Since(t0)
		p.st.add(acc, dt)
		d.busy.stop()
		p.log.Debug("c2: device stage", "device", d.name, "stage", p.st.name(acc), "duration", dt, "err", err)
		return err
	}
	classified := func() error {
		select {
		case <-pr.classified:
		case <-ctx.Done():
			return ctx.Err()
		}
		return pr.classErr
	}
	if onDevice {
		ws, ok := slot.(gpu.WitnessSlot)
		if !ok {
			return nil, &gpu.Error{Device: d.name, Stage: gpu.StageH, Err: fmt.Errorf("%w: slot of a shape key cannot take a witness", gpu.ErrBadArgument)}
		}
		// The handoff is L's classification: H starts as soon as it is
		// ready, A's and B's follow meanwhile.
		select {
		case <-pr.lDone:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if pr.lErr != nil {
			return nil, pr.lErr
		}
		if err := stage(&p.st.h, func() (err error) { sums.H, err = ws.ComputeHWitness(ctx, pr.witness(sys)); return }); err != nil {
			var ue *r1cs.UnsatisfiedError
			if errors.As(err, &ue) && sys.IsSatisfied() == nil {
				// The host finds every constraint satisfied: the device erred.
				err = &gpu.Error{Device: d.name, Stage: gpu.StageH, Section: gpu.SectionH,
					Err: fmt.Errorf("%w: device found constraint %d unsatisfied, the host finds it satisfied", gpu.ErrKernel, ue.Index)}
			}
			return nil, err
		}
		if err := classified(); err != nil {
			return nil, err
		}
	} else {
		if err := stage(&p.st.h, func() (err error) { sums.H, err = slot.ComputeH(ctx, pr.a, pr.b, pr.c); return }); err != nil {
			return nil, err
		}
		pr.freeABC() // a, b, c are spent: let the next partition have them
		// H needs only a, b, c; the rest waits for the classification.
		if err := classified(); err != nil {
			return nil, err
		}
	}
	g2idx, g2scalars := pr.B.g2Scalars()
	g2cpu := !d.Info().G2

	g1 := []struct {
		sec gpu.Section
		sp  *split
		dst *bls.G1Jac
	}{{gpu.SectionL, pr.l, &sums.L}, {gpu.SectionA, pr.A, &sums.A}, {gpu.SectionBG1, pr.B, &sums.BG1}}
	ones := make([]bls.G1Jac, len(g1))
	var ones2 bls.G2Jac
	for i, q := range g1 {
		if q.sp.full != nil {
			continue
		}
		if err := stage(&p.st.batch, func() (err error) { ones[i], err = slot.BatchAddG1(ctx, q.sec, q.sp.Ones); return }); err != nil {
			return nil, err
		}
	}
	if pr.B.full == nil {
		if err := stage(&p.st.batch, func() (err error) { ones2, err = slot.BatchAddG2(ctx, pr.B.Ones); return }); err != nil {
			return nil, err
		}
	}
	for i, q := range g1 {
		var idx []uint32
		scalars := q.sp.full
		if scalars == nil {
			idx, scalars = q.sp.TailIdx, q.sp.Tail
		}
		if err := stage(&p.st.tail, func() (err error) { *q.dst, err = slot.TailG1(ctx, q.sec, idx, scalars); return }); err != nil {
			return nil, err
		}
		q.dst.AddAssign(&ones[i])
	}
	if g2cpu {
		// The device is done: free its slot for the next partition before
		// joining the CPU's B_G2 work.
		slot.Release()
		if err := g2.wait(ctx); err != nil {
			return nil, err
		}
		sums.BG2 = g2.sum
	} else if err := stage(&p.st.tail, func() (err error) { sums.BG2, err = slot.TailG2(ctx, g2idx, g2scalars); return }); err != nil {
		return nil, err
	}
	sums.BG2.AddAssign(&ones2)
	return &sums, nil
}

// g2Job is the CPU's B_G2 tail MSM for one partition.
type g2Job struct {
	start func() // non-nil until started, when it runs on demand (no overlap)
	done  chan struct{}
	sum   bls.G2Jac
	err   error
}

// wait runs the job if it was deferred, then waits for it.
func (g *g2Job) wait(ctx context.Context) error {
	if g.start != nil {
		f := g.start
		g.start = nil
		f()
	}
	select {
	case <-g.done:
		return g.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// join waits for a started job to end (no goroutine outlives its partition).
func (g *g2Job) join() {
	if g.start == nil {
		<-g.done
	}
}

// runG2 computes B_G2's tail on the CPU once the classification is known.
func (p *Prover) runG2(ctx context.Context, pk *groth16.ProvingKey, pr *prepared, g *g2Job) {
	defer close(g.done)
	<-pr.classified
	if pr.classErr != nil {
		g.err = pr.classErr
		return
	}
	if g.err = ctx.Err(); g.err != nil {
		return
	}
	t0 := time.Now()
	idx, scalars := pr.B.g2Scalars()
	g.sum, g.err = gpu.TailG2CPU(ctx, pk.BG2, idx, scalars, p.cfg.Threads)
	p.st.add(&p.st.bg2, time.Since(t0))
}

// g2Scalars returns what B_G2's MSM beyond the batch addition takes: the
// tail, or every scalar when the split was not worth it.
func (s *split) g2Scalars() ([]uint32, []fr.Element) {
	if s.full != nil {
		return nil, s.full
	}
	return s.TailIdx, s.Tail
}

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
