package c2

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/bits"
	mrand "math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/gpu/gputest"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// circuit builds a system of fixed shape whose witness depends on seed:
// m boolean bits b_j, values v_j, products p_j = b_j·v_j, squares
// w_j = v_j², and the public input out = Σ p_j. With wide false the v_j are small (mostly 0 and 1), as
// in PoRep; with wide true they are random field elements, so most scalars
// are significant and the prover keeps its MSMs dense.
func circuit(t testing.TB, m int, seed uint64, wide bool) *r1cs.System {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(seed, 99))
	s := r1cs.NewSystem()
	bits := make([]fr.Element, m)
	vals := make([]fr.Element, m)
	var out fr.Element
	for j := range m {
		bits[j].SetUint64(uint64(rng.IntN(2)))
		if wide {
			vals[j].SetUint64(rng.Uint64())
			vals[j].Square(&vals[j])
		} else if rng.IntN(50) == 0 {
			vals[j].SetUint64(rng.Uint64())
		} else {
			vals[j].SetUint64(uint64(rng.IntN(2)))
		}
		var p fr.Element
		p.Mul(&bits[j], &vals[j])
		out.Add(&out, &p)
	}
	outVar := s.AllocInput(out)
	sum := r1cs.LC{}
	for j := range m {
		b := s.Alloc(bits[j])
		v := s.Alloc(vals[j])
		var pv fr.Element
		pv.Mul(&bits[j], &vals[j])
		p := s.Alloc(pv)
		// b·(1 − b) = 0
		s.Enforce(r1cs.LC{}.AddVar(b), r1cs.LC{}.AddVar(r1cs.One).SubVar(b), r1cs.LC{})
		s.Enforce(r1cs.LC{}.AddVar(b), r1cs.LC{}.AddVar(v), r1cs.LC{}.AddVar(p))
		var wv fr.Element
		wv.Square(&vals[j])
		w := s.Alloc(wv)
		s.Enforce(r1cs.LC{}.AddVar(v), r1cs.LC{}.AddVar(v), r1cs.LC{}.AddVar(w))
		sum = sum.AddVar(p)
	}
	s.Enforce(sum, r1cs.LC{}.AddVar(r1cs.One), r1cs.LC{}.AddVar(outVar))
	s.Finalize()
	require.NoError(t, s.IsSatisfied())
	return s
}

// fixture is a key and partitions of the same shape.
type fixture struct {
	pk    *groth16.ProvingKey
	parts []*r1cs.System
}

var (
	fixMu    sync.Mutex
	fixCache = map[[3]int]*fixture{}
)

func newFixture(t testing.TB, m, parts int, wide bool) *fixture {
	t.Helper()
	w := 0
	if wide {
		w = 1
	}
	fixMu.Lock()
	defer fixMu.Unlock()
	if f, ok := fixCache[[3]int{m, parts, w}]; ok {
		return f
	}
	f := &fixture{}
	for i := range parts {
		f.parts = append(f.parts, circuit(t, m, uint64(i+1), wide))
	}
	pk, err := groth16.Setup(f.parts[0], rand.Reader)
	require.NoError(t, err)
	f.pk = pk
	fixCache[[3]int{m, parts, w}] = f
	return f
}

func verifyAll(t *testing.T, f *fixture, proofs []groth16.Proof) {
	t.Helper()
	require.Len(t, proofs, len(f.parts))
	for i, sys := range f.parts {
		require.NoError(t, groth16.Verify(&f.pk.VK, &proofs[i], sys.Inputs()[1:]), "partition %d", i)
	}
}

func TestProveRejectsBadInput(t *testing.T) {
	p, err := New(Config{})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.Prove(context.Background(), []byte("{}"))
	var ce *porep.C1Error
	require.ErrorAs(t, err, &ce, "an empty object is not a C1 output")

	raw, err := os.ReadFile("testdata/refgen/out/porep-2k/c1.json")
	require.NoError(t, err)
	_, err = p.Prove(context.Background(), raw)
	require.ErrorIs(t, err, ErrNoParams, "no Config.Params")

	q, err := New(Config{Params: t.TempDir()})
	require.NoError(t, err)
	defer q.Close()
	_, err = q.Prove(context.Background(), raw)
	require.ErrorIs(t, err, ErrNoParams, "empty params directory")
}

