package gpu

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu/cuda"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/pool"
)

// OpenCUDA opens the CUDA devices with the given ordinals (all when nil) as
// Devices. Each device's budget is its total memory less margin, measured
// once here; nothing on the proving path queries the driver for free memory.
// Without the library or a GPU it returns an error wrapping
// cuda.ErrNoLibrary or cuda.ErrNoDevice.
func OpenCUDA(ordinals []int, margin int64) ([]Device, error) {
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinals == nil {
		for i := range n {
			ordinals = append(ordinals, i)
		}
	}
	var out []Device
	for _, o := range ordinals {
		d, err := cuda.Open(o)
		if err != nil {
			for _, x := range out {
				x.Close()
			}
			return nil, err
		}
		name := fmt.Sprintf("cuda:%d", o)
		total := int64(d.Info().TotalMemory) - margin
		out = append(out, &CUDA{d: d, name: name, budget: pool.NewBudget(name, max(total, 0))})
	}
	return out, nil
}

// CUDA is a Device backed by one GPU through package cuda. Keys are kept
// resident in device memory when they fit beside one slot, else streamed
// from host memory on every call. B_G2's tail MSM is left to the CPU
// (Info().G2 is false), as SupraSeal does; its batch addition runs here.
type CUDA struct {
	d      *cuda.Device
	name   string
	budget *pool.Budget
	// exec runs one library call at a time. Each stage fills the GPU on its
	// own, and concurrent ComputeH calls failed on the H200 (Nov 30: "invalid
	// argument" at a kernel launch in ntt.cu) while serial ones passed, so
	// partitions overlap with the CPU stages, not with each other, until
	// the library is safe for concurrent calls.
	exec sync.Mutex

	mu     sync.Mutex
	lost   bool
	closed bool
	pinned *pinnedAllocator
}

// Info implements [Device].
func (c *CUDA) Info() Info {
	return Info{Name: c.name, Kind: KindCUDA, Memory: c.budget.Total()}
}

// Budget implements [Device].
func (c *CUDA) Budget() *pool.Budget { return c.budget }

// HostAllocator implements [HostAllocator] with pinned memory.
func (c *CUDA) HostAllocator() pool.Allocator {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pinned == nil {
		c.pinned = &pinnedAllocator{bufs: make(map[unsafe.Pointer]*cuda.HostBuffer)}
	}
	return c.pinned
}

// err converts an error of package cuda into an *Error; a lost device stays
// lost.
func (c *CUDA) err(stage Stage, sec Section, err error) error {
	var kind error
	switch {
	case errors.Is(err, cuda.ErrDeviceOutOfMemory):
		kind = ErrOutOfMemory
	case errors.Is(err, cuda.ErrDeviceLost), errors.Is(err, cuda.ErrNoDevice):
		kind = ErrDeviceLost
		c.mu.Lock()
		c.lost = true
		c.mu.Unlock()
	case errors.Is(err, cuda.ErrInvalidArgument):
		kind = ErrBadArgument
	case errors.Is(err, cuda.ErrClosed):
		kind = ErrClosed
	default:
		kind = ErrKernel
	}
	return &Error{Device: c.name, Stage: stage, Section: sec, Err: fmt.Errorf("%w: %v", kind, err)}
}

// enter fails fast on a closed or lost device and on an ended context.
func (c *CUDA) enter(ctx context.Context, stage Stage, sec Section) error {
	c.mu.Lock()
	closed, lost := c.closed, c.lost
	c.mu.Unlock()
	switch {
	case closed:
		return &Error{Device: c.name, Stage: stage, Section: sec, Err: ErrClosed}
	case lost:
		return &Error{Device: c.name, Stage: stage, Section: sec, Err: ErrDeviceLost}
	}
	return ctx.Err()
}

type cudaKey struct {
	c        *CUDA
	pk       *groth16.ProvingKey
	resident bool
	h, l, a  *cuda.Buffer
	bg1, bg2 *cuda.Buffer
	res      *pool.Reservation
	once     sync.Once
}

