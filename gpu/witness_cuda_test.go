package gpu

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// On a GPU: the CUDA witness pass (R1CS resident, witness handed over as
// bits and a tail) gives the H sum the CPU device computes from host a, b,
// c, for several partitions in flight at once on the key's slots; an
// unsatisfied witness is named by its first failing constraint. Skipped
// without libc2cuda or a GPU.
func TestCUDAWitnessPass(t *testing.T) {
	d := testCUDA(t)
	for _, file := range []bool{false, true} {
		name := "key"
		if file {
			name = "file" // the key read from its .params file chunk by chunk
		}
		t.Run(name+"/resident", func(t *testing.T) { witnessPass(t, d, false, file) })
		// A budget that holds the R1CS and a witness slot but not the key:
		// the bases stream from pinned host memory.
		t.Run(name+"/streamed", func(t *testing.T) { witnessPass(t, d, true, file) })
	}
	// H's MSM split over the key's high copy of the H bases.
	split := d.withBudget(d.budget.Total())
	split.splitH, split.splitHAt = true, 0 // at every size
	t.Run("key/resident/split", func(t *testing.T) { witnessPass(t, split, false, false) })
}

func witnessPass(t *testing.T, d *CUDA, streamed, file bool) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Eight partitions of one shape with different witnesses (the first is
	// the recording), mixing 0/1 values with full-width ones.
	parts := []*r1cs.System{bitsCircuit(rng, 3000)}
	rec := parts[0]
	for len(parts) < 8 {
		other := bitsCircuit(rng, 3000)
		s, err := rec.WithAssignment(other.Inputs(), other.Aux())
		require.NoError(t, err)
		require.NoError(t, s.IsSatisfied())
		parts = append(parts, s)
	}
	n := 1
	for n < rec.NumConstraints() {
		n <<= 1
	}
	var tau fr.Element
	tau.SetUint64(987654321)
	// Sections large enough that a budget can hold the witness slot (with
	// batch additions in chunks of 4096 bases) but not the key.
	secs := 10
	if streamed {
		secs = 100_000
		defer func(n int) { batchChunk = n }(batchChunk)
		batchChunk = 4096
	}
	pk := testKey(t, rng, n, secs, secs, secs, tau)
	ctx := context.Background()
	if streamed {
		d = d.withBudget(streamingBudget(t, d, pk, rec))
	}
	var key Key
	var err error
	if file {
		path := filepath.Join(t.TempDir(), "k.params")
		out, err := os.Create(path)
		require.NoError(t, err)
		_, err = pk.WriteTo(out)
		require.NoError(t, err)
		require.NoError(t, out.Close())
		f, err := groth16.OpenParams(ctx, path)
		require.NoError(t, err)
		defer f.Close()
		key, err = d.LoadShapeFile(ctx, f, rec)
		require.NoError(t, err)
		require.False(t, key.ProvingKey().HostBases())
	} else {
		key, err = d.LoadShape(ctx, pk, rec)
		require.NoError(t, err)
	}
	defer key.Release()
	require.True(t, key.(ShapeKey).Records(rec), "the R1CS is resident")
	require.Equal(t, !streamed, key.(*cudaKey).resident)
	require.Equal(t, d.splitsH(len(pk.H)) && !streamed, key.(*cudaKey).hHi != nil, "the high copy of the H bases")
	if streamed {
		require.NotNil(t, key.(*cudaKey).pinned, "a streamed key is copied to pinned memory")
	}

	cpu := NewCPU(CPUOptions{Threads: 2})
	defer cpu.Close()
	ckey, err := cpu.LoadKey(ctx, pk)
	require.NoError(t, err)
	defer ckey.Release()
	want := make([]bls.G1Jac, len(parts))
	for i, sys := range parts {
		a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
		require.NoError(t, sys.Evaluate(a, b, c))
		s, err := cpu.Acquire(ctx, ckey)
		require.NoError(t, err)
		want[i], err = s.ComputeH(ctx, a, b, c)
		require.NoError(t, err)
		s.Release()
	}

	got := make([]bls.G1Jac, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, sys := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := d.Acquire(ctx, key)
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Release()
			got[i], errs[i] = s.(WitnessSlot).ComputeHWitness(ctx, newWitness(sys))
		}()
	}
	wg.Wait()
	for i := range parts {
		require.NoError(t, errs[i], "partition %d", i)
		assert.True(t, want[i].Equal(&got[i]), "partition %d", i)
	}

	// The other sections: batch additions and tails equal the CPU's.
	gs, err := d.Acquire(ctx, key)
	require.NoError(t, err)
	cs, err := cpu.Acquire(ctx, ckey)
	require.NoError(t, err)
	for _, sec := range []Section{SectionL, SectionA, SectionBG1} {
		bases, _ := g1Section(pk, sec)
		ones := onesOf(len(bases), rng)
		w, err := cs.BatchAddG1(ctx, sec, ones)
		require.NoError(t, err)
		g, err := gs.BatchAddG1(ctx, sec, ones)
		require.NoError(t, err)
		assert.True(t, w.Equal(&g), "%s batch add", sec)
		idx := []uint32{1, uint32(len(bases) / 2), uint32(len(bases) - 1)}
		sc := []fr.Element{fr.NewElement(7), fr.NewElement(8), fr.NewElement(9)}
		w, err = cs.TailG1(ctx, sec, idx, sc)
		require.NoError(t, err)
		g, err = gs.TailG1(ctx, sec, idx, sc)
		require.NoError(t, err)
		assert.True(t, w.Equal(&g), "%s tail", sec)
	}
	ones := onesOf(len(pk.BG2), rng)
	w2, err := cs.BatchAddG2(ctx, ones)
	require.NoError(t, err)
	g2, err := gs.BatchAddG2(ctx, ones)
	require.NoError(t, err)
	assert.True(t, w2.Equal(&g2), "B_G2 batch add")
	checkReadBasesG2(t, gs, pk) // through the slot's a‖b‖c scratch when resident
	cs.Release()
	gs.Release()

	bad, err := rec.WithAssignment(rec.Inputs(), append([]fr.Element(nil), rec.Aux()...))
	require.NoError(t, err)
	bad.Aux()[len(bad.Aux())/2].SetUint64(5)
	var ue, gue *r1cs.UnsatisfiedError
	require.ErrorAs(t, bad.IsSatisfied(), &ue)
	s, err := d.Acquire(ctx, key)
	require.NoError(t, err)
	_, err = s.(WitnessSlot).ComputeHWitness(ctx, newWitness(bad))
	s.Release()
	require.ErrorAs(t, err, &gue)
	assert.Equal(t, ue.Index, gue.Index)
	assert.Equal(t, ue.A, gue.A)
	assert.Equal(t, ue.B, gue.B)
	assert.Equal(t, ue.C, gue.C)
}

