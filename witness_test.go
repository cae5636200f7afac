package c2

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/gpu/gputest"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
)

// witnessDevice is the CPU device with the witness pass of a GPU emulated
// by r1cs's own evaluation: LoadShape keeps the recorded R1CS, and its
// slots take the witness handoff instead of a, b, c.
type witnessDevice struct {
	*gpu.CPU
	shapes, witnesses int         // calls seen, for assertions (one goroutine at a time per test)
	fail              atomic.Bool // refuse every witness as unsatisfied
	// gate, when set, holds every witness pass until it is closed (10 s
	// at most); broken fails the first witness pass as a faulty kernel.
	gate   chan struct{}
	broken atomic.Bool
	// witnessMSMs counts MSMs over the witness a slot holds (dense queries).
	witnessMSMs atomic.Int32
}

type witnessKey struct {
	gpu.Key
	rec *r1cs.System
}

// Records reports whether sys has the recording k was loaded with.
func (k *witnessKey) Records(sys *r1cs.System) bool {
	return sys.Recording() != 0 && k.rec.Recording() == sys.Recording()
}

type witnessSlot struct {
	gpu.Slot
	d   *witnessDevice
	rec *r1cs.System
	n   int
	w   []fr.Element // inputs ‖ aux of the last witness pass
}

func (d *witnessDevice) LoadShape(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System) (gpu.Key, error) {
	k, err := d.LoadKey(ctx, pk)
	if err != nil {
		return nil, err
	}
	if !sys.Finalized() {
		return k, nil
	}
	if sys, err = sys.Matrices(ctx); err != nil { // recorded again if the host released them
		k.Release()
		return nil, err
	}
	d.shapes++
	return &witnessKey{Key: k, rec: sys}, nil
}

func (d *witnessDevice) SlotBytes(key gpu.Key) int64 { return d.CPU.SlotBytes(unwrap(key)) }

func (d *witnessDevice) Acquire(ctx context.Context, key gpu.Key) (gpu.Slot, error) {
	s, err := d.CPU.Acquire(ctx, unwrap(key))
	if err != nil {
		return nil, err
	}
	if k, ok := key.(*witnessKey); ok {
		return &witnessSlot{Slot: s, d: d, rec: k.rec, n: key.ProvingKey().DomainSize()}, nil
	}
	return s, nil
}

func (s *witnessSlot) ComputeHWitness(ctx context.Context, w *gpu.Witness) (bls.G1Jac, error) {
	if s.d.gate != nil {
		select {
		case <-s.d.gate:
		case <-time.After(10 * time.Second):
			return bls.G1Jac{}, errors.New("the gate stayed closed")
		}
	}
	if s.d.broken.CompareAndSwap(true, false) {
		return bls.G1Jac{}, &gpu.Error{Device: "witness", Stage: gpu.StageH, Err: gpu.ErrKernel}
	}
	s.d.witnesses++
	if err := w.Check(s.rec.NumInputs(), s.rec.NumAux()); err != nil {
		return bls.G1Jac{}, err
	}
	s.w = append(append(s.w[:0], w.Inputs...), make([]fr.Element, w.NumAux)...)
	w.Expand(s.w[len(w.Inputs):])
	sys, err := s.rec.WithAssignment(w.Inputs, s.w[len(w.Inputs):])
	if err != nil {
		return bls.G1Jac{}, err
	}
	a, b, c := make([]fr.Element, s.n), make([]fr.Element, s.n), make([]fr.Element, s.n)
	if err := sys.EvaluateChecked(a, b, c, 2); err != nil {
		return bls.G1Jac{}, err
	}
	if s.d.fail.Load() { // a faulty device that refuses a good witness
		return bls.G1Jac{}, &r1cs.UnsatisfiedError{Index: 0, A: a[0], B: b[0], C: c[0]}
	}
	return s.ComputeH(ctx, a, b, c)
}