func (k *cudaKey) ProvingKey() *groth16.ProvingKey { return k.pk }

func (k *cudaKey) Release() {
	k.once.Do(func() {
		for _, b := range []*cuda.Buffer{k.h, k.l, k.a, k.bg1, k.bg2} {
			if b != nil {
				_ = b.Free()
			}
		}
		if k.res != nil {
			k.res.Release()
		}
	})
}

const (
	g1Size   = int64(unsafe.Sizeof(bls.G1Affine{}))
	g2Size   = int64(unsafe.Sizeof(bls.G2Affine{}))
	frSize   = int64(fr.Bytes)
	g1XYZZ   = 4 * 48
	g2XYZZ   = 4 * 96
	slotSlop = 64 << 20 // sort temporaries, events, alignment
)

func keyBytes(pk *groth16.ProvingKey) int64 {
	return g1Size*int64(len(pk.H)+len(pk.L)+len(pk.A)+len(pk.BG1)) + g2Size*int64(len(pk.BG2))
}

// LoadKey implements [Device]: the key is uploaded once and kept resident
// when it fits in the budget beside one slot, and streamed otherwise.
func (c *CUDA) LoadKey(ctx context.Context, pk *groth16.ProvingKey) (Key, error) {
	if err := c.enter(ctx, StageLoadKey, 0); err != nil {
		return nil, err
	}
	k := &cudaKey{c: c, pk: pk}
	kb := keyBytes(pk)
	if kb+c.slotBytes(pk, true) > c.budget.Total() {
		return k, nil // streamed
	}
	res, err := c.budget.Reserve(ctx, kb)
	if err != nil {
		return nil, err
	}
	k.res = res
	up := []struct {
		dst **cuda.Buffer
		f   func() (*cuda.Buffer, error)
		sec Section
	}{
		{&k.h, func() (*cuda.Buffer, error) { return c.d.UploadG1(pk.H) }, SectionH},
		{&k.l, func() (*cuda.Buffer, error) { return c.d.UploadG1(pk.L) }, SectionL},
		{&k.a, func() (*cuda.Buffer, error) { return c.d.UploadG1(pk.A) }, SectionA},
		{&k.bg1, func() (*cuda.Buffer, error) { return c.d.UploadG1(pk.BG1) }, SectionBG1},
		{&k.bg2, func() (*cuda.Buffer, error) { return c.d.UploadG2(pk.BG2) }, SectionBG2},
	}
	for _, u := range up {
		b, err := u.f()
		if err != nil {
			k.Release()
			return nil, c.err(StageLoadKey, u.sec, err)
		}
		*u.dst = b
	}
	k.resident = true
	return k, nil
}

// msmScratch estimates the device memory of one MSM of n points in the
// library (msm.cuh): radix-sort keys and values, buckets and their indices,
// and double-buffered staging for host-side inputs.
func msmScratch(n, point, xyzz int64, maxC int, hostBases bool) int64 {
	if n == 0 {
		return 0
	}
	c, best := 4, 0.0
	for w := 4; w <= maxC; w++ {
		W := float64((256 + w - 1) / w)
		cost := W * (float64(n) + 2*float64(int64(1)<<w))
		if w == 4 || cost < best {
			c, best = w, cost
		}
	}
	W := int64((256 + c - 1) / c)
	tb := W << (c - 1)
	ch := min(n, 1<<24)
	m := W * ch
	s := 16*m + tb*(xyzz+24) + 2*ch*frSize
	if hostBases {
		s += 2 * ch * point
	}
	return s
}

// slotBytes is the most device memory one stage of a partition uses.
func (c *CUDA) slotBytes(pk *groth16.ProvingKey, resident bool) int64 {
	n := int64(pk.DomainSize())
	hBytes := 3 * n * frSize
	var s int64 = hBytes
	for _, q := range []struct {
		n     int64
		point int64
		xyzz  int64
		maxC  int
	}{{n - 1, g1Size, g1XYZZ, 21}, {int64(len(pk.L)), g1Size, g1XYZZ, 21}, {int64(len(pk.A)), g1Size, g1XYZZ, 21}} {
		// Tails use gathered host bases; H and full MSMs resident ones.
		s = max(s, msmScratch(q.n, q.point, q.xyzz, q.maxC, true))
	}
	if !resident {
		// Batch additions copy the whole section.
		s = max(s, g1Size*int64(max(len(pk.L), len(pk.A), len(pk.H))), g2Size*int64(len(pk.BG2)))
	}
	return s + slotSlop
}