func TestZeroConfigUsesCPU(t *testing.T) {
	p, err := New(Config{})
	require.NoError(t, err)
	assert.Equal(t, []string{"cpu"}, p.Devices())
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	_, err = p.ProvePartitions(context.Background(), nil, nil)
	require.ErrorIs(t, err, ErrClosed)

	_, err = New(Config{Backend: "tpu"})
	require.Error(t, err)
	_, err = New(Config{Backend: BackendCUDA})
	require.ErrorIs(t, err, ErrNoCUDA)
}

func TestProvePartitionsCPU(t *testing.T) {
	for _, wide := range []bool{false, true} {
		f := newFixture(t, 60, 3, wide)
		for _, overlap := range []bool{true, false} {
			p, err := New(Config{Backend: BackendCPU, DisableOverlap: !overlap, Threads: 2})
			require.NoError(t, err)
			proofs, err := p.ProvePartitions(context.Background(), f.pk, f.parts)
			require.NoError(t, err)
			verifyAll(t, f, proofs)
			st := p.Stats()
			require.Len(t, st.Devices, 1)
			assert.Equal(t, 3, st.Devices[0].Partitions)
			assert.Positive(t, st.Stages.Prep)
			assert.Positive(t, st.Stages.H)
			assert.Positive(t, st.Stages.Verify)
			assert.Positive(t, st.HostPeak)
			require.NoError(t, p.Close())
		}
	}
}

// Two fakes, one leaving G2 to the CPU, two concurrent calls: every proof
// verifies and both devices take work.
func TestProveConcurrentCallsManyDevices(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	d0 := gputest.NewFake(gputest.FakeOptions{Name: "fake:0", Delay: time.Millisecond})
	d1 := gputest.NewFake(gputest.FakeOptions{Name: "fake:1", G2: true, Delay: time.Millisecond})
	p, err := newProver(Config{Threads: 2}, []gpu.Device{d0, d1})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			proofs, err := p.ProvePartitions(context.Background(), f.pk, f.parts)
			if assert.NoError(t, err) {
				verifyAll(t, f, proofs)
			}
		}()
	}
	wg.Wait()
	st := p.Stats()
	require.Len(t, st.Devices, 2)
	assert.Equal(t, 6, st.Devices[0].Partitions+st.Devices[1].Partitions)
	assert.Positive(t, st.Devices[0].Partitions)
	assert.Positive(t, st.Devices[1].Partitions)
	assert.Positive(t, st.Stages.BG2, "fake:0 leaves B_G2 to the CPU")
	require.NoError(t, p.Close())
	for _, d := range []*gputest.Fake{d0, d1} {
		slots, keys := d.Live()
		assert.Zero(t, slots, d.Info().Name)
		assert.Zero(t, keys, d.Info().Name)
		_, _, over := d.Memory()
		assert.Zero(t, over)
	}
}

// countingAlloc stands for a device's pinned-memory allocator.
type countingAlloc struct {
	mu            sync.Mutex
	allocs, frees int
}

func (a *countingAlloc) Alloc(n int) ([]byte, error) {
	a.mu.Lock()
	a.allocs++
	a.mu.Unlock()
	return pool.HeapAllocator{}.Alloc(n)
}

func (a *countingAlloc) Free([]byte) {
	a.mu.Lock()
	a.frees++
	a.mu.Unlock()
}

// Partition buffers come from the device's host allocator, are reused
// across partitions, and are all freed by Close.
func TestProveUsesDeviceHostMemory(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	a := &countingAlloc{}
	d := gputest.NewFake(gputest.FakeOptions{HostAlloc: a})
	p, err := newProver(Config{Threads: 2, PrepWorkers: 1, DisableOverlap: true}, []gpu.Device{d})
	require.NoError(t, err)
	for range 2 {
		proofs, err := p.ProvePartitions(context.Background(), f.pk, f.parts)
		require.NoError(t, err)
		verifyAll(t, f, proofs)
	}
	require.NoError(t, p.Close())
	assert.Equal(t, 1, a.allocs, "one buffer, reused by all six partitions")
	assert.Equal(t, a.allocs, a.frees)
}

// Host buffers are not filled far ahead of the device: with one slot and
// one prep worker at most two partitions hold a, b, c at once.
func TestProveBoundedLookahead(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	d := gputest.NewFake(gputest.FakeOptions{Memory: 1000, SlotBytes: 1000, Delay: 2 * time.Millisecond})
	p, err := newProver(Config{Threads: 2, PrepWorkers: 1}, []gpu.Device{d})
	require.NoError(t, err)
	defer p.Close()
	parts := append(append(append([]*r1cs.System{}, f.parts...), f.parts...), f.parts...)
	proofs, err := p.ProvePartitions(context.Background(), f.pk, parts)
	require.NoError(t, err)
	require.Len(t, proofs, 9)
	one := 3 * f.pk.DomainSize() * fr.Bytes
	require.Less(t, one, 64<<10)
	class := int64(1) << bits.Len(uint(one-1)) // the pool's size class below 64 KiB
	peak := p.Stats().HostPeak
	assert.GreaterOrEqual(t, peak, class)
	assert.LessOrEqual(t, peak, 2*class, "at most two buffers of the nine partitions")
}

