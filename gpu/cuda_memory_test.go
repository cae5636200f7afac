package gpu

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu/cuda"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/pool"
)

// num is a stand-in point for sumPieces: integers under addition.
type num int

func (a *num) AddAssign(b *num) *num { *a += *b; return a }

// sumPieces covers [0, n) with consecutive pieces of at most piece
// elements, one empty piece when n is 0, and stops at the first error.
func TestSumPieces(t *testing.T) {
	for _, tc := range []struct {
		n, piece int
		ranges   [][2]int
	}{
		{0, 4, [][2]int{{0, 0}}},
		{3, 4, [][2]int{{0, 3}}},
		{8, 4, [][2]int{{0, 4}, {4, 8}}},
		{9, 4, [][2]int{{0, 4}, {4, 8}, {8, 9}}},
	} {
		var got [][2]int
		sum, err := sumPieces[num](tc.n, tc.piece, func(lo, hi int) (num, error) {
			got = append(got, [2]int{lo, hi})
			return num(hi - lo + 100), nil
		})
		require.NoError(t, err)
		require.Equal(t, tc.ranges, got, "n %d, piece %d", tc.n, tc.piece)
		require.Equal(t, num(tc.n+100*len(tc.ranges)), sum, "every piece's result added once")
	}
	boom := errors.New("boom")
	calls := 0
	_, err := sumPieces[num](10, 3, func(lo, hi int) (num, error) {
		calls++
		if lo == 3 {
			return 0, boom
		}
		return 1, nil
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 2, calls, "no piece after the failed one")
}

// shape32GiB is a 32 GiB PoRep partition's key sizes (porep: Constraints
// 130,278,869, Inputs 328, Aux 130,169,893, AAux 129,753,292, B
// 1 + 33,112,281) and its variables.
var (
	shape32GiB = groth16.Sizes{H: 1<<27 - 1, L: 130_169_893, A: 328 + 129_753_292, BG1: 33_112_282, BG2: 33_112_282}
	vars32GiB  = 328 + 130_169_893
)

// A 32 GiB witness slot with the key resident: its buffers (a‖b‖c of the
// 2^27 domain, w) and the largest call's scratch, which is B_G2's MSM over
// every scalar from the host (a dense query). An indexed tail, however long,
// gathers a piece at a time and stays below it; so does the R1CS
// evaluation's upload of a witness whose every value is in its tail.
func TestSlotBytes32GiB(t *testing.T) {
	c := &CUDA{sms: 132}
	pk := groth16.KeyWithoutBases(groth16.VerifyingKey{}, shape32GiB)
	n := int64(1 << 27)
	buffers := 3*n*frSize + int64(vars32GiB)*frSize
	got := c.slotBytes(pk, true, vars32GiB, false)
	scratch := got - buffers - slotSlop
	want := msmScratch(int64(shape32GiB.BG2), msmG2, false, true, 132)
	require.Equal(t, want, scratch, "the largest call: B_G2's dense MSM")
	for name, s := range map[string]int64{
		"H's MSM":         msmScratch(n-1, msmG1, false, false, 132),
		"L's dense MSM":   msmScratch(int64(shape32GiB.L), msmG1, false, true, 132),
		"an indexed tail": indexedScratch(int64(tailPiece), msmG2, 132),
		"R1CS evaluation": evalScratch(int64(vars32GiB), n),
		"ComputeH's tables, the roots' 2 GiB among them": nttScratch(27),
	} {
		require.Less(t, s, scratch, name)
	}
	// 2^25 points of G2, the scalars from the host in chunks of 2^24: keys
	// and values of 13 windows (3.5 GB), 13·2^19 buckets of 384 bytes with
	// their bounds, sizes and ids (2.8 GB), the extra pieces' sums (0.65
	// GB), the staged scalars (1.1 GB), the rest 0.25 GB: 8.2 GB, where the
	// slot counted 13.8 GB before (bases staged from the host, which a
	// resident key never stages, and without the pieces' sums).
	require.InDelta(t, 8.25e9, float64(scratch), 0.05e9)
	require.InDelta(t, 25.4e9, float64(got), 0.1e9)

	// A streamed key stages the bases of its MSMs from the host, and a
	// plain slot (no witness) holds no buffers but stages a, b and c.
	streamed := c.slotBytes(pk, false, vars32GiB, false) - buffers - slotSlop
	require.Equal(t, msmScratch(int64(shape32GiB.BG2), msmG2, true, true, 132), streamed)
	// The transforms' tables: every power of the root below 2^26 as 32-byte
	// elements (build_full), and ≈ 25 MB of smaller tables.
	require.InDelta(t, float64(frSize<<26)+25e6, float64(nttScratch(27)), 1e6)
	require.Equal(t, int64(0), nttScratch(18)-twiddleSize*(4*(1<<9+1<<9)+2<<9)-frSize*2*(1<<18), "no roots table at 2^18")
	plain := c.slotBytes(pk, true, 0, false) - slotSlop
	require.Equal(t, nttScratch(27)+3*n*frSize, plain, "the largest call: ComputeH's staging of a, b and c, and its tables")
}

// A 32 GiB key on a 16 GB card (15,900 MiB reported, 2 GiB of margin) is
// streamed, and its slots, where the host evaluates a, b and c, stage
// ComputeH in two device vectors: a slot staging three (15.1 GB) exceeds
// the budget, one staging two (10.8 GB, its largest call ComputeH again,
// the streamed MSMs' 2^22-point chunks below it) fits. A 24 GB card keeps
// the three vectors (23,600 MiB reported).
func TestSmallCard32GiB(t *testing.T) {
	pk := groth16.KeyWithoutBases(groth16.VerifyingKey{}, shape32GiB)
	n := int64(1 << 27)
	c := &CUDA{sms: 132, budget: pool.NewBudget("cuda:0", 15_900<<20-2<<30)}
	three, two := c.slotBytes(pk, false, 0, false), c.slotBytes(pk, false, 0, true)
	require.Greater(t, three, c.room(), "three vectors do not fit a 16 GB card")
	require.InDelta(t, 15.1e9, float64(three), 0.05e9)
	require.Equal(t, nttScratch(27)+2*n*frSize+slotSlop, two, "the largest call: ComputeH's two vectors and its tables")
	require.InDelta(t, 10.8e9, float64(two), 0.05e9)
	require.LessOrEqual(t, two, c.room())
	for name, s := range map[string]int64{
		"B_G2's dense MSM, bases from the host": msmScratch(int64(shape32GiB.BG2), msmG2, true, true, 132),
		"H's MSM, bases from the host":          msmScratch(n-1, msmG1, true, true, 132),
		"a streamed batch addition of G2":       batchScratch(int64(batchChunk), msmG2, true, 132),
	} {
		require.Less(t, s+slotSlop, two, name)
	}
	// A streamed witness slot: B_G2's dense MSM staging its bases in
	// 2^22-point chunks (5.9 GB) beside a‖b‖c and w.
	require.InDelta(t, 23.0e9, float64(c.slotBytes(pk, false, vars32GiB, false)), 0.05e9)
	k := c.newKey(pk)
	c.streamKey(k)
	require.True(t, k.twoVectors)
	require.Equal(t, two, c.SlotBytes(k))

	big := &CUDA{sms: 132, budget: pool.NewBudget("cuda:0", 23_600<<20-2<<30)}
	k = big.newKey(pk)
	big.streamKey(k)
	require.False(t, k.twoVectors, "a 24 GB card stages three vectors")
	require.Equal(t, three, big.SlotBytes(k))
}

// splitPairs picks the split layouts gpu/cuda/hosttest/digits_test.cc pins
// msm_pick_split to, and a split H's scratch (12 windows of digits, 6 sets
// of 2^21 buckets) stays below a 32 GiB slot's largest call: the slot does
// not grow when H is split.
func TestSplitPairs(t *testing.T) {
	for _, tc := range []struct{ lg, H, widest int64 }{{22, 7, 19}, {24, 6, 22}, {26, 6, 22}, {27, 6, 22}} {
		H, widest := splitPairs(1<<tc.lg, splitMaxC)
		require.Equal(t, [2]int64{tc.H, tc.widest}, [2]int64{H, widest}, "2^%d points", tc.lg)
	}
	pk := groth16.KeyWithoutBases(groth16.VerifyingKey{}, shape32GiB)
	plain := (&CUDA{sms: 132}).slotBytes(pk, true, vars32GiB, false)
	split := splitScratch(1<<27-1, msmG1, false, 132)
	require.Greater(t, split, msmScratch(1<<27-1, msmG1, false, false, 132), "wider windows, more buckets")
	require.Equal(t, plain, (&CUDA{sms: 132, splitH: true}).slotBytes(pk, true, vars32GiB, false))
}

// By default H's MSM is split from a 2^26 domain up, where the H200
// measured it faster; C2_CUDA_SPLIT_H=0 or 1 turns it off or on at every
// size, and a slot reserves the split's scratch only where it splits.
func TestSplitPolicy(t *testing.T) {
	for _, tc := range []struct {
		env              string
		at24, at26, at27 bool
	}{{"", false, true, true}, {"0", false, false, false}, {"1", true, true, true}, {"yes", false, true, true}} {
		on, at := splitPolicy(tc.env)
		c := &CUDA{sms: 132, splitH: on, splitHAt: at}
		got := [3]bool{c.splitsH(1<<24 - 1), c.splitsH(1<<26 - 1), c.splitsH(1<<27 - 1)}
		require.Equal(t, [3]bool{tc.at24, tc.at26, tc.at27}, got, "C2_CUDA_SPLIT_H=%q", tc.env)
	}
	pk := groth16.KeyWithoutBases(groth16.VerifyingKey{}, groth16.Sizes{H: 1<<24 - 1, L: 1 << 23, A: 1 << 23, BG1: 1 << 23, BG2: 1 << 23})
	on, at := splitPolicy("")
	plain := (&CUDA{sms: 132}).slotBytes(pk, true, 1<<23, false)
	require.Equal(t, plain, (&CUDA{sms: 132, splitH: on, splitHAt: at}).slotBytes(pk, true, 1<<23, false), "2^24: no split, no split scratch")
	require.Greater(t, (&CUDA{sms: 132, splitH: true}).slotBytes(pk, true, 1<<23, false), plain, "forced at 2^24: the split's wider windows")
}

// The high copy of a 32 GiB key's H bases (12.9 GB) is made only when the
// slots SetSlots allows still fit beside it in the budget's free room.
func TestHighFits(t *testing.T) {
	pk := groth16.KeyWithoutBases(groth16.VerifyingKey{}, shape32GiB)
	probe := &CUDA{sms: 132}
	slot, high := probe.slotBytes(pk, true, vars32GiB, false), g1Size*int64(shape32GiB.H)
	c := &CUDA{sms: 132, splitH: true, budget: pool.NewBudget("cuda:test", high+3*slot)}
	require.True(t, c.highFits(pk, vars32GiB), "three slots and the copy")
	res, ok := c.budget.TryReserve(1) // a byte less of room
	require.True(t, ok)
	require.False(t, c.highFits(pk, vars32GiB), "the third slot would not fit beside the copy")
	c.SetSlots(2)
	require.True(t, c.highFits(pk, vars32GiB), "two slots do")
	res.Release()
}

// The model's scratch bounds what the library's calls allocate, measured
// on the device (cuda.OpTime.Scratch), and is not far above it; the split
// MSM over the high copy of the bases equals the plain one. Skipped
// without libc2cuda or a GPU.
func TestCUDAScratchModel(t *testing.T) {
	d, err := cuda.Open(0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	defer d.Close()
	sms := int64(d.Info().SMCount)
	rng := rand.New(rand.NewPCG(7, 8))
	_, _, g1, g2 := bls.Generators()
	// Equal bases: the memory does not depend on the points, and the
	// results are the scalars' sum times the generator.
	const n1, n2 = 1<<21 + 3, 1<<19 + 5
	b1 := make([]bls.G1Affine, n1)
	for i := range b1 {
		b1[i] = g1
	}
	b2 := make([]bls.G2Affine, n2)
	for i := range b2 {
		b2[i] = g2
	}
	r1, err := d.UploadG1(b1)
	require.NoError(t, err)
	defer r1.Free()
	r2, err := d.UploadG2(b2)
	require.NoError(t, err)
	defer r2.Free()
	s1 := synth.RandScalars(rng, n1)
	sd, err := d.Alloc(uint64(n1) * uint64(frSize))
	require.NoError(t, err)
	defer sd.Free()
	require.NoError(t, cuda.CopyTo(sd, 0, s1))
	half := n1 / 2
	idx := make([]uint32, half)
	for i := range idx {
		idx[i] = uint32(2 * i)
	}
	ones := make([]uint64, (n1+63)/64)
	for i := range ones {
		ones[i] = rng.Uint64()
	}
	sumOf := func(s []fr.Element) (x fr.Element) {
		for i := range s {
			x.Add(&x, &s[i])
		}
		return x
	}
	wantG1 := func(s []fr.Element) bls.G1Jac {
		var j bls.G1Jac
		x := sumOf(s)
		j.ScalarMultiplicationBase(x.BigInt(new(big.Int)))
		return j
	}

	all, halfSum := wantG1(s1), wantG1(s1[:half])
	hi, err := d.Alloc(uint64(n1) * uint64(g1Size))
	require.NoError(t, err)
	defer hi.Free()
	require.NoError(t, d.HighBasesG1(hi, r1, n1))
	g1only := func(f func(m *cuda.Device) (bls.G1Jac, error), want *bls.G1Jac) func(m *cuda.Device) error {
		return func(m *cuda.Device) error {
			got, err := f(m)
			if err == nil && want != nil && !got.Equal(want) {
				return errors.New("wrong sum")
			}
			return err
		}
	}
	g2only := func(f func(m *cuda.Device) (bls.G2Jac, error)) func(m *cuda.Device) error {
		return func(m *cuda.Device) error { _, err := f(m); return err }
	}
	for _, run := range []struct {
		name  string
		call  func(m *cuda.Device) error
		model int64
	}{
		{"MSMG1Resident", g1only(func(m *cuda.Device) (bls.G1Jac, error) { return m.MSMG1Resident(r1, s1) }, &all),
			msmScratch(n1, msmG1, false, true, sms)},
		{"MSMG1OnDevice", g1only(func(m *cuda.Device) (bls.G1Jac, error) { return m.MSMG1OnDevice(r1, sd, n1) }, &all),
			msmScratch(n1, msmG1, false, false, sms)},
		{"MSMG1", g1only(func(m *cuda.Device) (bls.G1Jac, error) { return m.MSMG1(b1, s1) }, &all),
			msmScratch(n1, msmG1, true, true, sms)},
		{"MSMG1Indexed", g1only(func(m *cuda.Device) (bls.G1Jac, error) { return m.MSMG1Indexed(r1, n1, idx, s1[:half]) }, &halfSum),
			indexedScratch(int64(half), msmG1, sms)},
		{"MSMG1SplitOnDevice", g1only(func(m *cuda.Device) (bls.G1Jac, error) { return m.MSMG1SplitOnDevice(r1, hi, sd, n1) }, &all),
			splitScratch(n1, msmG1, false, sms)},
		{"BatchAddG1Resident", g1only(func(m *cuda.Device) (bls.G1Jac, error) { return m.BatchAddG1Resident(r1, n1, ones) }, nil),
			batchScratch(n1, msmG1, false, sms)},
		{"BatchAddG1", g1only(func(m *cuda.Device) (bls.G1Jac, error) { return m.BatchAddG1(b1, ones) }, nil),
			batchScratch(n1, msmG1, true, sms)},
		{"MSMG2Resident", g2only(func(m *cuda.Device) (bls.G2Jac, error) { return m.MSMG2Resident(r2, s1[:n2]) }),
			msmScratch(n2, msmG2, false, true, sms)},
		{"MSMG2Indexed", g2only(func(m *cuda.Device) (bls.G2Jac, error) { return m.MSMG2Indexed(r2, n2, idx[:n2/2], s1[:n2/2]) }),
			indexedScratch(int64(n2/2), msmG2, sms)},
	} {
		// A device of its own: its timings hold this call alone (the
		// buffers are the same GPU's memory).
		m, err := cuda.Open(0)
		require.NoError(t, err)
		require.NoError(t, run.call(m), run.name)
		var got int64
		for _, o := range m.Timings().Ops {
			got = max(got, int64(o.Scratch))
		}
		require.NoError(t, m.Close())
		t.Logf("%-20s scratch %12d bytes, model %12d (%.3f)", run.name, got, run.model, float64(got)/float64(run.model))
		require.LessOrEqual(t, got, run.model, "%s: the model must bound the library", run.name)
		require.Greater(t, 2*got, run.model, "%s: the model is more than twice the library's", run.name)
	}
}

// C2_CUDA_HOST_G2 takes a fraction from 0 to 1; anything else is an error
// that names the variable. Empty means no share.
func TestHostG2Share(t *testing.T) {
	for env, want := range map[string]float64{"": 0, "0": 0, "0.5": 0.5, "0.7": 0.7, "1": 1} {
		got, err := hostG2Share(env)
		require.NoError(t, err, env)
		require.Equal(t, want, got, env)
	}
	for _, env := range []string{"-0.1", "1.5", "half", "NaN"} {
		_, err := hostG2Share(env)
		require.ErrorContains(t, err, "C2_CUDA_HOST_G2", env)
	}
}

// TestSectionsOnSmallCards: a streamed 32 GiB key puts on the device the
// sections that fit beside its slots, the largest first, and a slot with
// them on the device is no larger (their calls' scratch is below ComputeH's
// staging): B_G2 on a 24 GB card, B_G1 on a 16 GB one, L, A and B_G1 beside
// one slot in 46 GB, none where one slot leaves less than B_G1.
func TestSectionsOnSmallCards(t *testing.T) {
	pk := groth16.KeyWithoutBases(groth16.VerifyingKey{}, shape32GiB)
	plain3 := (&CUDA{sms: 132}).slotBytes(pk, false, 0, false)
	for _, card := range []struct {
		name   string
		budget int64 // the budget: the card less VRAMMargin
		slots  int
		want   sections
		stream bool // the key sums its streamed sections' batch additions
	}{
		{"16 GB", 15_900<<20 - 2<<30, 3, 1 << SectionBG1, true},
		{"24 GB", 23_600<<20 - 2<<30, 3, 1 << SectionBG2, true},
		{"24 GB, two slots wanted, one fits", 23_600<<20 - 2<<30, 2, 1 << SectionBG2, true},
		{"a three-vector slot and 1 GB", plain3 + 1e9, 3, 0, true},
		{"a three-vector slot and 1 MB", plain3 + 1<<20, 3, 0, false},
		{"sections before the key's batch additions", plain3 + sectionBytes(pk, SectionBG2) + streamBytes(132)/2, 3, 1 << SectionBG2, false},
		{"46 GB, one slot", 46e9, 1, 1<<SectionL | 1<<SectionA | 1<<SectionBG1, true},
	} {
		t.Run(card.name, func(t *testing.T) {
			c := &CUDA{sms: 132, budget: pool.NewBudget("cuda:0", card.budget), slots: card.slots, streamBeside: true}
			k := c.newKey(pk)
			c.streamKey(k)
			before := c.SlotBytes(k)
			plan := c.planSections(k)
			require.Equal(t, card.want, plan)
			var b int64
			for _, sec := range []Section{SectionH, SectionL, SectionA, SectionBG1, SectionBG2} {
				if plan.has(sec) {
					b += sectionBytes(pk, sec)
				}
			}
			with := c.slotBytesOn(pk, plan, 0, k.twoVectors)
			require.Equal(t, before, with, "the sections' calls fit in the slot's largest call")
			require.LessOrEqual(t, b+with, c.room(), "one slot still fits beside them")
			// The key's own batch additions take what the sections leave
			// (fillSections reserves them last).
			secs, ok := c.budget.TryReserve(b)
			require.True(t, ok)
			secs.Pin()
			if res := c.streamReservation(k); res != nil {
				k.stream = &keyStream{res: res} // without its buffers: no device here
			}
			require.Equal(t, card.stream, k.stream != nil)
			require.LessOrEqual(t, with, c.room(), "one slot still fits beside the sections and the key's batch additions")
			for _, sec := range []Section{SectionL, SectionA, SectionBG1, SectionBG2} {
				k.l, k.a, k.bg1, k.bg2 = nil, nil, nil, nil
				if plan.has(sec) {
					*map[Section]**cuda.Buffer{SectionL: &k.l, SectionA: &k.a, SectionBG1: &k.bg1, SectionBG2: &k.bg2}[sec] = new(cuda.Buffer)
				}
				require.Equal(t, card.stream && !plan.has(sec), k.Streams(sec), sec)
			}
			require.False(t, k.Streams(SectionH), "H's MSM has no batch addition")
		})
	}
	// Unless the device streams beside its slots (C2_CUDA_STREAM_BESIDE=1),
	// a streamed key keeps its batch additions in its slots.
	c := &CUDA{sms: 132, budget: pool.NewBudget("cuda:0", 23_600<<20-2<<30)}
	k := c.newKey(pk)
	c.streamKey(k)
	require.Nil(t, c.streamReservation(k))
	// A resident key has nothing to plan.
	c = &CUDA{sms: 132, budget: pool.NewBudget("cuda:0", 100<<30)}
	k = c.newKey(pk)
	k.resident = true
	require.Zero(t, c.planSections(k))
}

// TestKeyPlacementString: a key's description names where its parts are.
func TestKeyPlacementString(t *testing.T) {
	pk := groth16.KeyWithoutBases(groth16.VerifyingKey{}, shape32GiB)
	c := &CUDA{sms: 132, budget: pool.NewBudget("cuda:0", 15_900<<20-2<<30)}
	k := c.newKey(pk)
	c.streamKey(k)
	require.Equal(t, "key streamed from pageable host memory, ComputeH staged in two vectors, 10.8 GB a slot", k.String())
	k.bg1, k.bg2 = new(cuda.Buffer), new(cuda.Buffer)
	require.Equal(t, "key streamed from pageable host memory, B_G1, B_G2 on the device, ComputeH staged in two vectors, 10.8 GB a slot", k.String())
	k.stream = &keyStream{}
	require.Equal(t, "key streamed from pageable host memory, B_G1, B_G2 on the device, streamed batch additions beside the slots, ComputeH staged in two vectors, 10.8 GB a slot", k.String())
	k.resident, k.twoVectors = true, false
	require.Contains(t, k.String(), "key resident, ")
}