// SlotBytes implements [Device].
func (c *CUDA) SlotBytes(key Key) int64 {
	k, ok := key.(*cudaKey)
	return c.slotBytes(key.ProvingKey(), ok && k.resident)
}

// Acquire implements [Device].
func (c *CUDA) Acquire(ctx context.Context, key Key) (Slot, error) {
	if err := c.enter(ctx, StageAcquire, 0); err != nil {
		return nil, err
	}
	k, ok := key.(*cudaKey)
	if !ok || k.c != c {
		return nil, &Error{Device: c.name, Stage: StageAcquire, Err: fmt.Errorf("%w: key was not loaded by this device", ErrBadArgument)}
	}
	res, err := c.budget.Reserve(ctx, c.SlotBytes(key))
	if err != nil {
		return nil, err
	}
	return &cudaSlot{c: c, k: k, res: res}, nil
}

// Close implements [Device].
func (c *CUDA) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	return c.d.Close()
}

type cudaSlot struct {
	c   *CUDA
	k   *cudaKey
	res *pool.Reservation
}

func (s *cudaSlot) Release() { s.res.Release() }

func (s *cudaSlot) ComputeH(ctx context.Context, a, b, c []fr.Element) (bls.G1Jac, error) {
	var res bls.G1Jac
	if err := s.c.enter(ctx, StageH, SectionH); err != nil {
		return res, err
	}
	n := s.k.pk.DomainSize()
	if len(a) != n || len(b) != n || len(c) != n {
		return res, &Error{Device: s.c.name, Stage: StageH, Section: SectionH,
			Err: fmt.Errorf("%w: vectors of %d, %d, %d for a domain of %d", ErrBadArgument, len(a), len(b), len(c), n)}
	}
	s.c.exec.Lock()
	defer s.c.exec.Unlock()
	if err := s.c.d.ComputeH(a, b, c); err != nil {
		return res, s.c.err(StageH, SectionH, err)
	}
	var err error
	if s.k.resident {
		res, err = s.c.d.MSMG1Resident(s.k.h, a[:n-1])
	} else {
		res, err = s.c.d.MSMG1(s.k.pk.H, a[:n-1])
	}
	if err != nil {
		return res, s.c.err(StageH, SectionH, err)
	}
	return res, nil
}

func (s *cudaSlot) g1(sec Section) ([]bls.G1Affine, *cuda.Buffer, error) {
	bases, err := g1Section(s.k.pk, sec)
	if err != nil {
		return nil, nil, err
	}
	var buf *cuda.Buffer
	if s.k.resident {
		buf = map[Section]*cuda.Buffer{SectionH: s.k.h, SectionL: s.k.l, SectionA: s.k.a, SectionBG1: s.k.bg1}[sec]
	}
	return bases, buf, nil
}

func (s *cudaSlot) BatchAddG1(ctx context.Context, sec Section, ones []uint64) (bls.G1Jac, error) {
	var res bls.G1Jac
	if err := s.c.enter(ctx, StageBatchAdd, sec); err != nil {
		return res, err
	}
	bases, buf, err := s.g1(sec)
	if err == nil {
		err = checkOnes(len(bases), ones)
	}
	if err != nil {
		return res, &Error{Device: s.c.name, Stage: StageBatchAdd, Section: sec, Err: err}
	}
	s.c.exec.Lock()
	if buf != nil {
		res, err = s.c.d.BatchAddG1Resident(buf, len(bases), ones)
	} else {
		res, err = s.c.d.BatchAddG1(bases, ones)
	}
	s.c.exec.Unlock()
	if err != nil {
		return res, s.c.err(StageBatchAdd, sec, err)
	}
	return res, nil
}