// A slot budget of one partition serializes a device without deadlock.
func TestProveBudgetOfOneSlot(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	d := gputest.NewFake(gputest.FakeOptions{Memory: 1000, SlotBytes: 600})
	p, err := newProver(Config{Threads: 2, PrepWorkers: 3}, []gpu.Device{d})
	require.NoError(t, err)
	defer p.Close()
	proofs, err := p.ProvePartitions(context.Background(), f.pk, f.parts)
	require.NoError(t, err)
	verifyAll(t, f, proofs)
	_, peak, over := d.Memory()
	assert.Equal(t, int64(600), peak)
	assert.Zero(t, over)
}

// A key that streams its sections sums their batch additions itself (every
// one of them: none runs in a slot), after the partition released its
// slot: with a budget of one slot, the second partition's H runs while the
// first partition's batch addition hangs.
func TestProveStreamedBatchAdds(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	streams := []gpu.Section{gpu.SectionL, gpu.SectionA, gpu.SectionBG1, gpu.SectionBG2}
	d := gputest.NewFake(gputest.FakeOptions{Memory: 1000, SlotBytes: 600, Streams: streams})
	p, err := newProver(Config{Threads: 2, PrepWorkers: 2}, []gpu.Device{d})
	require.NoError(t, err)
	proofs, err := p.ProvePartitions(context.Background(), f.pk, f.parts)
	require.NoError(t, err)
	verifyAll(t, f, proofs)
	require.Positive(t, d.KeyCalls())
	require.Equal(t, d.Calls(gpu.StageBatchAdd), d.KeyCalls(), "no batch addition ran in a slot")
	require.NoError(t, p.Close())

	hang := gputest.NewFake(gputest.FakeOptions{Memory: 1000, SlotBytes: 600, Streams: streams,
		Faults: []gputest.Fault{{Stage: gpu.StageBatchAdd, Times: -1, Hang: true}}})
	p, err = newProver(Config{Threads: 2, PrepWorkers: 2}, []gpu.Device{hang})
	require.NoError(t, err)
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // before Close, should the check fail
	done := make(chan error, 1)
	go func() {
		_, err := p.ProvePartitions(ctx, f.pk, f.parts[:2])
		done <- err
	}()
	require.Eventually(t, func() bool { return hang.Calls(gpu.StageH) == 2 }, 10*time.Second, time.Millisecond,
		"the second partition had the slot while the first one's batch addition hung")
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	slots, _ := hang.Live()
	require.Zero(t, slots)
}