// selected returns the variables of the last witness pass that sel
// selects (nil: every aux value), as gpu.WitnessSlot defines them.
func (s *witnessSlot) selected(sel []uint64) ([]fr.Element, error) {
	if s.w == nil {
		return nil, gpu.ErrBadArgument
	}
	if sel == nil {
		return s.w[s.rec.NumInputs():], nil
	}
	var v []fr.Element
	for i, x := range s.w {
		if sel[i>>6]>>(uint(i)&63)&1 == 1 {
			v = append(v, x)
		}
	}
	return v, nil
}

func (s *witnessSlot) MSMWitnessG1(ctx context.Context, sec gpu.Section, sel []uint64) (bls.G1Jac, error) {
	v, err := s.selected(sel)
	if err != nil {
		return bls.G1Jac{}, err
	}
	s.d.witnessMSMs.Add(1)
	return s.TailG1(ctx, sec, nil, v)
}

func (s *witnessSlot) MSMWitnessG2(ctx context.Context, sel []uint64) (bls.G2Jac, error) {
	v, err := s.selected(sel)
	if err != nil {
		return bls.G2Jac{}, err
	}
	s.d.witnessMSMs.Add(1)
	return s.TailG2(ctx, nil, v)
}

// shared returns f's partitions as systems sharing parts[0]'s recorded
// matrices, as Prove's partitions share the shape's recording.
func shared(t *testing.T, f *fixture) []*r1cs.System {
	t.Helper()
	var out []*r1cs.System
	for _, sys := range f.parts {
		s, err := f.parts[0].WithAssignment(sys.Inputs(), sys.Aux())
		require.NoError(t, err)
		out = append(out, s)
	}
	return out
}

// Partitions go to a device that evaluates a, b, c itself as witnesses (no
// host a, b, c): the proofs verify, the host buffers stay unused, and a
// partition recorded apart from the resident R1CS is still proved (from
// host a, b, c).
func TestProveWitnessPass(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	parts := shared(t, f)
	for _, overlap := range []bool{true, false} {
		d := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
		p, err := newProver(Config{Threads: 2, DisableOverlap: !overlap}, []gpu.Device{d})
		require.NoError(t, err)
		proofs, err := p.ProvePartitions(context.Background(), f.pk, parts)
		require.NoError(t, err)
		verifyAll(t, f, proofs)
		assert.Equal(t, 1, d.shapes)
		assert.Equal(t, 3, d.witnesses)
		assert.Zero(t, p.Stats().HostPeak, "no host a, b, c")

		// Recorded on its own: not the resident R1CS.
		proofs, err = p.ProvePartitions(context.Background(), f.pk, f.parts[1:2])
		require.NoError(t, err)
		require.NoError(t, verifyOne(f, proofs[0], 1))
		assert.Equal(t, 3, d.witnesses)
		assert.Positive(t, p.Stats().HostPeak)
		require.NoError(t, p.Close())
	}
}