func (s *cudaSlot) BatchAddG2(ctx context.Context, ones []uint64) (bls.G2Jac, error) {
	var res bls.G2Jac
	if err := s.c.enter(ctx, StageBatchAdd, SectionBG2); err != nil {
		return res, err
	}
	if err := checkOnes(len(s.k.pk.BG2), ones); err != nil {
		return res, &Error{Device: s.c.name, Stage: StageBatchAdd, Section: SectionBG2, Err: err}
	}
	var err error
	s.c.exec.Lock()
	if s.k.resident {
		res, err = s.c.d.BatchAddG2Resident(s.k.bg2, len(s.k.pk.BG2), ones)
	} else {
		res, err = s.c.d.BatchAddG2(s.k.pk.BG2, ones)
	}
	s.c.exec.Unlock()
	if err != nil {
		return res, s.c.err(StageBatchAdd, SectionBG2, err)
	}
	return res, nil
}

func (s *cudaSlot) TailG1(ctx context.Context, sec Section, idx []uint32, scalars []fr.Element) (bls.G1Jac, error) {
	var res bls.G1Jac
	if err := s.c.enter(ctx, StageTail, sec); err != nil {
		return res, err
	}
	bases, buf, err := s.g1(sec)
	if err == nil {
		err = checkMSM(len(bases), idx, scalars)
	}
	if err != nil {
		return res, &Error{Device: s.c.name, Stage: StageTail, Section: sec, Err: err}
	}
	tb := bases
	if idx != nil {
		// The library has no device-side gather: gather on the host.
		tb = make([]bls.G1Affine, len(idx))
		for j, i := range idx {
			tb[j] = bases[i]
		}
	}
	s.c.exec.Lock()
	if idx == nil && buf != nil {
		res, err = s.c.d.MSMG1Resident(buf, scalars)
	} else {
		res, err = s.c.d.MSMG1(tb, scalars)
	}
	s.c.exec.Unlock()
	if err != nil {
		return res, s.c.err(StageTail, sec, err)
	}
	return res, nil
}

func (s *cudaSlot) TailG2(ctx context.Context, idx []uint32, scalars []fr.Element) (bls.G2Jac, error) {
	var res bls.G2Jac
	if err := s.c.enter(ctx, StageTail, SectionBG2); err != nil {
		return res, err
	}
	bases := s.k.pk.BG2
	if err := checkMSM(len(bases), idx, scalars); err != nil {
		return res, &Error{Device: s.c.name, Stage: StageTail, Section: SectionBG2, Err: err}
	}
	var err error
	tb := bases
	if idx != nil {
		tb = make([]bls.G2Affine, len(idx))
		for j, i := range idx {
			tb[j] = bases[i]
		}
	}
	s.c.exec.Lock()
	if idx == nil && s.k.resident {
		res, err = s.c.d.MSMG2Resident(s.k.bg2, scalars)
	} else {
		res, err = s.c.d.MSMG2(tb, scalars)
	}
	s.c.exec.Unlock()
	if err != nil {
		return res, s.c.err(StageTail, SectionBG2, err)
	}
	return res, nil
}

// pinnedAllocator hands out page-locked host memory from package cuda.
type pinnedAllocator struct {
	mu   sync.Mutex
	bufs map[unsafe.Pointer]*cuda.HostBuffer
}

func (p *pinnedAllocator) Alloc(n int) ([]byte, error) {
	h, err := cuda.AllocPinned(uint64(max(n, 1)))
	if err != nil {
		return nil, err
	}
	b := h.Bytes()[:n]
	p.mu.Lock()
	p.bufs[unsafe.Pointer(unsafe.SliceData(h.Bytes()))] = h
	p.mu.Unlock()
	return b, nil
}

func (p *pinnedAllocator) Free(b []byte) {
	key := unsafe.Pointer(unsafe.SliceData(b))
	p.mu.Lock()
	h := p.bufs[key]
	delete(p.bufs, key)
	p.mu.Unlock()
	if h != nil {
		_ = h.Free()
	}
}