func TestProveFaults(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	ctx := context.Background()

	streams := []gpu.Section{gpu.SectionL, gpu.SectionA, gpu.SectionBG1, gpu.SectionBG2}
	cases := []struct {
		name     string
		fault    gputest.Fault
		fallback bool
		streams  []gpu.Section // the faulty device's key sums these sections' batch additions
	}{
		{"kernel error in a tail MSM", gputest.Fault{Stage: gpu.StageTail, Section: gpu.SectionA, Err: gpu.ErrKernel}, false, nil},
		{"out of memory on acquire", gputest.Fault{Stage: gpu.StageAcquire, Err: gpu.ErrOutOfMemory}, false, nil},
		{"device lost in H", gputest.Fault{Stage: gpu.StageH, Skip: 1, Err: gpu.ErrDeviceLost}, false, nil},
		{"wrong batch-add result", gputest.Fault{Stage: gpu.StageBatchAdd, Section: gpu.SectionL, Corrupt: true}, false, nil},
		{"wrong H result", gputest.Fault{Stage: gpu.StageH, Corrupt: true}, false, nil},
		{"wrong streamed batch-add result", gputest.Fault{Stage: gpu.StageBatchAdd, Section: gpu.SectionA, Corrupt: true}, false, streams},
		{"device lost in a streamed batch addition", gputest.Fault{Stage: gpu.StageBatchAdd, Section: gpu.SectionBG2, Err: gpu.ErrDeviceLost}, false, streams},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := gputest.NewFake(gputest.FakeOptions{Name: "bad", Faults: []gputest.Fault{tc.fault}, Streams: tc.streams})
			good := gputest.NewFake(gputest.FakeOptions{Name: "good"})
			p, err := newProver(Config{Threads: 2}, []gpu.Device{bad, good})
			require.NoError(t, err)
			proofs, err := p.ProvePartitions(ctx, f.pk, f.parts)
			require.NoError(t, err)
			verifyAll(t, f, proofs)
			// A fault that skips calls fires only once the faulty device has
			// had that many: the rotation may have given the good device
			// most partitions of a call, so prove again until it fires.
			for i := 0; i < 20 && tc.fault.Skip > 0 && p.Stats().Devices[0].Failed == nil; i++ {
				proofs, err = p.ProvePartitions(ctx, f.pk, f.parts)
				require.NoError(t, err)
				verifyAll(t, f, proofs)
			}
			st := p.Stats()
			assert.Error(t, st.Devices[0].Failed, "the faulty device left the rotation (it completed %d partitions)",
				st.Devices[0].Partitions)
			assert.NoError(t, st.Devices[1].Failed)
			// Later calls avoid it.
			before := st.Devices[0].Partitions
			proofs, err = p.ProvePartitions(ctx, f.pk, f.parts)
			require.NoError(t, err)
			verifyAll(t, f, proofs)
			assert.Equal(t, before, p.Stats().Devices[0].Partitions)
			assert.Zero(t, p.host.Stats().InUse, "no host buffer leaked")
			require.NoError(t, p.Close())
			for _, d := range []*gputest.Fake{bad, good} {
				slots, keys := d.Live()
				assert.Zero(t, slots)
				assert.Zero(t, keys)
			}
		})
	}

	t.Run("only device lost, no fallback", func(t *testing.T) {
		d := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageBatchAdd, Err: gpu.ErrDeviceLost}}})
		p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
		require.NoError(t, err)
		defer p.Close()
		_, err = p.ProvePartitions(ctx, f.pk, f.parts)
		var pe *PartitionError
		require.ErrorAs(t, err, &pe)
		require.ErrorIs(t, err, ErrNoDevice)
		assert.Zero(t, p.host.Stats().InUse, "no host buffer leaked")
	})

	t.Run("only device lost, CPU fallback", func(t *testing.T) {
		d := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageBatchAdd, Err: gpu.ErrDeviceLost}}})
		p, err := newProver(Config{Threads: 2, CPUFallback: true}, []gpu.Device{d})
		require.NoError(t, err)
		defer p.Close()
		proofs, err := p.ProvePartitions(ctx, f.pk, f.parts)
		require.NoError(t, err)
		verifyAll(t, f, proofs)
		st := p.Stats()
		require.Len(t, st.Devices, 2)
		assert.Equal(t, "cpu", st.Devices[1].Name)
		assert.Equal(t, 3, st.Devices[1].Partitions)
	})

	t.Run("every result wrong, CPU fallback", func(t *testing.T) {
		d := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageTail, Corrupt: true, Times: -1}}})
		p, err := newProver(Config{Threads: 2, CPUFallback: true}, []gpu.Device{d})
		require.NoError(t, err)
		defer p.Close()
		proofs, err := p.ProvePartitions(ctx, f.pk, f.parts)
		require.NoError(t, err, "each wrong proof is re-proved on the CPU")
		verifyAll(t, f, proofs)
	})

	t.Run("every result wrong, no fallback", func(t *testing.T) {
		d := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageTail, Corrupt: true, Times: -1}}})
		p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
		require.NoError(t, err)
		defer p.Close()
		_, err = p.ProvePartitions(ctx, f.pk, f.parts)
		require.ErrorIs(t, err, ErrNoDevice, "a wrong proof is never returned")
		assert.Contains(t, err.Error(), "failed verification")
	})

	t.Run("hang ends with the deadline", func(t *testing.T) {
		d := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageTail, Hang: true, Times: -1}}})
		p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
		require.NoError(t, err)
		defer p.Close()
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err = p.ProvePartitions(cctx, f.pk, f.parts)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Zero(t, p.host.Stats().InUse, "no host buffer leaked")
		assert.False(t, d.Lost())
		slots, _ := d.Live()
		assert.Zero(t, slots)
	})
}