// A witness of mostly values other than 0 and 1 (a PoSt's) is not
// classified: L, A, B_G1 and B_G2 are full MSMs over the witness the device
// holds, and the proofs verify; a PoRep-like witness is split as before.
func TestProveWitnessPassDense(t *testing.T) {
	const m, nparts = 40, 3
	var parts []*r1cs.System
	for i := range nparts {
		// x_j·x_j = s_j, s_j·x_j = t_j, Σ t_j·1 = out (an input): every aux
		// value is a full-width one.
		rng := mrand.New(mrand.NewPCG(uint64(i), 5))
		s := r1cs.NewSystem()
		xs := make([]fr.Element, m)
		var out fr.Element
		for j := range xs {
			xs[j].SetUint64(rng.Uint64() | 2)
			var t fr.Element
			t.Square(&xs[j]).Mul(&t, &xs[j])
			out.Add(&out, &t)
		}
		outVar := s.AllocInput(out)
		sum := r1cs.LC{}
		for _, x := range xs {
			var sq, cube fr.Element
			sq.Square(&x)
			cube.Mul(&sq, &x)
			xv, sv, tv := s.Alloc(x), s.Alloc(sq), s.Alloc(cube)
			s.Enforce(r1cs.LC{}.AddVar(xv), r1cs.LC{}.AddVar(xv), r1cs.LC{}.AddVar(sv))
			s.Enforce(r1cs.LC{}.AddVar(sv), r1cs.LC{}.AddVar(xv), r1cs.LC{}.AddVar(tv))
			sum = sum.AddVar(tv)
		}
		s.Enforce(sum, r1cs.LC{}.AddVar(r1cs.One), r1cs.LC{}.AddVar(outVar))
		s.Finalize()
		require.NoError(t, s.IsSatisfied())
		if i > 0 {
			var err error
			s, err = parts[0].WithAssignment(s.Inputs(), s.Aux())
			require.NoError(t, err)
		}
		parts = append(parts, s)
	}
	pk, err := groth16.Setup(parts[0], rand.Reader)
	require.NoError(t, err)
	d := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
	require.NoError(t, err)
	defer p.Close()
	proofs, err := p.ProvePartitions(context.Background(), pk, parts)
	require.NoError(t, err)
	for i, proof := range proofs {
		require.NoError(t, groth16.Verify(&pk.VK, &proof, parts[i].Inputs()[1:]), "partition %d", i)
	}
	assert.EqualValues(t, 4*nparts, d.witnessMSMs.Load(), "L, A, B_G1 and B_G2 from the witness")

	f := newFixture(t, 60, 2, false)
	d2 := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p2, err := newProver(Config{Threads: 2}, []gpu.Device{d2})
	require.NoError(t, err)
	defer p2.Close()
	proofs, err = p2.ProvePartitions(context.Background(), f.pk, shared(t, f))
	require.NoError(t, err)
	verifyAll(t, f, proofs)
	assert.Zero(t, d2.witnessMSMs.Load(), "a PoRep-like witness is split")
}

func verifyOne(f *fixture, proof groth16.Proof, i int) error {
	return groth16.Verify(&f.pk.VK, &proof, f.parts[i].Inputs()[1:])
}

// An unsatisfied witness is refused with the constraint the device names,
// and the device stays in rotation; a device that refuses a witness the host
// finds satisfied is faulty: it is retired and the partition proved
// elsewhere.
func TestProveWitnessPassUnsatisfied(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	parts := shared(t, f)
	d := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
	require.NoError(t, err)
	bad, err := parts[0].WithAssignment(parts[1].Inputs(), append([]fr.Element(nil), parts[1].Aux()...))
	require.NoError(t, err)
	bad.Aux()[2].SetUint64(12345) // p_0 ≠ b_0·v_0
	want := bad.IsSatisfied()
	require.Error(t, want)
	_, err = p.ProvePartitions(context.Background(), f.pk, []*r1cs.System{parts[0], bad})
	var ue, wue *r1cs.UnsatisfiedError
	require.ErrorAs(t, err, &ue)
	require.ErrorAs(t, want, &wue)
	assert.Equal(t, wue.Index, ue.Index)
	assert.NoError(t, p.Stats().Devices[0].Failed)
	require.NoError(t, p.Close())

	liar := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	liar.fail.Store(true)
	p, err = newProver(Config{Threads: 2, CPUFallback: true}, []gpu.Device{liar})
	require.NoError(t, err)
	proofs, err := p.ProvePartitions(context.Background(), f.pk, parts[:1])
	require.NoError(t, err)
	require.NoError(t, verifyOne(f, proofs[0], 0))
	st := p.Stats()
	require.Error(t, st.Devices[0].Failed)
	assert.True(t, errors.Is(st.Devices[0].Failed, gpu.ErrKernel), "%v", st.Devices[0].Failed)
	require.NoError(t, p.Close())
}