// withBudget returns a CUDA device on c's GPU with a budget of total bytes.
func (c *CUDA) withBudget(total int64) *CUDA {
	return &CUDA{d: c.d, name: c.name, sms: c.sms, splitH: c.splitH, splitHAt: c.splitHAt, budget: pool.NewBudget(c.name, total)}
}

// streamingBudget returns a budget that holds sys's R1CS and one witness
// slot of pk with the key streamed, and not pk's key with a plain slot
// (what LoadKey asks to keep it resident): halfway between the two. Until
// the test ends, streamed keys keep every section on the host.
func streamingBudget(t *testing.T, c *CUDA, pk *groth16.ProvingKey, sys *r1cs.System) int64 {
	t.Helper()
	// Every section streamed: the room beside the slot is not given to them.
	defer func(on bool) { t.Cleanup(func() { sectionsOnDevice = on }) }(sectionsOnDevice)
	sectionsOnDevice = false
	need := layoutBytesOf(sys) + c.slotBytes(pk, false, sys.NumInputs()+sys.NumAux(), false)
	over := keyBytes(pk) + c.slotBytes(pk, true, 0, false)
	require.Less(t, need, over, "the R1CS and a streamed witness slot must fit where the key does not")
	return (need + over) / 2
}

// testCUDA returns CUDA device 0 with a 1 GiB budget, closed when the test
// ends, or skips the test without libc2cuda or a GPU.
func testCUDA(t *testing.T) *CUDA {
	devs, err := OpenCUDA(nil, 1<<30, 0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	t.Cleanup(func() {
		for _, d := range devs {
			require.NoError(t, d.Close())
		}
	})
	return devs[0].(*CUDA)
}

// bitsCircuit records, for m random bits b_j and full-width x_j, the
// constraints b_j·(1 − b_j) = 0, b_j·x_j = p_j and x_j·x_j = s_j, and
// Σ p_j = out for a public input out: a fixed shape whatever rng gives.
func bitsCircuit(rng *rand.Rand, m int) *r1cs.System {
	s := r1cs.NewSystem()
	type row struct{ b, x, p, sq fr.Element }
	rows := make([]row, m)
	var out fr.Element
	for j := range rows {
		r := &rows[j]
		r.b.SetUint64(uint64(rng.IntN(2)))
		r.x.SetUint64(rng.Uint64())
		r.x.Square(&r.x)
		r.p.Mul(&r.b, &r.x)
		r.sq.Square(&r.x)
		out.Add(&out, &r.p)
	}
	outVar := s.AllocInput(out)
	sum := r1cs.LC{}
	for _, r := range rows {
		b, x, p, sq := s.Alloc(r.b), s.Alloc(r.x), s.Alloc(r.p), s.Alloc(r.sq)
		s.Enforce(r1cs.LC{}.AddVar(b), r1cs.LC{}.AddVar(r1cs.One).SubVar(b), r1cs.LC{})
		s.Enforce(r1cs.LC{}.AddVar(b), r1cs.LC{}.AddVar(x), r1cs.LC{}.AddVar(p))
		s.Enforce(r1cs.LC{}.AddVar(x), r1cs.LC{}.AddVar(x), r1cs.LC{}.AddVar(sq))
		sum = sum.AddVar(p)
	}
	s.Enforce(sum, r1cs.LC{}.AddVar(r1cs.One), r1cs.LC{}.AddVar(outVar))
	s.Finalize()
	return s
}

// On a GPU: after the witness pass (the witness handed over in either
// form), full MSMs over the witness the slot holds (L over every aux value,
// A and B over selections of inputs and aux values) equal the CPU's MSMs
// of the same scalars from the host, for a resident and a streamed key (its
// R1CS uploaded in small chunks); a slot without a witness and a selection
// of the wrong size are refused.
func TestCUDAWitnessMSM(t *testing.T) {
	dev := testCUDA(t)
	rng := rand.New(rand.NewPCG(8, 9))
	sys := bitsCircuit(rng, 3000)
	n := 1
	for n < sys.NumConstraints() {
		n <<= 1
	}
	in, aux := sys.Inputs(), sys.Aux()
	// sel returns the bitmap over inputs ‖ aux of the inputs di selects
	// (nil: all) and the aux values da selects, and those values in order.
	sel := func(di, da *r1cs.Density) ([]uint64, []fr.Element) {
		bits := make([]uint64, (len(in)+len(aux)+63)/64)
		var v []fr.Element
		for i := range in {
			if di == nil || di.Get(i) {
				bits[i>>6] |= 1 << (uint(i) & 63)
				v = append(v, in[i])
			}
		}
		for i := range aux {
			if da.Get(i) {
				j := len(in) + i
				bits[j>>6] |= 1 << (uint(j) & 63)
				v = append(v, aux[i])
			}
		}
		return bits, v
	}
	selA, scA := sel(nil, sys.ADensity())
	selB, scB := sel(sys.BInputDensity(), sys.BAuxDensity())
	var tau fr.Element
	tau.SetUint64(1234567)
	pk := testKey(t, rng, n, len(aux), len(scA), len(scB), tau)
	require.NotEqual(t, len(scA), len(scB))

	ctx := context.Background()
	cpu := NewCPU(CPUOptions{Threads: 2})
	defer cpu.Close()
	ckey, err := cpu.LoadKey(ctx, pk)
	require.NoError(t, err)
	defer ckey.Release()
	cs, err := cpu.Acquire(ctx, ckey)
	require.NoError(t, err)
	defer cs.Release()
	type g1Case struct {
		sec     Section
		sel     []uint64
		scalars []fr.Element
	}
	g1Cases := []g1Case{{SectionL, nil, aux}, {SectionA, selA, scA}, {SectionBG1, selB, scB}}
	want := make([]bls.G1Jac, len(g1Cases))
	for i, c := range g1Cases {
		want[i], err = cs.TailG1(ctx, c.sec, nil, c.scalars)
		require.NoError(t, err)
	}
	want2, err := cs.TailG2(ctx, nil, scB)
	require.NoError(t, err)
	a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
	require.NoError(t, sys.Evaluate(a, b, c))
	wantH, err := cs.ComputeH(ctx, a, b, c)
	require.NoError(t, err)

	for _, streamed := range []bool{false, true} {
		d := dev
		if streamed {
			// Batch additions in chunks of 4096 bases keep the slot smaller
			// than the key; the R1CS goes up in chunks of 1000 terms.
			defer func(n, m int) { batchChunk, r1csChunk = n, m }(batchChunk, r1csChunk)
			batchChunk, r1csChunk = 4096, 1000
			d = d.withBudget(streamingBudget(t, d, pk, sys))
		}
		key, err := d.LoadShape(ctx, pk, sys)
		require.NoError(t, err)
		require.Equal(t, !streamed, key.(*cudaKey).resident)
		require.Equal(t, d.splitsH(len(pk.H)) && !streamed, key.(*cudaKey).hHi != nil, "the high copy of the H bases")
		for _, dense := range []bool{false, true} {
			name := fmt.Sprintf("streamed=%v/dense=%v", streamed, dense)
			w := newWitness(sys)
			if dense {
				w = &Witness{Inputs: in, NumAux: len(aux), Tail: aux}
			}
			s, err := d.Acquire(ctx, key)
			require.NoError(t, err)
			ws := s.(WitnessSlot)
			_, err = ws.MSMWitnessG1(ctx, SectionL, nil)
			require.ErrorIs(t, err, ErrBadArgument, "%s: no witness yet", name)
			h, err := ws.ComputeHWitness(ctx, w)
			require.NoError(t, err, name)
			assert.True(t, wantH.Equal(&h), "%s: H", name)
			for i, c := range g1Cases {
				got, err := ws.MSMWitnessG1(ctx, c.sec, c.sel)
				require.NoError(t, err, "%s %s", name, c.sec)
				assert.True(t, want[i].Equal(&got), "%s: %s", name, c.sec)
			}
			got2, err := ws.MSMWitnessG2(ctx, selB)
			require.NoError(t, err, name)
			assert.True(t, want2.Equal(&got2), "%s: B_G2", name)
			_, err = ws.MSMWitnessG1(ctx, SectionA, selB)
			require.ErrorIs(t, err, ErrBadArgument, "%s: B's selection for A", name)
			_, err = ws.MSMWitnessG1(ctx, SectionA, nil)
			require.ErrorIs(t, err, ErrBadArgument, "%s: every aux value for A", name)
			s.Release()
		}
		key.Release()
	}
	checkPassScratch(t, dev, sys, n)
}

// checkPassScratch checks the scratch of the witness pass's own calls on
// c's GPU (the R1CS evaluation, the transforms, the selections) against
// their models, for sys's shape in a domain of n.
func checkPassScratch(t *testing.T, c *CUDA, sys *r1cs.System, n int) {
	t.Helper()
	nvars := int64(sys.NumInputs() + sys.NumAux())
	logN := bits.TrailingZeros(uint(n))
	scratch := c.DeviceTimes().Scratch
	for op, model := range map[string]int64{
		"EvalR1CS":         evalScratch(nvars, int64(n)),
		"ComputeHResident": nttScratch(logN),
		"Select":           selectScratch(nvars),
	} {
		got, ok := scratch[op]
		require.True(t, ok, "%s ran", op)
		t.Logf("%-16s scratch %10d bytes, model %10d", op, got, model)
		require.LessOrEqual(t, got, model, "%s: the model must bound the library", op)
	}
}