func TestProveBadInput(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	ctx := context.Background()
	d := gputest.NewFake(gputest.FakeOptions{})
	p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
	require.NoError(t, err)
	defer p.Close()

	// An unsatisfied witness is the caller's fault, not the device's.
	bad := circuit(t, 60, 1, false)
	bad.Aux()[2].SetUint64(12345) // p_0 ≠ b_0·v_0
	_, err = p.ProvePartitions(ctx, f.pk, []*r1cs.System{f.parts[0], bad})
	var pe *PartitionError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 1, pe.Index)
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, err, &ue)
	assert.False(t, d.Lost())
	assert.NoError(t, p.Stats().Devices[0].Failed)

	// A key of another shape.
	other := newFixture(t, 30, 1, false)
	_, err = p.ProvePartitions(ctx, other.pk, f.parts)
	var se *groth16.ShapeError
	require.ErrorAs(t, err, &se)

	// Host memory too small for one partition fails at once.
	small, err := newProver(Config{HostMemory: 1024}, []gpu.Device{gputest.NewFake(gputest.FakeOptions{})})
	require.NoError(t, err)
	defer small.Close()
	_, err = small.ProvePartitions(ctx, f.pk, f.parts)
	var ob *pool.OverBudgetError
	require.ErrorAs(t, err, &ob)
	assert.False(t, errors.Is(err, ErrNoDevice))
}

// BenchmarkProvePartitions proves 4 PoRep-shaped partitions of 2^12
// constraints on the CPU backend, with and without overlap.
func BenchmarkProvePartitions(b *testing.B) {
	sys, _, err := synth.System(synth.Shape{LogSize: 12, InputsB: true, Seed: 1})
	require.NoError(b, err)
	pk, err := groth16.Setup(sys, rand.Reader)
	require.NoError(b, err)
	parts := []*r1cs.System{sys, sys, sys, sys}
	for _, overlap := range []bool{true, false} {
		name := "overlap"
		if !overlap {
			name = "serial"
		}
		b.Run(name, func(b *testing.B) {
			p, err := New(Config{Backend: BackendCPU, DisableOverlap: !overlap})
			require.NoError(b, err)
			defer p.Close()
			for b.Loop() {
				_, err := p.ProvePartitions(context.Background(), pk, parts)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*len(parts)), "ms/partition")
		})
	}
}

// On a GPU machine (C2_CUDA_LIB set), the CUDA backend's proofs verify, with
// and without overlap: partitions that share the recorded R1CS take the
// device's witness pass (no host a, b, c), others send a, b, c; B_G2's tail
// runs on the device either way.
func TestProvePartitionsCUDA(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	for _, overlap := range []bool{true, false} {
		p, err := New(Config{Backend: BackendCUDA, DisableOverlap: !overlap})
		if errors.Is(err, ErrNoCUDA) {
			t.Skipf("no CUDA device: %v", err)
		}
		require.NoError(t, err)
		proofs, err := p.ProvePartitions(context.Background(), f.pk, shared(t, f))
		require.NoError(t, err)
		verifyAll(t, f, proofs)
		st := p.Stats()
		assert.Zero(t, st.HostPeak, "witness pass: no host a, b, c")
		proofs, err = p.ProvePartitions(context.Background(), f.pk, f.parts)
		require.NoError(t, err)
		verifyAll(t, f, proofs)
		st = p.Stats()
		for _, d := range st.Devices {
			assert.NoError(t, d.Failed, d.Name)
		}
		assert.Zero(t, st.Stages.BG2, "B_G2 on the device")
		assert.Positive(t, st.HostPeak, "partitions recorded apart send a, b, c")
		require.NoError(t, p.Close())
	}
}

// On a GPU machine, the witness pass refuses an unsatisfied witness with the
// constraint the host names, and keeps the device.
func TestProveWitnessPassCUDA(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	p, err := New(Config{Backend: BackendCUDA})
	if errors.Is(err, ErrNoCUDA) {
		t.Skipf("no CUDA device: %v", err)
	}
	require.NoError(t, err)
	defer p.Close()
	parts := shared(t, f)
	bad, err := parts[0].WithAssignment(parts[1].Inputs(), append([]fr.Element(nil), parts[1].Aux()...))
	require.NoError(t, err)
	bad.Aux()[2].SetUint64(12345)
	var want, got *r1cs.UnsatisfiedError
	require.ErrorAs(t, bad.IsSatisfied(), &want)
	_, err = p.ProvePartitions(context.Background(), f.pk, []*r1cs.System{parts[0], bad})
	require.ErrorAs(t, err, &got)
	assert.Equal(t, want.Index, got.Index)
	assert.Equal(t, want.A, got.A)
	assert.Equal(t, want.B, got.B)
	assert.Equal(t, want.C, got.C)
	for _, d := range p.Stats().Devices {
		assert.NoError(t, d.Failed, d.Name)
	}
	proofs, err := p.ProvePartitions(context.Background(), f.pk, parts)
	require.NoError(t, err)
	verifyAll(t, f, proofs)
}