// streamBuild returns proveStream's build function over f's partitions (as
// systems sharing the first one's matrices), counting builds and the
// buffers it had to allocate.
func streamBuild(t *testing.T, f *fixture, builds, allocs *atomic.Int32, built func(n int32)) func(context.Context, int, []fr.Element) (*r1cs.System, error) {
	parts := shared(t, f)
	return func(_ context.Context, k int, buf []fr.Element) (*r1cs.System, error) {
		src := parts[k].Aux()
		aux := buf[:0]
		if cap(aux) < len(src) {
			aux = make([]fr.Element, len(src))
			allocs.Add(1)
		}
		aux = aux[:len(src)]
		copy(aux, src)
		sys, err := parts[0].WithAssignment(parts[k].Inputs(), aux)
		if n := builds.Add(1); built != nil {
			built(n)
		}
		return sys, err
	}
}

func streamInputs(f *fixture) [][]fr.Element {
	var want [][]fr.Element
	for _, sys := range f.parts {
		want = append(want, sys.Inputs()[1:])
	}
	return want
}

// With the device's witness pass, proveStream lends each witness buffer
// only until the partition is classified: with two witnesses in flight,
// partitions 3 and 4 are built while the device still holds partitions 1
// and 2 (the device waits for them), in the buffers 1 and 2 gave back.
func TestProveStreamLendsWitnesses(t *testing.T) {
	f := newFixture(t, 60, 4, false)
	gate := make(chan struct{})
	d := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2}), gate: gate}
	p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, 2, p.inflight(f.pk, f.parts[0]))
	other := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	one, err := newProver(Config{Threads: 2, HostMemory: 48 * int64(f.parts[0].NumAux())}, []gpu.Device{other})
	require.NoError(t, err)
	require.Equal(t, 1, one.inflight(f.pk, f.parts[0]), "HostMemory holds one witness")
	require.NoError(t, one.Close())
	var builds, allocs atomic.Int32
	build := streamBuild(t, f, &builds, &allocs, func(n int32) {
		if n == 4 {
			close(gate)
		}
	})
	var bufs witnessBuffers
	var tm ProveTimes
	proofs, err := p.proveStream(context.Background(), &bufs.bufferPool, &bufs.slots, f.pk, shared(t, f)[0], streamInputs(f), &tm, build)
	require.NoError(t, err)
	verifyAll(t, f, proofs)
	assert.EqualValues(t, 4, builds.Load())
	assert.EqualValues(t, 2, allocs.Load(), "two buffers serve four partitions")
	assert.Equal(t, 4, d.witnesses)
	assert.Positive(t, tm.Synthesis)
	assert.Positive(t, tm.Verify)
	assert.LessOrEqual(t, tm.Synthesis+tm.Verify, tm.Prove)

	// The buffers stay with the pool for the next call.
	proofs, err = p.proveStream(context.Background(), &bufs.bufferPool, &bufs.slots, f.pk, shared(t, f)[0], streamInputs(f), &tm, build)
	require.NoError(t, err)
	verifyAll(t, f, proofs)
	assert.EqualValues(t, 2, allocs.Load())
}

// A device that fails a partition after its witness went back is retired,
// and the partition is proved on the CPU from a witness built again: on
// the witness pass (the device holds the witness), and on the host path
// beside a key that sums its streamed batch additions itself, where the
// witness goes back once classified, a, b and c evaluated, and the device
// fails a tail after that.
func TestProveStreamRebuildsAfterRelease(t *testing.T) {
	f := newFixture(t, 60, 2, false)
	broken := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	broken.broken.Store(true)
	streams := []gpu.Section{gpu.SectionL, gpu.SectionA, gpu.SectionBG1, gpu.SectionBG2}
	for name, d := range map[string]gpu.Device{
		"witness pass": broken,
		"host path":    gputest.NewFake(gputest.FakeOptions{Streams: streams, Faults: []gputest.Fault{{Stage: gpu.StageTail, Err: gpu.ErrKernel}}}),
	} {
		t.Run(name, func(t *testing.T) {
			p, err := newProver(Config{Threads: 2, CPUFallback: true}, []gpu.Device{d})
			require.NoError(t, err)
			defer p.Close()
			var builds, allocs atomic.Int32
			var bufs witnessBuffers
			var tm ProveTimes
			proofs, err := p.proveStream(context.Background(), &bufs.bufferPool, &bufs.slots, f.pk, shared(t, f)[0], streamInputs(f), &tm, streamBuild(t, f, &builds, &allocs, nil))
			require.NoError(t, err)
			verifyAll(t, f, proofs)
			assert.EqualValues(t, 3, builds.Load(), "the failed partition was built twice")
			assert.ErrorIs(t, p.Stats().Devices[0].Failed, gpu.ErrKernel)
		})
	}
}

