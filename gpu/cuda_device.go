package gpu

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu/cuda"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// OpenCUDA opens the CUDA devices with the given ordinals (all when nil) as
// Devices. Each device's budget is its total memory less margin, measured
// once here, and at most limit bytes when limit > 0 (to prove as a smaller
// card would); nothing on the proving path queries the driver for free
// memory. The devices split the witness pass's H MSM where a key's slots
// leave room for the second copy of its bases (attachHigh) and H has at
// least splitHMin points; C2_CUDA_SPLIT_H=0 in the environment turns the
// split off, C2_CUDA_SPLIT_H=1 takes it at every size. C2_CUDA_HOST_G2, a
// number from 0 to 1, sets Info().HostG2 (0 by default, see hostG2Share).
// Without the library or a GPU it returns an error wrapping
// cuda.ErrNoLibrary or cuda.ErrNoDevice.
func OpenCUDA(ordinals []int, margin, limit int64) ([]Device, error) {
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
		if limit > 0 {
			total = min(total, limit)
		}
		c := &CUDA{d: d, name: name, sms: d.Info().SMCount, budget: pool.NewBudget(name, max(total, 0))}
		c.splitH, c.splitHAt = splitPolicy(os.Getenv("C2_CUDA_SPLIT_H"))
		c.streamBeside = os.Getenv("C2_CUDA_STREAM_BESIDE") == "1"
		if c.hostG2, err = hostG2Share(os.Getenv("C2_CUDA_HOST_G2")); err != nil {
			for _, x := range append(out, c) {
				x.Close()
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// CUDA is a Device backed by one GPU through package cuda. Keys are kept
// resident in device memory when they fit beside one slot, else streamed
// from host memory on every call; with [CUDA.LoadShape] the recorded R1CS is
// resident too and a partition's whole pass — witness expansion, a, b, c,
// H and every MSM including B_G2's — runs here. Calls on different slots
// run concurrently: no lock is held around the library, and each slot's
// device buffers are allocated once, when the slot is first made. Slots of
// keys whose domain is at most 2^22 (a Winning PoSt's, a small sector's)
// run on the device's urgent streams ([cuda.Device.Urgent]).
type CUDA struct {
	d    *cuda.Device
	name string
	sms  int // the device's SMs
	// H's MSM of the witness pass is split (attachHigh) when splitH is
	// set and H has at least splitHAt points.
	splitH   bool
	splitHAt int
	hostG2   float64 // Info().HostG2
	// streamBeside gives streamed keys their own batch additions
	// (reserveStream), outside the slots; C2_CUDA_STREAM_BESIDE=1 sets it.
	streamBeside bool
	budget       *pool.Budget

	mu       sync.Mutex
	lost     bool
	closed   bool
	slots    int // SetSlots; 0: defaultSlots
	pinned   *pinnedAllocator
	keys     map[*cudaKey]struct{} // loaded and not released
	released chan struct{}         // closed (and replaced) whenever a slot is released
}

// Info implements [Device].
func (c *CUDA) Info() Info {
	return Info{Name: c.name, Kind: KindCUDA, Memory: c.budget.Total(), G2: true, HostG2: c.hostG2}
}

// Budget implements [Device].
func (c *CUDA) Budget() *pool.Budget { return c.budget }

// DeviceTimes implements [Timed] with the library's event timings.
func (c *CUDA) DeviceTimes() DeviceTimes {
	t := c.d.Timings()
	out := DeviceTimes{Ops: make(map[string]time.Duration, len(t.Ops)), Busy: t.Busy, Scratch: make(map[string]int64, len(t.Ops))}
	for k, v := range t.Ops {
		out.Ops[k] = v.Time
		out.Scratch[k] = int64(v.Scratch)
	}
	return out
}

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
	urgent   bool // its calls run on the device's urgent streams (newKey)
	pk       *groth16.ProvingKey
	resident bool
	// twoVectors: a streamed key whose slots stage ComputeH's a, b and c
	// in two device vectors, where three would not fit (streamKey).
	twoVectors bool
	h, l, a    *cuda.Buffer
	bg1, bg2   *cuda.Buffer
	res        *pool.Reservation
	// A streamed key's sections on the device (fillSections): their
	// reservations, pinned in the budget until Release.
	secRes []*pool.Reservation
	// A streamed key's own batch additions ([StreamedKey], cuda_stream.go);
	// nil when no section streams through the key.
	stream *keyStream

	// A streamed key's bases in pinned host memory (copied once at load),
	// so that every stream runs at full bus speed; nil when pinned memory
	// was refused, and the bases then stream from pk.
	pinned     *groth16.ProvingKey
	pinnedBufs [SectionBG2 + 1]*cuda.HostBuffer // by section

	// With LoadShape: the recorded R1CS, resident beside the key.
	r1cs      *cuda.R1CS
	recording uint64 // the Recording of the resident R1CS
	nvars     int
	r1Res     *pool.Reservation

	// With attachHigh: 2^128 times the H bases, for H's split MSM.
	hHi   *cuda.Buffer
	hiRes *pool.Reservation

	// Slots are made on demand, up to cap(idle), and kept until Release.
	slotMu sync.Mutex
	made   int // slots made or being made
	held   int // slots made: their memory reserved, in use or idle
	idle   chan *slotMem
	once   sync.Once
}

// slotMem is what one slot holds on the device from when it is made until
// its key is released: its budget reservation and, for the witness pass,
// the w and a‖b‖c buffers.
type slotMem struct {
	res    *pool.Reservation
	w, abc *cuda.Buffer
}

func (m *slotMem) free() {
	for _, b := range []*cuda.Buffer{m.w, m.abc} {
		if b != nil {
			_ = b.Free()
		}
	}
	m.res.Release()
}

// defaultSlots bounds the slots of one key on one device: each fills the
// GPU on its own, and two or three in flight hide the host's share of a
// partition.
const defaultSlots = 3

// SetSlots sets how many slots one key may have on this device (at most
// that many partitions run on it at once); n ≤ 0 restores the default, 3.
// It applies to keys loaded afterwards.
func (c *CUDA) SetSlots(n int) {
	c.mu.Lock()
	c.slots = n
	c.mu.Unlock()
}

// maxSlots is the slot bound for keys loaded now.
func (c *CUDA) maxSlots() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slots > 0 {
		return c.slots
	}
	return defaultSlots
}

// urgentDomain is the largest domain whose keys' calls run on the device's
// urgent streams ([cuda.Device.Urgent]): a Winning PoSt (2^19) or a small
// sector's partition is then proved beside 2^27-domain partitions in about
// the time of its own kernels, while its few blocks delay those partitions
// by little.
const urgentDomain = 1 << 22

// newKey returns an empty key of c for pk, on the urgent streams when pk's
// domain is at most urgentDomain, and counts it among c's keys until its
// Release.
func (c *CUDA) newKey(pk *groth16.ProvingKey) *cudaKey {
	k := &cudaKey{c: c, pk: pk, urgent: pk.DomainSize() <= urgentDomain, idle: make(chan *slotMem, c.maxSlots())}
	c.mu.Lock()
	if c.keys == nil {
		c.keys = make(map[*cudaKey]struct{})
	}
	c.keys[k] = struct{}{}
	c.mu.Unlock()
	return k
}

// slotReleased wakes the first slots waiting for another key's slot to be
// released (reserveSlot).
func (c *CUDA) slotReleased() {
	c.mu.Lock()
	if c.released != nil {
		close(c.released)
		c.released = nil
	}
	c.mu.Unlock()
}

// reserveSlot reserves the device memory of a new slot of k. When pinned
// reservations (keys, R1CS, slots) leave too little, idle slots of other
// keys are freed to make room, and while there are none but other keys
// have slots in use, it waits for one of them to be released: two circuits
// of one device (a C2 and a Window PoSt) take turns with their slots
// instead of one refusing the other. It fails with *pool.OverBudgetError
// when no other key has a slot left to give.
func (c *CUDA) reserveSlot(ctx context.Context, k *cudaKey) (*pool.Reservation, error) {
	need := c.SlotBytes(k)
	for {
		c.mu.Lock()
		if c.released == nil {
			c.released = make(chan struct{})
		}
		released := c.released
		c.mu.Unlock()
		res, err := c.budget.Reserve(ctx, need)
		var ob *pool.OverBudgetError
		if err == nil || !errors.As(err, &ob) || ob.Requested > ob.Total {
			return res, err
		}
		freed, inUse := c.evictIdle(k, need)
		switch {
		case freed:
			continue
		case !inUse:
			return nil, err
		}
		select {
		case <-released:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// evictIdle frees idle slots of keys other than k until the budget's
// unpinned room holds need bytes. It reports whether it freed any, and
// whether other keys have slots in use (that will be released); a slot
// still being made is not one, so that two keys making their first slots
// in too little room fail rather than wait for each other.
func (c *CUDA) evictIdle(k *cudaKey, need int64) (freed, inUse bool) {
	c.mu.Lock()
	others := make([]*cudaKey, 0, len(c.keys))
	for o := range c.keys {
		if o != k {
			others = append(others, o)
		}
	}
	c.mu.Unlock()
	for _, o := range others {
		o.slotMu.Lock()
		for c.room() < need {
			var m *slotMem
			select {
			case m = <-o.idle:
			default:
			}
			if m == nil {
				break
			}
			o.made--
			o.held--
			m.free()
			freed = true
		}
		if o.held > len(o.idle) {
			inUse = true
		}
		o.slotMu.Unlock()
	}
	return freed, inUse
}

// dev is the device view the key's slots call.
func (k *cudaKey) dev() *cuda.Device {
	if k.urgent {
		return k.c.d.Urgent()
	}
	return k.c.d
}

func (k *cudaKey) ProvingKey() *groth16.ProvingKey { return k.pk }

// Records implements [ShapeKey].
func (k *cudaKey) Records(sys *r1cs.System) bool {
	return k.r1cs != nil && sys.Recording() != 0 && k.recording == sys.Recording()
}

// Release frees the key, its R1CS and its slots; every slot must have been
// released.
func (k *cudaKey) Release() {
	k.once.Do(func() {
		k.c.mu.Lock()
		delete(k.c.keys, k)
		k.c.mu.Unlock()
		k.slotMu.Lock()
		for ; k.made > 0; k.made-- {
			(<-k.idle).free()
		}
		k.held = 0
		k.slotMu.Unlock()
		if k.r1cs != nil {
			_ = k.r1cs.Free()
			k.r1Res.Release()
		}
		for _, b := range []*cuda.Buffer{k.h, k.hHi, k.l, k.a, k.bg1, k.bg2} {
			if b != nil {
				_ = b.Free()
			}
		}
		if k.hiRes != nil {
			k.hiRes.Release()
		}
		for _, b := range k.pinnedBufs {
			if b != nil {
				_ = b.Free()
			}
		}
		for _, r := range k.secRes {
			r.Release()
		}
		k.stream.free()
		if k.res != nil {
			k.res.Release()
		}
	})
}

// room is the most one key and its first slot can be granted of the
// budget: what the pinned reservations of the keys already loaded (their
// bases, slots and R1CS) leave.
func (c *CUDA) room() int64 { return c.budget.Total() - c.budget.Pinned() }

// keyBytes is the device memory of all of pk's bases.
func keyBytes(pk *groth16.ProvingKey) int64 {
	var n int64
	for _, sec := range []Section{SectionH, SectionL, SectionA, SectionBG1, SectionBG2} {
		n += sectionBytes(pk, sec)
	}
	return n
}

// LoadKey implements [Device]: the key is uploaded once and kept resident
// when it fits beside one slot in what the resident keys already loaded
// (and their slots) leave of the budget, and streamed otherwise, with the
// sections that fit beside its slots on the device (fillSections). A key
// without host bases cannot be loaded (it is made on a device, see
// [CUDA.SetupKey]). A resident key's memory, like its slots' and its R1CS's,
// is pinned in the budget until the key is released ([pool.Reservation.Pin]).
func (c *CUDA) LoadKey(ctx context.Context, pk *groth16.ProvingKey) (Key, error) {
	key, err := c.loadKey(ctx, pk)
	if err != nil {
		return nil, err
	}
	k := key.(*cudaKey)
	if err := c.fillSections(k); err != nil {
		k.Release()
		return nil, err
	}
	return k, nil
}

// loadKey is LoadKey without fillSections, which LoadShape runs after the
// R1CS has had its chance at the room.
func (c *CUDA) loadKey(ctx context.Context, pk *groth16.ProvingKey) (Key, error) {
	if err := c.enter(ctx, StageLoadKey, 0); err != nil {
		return nil, err
	}
	if !pk.HostBases() {
		return nil, &Error{Device: c.name, Stage: StageLoadKey, Err: fmt.Errorf("%w: %v", ErrBadArgument, groth16.ErrNoHostBases)}
	}
	k := c.newKey(pk)
	kb := keyBytes(pk)
	if kb+c.slotBytes(pk, true, 0, false) > c.room() {
		c.streamKey(k)
		k.pinKey()
		return k, nil
	}
	res, err := c.budget.Reserve(ctx, kb)
	if err != nil {
		return nil, err
	}
	res.Pin()
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

// LoadShape implements [ShapeLoader]. The R1CS goes to the device when the
// key is resident and key, R1CS and one witness slot fit the budget;
// otherwise the key is loaded as by LoadKey and partitions are evaluated on
// the host.
func (c *CUDA) LoadShape(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System) (Key, error) {
	key, err := c.loadKey(ctx, pk)
	if err != nil {
		return nil, err
	}
	k := key.(*cudaKey)
	if err := c.attachShape(ctx, k, sys); err != nil {
		k.Release()
		return nil, err
	}
	if err := c.fillSections(k); err != nil {
		k.Release()
		return nil, err
	}
	return k, nil
}

// fileChunk is the most points LoadShapeFile decodes into host memory at
// once (96 MiB of G1 points, 192 MiB of G2).
const fileChunk = 1 << 20

// LoadShapeFile implements [FileLoader]. A key that fits (as for LoadKey)
// is decoded chunk by chunk into a pinned staging buffer and uploaded into
// its resident buffers; otherwise it is decoded into pinned memory that
// its stages stream from. The R1CS then follows as for LoadShape.
func (c *CUDA) LoadShapeFile(ctx context.Context, f *groth16.ParamsFile, sys *r1cs.System) (Key, error) {
	if err := c.enter(ctx, StageLoadKey, 0); err != nil {
		return nil, err
	}
	pk := f.Key()
	z, lay := pk.Sizes(), f.Layout()
	k := c.newKey(pk)
	fail := func(sec Section, err error) (Key, error) {
		k.Release()
		var ge *Error
		if errors.As(err, &ge) || ctx.Err() != nil {
			return nil, err
		}
		var fe *groth16.FormatError
		if errors.As(err, &fe) || errors.Is(err, groth16.ErrParamsClosed) {
			return nil, &Error{Device: c.name, Stage: StageLoadKey, Section: sec, Err: fmt.Errorf("%w: %w", ErrBadArgument, err)}
		}
		return nil, c.err(StageLoadKey, sec, err)
	}
	g1s := []struct {
		sec  Section
		lay  groth16.Section
		n    int
		dst  **cuda.Buffer
		host *[]bls.G1Affine
	}{{SectionH, lay.H, z.H, &k.h, nil}, {SectionL, lay.L, z.L, &k.l, nil}, {SectionA, lay.A, z.A, &k.a, nil},
		{SectionBG1, lay.BG1, z.BG1, &k.bg1, nil}}

	if keyBytes(pk)+c.slotBytes(pk, true, 0, false) > c.room() {
		// Streamed: the bases live in pinned host memory.
		c.streamKey(k)
		cp := groth16.KeyWithoutBases(pk.VK, z)
		for i := range g1s {
			g1s[i].host = &[]bls.G1Affine{}
		}
		for _, s := range g1s {
			b, v, err := pinnedSlice[bls.G1Affine](s.n)
			if err != nil {
				return fail(s.sec, err)
			}
			k.pinnedBufs[s.sec] = b
			if err := readChunks(ctx, s.n, func(lo, hi int) error { return f.ReadG1(ctx, s.lay, lo, v[lo:hi]) }); err != nil {
				return fail(s.sec, err)
			}
			*s.host = v
		}
		b, v2, err := pinnedSlice[bls.G2Affine](z.BG2)
		if err != nil {
			return fail(SectionBG2, err)
		}
		k.pinnedBufs[SectionBG2] = b
		if err := readChunks(ctx, z.BG2, func(lo, hi int) error { return f.ReadG2(ctx, lo, v2[lo:hi]) }); err != nil {
			return fail(SectionBG2, err)
		}
		cp.H, cp.L, cp.A, cp.BG1, cp.BG2 = *g1s[0].host, *g1s[1].host, *g1s[2].host, *g1s[3].host, v2
		k.pinned = cp
	} else {
		res, err := c.budget.Reserve(ctx, keyBytes(pk))
		if err != nil {
			return nil, err
		}
		res.Pin()
		k.res = res
		stage, st1, err := pinnedSlice[bls.G1Affine](min(fileChunk, max(z.H, z.L, z.A, z.BG1)))
		if err != nil {
			return fail(0, err)
		}
		defer stage.Free()
		for _, s := range g1s {
			buf, err := c.d.Alloc(uint64(s.n) * uint64(g1Size))
			if err != nil {
				return fail(s.sec, err)
			}
			*s.dst = buf
			err = readChunks(ctx, s.n, func(lo, hi int) error {
				if err := f.ReadG1(ctx, s.lay, lo, st1[:hi-lo]); err != nil {
					return err
				}
				return cuda.CopyTo(buf, uint64(lo)*uint64(g1Size), st1[:hi-lo])
			})
			if err != nil {
				return fail(s.sec, err)
			}
		}
		// G2 points are twice as large: the same staging bytes hold half as many.
		st2 := unsafe.Slice((*bls.G2Affine)(unsafe.Pointer(unsafe.SliceData(st1))), len(st1)/2)
		if k.bg2, err = c.d.Alloc(uint64(z.BG2) * uint64(g2Size)); err != nil {
			return fail(SectionBG2, err)
		}
		err = readChunksOf(ctx, z.BG2, max(1, len(st2)), func(lo, hi int) error {
			if err := f.ReadG2(ctx, lo, st2[:hi-lo]); err != nil {
				return err
			}
			return cuda.CopyTo(k.bg2, uint64(lo)*uint64(g2Size), st2[:hi-lo])
		})
		if err != nil {
			return fail(SectionBG2, err)
		}
		k.resident = true
	}
	if err := c.attachShape(ctx, k, sys); err != nil {
		return fail(0, err)
	}
	if err := c.fillSections(k); err != nil {
		return fail(0, err)
	}
	return k, nil
}

// fillSections puts the sections planSections picks of a streamed key k on
// the device, so that their batch additions and tails read them there
// instead of streaming them from the host for every partition (a 32 GiB
// partition streams 34 GB for its batch additions alone). A section the
// budget or the driver has no room for stays streamed; another error is
// returned. Then, while a section other than H streams, k may get its own
// batch additions in the room the sections leave (reserveStream).
func (c *CUDA) fillSections(k *cudaKey) error {
	plan := c.planSections(k)
	src := k.src()
	for _, s := range []struct {
		sec    Section
		dst    **cuda.Buffer
		upload func() (*cuda.Buffer, error)
	}{
		{SectionL, &k.l, func() (*cuda.Buffer, error) { return c.d.UploadG1(src.L) }},
		{SectionA, &k.a, func() (*cuda.Buffer, error) { return c.d.UploadG1(src.A) }},
		{SectionBG1, &k.bg1, func() (*cuda.Buffer, error) { return c.d.UploadG1(src.BG1) }},
		{SectionBG2, &k.bg2, func() (*cuda.Buffer, error) { return c.d.UploadG2(src.BG2) }},
	} {
		// Another key may have taken room since the plan: a slot must
		// still fit beside the section.
		b := sectionBytes(k.pk, s.sec)
		if !plan.has(s.sec) || b+c.slotBytesOn(k.pk, k.onDevice()|1<<s.sec, k.nvars, k.twoVectors) > c.room() {
			continue
		}
		res, ok := c.budget.TryReserve(b)
		if !ok {
			continue
		}
		res.Pin()
		buf, err := s.upload()
		if err != nil {
			res.Release()
			if errors.Is(err, cuda.ErrDeviceOutOfMemory) {
				continue
			}
			return c.err(StageLoadKey, s.sec, err)
		}
		*s.dst = buf
		k.secRes = append(k.secRes, res)
		k.unpin(s.sec)
	}
	if k.onDevice()|1<<SectionH != allSections {
		c.reserveStream(k)
	}
	return nil
}

// planSections picks the sections of a streamed key k to put on the device:
// it keeps the slots that fit the room (at most the device's bound, at
// least one), then takes the largest of L, A, B_G2 and B_G1 that still fits
// beside them, and the next, each slot counted as it is with those sections
// on the device. H stays streamed: its MSM hides its stream behind its
// additions, where every byte of the others is streamed once a partition
// for little work. None for a resident key.
func (c *CUDA) planSections(k *cudaKey) sections {
	if k.resident || !sectionsOnDevice {
		return 0
	}
	room := c.room()
	n := max(1, min(int64(cap(k.idle)), room/max(c.SlotBytes(k), 1)))
	order := []Section{SectionL, SectionA, SectionBG2, SectionBG1}
	slices.SortStableFunc(order, func(x, y Section) int {
		return cmp.Compare(sectionBytes(k.pk, y), sectionBytes(k.pk, x))
	})
	on, plan := k.onDevice(), sections(0)
	for _, sec := range order {
		b := sectionBytes(k.pk, sec)
		if b == 0 || b+n*c.slotBytesOn(k.pk, on|1<<sec, k.nvars, k.twoVectors) > room {
			continue
		}
		room -= b
		on |= 1 << sec
		plan |= 1 << sec
	}
	return plan
}

// sectionsOnDevice lets planSections put a streamed key's sections on the
// device (a variable for tests of the wholly streamed paths).
var sectionsOnDevice = true

// sectionBytes is the device memory of section sec of pk's bases.
func sectionBytes(pk *groth16.ProvingKey, sec Section) int64 {
	z := pk.Sizes()
	switch sec {
	case SectionH:
		return g1Size * int64(z.H)
	case SectionL:
		return g1Size * int64(z.L)
	case SectionA:
		return g1Size * int64(z.A)
	case SectionBG1:
		return g1Size * int64(z.BG1)
	case SectionBG2:
		return g2Size * int64(z.BG2)
	}
	return 0
}

// readChunks calls read on [lo, hi) ranges of fileChunk points covering
// [0, n), checking ctx between them.
func readChunks(ctx context.Context, n int, read func(lo, hi int) error) error {
	return readChunksOf(ctx, n, fileChunk, read)
}

func readChunksOf(ctx context.Context, n, chunk int, read func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := read(lo, min(lo+chunk, n)); err != nil {
			return err
		}
	}
	return nil
}

// pinnedSlice allocates n points of pinned host memory.
func pinnedSlice[P any](n int) (*cuda.HostBuffer, []P, error) {
	var zero P
	h, err := cuda.AllocPinned(uint64(max(n, 1)) * uint64(unsafe.Sizeof(zero)))
	if err != nil {
		return nil, nil, err
	}
	return h, unsafe.Slice((*P)(unsafe.Pointer(unsafe.SliceData(h.Bytes()))), n), nil
}

// attachShape makes sys's recorded constraints resident beside the key k
// (resident or streamed) when the layout allows it and R1CS plus one
// witness slot fit the budget's free room; otherwise k stays a plain key
// (partitions are then evaluated on the host) and attachShape returns nil.
// A system without its matrices has them recorded again first
// ([r1cs.System.Matrices]); one that cannot have them leaves k a plain
// key. With the R1CS resident, k may get the high copy of its H bases
// (attachHigh). An error means the recording, the upload or that copy
// failed; the caller releases k.
func (c *CUDA) attachShape(ctx context.Context, k *cudaKey, sys *r1cs.System) error {
	pk := k.pk
	if !sys.HasMatrices() {
		full, err := sys.Matrices(ctx)
		if errors.Is(err, r1cs.ErrNoMatrices) {
			return nil
		}
		if err != nil {
			return err
		}
		sys = full
	}
	if checkLayout(sys) != nil || sys.NumConstraints() > pk.DomainSize() {
		return nil
	}
	rb := layoutBytesOf(sys)
	if rb+c.slotBytes(pk, k.resident, sys.NumInputs()+sys.NumAux(), false) > c.budget.Total()-c.budget.Used() {
		return nil
	}
	res, ok := c.budget.TryReserve(rb)
	if !ok {
		return nil
	}
	res.Pin()
	r, err := c.uploadR1CS(sys)
	if err != nil {
		res.Release()
		return c.err(StageLoadKey, 0, err)
	}
	k.r1cs, k.recording, k.nvars, k.r1Res = r, sys.Recording(), sys.NumInputs()+sys.NumAux(), res
	return c.attachHigh(k)
}

// attachHigh gives a resident key with its R1CS the high copy of its H
// bases, 2^128·H (cuda.Device.HighBasesG1, made on the device), which the
// witness pass's split MSM of H reads (cuda.Device.MSMG1SplitOnDevice: 12
// windows of additions where the plain MSM has 13), when the device splits
// H at the key's size (splitsH) and the copy leaves room for the key's
// slots (SetSlots). Otherwise, or when the driver has no room for it, H's
// MSM stays the plain one. An error means the copy failed on the device.
func (c *CUDA) attachHigh(k *cudaKey) error {
	if !c.splitsH(k.pk.Sizes().H) || !k.resident || k.r1cs == nil || k.hHi != nil || !c.highFits(k.pk, k.nvars) {
		return nil
	}
	n := k.pk.Sizes().H
	need := g1Size * int64(n)
	res, ok := c.budget.TryReserve(need)
	if !ok {
		return nil
	}
	res.Pin()
	buf, err := c.d.Alloc(uint64(need))
	if err != nil {
		res.Release()
		if errors.Is(err, cuda.ErrDeviceOutOfMemory) {
			return nil
		}
		return c.err(StageLoadKey, SectionH, err)
	}
	if err := k.dev().HighBasesG1(buf, k.h, n); err != nil {
		_ = buf.Free()
		res.Release()
		return c.err(StageLoadKey, SectionH, err)
	}
	k.hHi, k.hiRes = buf, res
	return nil
}

// splitHMin is the fewest H points at which OpenCUDA's devices split H's
// MSM, H's size at a domain of 2^26: on the H200 the split MSM is 3–4 %
// faster at 2^26 and 2^27 points and 4 % slower at 2^24 (BENCHMARKS.md,
// session 29).
const splitHMin = 1<<26 - 1

// splitPolicy returns CUDA's splitH and splitHAt for the value of
// C2_CUDA_SPLIT_H: "0" never splits, "1" splits at every size, anything
// else from splitHMin points.
func splitPolicy(env string) (on bool, at int) {
	switch env {
	case "0":
		return false, 0
	case "1":
		return true, 0
	}
	return true, splitHMin
}

// hostG2Share returns the share of B_G2's tail a CUDA device leaves to the
// host ([Info].HostG2) for the value of C2_CUDA_HOST_G2: none when env is
// empty. The host sums its share with every core while it also synthesizes
// witnesses; on an H100 with 16 vCPUs F = 0.5 made every C2 0.08–0.16 s
// slower and took 12–13 of the cores where none took 3–4, and on an H200
// it gained at most 0.08 s (BENCHMARKS.md), so it is opt-in.
func hostG2Share(env string) (float64, error) {
	if env == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(env, 64)
	if err != nil || !(f >= 0 && f <= 1) {
		return 0, fmt.Errorf("gpu: C2_CUDA_HOST_G2=%q: want a number from 0 to 1", env)
	}
	return f, nil
}

// splitsH reports whether the witness pass splits an H MSM of n points
// when the high copy of the bases fits.
func (c *CUDA) splitsH(n int) bool { return c.splitH && n >= c.splitHAt }

// highFits reports whether the high copy of pk's H bases fits in the
// budget's free room beside as many witness slots of pk (nvars variables)
// as SetSlots allows.
func (c *CUDA) highFits(pk *groth16.ProvingKey, nvars int) bool {
	need := g1Size * int64(pk.Sizes().H)
	return need+int64(c.maxSlots())*c.slotBytes(pk, true, nvars, false) <= c.budget.Total()-c.budget.Used()
}

// r1csChunk is the most terms uploadR1CS converts at a time (6 bytes of
// host memory each; a variable for tests).
var r1csChunk = 1 << 24

// uploadR1CS converts sys into device buffers, r1csChunk terms at a time
// (convertChunks): the host holds one chunk's conversion, not a matrix's.
func (c *CUDA) uploadR1CS(sys *r1cs.System) (r *cuda.R1CS, err error) {
	r = &cuda.R1CS{Constraints: sys.NumConstraints(), Inputs: sys.NumInputs(), Aux: sys.NumAux()}
	defer func() {
		if err != nil {
			_ = r.Free()
		}
	}()
	put := func(dst **cuda.Buffer, bytes uint64, copyIn func(*cuda.Buffer) error) error {
		b, err := c.d.Alloc(bytes)
		if err != nil {
			return err
		}
		*dst = b
		return copyIn(b)
	}
	for k, sm := range []*r1cs.Matrix{sys.A(), sys.B(), sys.C()} {
		m, n := &r.Mats[k], uint64(len(sm.Vars))
		if err := put(&m.RowStart, 4*uint64(len(sm.RowStart)), func(b *cuda.Buffer) error { return cuda.CopyTo(b, 0, sm.RowStart) }); err != nil {
			return nil, err
		}
		if err := put(&m.Col, 4*n, func(*cuda.Buffer) error { return nil }); err != nil {
			return nil, err
		}
		if err := put(&m.Coeff, 2*n, func(*cuda.Buffer) error { return nil }); err != nil {
			return nil, err
		}
	}
	err = convertChunks(sys, r1csChunk, func(k, lo int, cols []uint32, coef []uint16) error {
		if err := cuda.CopyTo(r.Mats[k].Col, 4*uint64(lo), cols); err != nil {
			return err
		}
		return cuda.CopyTo(r.Mats[k].Coeff, 2*uint64(lo), coef)
	})
	if err != nil {
		return nil, err
	}
	coeffs, kinds := sys.Coeffs(), coeffKinds(sys.Coeffs())
	if err := put(&r.Coeffs, uint64(frSize)*uint64(len(coeffs)), func(b *cuda.Buffer) error { return cuda.CopyTo(b, 0, coeffs) }); err != nil {
		return nil, err
	}
	if err := put(&r.Kinds, uint64(len(kinds)), func(b *cuda.Buffer) error { return cuda.CopyTo(b, 0, kinds) }); err != nil {
		return nil, err
	}
	return r, nil
}

// SlotBytes implements [Device].
func (c *CUDA) SlotBytes(key Key) int64 {
	k, ok := key.(*cudaKey)
	if !ok {
		return c.slotBytes(key.ProvingKey(), false, 0, false)
	}
	return c.slotBytesOn(k.pk, k.onDevice(), k.nvars, k.twoVectors)
}

// String describes where k's parts are, for logs: the key resident, or
// streamed from pinned (or pageable) host memory with the sections on the
// device and its own batch additions, ComputeH's staging in two vectors,
// the R1CS, and a slot's bytes.
func (k *cudaKey) String() string {
	var b strings.Builder
	switch {
	case k.resident:
		b.WriteString("key resident")
	case k.pinned != nil:
		b.WriteString("key streamed from pinned host memory")
	default:
		b.WriteString("key streamed from pageable host memory")
	}
	if on := k.onDevice(); !k.resident && on != 0 {
		var names []string
		for _, sec := range []Section{SectionH, SectionL, SectionA, SectionBG1, SectionBG2} {
			if on.has(sec) {
				names = append(names, sec.String())
			}
		}
		fmt.Fprintf(&b, ", %s on the device", strings.Join(names, ", "))
	}
	if k.stream != nil {
		b.WriteString(", streamed batch additions beside the slots")
	}
	if k.r1cs != nil {
		b.WriteString(", R1CS on the device")
	}
	if k.twoVectors {
		b.WriteString(", ComputeH staged in two vectors")
	}
	fmt.Fprintf(&b, ", %.1f GB a slot", float64(k.c.SlotBytes(k))/1e9)
	return b.String()
}

// onDevice is the set of k's sections whose bases are on the device: all
// of a resident key's, those fillSections uploaded of a streamed one's.
func (k *cudaKey) onDevice() sections {
	var on sections
	for sec, b := range map[Section]*cuda.Buffer{SectionH: k.h, SectionL: k.l, SectionA: k.a, SectionBG1: k.bg1, SectionBG2: k.bg2} {
		if b != nil {
			on |= 1 << sec
		}
	}
	return on
}

// streamKey marks k, about to be streamed, to stage ComputeH in two device
// vectors when a slot staging three does not fit the room the resident keys
// leave: 2^27·32 bytes less a slot at 32 GiB (15.1 → 10.8 GB), so that a
// 16 GB card holds one. c2_compute_h then uploads c only after the cosets'
// product: 82 ms more a 32 GiB partition on an H100 (BENCHMARKS.md).
func (c *CUDA) streamKey(k *cudaKey) {
	k.twoVectors = c.slotBytes(k.pk, false, 0, false) > c.room()
}

// Acquire implements [Device]: it hands out an idle slot of the key, makes
// a new one while fewer than its bound (SetSlots) exist and the budget has
// room — freeing idle slots of other keys for it when they hold the room —
// and otherwise waits for a slot of the key to be released. The first slot
// waits for the budget in FIFO order, or, when pinned reservations leave
// too little, for other keys' slots to be released (see reserveSlot).
func (c *CUDA) Acquire(ctx context.Context, key Key) (Slot, error) {
	if err := c.enter(ctx, StageAcquire, 0); err != nil {
		return nil, err
	}
	k, ok := key.(*cudaKey)
	if !ok || k.c != c {
		return nil, &Error{Device: c.name, Stage: StageAcquire, Err: fmt.Errorf("%w: key was not loaded by this device", ErrBadArgument)}
	}
	for {
		select {
		case m := <-k.idle:
			return &cudaSlot{c: c, k: k, mem: m}, nil
		default:
		}
		k.slotMu.Lock()
		short := false // room for another slot is what is missing
		if k.made < cap(k.idle) {
			res, ok := c.budget.TryReserve(c.SlotBytes(k))
			first := k.made == 0
			short = !ok && !first
			if ok || first {
				k.made++ // counted now so that concurrent callers respect the bound
				k.slotMu.Unlock()
				m, err := c.newSlot(ctx, k, res)
				if err == nil {
					k.slotMu.Lock()
					k.held++
					k.slotMu.Unlock()
					return &cudaSlot{c: c, k: k, mem: m}, nil
				}
				k.slotMu.Lock()
				k.made--
				others := k.made
				k.slotMu.Unlock()
				if others == 0 || !errors.Is(err, ErrOutOfMemory) {
					return nil, err
				}
				// The driver has less room than the budget says (e.g.
				// fragmentation): make do with the slots that exist.
				select {
				case m := <-k.idle:
					return &cudaSlot{c: c, k: k, mem: m}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}
		k.slotMu.Unlock()
		if short {
			if freed, _ := c.evictIdle(k, c.SlotBytes(k)); freed {
				continue
			}
		}
		select {
		case m := <-k.idle:
			return &cudaSlot{c: c, k: k, mem: m}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// newSlot makes one slot of k: its reservation (res, or one waited for when
// res is nil) and its device buffers.
func (c *CUDA) newSlot(ctx context.Context, k *cudaKey, res *pool.Reservation) (*slotMem, error) {
	if res == nil {
		var err error
		if res, err = c.reserveSlot(ctx, k); err != nil {
			return nil, err
		}
	}
	res.Pin() // slots live as long as their key
	m := &slotMem{res: res}
	if k.r1cs == nil {
		return m, nil
	}
	var err error
	if m.w, err = c.d.Alloc(uint64(k.nvars) * uint64(frSize)); err == nil {
		m.abc, err = c.d.Alloc(3 * uint64(frSize) * uint64(k.pk.DomainSize()))
	}
	if err != nil {
		m.free()
		return nil, c.err(StageAcquire, 0, err)
	}
	return m, nil
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
	c    *CUDA
	k    *cudaKey
	mem  *slotMem
	once sync.Once
	// witnessed: mem.w holds the witness this slot's ComputeHWitness took.
	witnessed bool
}

// Release returns the slot, with its device buffers, to its key. Idempotent.
func (s *cudaSlot) Release() {
	s.once.Do(func() {
		s.k.idle <- s.mem
		s.c.slotReleased()
	})
}

// ComputeHWitness implements [WitnessSlot].
func (s *cudaSlot) ComputeHWitness(ctx context.Context, w *Witness) (bls.G1Jac, error) {
	var res bls.G1Jac
	if err := s.c.enter(ctx, StageH, SectionH); err != nil {
		return res, err
	}
	k := s.k
	if k.r1cs == nil || s.mem.abc == nil {
		return res, &Error{Device: s.c.name, Stage: StageH, Err: fmt.Errorf("%w: no resident R1CS", ErrBadArgument)}
	}
	if err := w.Check(k.r1cs.Inputs, k.r1cs.Aux); err != nil {
		return res, &Error{Device: s.c.name, Stage: StageH, Err: err}
	}
	n := k.pk.DomainSize()
	logN := bits.TrailingZeros(uint(n))
	bad, err := s.k.dev().EvalR1CS(k.r1cs, s.mem.w, s.mem.abc, logN, w.Inputs, w.Ones, w.TailIdx, w.Tail)
	if err != nil {
		return res, s.c.err(StageH, SectionH, err)
	}
	s.witnessed = bad < 0
	nb := uint64(n) * uint64(frSize)
	var abc [3]*cuda.Buffer
	for i := range abc {
		if abc[i], err = s.mem.abc.Slice(uint64(i)*nb, nb); err != nil {
			return res, s.c.err(StageH, SectionH, err)
		}
	}
	if bad >= 0 {
		var v [3][1]fr.Element
		for i := range v {
			if err := cuda.CopyFrom(v[i][:], abc[i], uint64(bad)*uint64(frSize)); err != nil {
				return res, s.c.err(StageH, SectionH, err)
			}
		}
		return res, &r1cs.UnsatisfiedError{Index: int(bad), Input: int(bad) >= k.r1cs.Constraints-k.r1cs.Inputs,
			A: v[0][0], B: v[1][0], C: v[2][0]}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := s.k.dev().ComputeHResident(abc[0], abc[1], abc[2], logN); err != nil {
		return res, s.c.err(StageH, SectionH, err)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	switch {
	case k.hHi != nil:
		res, err = s.k.dev().MSMG1SplitOnDevice(k.h, k.hHi, abc[0], n-1)
	case k.h != nil:
		res, err = s.k.dev().MSMG1OnDevice(k.h, abc[0], n-1)
	default:
		res, err = s.k.dev().MSMG1HostBases(k.src().H, abc[0], n-1)
	}
	if err != nil {
		return res, s.c.err(StageH, SectionH, err)
	}
	return res, nil
}

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
	computeH := s.k.dev().ComputeH
	if s.k.twoVectors {
		computeH = s.k.dev().ComputeHTwoVectors
	}
	if err := computeH(a, b, c); err != nil {
		return res, s.c.err(StageH, SectionH, err)
	}
	var err error
	if s.k.h != nil {
		res, err = s.k.dev().MSMG1Resident(s.k.h, a[:n-1])
	} else {
		res, err = s.k.dev().MSMG1(s.k.src().H, a[:n-1])
	}
	if err != nil {
		return res, s.c.err(StageH, SectionH, err)
	}
	return res, nil
}

// g1 returns a G1 section of the key: its size, its host bases (nil for a
// key without them) and, when the section is on the device, its buffer.
func (k *cudaKey) g1(sec Section) (int, []bls.G1Affine, *cuda.Buffer, error) {
	bases, err := g1Section(k.src(), sec)
	if err != nil {
		return 0, nil, nil, err
	}
	z := k.pk.Sizes()
	n := map[Section]int{SectionH: z.H, SectionL: z.L, SectionA: z.A, SectionBG1: z.BG1}[sec]
	buf := map[Section]*cuda.Buffer{SectionH: k.h, SectionL: k.l, SectionA: k.a, SectionBG1: k.bg1}[sec]
	return n, bases, buf, nil
}

// g2 returns the key's B_G2 section as g1 returns a G1 section.
func (k *cudaKey) g2(Section) (int, []bls.G2Affine, *cuda.Buffer, error) {
	return k.pk.Sizes().BG2, k.src().BG2, k.bg2, nil
}

// cudaGroup is one group's share of a key's calls: where a section's bases
// are (section is g1 or g2) and the cuda.Device calls over them.
type cudaGroup[A, J any] struct {
	section          func(k *cudaKey, sec Section) (int, []A, *cuda.Buffer, error)
	batchAdd         func(d *cuda.Device, bases []A, ones []uint64) (J, error)
	batchAddResident func(d *cuda.Device, bases *cuda.Buffer, n int, ones []uint64) (J, error)
	msm              func(d *cuda.Device, bases []A, scalars []fr.Element) (J, error)
	msmResident      func(d *cuda.Device, bases *cuda.Buffer, scalars []fr.Element) (J, error)
	msmIndexed       func(d *cuda.Device, bases *cuda.Buffer, n int, idx []uint32, scalars []fr.Element) (J, error)
	msmOnDevice      func(d *cuda.Device, bases, scalars *cuda.Buffer, n int) (J, error)
	msmHostBases     func(d *cuda.Device, bases []A, scalars *cuda.Buffer, n int) (J, error)
}

var (
	cudaG1 = cudaGroup[bls.G1Affine, bls.G1Jac]{
		section:  (*cudaKey).g1,
		batchAdd: (*cuda.Device).BatchAddG1, batchAddResident: (*cuda.Device).BatchAddG1Resident,
		msm: (*cuda.Device).MSMG1, msmResident: (*cuda.Device).MSMG1Resident, msmIndexed: (*cuda.Device).MSMG1Indexed,
		msmOnDevice: (*cuda.Device).MSMG1OnDevice, msmHostBases: (*cuda.Device).MSMG1HostBases,
	}
	cudaG2 = cudaGroup[bls.G2Affine, bls.G2Jac]{
		section:  (*cudaKey).g2,
		batchAdd: (*cuda.Device).BatchAddG2, batchAddResident: (*cuda.Device).BatchAddG2Resident,
		msm: (*cuda.Device).MSMG2, msmResident: (*cuda.Device).MSMG2Resident, msmIndexed: (*cuda.Device).MSMG2Indexed,
		msmOnDevice: (*cuda.Device).MSMG2OnDevice, msmHostBases: (*cuda.Device).MSMG2HostBases,
	}
)

func (s *cudaSlot) BatchAddG1(ctx context.Context, sec Section, ones []uint64) (bls.G1Jac, error) {
	return cudaBatchAdd(ctx, s.k, sec, cudaG1, ones)
}

func (s *cudaSlot) BatchAddG2(ctx context.Context, ones []uint64) (bls.G2Jac, error) {
	return cudaBatchAdd(ctx, s.k, SectionBG2, cudaG2, ones)
}

func (s *cudaSlot) TailG1(ctx context.Context, sec Section, idx []uint32, scalars []fr.Element) (bls.G1Jac, error) {
	return cudaTail[bls.G1Affine, bls.G1Jac](ctx, s, sec, cudaG1, idx, scalars)
}

func (s *cudaSlot) TailG2(ctx context.Context, idx []uint32, scalars []fr.Element) (bls.G2Jac, error) {
	return cudaTail[bls.G2Affine, bls.G2Jac](ctx, s, SectionBG2, cudaG2, idx, scalars)
}

// MSMWitnessG1 implements [WitnessSlot].
func (s *cudaSlot) MSMWitnessG1(ctx context.Context, sec Section, sel []uint64) (bls.G1Jac, error) {
	return cudaMSMWitness(ctx, s, sec, cudaG1, sel)
}

// MSMWitnessG2 implements [WitnessSlot].
func (s *cudaSlot) MSMWitnessG2(ctx context.Context, sel []uint64) (bls.G2Jac, error) {
	return cudaMSMWitness(ctx, s, SectionBG2, cudaG2, sel)
}

// ReadBasesG2 implements [G2Reader]: from a streamed key's host bases, or
// gathered on the device in pieces through the slot's a‖b‖c scratch (free
// once H is done; on a slot without one, a buffer of at most one tail
// piece's bases, which the slot's reservation counts) and copied out.
func (s *cudaSlot) ReadBasesG2(ctx context.Context, idx []uint32, dst []bls.G2Affine) error {
	if err := s.c.enter(ctx, StageTail, SectionBG2); err != nil {
		return err
	}
	n, bases, buf, _ := s.k.g2(SectionBG2)
	if err := checkIdx(n, idx, len(dst), "bases"); err != nil {
		return &Error{Device: s.c.name, Stage: StageTail, Section: SectionBG2, Err: err}
	}
	if buf == nil {
		if len(bases) < n {
			return &Error{Device: s.c.name, Stage: StageTail, Section: SectionBG2,
				Err: fmt.Errorf("%w: the key's B_G2 bases are neither resident nor in host memory", ErrBadArgument)}
		}
		for j, i := range idx {
			dst[j] = bases[i]
		}
		return nil
	}
	if len(idx) == 0 {
		return nil
	}
	scratch := s.mem.abc
	if scratch == nil {
		b, err := s.k.dev().Alloc(uint64(min(len(idx), tailPiece)) * uint64(g2Size))
		if err != nil {
			return s.c.err(StageTail, SectionBG2, err)
		}
		defer b.Free()
		scratch = b
	}
	per := int(scratch.Len() / uint64(g2Size))
	for lo := 0; lo < len(idx); lo += per {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+per, len(idx))
		err := gatherPoints(s.k.dev(), scratch, buf, uint64(g2Size), idx[lo:hi])
		if err == nil {
			err = cuda.CopyFrom(dst[lo:hi], scratch, 0)
		}
		if err != nil {
			return s.c.err(StageTail, SectionBG2, err)
		}
	}
	return nil
}

// gatherPoints sets point j of dst to point idx[j] of bases, on the device;
// points are size bytes (a multiple of an Fr value's 32) and idx is
// increasing and not empty. It selects the points' 32-byte words from the
// range idx spans with one bitmap.
func gatherPoints(d *cuda.Device, dst, bases *cuda.Buffer, size uint64, idx []uint32) error {
	words := size / uint64(frSize)
	first := uint64(idx[0])
	span := (uint64(idx[len(idx)-1]) - first + 1) * words
	src, err := bases.Slice(first*size, span*uint64(frSize))
	if err != nil {
		return err
	}
	bitmap := make([]uint64, (span+63)/64)
	for _, i := range idx {
		for b := (uint64(i) - first) * words; b < (uint64(i)-first+1)*words; b++ {
			bitmap[b/64] |= 1 << (b % 64)
		}
	}
	_, err = d.Select(dst, src, int(span), bitmap)
	return err
}

// cudaMSMWitness is MSMWitnessG1 and MSMWitnessG2: the scalars are the
// witness in mem.w (every aux value, in place) or the variables sel
// selects, gathered on the device into mem.abc, free once H is done.
func cudaMSMWitness[A, J any](ctx context.Context, s *cudaSlot, sec Section, g cudaGroup[A, J], sel []uint64) (J, error) {
	var res J
	if err := s.c.enter(ctx, StageTail, sec); err != nil {
		return res, err
	}
	n, bases, buf, err := g.section(s.k, sec)
	if err != nil {
		return res, &Error{Device: s.c.name, Stage: StageTail, Section: sec, Err: err}
	}
	bad := func(format string, a ...any) (J, error) {
		return res, &Error{Device: s.c.name, Stage: StageTail, Section: sec,
			Err: fmt.Errorf("%w: "+format, append([]any{ErrBadArgument}, a...)...)}
	}
	r := s.k.r1cs
	if !s.witnessed || r == nil {
		return bad("the slot holds no witness")
	}
	var scalars *cuda.Buffer
	if sel == nil {
		if n != r.Aux {
			return bad("%d aux values for a section of %d bases", r.Aux, n)
		}
		scalars, err = s.mem.w.Slice(uint64(frSize)*uint64(r.Inputs), uint64(frSize)*uint64(r.Aux))
	} else {
		nvars := r.Inputs + r.Aux
		if len(sel) != (nvars+63)/64 {
			return bad("selection of %d words for %d variables", len(sel), nvars)
		}
		if uint64(n)*uint64(frSize) > s.mem.abc.Len() {
			return bad("%d scalars exceed the slot's scratch of %d bytes", n, s.mem.abc.Len())
		}
		if scalars, err = s.mem.abc.Slice(0, uint64(n)*uint64(frSize)); err == nil {
			var got int
			if got, err = s.k.dev().Select(scalars, s.mem.w, nvars, sel); err == nil && got != n {
				return bad("selection of %d variables for a section of %d bases", got, n)
			}
		}
	}
	if err == nil {
		if buf != nil {
			res, err = g.msmOnDevice(s.k.dev(), buf, scalars, n)
		} else {
			res, err = g.msmHostBases(s.k.dev(), bases, scalars, n)
		}
	}
	if err != nil {
		return res, s.c.err(StageTail, sec, err)
	}
	return res, nil
}

// cudaBatchAdd is BatchAddG1 and BatchAddG2 of k's slots: from the
// resident buffer, or streamed from the host bases in chunks.
func cudaBatchAdd[A, J any, PJ point[J]](ctx context.Context, k *cudaKey, sec Section, g cudaGroup[A, J], ones []uint64) (J, error) {
	var res J
	if err := k.c.enter(ctx, StageBatchAdd, sec); err != nil {
		return res, err
	}
	n, bases, buf, err := g.section(k, sec)
	if err == nil {
		err = checkOnes(n, ones)
	}
	if err != nil {
		return res, &Error{Device: k.c.name, Stage: StageBatchAdd, Section: sec, Err: err}
	}
	if buf != nil {
		res, err = g.batchAddResident(k.dev(), buf, n, ones)
	} else {
		res, err = batchChunks[A, J, PJ](ctx, bases, ones, func(b []A, o []uint64) (J, error) { return g.batchAdd(k.dev(), b, o) })
	}
	if err != nil {
		if errors.Is(err, ctx.Err()) {
			return res, err // ended between chunks
		}
		return res, k.c.err(StageBatchAdd, sec, err)
	}
	return res, nil
}

// cudaTail is TailG1 and TailG2: from the resident buffer (gathered on the
// device for a sparse tail), or from the host bases (gathered on the host).
func cudaTail[A, J any, PJ point[J]](ctx context.Context, s *cudaSlot, sec Section, g cudaGroup[A, J], idx []uint32, scalars []fr.Element) (J, error) {
	var res J
	if err := s.c.enter(ctx, StageTail, sec); err != nil {
		return res, err
	}
	n, bases, buf, err := g.section(s.k, sec)
	if err == nil {
		err = checkMSM(n, idx, scalars)
	}
	if err != nil {
		return res, &Error{Device: s.c.name, Stage: StageTail, Section: sec, Err: err}
	}
	switch {
	case buf != nil && idx != nil:
		// In pieces: the library gathers an indexed MSM's bases on the
		// device (slotBytes counts one piece's).
		res, err = sumPieces[J, PJ](len(idx), tailPiece, func(lo, hi int) (J, error) {
			return g.msmIndexed(s.k.dev(), buf, n, idx[lo:hi], scalars[lo:hi])
		})
	case buf != nil:
		res, err = g.msmResident(s.k.dev(), buf, scalars)
	case idx != nil:
		res, err = g.msm(s.k.dev(), msm.Gather(bases, idx), scalars)
	default:
		res, err = g.msm(s.k.dev(), bases, scalars)
	}
	if err != nil {
		return res, s.c.err(StageTail, sec, err)
	}
	return res, nil
}

// batchChunk is the most bases one batch addition of a streamed key copies
// to the device at once (a multiple of 64; a variable for tests).
var batchChunk = 1 << 22

// batchChunks sums add's results over chunks of batchChunk bases (whole
// bitmap words each), so that a streamed section never needs its full size
// in device memory; it stops with ctx's error between chunks.
func batchChunks[P any, J any, PJ point[J]](ctx context.Context, bases []P, ones []uint64, add func([]P, []uint64) (J, error)) (J, error) {
	return sumPieces[J, PJ](len(bases), batchChunk, func(lo, hi int) (J, error) {
		if err := ctx.Err(); err != nil {
			var zero J
			return zero, err
		}
		return add(bases[lo:hi], ones[lo/64:(hi+63)/64])
	})
}

// sumPieces adds f's results over the consecutive ranges [lo, hi) of at
// most piece elements that cover [0, n), one empty range when n is 0.
func sumPieces[J any, PJ point[J]](n, piece int, f func(lo, hi int) (J, error)) (J, error) {
	var sum J
	for lo := 0; lo < n || lo == 0; lo += piece {
		part, err := f(lo, min(n, lo+piece))
		if err != nil {
			return sum, err
		}
		if lo == 0 {
			sum = part
		} else {
			PJ(&sum).AddAssign(&part)
		}
	}
	return sum, nil
}

// src is the key whose host bases the streamed stages read: the pinned copy
// when there is one.
func (k *cudaKey) src() *groth16.ProvingKey {
	if k.pinned != nil {
		return k.pinned
	}
	return k.pk
}

// pinKey copies a streamed key's bases into pinned host memory, section by
// section on several goroutines; when pinned memory is refused the key
// streams from pk's pageable memory instead (slower, still correct).
func (k *cudaKey) pinKey() {
	pk := k.pk
	var bufs [SectionBG2 + 1]*cuda.HostBuffer
	fail := func() {
		for _, b := range bufs {
			if b != nil {
				_ = b.Free()
			}
		}
	}
	cp := &groth16.ProvingKey{VK: pk.VK}
	for _, s := range []struct {
		sec Section
		dst *[]bls.G1Affine
		src []bls.G1Affine
	}{{SectionH, &cp.H, pk.H}, {SectionL, &cp.L, pk.L}, {SectionA, &cp.A, pk.A}, {SectionBG1, &cp.BG1, pk.BG1}} {
		b, v, err := pinnedCopy(s.src)
		if err != nil {
			fail()
			return
		}
		bufs[s.sec], *s.dst = b, v
	}
	b, v, err := pinnedCopy(pk.BG2)
	if err != nil {
		fail()
		return
	}
	bufs[SectionBG2], cp.BG2 = b, v
	k.pinned, k.pinnedBufs = cp, bufs
}

// unpin frees the pinned host copy of section sec, now on the device: every
// stage reads a section's device buffer when there is one.
func (k *cudaKey) unpin(sec Section) {
	b := k.pinnedBufs[sec]
	if b == nil {
		return
	}
	switch sec {
	case SectionH:
		k.pinned.H = nil
	case SectionL:
		k.pinned.L = nil
	case SectionA:
		k.pinned.A = nil
	case SectionBG1:
		k.pinned.BG1 = nil
	case SectionBG2:
		k.pinned.BG2 = nil
	}
	k.pinnedBufs[sec] = nil
	_ = b.Free()
}

// pinnedCopy returns a copy of src in pinned host memory.
func pinnedCopy[P any](src []P) (*cuda.HostBuffer, []P, error) {
	h, dst, err := pinnedSlice[P](len(src))
	if err != nil {
		return nil, nil, err
	}
	const chunk = 1 << 20
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for lo := 0; lo < len(src); lo += chunk {
		hi := min(lo+chunk, len(src))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
			<-sem
		}()
	}
	wg.Wait()
	return h, dst, nil
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
