// Package c2 proves Filecoin PoRep commit phase 2 (C2), Window and Winning
// PoSt and SnapDeals sector updates: Groth16 proofs over BLS12-381,
// bit-compatible with bellperson, on GPUs when present and on the CPU
// otherwise.
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
// previous ones. Concurrent calls proving one sector shape share its
// witnesses (Config.HostMemory), the call that started proving first
// served first: a second C2 synthesizes its partitions while the first's
// last ones are on the devices, which keeps them busy between proofs.
// Every proof is verified before it is returned.
package c2

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/internal/route"
	"github.com/sealc2/c2/internal/stage"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// ErrNoDevice is returned (wrapped in a *PartitionError) when every device
// has failed and Config.CPUFallback is off.
var ErrNoDevice = route.ErrNoDevice

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
	rot  *route.Rotation
	keys *route.Keys
	run  *stage.Runner
	host *pool.Pool
	st   stage.Times
	// noCUDA is why Backend auto found no CUDA device, or nil.
	noCUDA error
	// unreserve gives back the Ps kept free for the goroutines that feed
	// the devices (feederPs).
	unreserve func()

	mu     sync.Mutex // guards closed
	closed bool
	calls  sync.WaitGroup

	shapesMu sync.Mutex
	shapes   map[string]*shapeCache // per sector shape: key and recorded R1CS
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
		cfg:  c,
		log:  log,
		cpu:  gpu.NewCPU(gpu.CPUOptions{Threads: c.Threads, Memory: c.HostMemory}),
		keys: route.NewKeys(log),
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
			if p.noCUDA = err; err == nil {
				p.noCUDA = ErrNoCUDA
			}
			log.Warn("c2: no CUDA device: proving on the CPU", "err", p.noCUDA)
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
	ro := route.Options{Ahead: c.PrepWorkers, Log: log}
	if c.CPUFallback {
		ro.Fallback = p.cpu
	}
	p.rot = route.New(devs, ro)
	p.unreserve = parallel.Reserve(feederPs(devs, c.FeederPs))
	p.run = stage.New(p.keys, p.host, stage.Options{Threads: c.Threads, Workers: c.PrepWorkers, Serial: c.DisableOverlap, Times: &p.st, Log: log})
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
	for _, d := range p.rot.Devices() {
		out = append(out, d.Name)
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
	p.keys.Close() // no load is in flight once the calls returned
	var errs []error
	for _, d := range p.rot.Devices() {
		if d.Device != gpu.Device(p.cpu) {
			errs = append(errs, d.Close())
		}
	}
	errs = append(errs, p.cpu.Close())
	p.host.Close()
	p.unreserve()
	return errors.Join(errs...)
}

// feederPs is how many Go Ps the host's parallel loops leave free while
// devs prove (parallel.Reserve): per (Config.FeederPs) for each device that
// is not the CPU, or by default two each, at most an eighth of GOMAXPROCS
// (BENCHMARKS.md, session 48).
func feederPs(devs []gpu.Device, per int) int {
	n := 0
	for _, d := range devs {
		if d.Info().Kind != gpu.KindCPU {
			n++
		}
	}
	switch {
	case per < 0:
		return 0
	case per > 0:
		return per * n
	}
	return min(2*n, runtime.GOMAXPROCS(0)/8)
}

// begin registers a call in progress (Close waits for those) and returns
// its end, or ErrClosed after Close.
func (p *Prover) begin() (end func(), err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	p.calls.Add(1)
	return p.calls.Done, nil
}

// isClosed reports whether Close was called.
func (p *Prover) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// ProvePartitions proves each finalized, satisfied system under pk and
// returns the proofs in order, verified as a batch. The systems must fit pk
// (same shape); they are only read. On error it returns nil and a
// *PartitionError naming the first partition that failed, or ctx's error.
func (p *Prover) ProvePartitions(ctx context.Context, pk *groth16.ProvingKey, parts []*r1cs.System) ([]groth16.Proof, error) {
	end, err := p.begin()
	if err != nil {
		return nil, err
	}
	defer end()

	for i, sys := range parts {
		if !sys.Finalized() {
			return nil, &PartitionError{Index: i, Err: errors.New("system is not finalized")}
		}
		if !sys.Assigned() {
			return nil, &PartitionError{Index: i, Err: errors.New("system has no assignment")}
		}
		if err := groth16.CheckShape(pk, sys); err != nil {
			return nil, &PartitionError{Index: i, Err: err}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	proofs := make([]groth16.Proof, len(parts))
	origin := make([]*route.Device, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	run := func(i int, exclude map[*route.Device]bool) {
		defer wg.Done()
		var err error
		proofs[i], origin[i], err = p.provePartition(ctx, pk, parts[i], nil, exclude)
		if err != nil {
			name := ""
			if origin[i] != nil {
				name = origin[i].Name
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
		p.st.Add(&p.st.Verify, time.Since(t0))
		if err == nil {
			return proofs, nil
		}
		var ve *groth16.VerifyError
		if !errors.As(err, &ve) || !errors.Is(err, groth16.ErrInvalidProof) || attempt > len(parts)+len(p.rot.Devices()) {
			return nil, &PartitionError{Index: indexOf(ve), Err: err}
		}
		bad := origin[ve.Index]
		p.rot.Retire(bad, fmt.Errorf("partition %d: proof failed verification", ve.Index))
		wg.Add(1)
		run(ve.Index, map[*route.Device]bool{bad: true})
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