// waitingCount returns how many callers wait for a slot of s.
func (s *witnessSlots) waitingCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)
}

// An older call's request is served before a younger call's that came
// first; at most n slots are held.
func TestWitnessSlotsServeOlderCallsFirst(t *testing.T) {
	var s witnessSlots
	ctx := context.Background()
	old, young := s.rank(), s.rank()
	require.Less(t, old, young)
	require.NoError(t, s.acquire(ctx, old, 1))
	served := make(chan string, 2)
	var wg sync.WaitGroup
	take := func(name string, r uint64) {
		defer wg.Done()
		if assert.NoError(t, s.acquire(ctx, r, 1)) {
			served <- name
			s.release(1)
		}
	}
	wg.Add(1)
	go take("young", young)
	require.Eventually(t, func() bool { return s.waitingCount() == 1 }, 5*time.Second, time.Millisecond)
	wg.Add(1)
	go take("old", old)
	require.Eventually(t, func() bool { return s.waitingCount() == 2 }, 5*time.Second, time.Millisecond)
	s.release(1)
	wg.Wait()
	assert.Equal(t, "old", <-served)
	assert.Equal(t, "young", <-served)
	assert.Zero(t, s.held)

	// n bounds the holders; a free slot goes to a newcomer when nobody waits.
	require.NoError(t, s.acquire(ctx, young, 2))
	require.NoError(t, s.acquire(ctx, young, 2))
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, s.acquire(tctx, old, 2), context.DeadlineExceeded)
	s.release(2)
	s.release(2)
	assert.Zero(t, s.held)
}

// A caller whose context ends while it waits holds nothing and leaves the
// queue; one whose context has ended does not take a free slot.
func TestWitnessSlotsCancel(t *testing.T) {
	var s witnessSlots
	r := s.rank()
	require.NoError(t, s.acquire(context.Background(), r, 1))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.acquire(ctx, r, 1) }()
	require.Eventually(t, func() bool { return s.waitingCount() == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
	assert.Zero(t, s.waitingCount())
	s.release(1)
	assert.Zero(t, s.held)
	assert.ErrorIs(t, s.acquire(ctx, r, 1), context.Canceled)
	assert.Zero(t, s.held)
}

// Calls proving one shape at once share its witnesses: two calls of four
// partitions each, with two witnesses in flight, build into two buffers.
func TestProveStreamSharesWitnessesAcrossCalls(t *testing.T) {
	f := newFixture(t, 60, 4, false)
	d := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, 2, p.inflight(f.pk, f.parts[0]))
	var builds, allocs atomic.Int32
	build := streamBuild(t, f, &builds, &allocs, nil)
	rec := shared(t, f)[0]
	var bufs witnessBuffers
	var g errgroup.Group
	proofs := make([][]groth16.Proof, 2)
	for i := range proofs {
		g.Go(func() error {
			var tm ProveTimes
			var err error
			proofs[i], err = p.proveStream(context.Background(), &bufs.bufferPool, &bufs.slots, f.pk, rec, streamInputs(f), &tm, build)
			return err
		})
	}
	require.NoError(t, g.Wait())
	for _, pr := range proofs {
		verifyAll(t, f, pr)
	}
	assert.EqualValues(t, 8, builds.Load())
	assert.LessOrEqual(t, allocs.Load(), int32(2), "at most two witnesses existed at once")
	assert.Zero(t, bufs.slots.held)
}

// countHandler counts the log records whose message is msg.
type countHandler struct {
	msg string
	n   atomic.Int32
}

func (h *countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countHandler) WithGroup(string) slog.Handler      { return h }

