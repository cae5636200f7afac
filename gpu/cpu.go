package gpu

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/ntt"
	"github.com/sealc2/c2/pool"
)

// CPUOptions configures the CPU device.
type CPUOptions struct {
	// Threads bounds the goroutines of one MSM (≤ 0: GOMAXPROCS).
	Threads int
	// Memory is the budget for slot scratch in bytes (≤ 0: 1 GiB).
	Memory int64
	// Slots bounds the partitions in flight (≤ 0: 1): every stage already
	// uses all Threads, so more would only contend. A slot reserves at
	// least Memory/Slots.
	Slots int
}

// CPU is the reference Device: every stage runs on the host with
// gnark-crypto, through packages ntt and msm. Its results are the ones other
// devices must equal. Keys stay where they are (host memory).
type CPU struct {
	threads int
	slots   int
	budget  *pool.Budget

	mu     sync.Mutex
	closed bool
}

// NewCPU returns a CPU device.
func NewCPU(o CPUOptions) *CPU {
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.Memory <= 0 {
		o.Memory = 1 << 30
	}
	if o.Slots <= 0 {
		o.Slots = 1
	}
	return &CPU{threads: o.Threads, slots: o.Slots, budget: pool.NewBudget("cpu", o.Memory)}
}

// Info implements [Device]. The CPU device runs G2 MSMs itself.
func (d *CPU) Info() Info {
	return Info{Name: "cpu", Kind: KindCPU, Memory: d.budget.Total(), G2: true}
}

// Budget implements [Device].
func (d *CPU) Budget() *pool.Budget { return d.budget }

type cpuKey struct {
	pk  *groth16.ProvingKey
	dom *ntt.Domain
}

func (k *cpuKey) ProvingKey() *groth16.ProvingKey { return k.pk }
func (k *cpuKey) Release()                        {}

func (d *CPU) err(stage Stage, sec Section, err error) error {
	return &Error{Device: "cpu", Stage: stage, Section: sec, Err: err}
}

// LoadKey implements [Device]; it builds the NTT domain and charges nothing.
func (d *CPU) LoadKey(ctx context.Context, pk *groth16.ProvingKey) (Key, error) {
	if err := d.open(); err != nil {
		return nil, d.err(StageLoadKey, 0, err)
	}
	if !pk.HostBases() {
		return nil, d.err(StageLoadKey, 0, fmt.Errorf("%w: %v", ErrBadArgument, groth16.ErrNoHostBases))
	}
	dom, err := ntt.NewDomain(pk.DomainSize())
	if err != nil {
		return nil, d.err(StageLoadKey, 0, fmt.Errorf("%w: %v", ErrBadArgument, err))
	}
	return &cpuKey{pk: pk, dom: dom}, nil
}

// SlotBytes implements [Device]: a bound on the scratch of the largest MSM
// for a domain of n (its signed digits take 34 bytes per scalar, its
// buckets a few MiB per goroutine), and at least Memory/Slots.
func (d *CPU) SlotBytes(key Key) int64 {
	return max(int64(key.ProvingKey().DomainSize())*(96+52), d.budget.Total()/int64(d.slots))
}

// Acquire implements [Device].
func (d *CPU) Acquire(ctx context.Context, key Key) (Slot, error) {
	if err := d.open(); err != nil {
		return nil, d.err(StageAcquire, 0, err)
	}
	k, ok := key.(*cpuKey)
	if !ok {
		return nil, d.err(StageAcquire, 0, fmt.Errorf("%w: key was not loaded by this device", ErrBadArgument))
	}
	r, err := d.budget.Reserve(ctx, d.SlotBytes(key))
	if err != nil {
		return nil, err
	}
	return &cpuSlot{d: d, k: k, res: r}, nil
}

func (d *CPU) open() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return nil
}

// Close implements [Device].
func (d *CPU) Close() error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	return nil
}

type cpuSlot struct {
	d   *CPU
	k   *cpuKey
	res *pool.Reservation
}

func (s *cpuSlot) Release() { s.res.Release() }

func (s *cpuSlot) ComputeH(ctx context.Context, a, b, c []fr.Element) (bls.G1Jac, error) {
	var res bls.G1Jac
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := s.k.dom.ComputeHContext(ctx, a, b, c); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, s.d.err(StageH, SectionH, fmt.Errorf("%w: %v", ErrBadArgument, err))
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	n := s.k.dom.Size()
	res, err := tailCPU(ctx, s.k.pk.H, nil, a[:n-1], s.d.threads, msm.MultiExpG1)
	if err != nil {
		if ctx.Err() != nil {
			return res, err
		}
		return res, s.d.err(StageH, SectionH, fmt.Errorf("%w: %v", ErrKernel, err))
	}
	return res, nil
}

func (s *cpuSlot) BatchAddG1(ctx context.Context, sec Section, ones []uint64) (bls.G1Jac, error) {
	bases, err := g1Section(s.k.pk, sec)
	if err != nil {
		return bls.G1Jac{}, s.d.err(StageBatchAdd, sec, err)
	}
	return batchAdd(ctx, s, sec, bases, ones, msm.SumG1)
}

func (s *cpuSlot) BatchAddG2(ctx context.Context, ones []uint64) (bls.G2Jac, error) {
	return batchAdd(ctx, s, SectionBG2, s.k.pk.BG2, ones, msm.SumG2)
}

func (s *cpuSlot) TailG1(ctx context.Context, sec Section, idx []uint32, scalars []fr.Element) (bls.G1Jac, error) {
	bases, err := g1Section(s.k.pk, sec)
	if err != nil {
		return bls.G1Jac{}, s.d.err(StageTail, sec, err)
	}
	return tail(ctx, s, sec, bases, idx, scalars, msm.MultiExpG1)
}