// Prove two partitions of a small synthetic circuit with development
// parameters; the prover verifies the proofs before returning them.
func ExampleProver_ProvePartitions() {
	sys := r1cs.NewSystem()
	inputs, err := synth.Build(sys, synth.Shape{LogSize: 8, Seed: 1})
	if err != nil {
		panic(err)
	}
	sys.Finalize()
	pk, err := groth16.Setup(sys, rand.Reader) // INSECURE: development parameters
	if err != nil {
		panic(err)
	}

	p, err := New(Config{Backend: BackendCPU})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	proofs, err := p.ProvePartitions(context.Background(), pk, []*r1cs.System{sys, sys})
	if err != nil {
		panic(err)
	}
	for _, proof := range proofs {
		fmt.Println(groth16.Verify(&pk.VK, &proof, inputs) == nil)
	}
	// Output:
	// true
	// true
}

// A key whose upload hangs holds up neither the calls that use another key
// on the same device nor, once its caller gives up, anything at all.
func TestKeyLoadsDoNotBlockEachOther(t *testing.T) {
	f := newFixture(t, 60, 1, false)
	pk2, err := groth16.Setup(f.parts[0], rand.Reader)
	require.NoError(t, err)
	dev := gputest.NewFake(gputest.FakeOptions{Name: "slow-upload", Faults: []gputest.Fault{{Stage: gpu.StageLoadKey, Hang: true}}})
	p, err := newProver(Config{Threads: 2}, []gpu.Device{dev})
	require.NoError(t, err)

	ctx1, cancel1 := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := p.ProvePartitions(ctx1, f.pk, f.parts)
		first <- err
	}()
	require.Eventually(t, func() bool { return dev.Calls(gpu.StageLoadKey) == 1 }, 10*time.Second, time.Millisecond)

	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	proofs, err := p.ProvePartitions(ctx2, pk2, f.parts)
	require.NoError(t, err, "another key's hanging upload held this call up")
	require.NoError(t, groth16.Verify(&pk2.VK, &proofs[0], f.parts[0].Inputs()[1:]))

	cancel1()
	require.ErrorIs(t, <-first, context.Canceled)
	// The abandoned load is not kept: the next call loads the key again.
	proofs, err = p.ProvePartitions(context.Background(), f.pk, f.parts)
	require.NoError(t, err)
	verifyAll(t, f, proofs)
	require.NoError(t, p.Close())
	slots, keys := dev.Live()
	assert.Zero(t, slots)
	assert.Zero(t, keys)
}

// A prover keeps two Ps free of the host's parallel loops for each device
// that is not the CPU, at most an eighth of GOMAXPROCS, or as many as
// Config.FeederPs says, until Close.
func TestFeederPs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(32))
	fake := func() gpu.Device {
		f := gputest.NewFake(gputest.FakeOptions{})
		t.Cleanup(func() { f.Close() })
		return f
	}
	cpu := gpu.NewCPU(gpu.CPUOptions{Memory: 1 << 30})
	defer cpu.Close()
	require.Zero(t, feederPs([]gpu.Device{cpu}, 0))
	require.Equal(t, 2, feederPs([]gpu.Device{fake(), cpu}, 0))
	three := []gpu.Device{fake(), fake(), fake()}
	require.Equal(t, 4, feederPs(three, 0), "an eighth of 32")
	require.Equal(t, 9, feederPs(three, 3), "as many as asked")
	require.Zero(t, feederPs(three, -1))
	runtime.GOMAXPROCS(8)
	require.Equal(t, 1, feederPs([]gpu.Device{fake()}, 0))

	runtime.GOMAXPROCS(32)
	room := parallel.Room()
	p, err := newProver(Config{Threads: 2}, []gpu.Device{fake()})
	require.NoError(t, err)
	require.Equal(t, room-2, parallel.Room())
	require.NoError(t, p.Close())
	require.Equal(t, room, parallel.Room())
	p, err = newProver(Config{Threads: 2, FeederPs: -1}, []gpu.Device{fake()})
	require.NoError(t, err)
	require.Equal(t, room, parallel.Room())
	require.NoError(t, p.Close())
}