// cachedSystem returns the R1CS the prover's only circuit cache holds.
func cachedSystem(t *testing.T, p *Prover) *r1cs.System {
	t.Helper()
	p.shapesMu.Lock()
	defer p.shapesMu.Unlock()
	require.Len(t, p.shapes, 1)
	for _, c := range p.shapes {
		rec, ok := c.sys.Peek()
		require.True(t, ok)
		return rec
	}
	return nil
}

// The host lets go of a circuit's matrices once every live device holds
// them beside the key (not while one has yet to load it), and the calls
// after that prove without them; when the host needs them again (here to
// check a device that refuses a good witness) they are recorded again,
// once, and let go of again after the call. With CPUFallback the host
// keeps them.
func TestHostR1CSReleased(t *testing.T) {
	if testing.Short() {
		t.Skip("dev setup of the 2 KiB Window PoSt circuit and five proofs")
	}
	win, _ := post.ShapeByName("StackedDrgWindow2KiBV1_2")
	dir := t.TempDir()
	blank := r1cs.NewSystem()
	require.NoError(t, post.SynthesizeBlank(blank, win))
	blank.Finalize()
	pk, err := groth16.Setup(blank, rand.Reader)
	require.NoError(t, err)
	for ext, write := range map[string]func(io.Writer) (int64, error){".params": pk.WriteTo, ".vk": pk.VK.WriteTo} {
		f, err := os.Create(filepath.Join(dir, DevParamsPrefix+win.ParamsName()+ext))
		require.NoError(t, err)
		_, err = write(f)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	v := refgen.ReadVanilla(t, "post-2k", "window-2k-v1_2")
	prove := func(p *Prover) {
		t.Helper()
		_, err := p.ProveWindowPoSt(context.Background(), v.Proof, [32]byte(v.Randomness), v.Bincode)
		require.NoError(t, err)
	}

	d1 := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	d2 := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	d3 := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p3, err := newProver(Config{Threads: 2, Params: dir, TrustParams: true}, []gpu.Device{d1, d2, d3})
	require.NoError(t, err)
	defer p3.Close()
	prove(p3) // two partitions: d1 and d2
	require.Equal(t, []int{1, 1, 0}, []int{d1.shapes, d2.shapes, d3.shapes})
	require.True(t, cachedSystem(t, p3).HasMatrices(), "d3 has yet to load the key")

	h := &countHandler{msg: "c2: R1CS recorded"}
	d1 = &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	d2 = &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2, Params: dir, TrustParams: true, Logger: slog.New(h)}, []gpu.Device{d1, d2})
	require.NoError(t, err)
	defer p.Close()
	prove(p)
	rec := cachedSystem(t, p)
	require.False(t, rec.HasMatrices(), "both devices hold the matrices")
	require.Equal(t, int32(1), h.n.Load())
	prove(p)
	require.Equal(t, int32(1), h.n.Load(), "proved without the matrices on the host")
	require.Equal(t, []int{1, 1}, []int{d1.shapes, d2.shapes})
	require.Equal(t, 4, d1.witnesses+d2.witnesses)

	d1.fail.Store(true)
	d2.fail.Store(true)
	_, err = p.ProveWindowPoSt(context.Background(), v.Proof, [32]byte(v.Randomness), v.Bincode)
	require.Error(t, err, "every device refuses a good witness")
	require.Equal(t, int32(2), h.n.Load(), "recorded again, once, for the host's check")
	st := p.Stats()
	for i := range st.Devices {
		require.ErrorIs(t, st.Devices[i].Failed, gpu.ErrKernel, "the host found the witness satisfied")
	}
	require.Equal(t, rec.Recording(), cachedSystem(t, p).Recording())

	d4 := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	pf, err := newProver(Config{Threads: 2, Params: dir, TrustParams: true, CPUFallback: true}, []gpu.Device{d4})
	require.NoError(t, err)
	defer pf.Close()
	prove(pf)
	prove(pf)
	require.True(t, cachedSystem(t, pf).HasMatrices(), "kept for the CPU fallback")
	require.Equal(t, 4, d4.witnesses)
}