func (s *cpuSlot) TailG2(ctx context.Context, idx []uint32, scalars []fr.Element) (bls.G2Jac, error) {
	return tail(ctx, s, SectionBG2, s.k.pk.BG2, idx, scalars, msm.MultiExpG2)
}

// ReadBasesG2 implements [G2Reader].
func (s *cpuSlot) ReadBasesG2(ctx context.Context, idx []uint32, dst []bls.G2Affine) error {
	if err := checkIdx(len(s.k.pk.BG2), idx, len(dst), "bases"); err != nil {
		return s.d.err(StageTail, SectionBG2, err)
	}
	for j, i := range idx {
		dst[j] = s.k.pk.BG2[i]
	}
	return ctx.Err()
}

// batchAdd is BatchAddG1 and BatchAddG2 over sec's bases, sum being
// msm.SumG1 or msm.SumG2.
func batchAdd[A, J any, PJ point[J]](ctx context.Context, s *cpuSlot, sec Section, bases []A, ones []uint64, sum func([]A, []uint64, int) J) (J, error) {
	if err := checkOnes(len(bases), ones); err != nil {
		var zero J
		return zero, s.d.err(StageBatchAdd, sec, err)
	}
	return sumChunks[J, PJ](ctx, len(bases), ones, func(lo, hi int, ones []uint64) J {
		return sum(bases[lo:hi], ones, s.d.threads)
	})
}

// tail is TailG1 and TailG2 over sec's bases, multiExp being
// msm.MultiExpG1 or msm.MultiExpG2.
func tail[A, J any, PJ point[J]](ctx context.Context, s *cpuSlot, sec Section, bases []A, idx []uint32, scalars []fr.Element, multiExp msmFunc[A, J]) (J, error) {
	if err := checkMSM(len(bases), idx, scalars); err != nil {
		var zero J
		return zero, s.d.err(StageTail, sec, err)
	}
	return tailCPU[A, J, PJ](ctx, bases, idx, scalars, s.d.threads, multiExp)
}

// msmFunc is msm.MultiExpG1 or msm.MultiExpG2.
type msmFunc[A, J any] func(ctx context.Context, bases []A, idx []uint32, scalars []fr.Element, tasks int) (J, error)

// The CPU device's MSMs (package msm's MultiExp) check the context between
// pieces of a few milliseconds' work, the NTTs of ComputeH between pieces
// and sub-transforms of similar size (ntt.Domain.ComputeHContext), and its
// batch additions run as calls over chunks of sumChunk bases with a check
// before each: a cancelled partition stops within tens of milliseconds
// (BENCHMARKS.md).
var (
	sumChunk = 1 << 16 // bases per batch-addition call (~20 ms of G1 work on 2 cores); a multiple of 64
	// msmChunk bounds the scalars of one MSM call, and so its signed digits
	// (34 bytes per scalar): 136 MiB. A larger MSM pays one more bucket
	// reduction per call, about 3 % of a call's work at this size.
	msmChunk = 1 << 22
)

// chunks calls f on consecutive ranges [lo, hi) of [0, n) of at most size
// elements, returning ctx's error instead of starting a range once ctx is
// done, or f's first error.
func chunks(ctx context.Context, n, size int, f func(lo, hi int) error) error {
	for lo := 0; lo < n || lo == 0; lo += size {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := f(lo, min(n, lo+size)); err != nil {
			return err
		}
	}
	return nil
}

// point is what the chunked sums add up: *bls.G1Jac or *bls.G2Jac.
type point[P any] interface {
	*P
	AddAssign(*P) *P
}

// sumChunks adds sum(lo, hi, ones[lo/64:hi/64]) over chunks of sumChunk of
// the n bases (a multiple of 64 but the last), checking ctx between them.
func sumChunks[P any, PP point[P]](ctx context.Context, n int, ones []uint64, sum func(lo, hi int, ones []uint64) P) (P, error) {
	var res P
	err := chunks(ctx, n, sumChunk, func(lo, hi int) error {
		part := sum(lo, hi, ones[lo/64:(hi+63)/64])
		PP(&res).AddAssign(&part)
		return nil
	})
	return res, err
}

// TailG2CPU returns Σ scalars[j]·bases[idx[j]] (Σ scalars[i]·bases[i] when
// idx is nil) on up to threads goroutines, returning ctx's error within
// milliseconds once ctx is done. It is the CPU device's B_G2 tail, which the
// pipeline also runs beside a device that leaves G2 to the host.
func TailG2CPU(ctx context.Context, bases []bls.G2Affine, idx []uint32, scalars []fr.Element, threads int) (bls.G2Jac, error) {
	return tailCPU(ctx, bases, idx, scalars, threads, msm.MultiExpG2)
}

// tailCPU is the CPU device's tail MSM over G1 or G2 (see TailG2CPU), in
// calls of at most msmChunk scalars.
func tailCPU[A, J any, PJ point[J]](ctx context.Context, bases []A, idx []uint32, scalars []fr.Element, threads int, multiExp msmFunc[A, J]) (J, error) {
	if err := checkMSM(len(bases), idx, scalars); err != nil {
		var zero J
		return zero, err
	}
	var res J
	err := chunks(ctx, len(scalars), msmChunk, func(lo, hi int) error {
		var part J
		var err error
		if idx == nil {
			part, err = multiExp(ctx, bases[lo:hi], nil, scalars[lo:hi], threads)
		} else {
			part, err = multiExp(ctx, bases, idx[lo:hi], scalars[lo:hi], threads)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("gpu: MSM: %w", err)
		}
		PJ(&res).AddAssign(&part)
		return nil
	})
	return res, err
}
