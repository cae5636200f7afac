package gpu

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/pool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testKey returns a key whose H query is [τ^i]₁ (so that Σ h_i·H_i = [h(τ)]₁)
// and whose other queries are random points, with n the domain size.
func testKey(t *testing.T, rng *rand.Rand, n, nL, nA, nB int, tau fr.Element) *groth16.ProvingKey {
	t.Helper()
	_, _, g1, g2 := bls.Generators()
	pw := make([]fr.Element, n-1)
	pw[0].SetOne()
	for i := 1; i < len(pw); i++ {
		pw[i].Mul(&pw[i-1], &tau)
	}
	return &groth16.ProvingKey{
		H:   bls.BatchScalarMultiplicationG1(&g1, pw),
		L:   bls.BatchScalarMultiplicationG1(&g1, synth.RandScalars(rng, nL)),
		A:   bls.BatchScalarMultiplicationG1(&g1, synth.RandScalars(rng, nA)),
		BG1: bls.BatchScalarMultiplicationG1(&g1, synth.RandScalars(rng, nB)),
		BG2: bls.BatchScalarMultiplicationG2(&g2, synth.RandScalars(rng, nB)),
	}
}

// naive returns Σ s[j]·bases[idx[j]] (Σ s[i]·bases[i] when idx is nil) by
// one scalar multiplication per term; naiveG1 and naiveG2 instantiate it.
func naive[A, J any, PJ interface {
	*J
	FromAffine(*A) *J
	ScalarMultiplication(*J, *big.Int) *J
	AddAssign(*J) *J
}](bases []A, idx []uint32, s []fr.Element) J {
	var acc, t J
	for j := range s {
		i := j
		if idx != nil {
			i = int(idx[j])
		}
		var b big.Int
		s[j].BigInt(&b)
		PJ(&t).FromAffine(&bases[i])
		PJ(&t).ScalarMultiplication(&t, &b)
		PJ(&acc).AddAssign(&t)
	}
	return acc
}

var (
	naiveG1 = naive[bls.G1Affine, bls.G1Jac]
	naiveG2 = naive[bls.G2Affine, bls.G2Jac]
)

// lagrange evaluates at x the polynomial of degree < n taking values v on
// {ω^j}: (xⁿ−1)/n · Σ v_j·ω^j/(x−ω^j).
func lagrange(v []fr.Element, omega, x fr.Element) fr.Element {
	n := len(v)
	var acc, w, t, d fr.Element
	w.SetOne()
	for j := 0; j < n; j++ {
		d.Sub(&x, &w)
		d.Inverse(&d)
		t.Mul(&v[j], &w)
		t.Mul(&t, &d)
		acc.Add(&acc, &t)
		w.Mul(&w, &omega)
	}
	var xn, nf fr.Element
	xn.Exp(x, big.NewInt(int64(n)))
	xn.Sub(&xn, new(fr.Element).SetOne())
	nf.SetUint64(uint64(n))
	nf.Inverse(&nf)
	acc.Mul(&acc, &xn)
	return *acc.Mul(&acc, &nf)
}

// eq asserts that want and got are the same point; eqG1 and eqG2
// instantiate it.
func eq[A, J any, PA interface {
	*A
	FromJacobian(*J) *A
	Equal(*A) bool
}](t *testing.T, want, got J, msg string) {
	t.Helper()
	var w, g A
	PA(&w).FromJacobian(&want)
	PA(&g).FromJacobian(&got)
	assert.True(t, PA(&w).Equal(&g), msg)
}

var (
	eqG1 = eq[bls.G1Affine, bls.G1Jac]
	eqG2 = eq[bls.G2Affine, bls.G2Jac]
)

func onesOf(n int, rng *rand.Rand) []uint64 {
	w := make([]uint64, (n+63)/64)
	for i := 0; i < n; i++ {
		if rng.IntN(2) == 0 {
			w[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	return w
}

// checkSlot runs every stage of d against independent references.
func checkSlot(t *testing.T, d Device) {
	rng := rand.New(rand.NewPCG(1, 2))
	checkSlotKey(t, d, slotTestKey(t, rng), rng)
}

// slotTestKey is checkSlot's key: a domain of 64, L of 100, A of 70, B of 30.
func slotTestKey(t *testing.T, rng *rand.Rand) *groth16.ProvingKey {
	var tau fr.Element
	tau.SetUint64(123456789)
	return testKey(t, rng, 64, 100, 70, 30, tau)
}

// openSlot loads pk on d, hands the key to each of prep, and acquires a
// slot for it; release returns the slot, then the key.
func openSlot(t *testing.T, ctx context.Context, d Device, pk *groth16.ProvingKey, prep ...func(Key)) (slot Slot, release func()) {
	t.Helper()
	key, err := d.LoadKey(ctx, pk)
	require.NoError(t, err)
	for _, p := range prep {
		p(key)
	}
	slot, err = d.Acquire(ctx, key)
	if err != nil {
		key.Release()
	}
	require.NoError(t, err)
	return slot, func() {
		slot.Release()
		key.Release()
	}
}

func checkSlotKey(t *testing.T, d Device, pk *groth16.ProvingKey, rng *rand.Rand, prep ...func(Key)) {
	const n = 64
	var tau fr.Element
	tau.SetUint64(123456789)
	ctx := context.Background()
	var key Key
	slot, release := openSlot(t, ctx, d, pk, append(prep, func(k Key) { key = k })...)
	defer release()
	// A key that streams a section sums its batch additions itself too.
	sk, _ := key.(StreamedKey)
	streams := func(sec Section) bool { return sk != nil && sk.Streams(sec) }

	// H: a·b − c vanishes on the domain except by the quotient h; check
	// h(τ)·(τⁿ−1) = A(τ)B(τ) − C(τ) with A, B, C interpolated independently.
	a, b := synth.RandScalars(rng, n), synth.RandScalars(rng, n)
	c := make([]fr.Element, n)
	for j := range c {
		c[j].Mul(&a[j], &b[j])
	}
	omega, err := fft.Generator(n)
	require.NoError(t, err)
	at, bt, ct := lagrange(a, omega, tau), lagrange(b, omega, tau), lagrange(c, omega, tau)
	var want fr.Element
	want.Mul(&at, &bt)
	want.Sub(&want, &ct)
	var z fr.Element
	z.Exp(tau, big.NewInt(n))
	z.Sub(&z, new(fr.Element).SetOne())
	z.Inverse(&z)
	want.Mul(&want, &z)
	var wantH bls.G1Jac
	_, _, g1, _ := bls.Generators()
	var wb big.Int
	wantH.FromAffine(&g1)
	wantH.ScalarMultiplication(&wantH, want.BigInt(&wb))
	gotH, err := slot.ComputeH(ctx, a, b, c)
	require.NoError(t, err)
	eqG1(t, wantH, gotH, "H")

	for _, sec := range []Section{SectionL, SectionA, SectionBG1} {
		bases, _ := g1Section(pk, sec)
		ones := onesOf(len(bases), rng)
		var idx []uint32
		var s1 []fr.Element
		for i := range bases {
			if ones[i>>6]>>(uint(i)&63)&1 == 1 {
				s1 = append(s1, fr.One())
				idx = append(idx, uint32(i))
			}
		}
		got, err := slot.BatchAddG1(ctx, sec, ones)
		require.NoError(t, err)
		eqG1(t, naiveG1(bases, idx, s1), got, sec.String()+" batch add")
		if streams(sec) {
			got, err = sk.BatchAddG1(ctx, sec, ones)
			require.NoError(t, err)
			eqG1(t, naiveG1(bases, idx, s1), got, sec.String()+" batch add of the key")
		}

		tidx := []uint32{0, 3, uint32(len(bases) - 1)}
		ts := synth.RandScalars(rng, 3)
		got, err = slot.TailG1(ctx, sec, tidx, ts)
		require.NoError(t, err)
		eqG1(t, naiveG1(bases, tidx, ts), got, sec.String()+" tail")

		full := synth.RandScalars(rng, len(bases)-1)
		got, err = slot.TailG1(ctx, sec, nil, full)
		require.NoError(t, err)
		eqG1(t, naiveG1(bases, nil, full), got, sec.String()+" full")

		_, err = slot.TailG1(ctx, sec, []uint32{2, 1}, ts[:2])
		require.ErrorIs(t, err, ErrBadArgument)
		_, err = slot.BatchAddG1(ctx, sec, ones[:0])
		require.ErrorIs(t, err, ErrBadArgument)
	}
	if streams(SectionL) {
		// Concurrent requests, summed alone or together in one pass.
		var wg sync.WaitGroup
		for range 4 {
			ones := onesOf(len(pk.L), rng)
			var idx []uint32
			var s1 []fr.Element
			for i := range pk.L {
				if ones[i>>6]>>(uint(i)&63)&1 == 1 {
					idx, s1 = append(idx, uint32(i)), append(s1, fr.One())
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := sk.BatchAddG1(ctx, SectionL, ones)
				if assert.NoError(t, err) {
					eqG1(t, naiveG1(pk.L, idx, s1), got, "L batch add of the key, concurrent")
				}
			}()
		}
		wg.Wait()
		done, cancel := context.WithCancel(ctx)
		cancel()
		_, err := sk.BatchAddG1(done, SectionL, onesOf(len(pk.L), rng))
		require.ErrorIs(t, err, context.Canceled)
	}
	ones := onesOf(len(pk.BG2), rng)
	var idx []uint32
	var s1 []fr.Element
	for i := range pk.BG2 {
		if ones[i>>6]>>(uint(i)&63)&1 == 1 {
			s1 = append(s1, fr.One())
			idx = append(idx, uint32(i))
		}
	}
	got2, err := slot.BatchAddG2(ctx, ones)
	require.NoError(t, err)
	eqG2(t, naiveG2(pk.BG2, idx, s1), got2, "B_G2 batch add")
	if streams(SectionBG2) {
		got2, err = sk.BatchAddG2(ctx, ones)
		require.NoError(t, err)
		eqG2(t, naiveG2(pk.BG2, idx, s1), got2, "B_G2 batch add of the key")
	}
	tidx := []uint32{1, 2, 29}
	ts := synth.RandScalars(rng, 3)
	got2, err = slot.TailG2(ctx, tidx, ts)
	require.NoError(t, err)
	eqG2(t, naiveG2(pk.BG2, tidx, ts), got2, "B_G2 tail")
	_, err = slot.TailG2(ctx, []uint32{30}, ts[:1])
	require.ErrorIs(t, err, ErrBadArgument)
	_, err = slot.BatchAddG1(ctx, SectionBG2, nil)
	require.ErrorIs(t, err, ErrBadArgument)
	checkReadBasesG2(t, slot, pk)
}

// checkReadBasesG2 checks that a slot copies out exactly the B_G2 bases
// asked for and rejects indices out of order or range.
func checkReadBasesG2(t *testing.T, slot Slot, pk *groth16.ProvingKey) {
	t.Helper()
	ctx := context.Background()
	rd, ok := slot.(G2Reader)
	require.True(t, ok, "the slot reads B_G2 bases")
	n := len(pk.BG2)
	require.GreaterOrEqual(t, n, 3, "the key's B_G2 bases")
	// A scattered set for any n: two of the first, one in the middle and
	// the last two, increasing and without repeats.
	scattered := []uint32{1, 2, uint32(n / 2), uint32(n - 2), uint32(n - 1)}
	slices.Sort(scattered)
	scattered = slices.Compact(scattered)
	for _, idx := range [][]uint32{{0}, {uint32(n - 1)}, scattered, {}} {
		dst := make([]bls.G2Affine, len(idx))
		require.NoError(t, rd.ReadBasesG2(ctx, idx, dst))
		for j, i := range idx {
			require.True(t, dst[j].Equal(&pk.BG2[i]), "base %d (index %d of %v)", j, i, idx)
		}
	}
	two := make([]bls.G2Affine, 2)
	require.ErrorIs(t, rd.ReadBasesG2(ctx, []uint32{3, 3}, two), ErrBadArgument)
	require.ErrorIs(t, rd.ReadBasesG2(ctx, []uint32{0, uint32(n)}, two), ErrBadArgument)
	require.ErrorIs(t, rd.ReadBasesG2(ctx, []uint32{0}, two), ErrBadArgument)
}

func TestCPUDevice(t *testing.T) {
	d := NewCPU(CPUOptions{Threads: 2})
	defer d.Close()
	checkSlot(t, d)
	assert.Equal(t, int64(0), d.Budget().Used(), "slot released")
}

// checkReadBasesG2's index sets are valid for keys of few B_G2 bases (the
// witness-pass tests' keys hold ten).
func TestReadBasesG2SmallKeys(t *testing.T) {
	d := NewCPU(CPUOptions{Threads: 2})
	defer d.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	var tau fr.Element
	tau.SetUint64(42)
	for _, nB := range []int{3, 4, 5, 10} {
		pk := testKey(t, rng, 8, 4, 4, nB, tau)
		slot, release := openSlot(t, context.Background(), d, pk)
		checkReadBasesG2(t, slot, pk)
		release()
	}
}

// The CUDA device equals the independent references of checkSlot. Skipped
// without libc2cuda or a GPU (set C2_CUDA_LIB to the library).
func TestCUDADevice(t *testing.T) {
	devs, err := OpenCUDA(nil, 1<<30, 0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	// Indexed tails of three points run as two pieces.
	defer func(n int) { tailPiece = n }(tailPiece)
	tailPiece = 2
	// A budget too small for the key streams it from pinned host memory,
	// batch additions in chunks of a few bitmap words.
	t.Run("streamed", func(t *testing.T) {
		c := devs[0].(*CUDA)
		rng := rand.New(rand.NewPCG(1, 2))
		pk := slotTestKey(t, rng)
		sc := c.withBudget(c.slotBytes(pk, false, 0, false) + 1000)
		defer func(n int) { batchChunk = n }(batchChunk)
		batchChunk = 64
		checkSlotKey(t, sc, pk, rng)
		assert.Zero(t, sc.Budget().Used(), "key and slot released")
	})
	// A streamed key whose slots stage ComputeH in two vectors. At this
	// size a slot's largest call is not ComputeH, so a slot of three
	// vectors is no larger and the key chooses three (TestSmallCard32GiB
	// checks the choice at 32 GiB); the test marks the key by hand.
	t.Run("streamed in two vectors", func(t *testing.T) {
		c := devs[0].(*CUDA)
		rng := rand.New(rand.NewPCG(3, 4))
		pk := slotTestKey(t, rng)
		sc := c.withBudget(c.slotBytes(pk, false, 0, true) + 1000)
		key, err := sc.LoadKey(context.Background(), pk)
		require.NoError(t, err)
		require.Equal(t, c.slotBytes(pk, false, 0, false) > sc.room(), key.(*cudaKey).twoVectors)
		key.Release()
		checkSlotKey(t, sc, pk, rng, func(k Key) { k.(*cudaKey).twoVectors = true })
		assert.Zero(t, sc.Budget().Used(), "key and slot released")
	})
	// Room beside one slot of a streamed key for some of its sections:
	// they go to the device, H and the others stream.
	t.Run("streamed, sections on the device", func(t *testing.T) {
		c := devs[0].(*CUDA)
		rng := rand.New(rand.NewPCG(5, 6))
		pk := slotTestKey(t, rng)
		// A byte short of the key and a slot: streamed, with room for
		// sections beside a streamed slot.
		budget := keyBytes(pk) + c.slotBytes(pk, true, 0, false) - 1
		require.Less(t, c.slotBytes(pk, false, 0, false)+sectionBytes(pk, SectionBG1), budget)
		sc := c.withBudget(budget)
		key, err := sc.LoadKey(context.Background(), pk)
		require.NoError(t, err)
		k := key.(*cudaKey)
		on := k.onDevice()
		require.False(t, k.resident)
		require.NotZero(t, on)
		require.Equal(t, sc.planSections(k)|on, on)
		require.False(t, on.has(SectionH))
		key.Release()
		require.Zero(t, sc.Budget().Used(), "sections released with the key")
		checkSlotKey(t, sc, pk, rng)
		assert.Zero(t, sc.Budget().Used(), "key and slot released")
	})
	// A streamed key that sums its streamed sections' batch additions
	// itself, in chunks of 64 G1 bases (L's 100 in two) and 64 G2 bases.
	// The budget has no room for its chunk buffers (TestSectionsOnSmallCards
	// checks that choice), so the test opens them by hand.
	t.Run("streamed, batch additions of the key", func(t *testing.T) {
		c := devs[0].(*CUDA)
		rng := rand.New(rand.NewPCG(7, 8))
		pk := slotTestKey(t, rng)
		sc := c.withBudget(c.slotBytes(pk, false, 0, false) + 1000)
		defer func(n int64) { streamChunkBytes = n }(streamChunkBytes)
		streamChunkBytes = 64 * g1Size
		checkSlotKey(t, sc, pk, rng, func(key Key) {
			k := key.(*cudaKey)
			require.False(t, k.resident)
			require.Nil(t, k.stream, "no room for the key's own batch additions")
			res, _ := sc.budget.TryReserve(0)
			require.NoError(t, k.openStream(res))
			for _, sec := range []Section{SectionL, SectionA, SectionBG1, SectionBG2} {
				require.True(t, k.Streams(sec), sec)
			}
		})
		assert.Zero(t, sc.Budget().Used(), "key and slot released")
	})
	for _, d := range devs {
		t.Run(d.Info().Name, func(t *testing.T) {
			checkSlot(t, d)
			assert.Zero(t, d.Budget().Used(), "key and slot released")
			require.NoError(t, d.Close())
			_, err := d.LoadKey(context.Background(), &groth16.ProvingKey{H: make([]bls.G1Affine, 1)})
			require.ErrorIs(t, err, ErrClosed)
		})
	}
}

// The slot estimate of the CUDA device covers H's three vectors and grows
// with the domain; a key too large for the budget is streamed.
func TestCUDASlotBytes(t *testing.T) {
	c := &CUDA{name: "cuda:test", budget: pool.NewBudget("cuda:test", 100<<20)}
	small := &groth16.ProvingKey{H: make([]bls.G1Affine, 1<<10-1), L: make([]bls.G1Affine, 1000), A: make([]bls.G1Affine, 900)}
	big := &groth16.ProvingKey{H: make([]bls.G1Affine, 1<<16-1), L: make([]bls.G1Affine, 60000), A: make([]bls.G1Affine, 50000)}
	s1, s2 := c.slotBytes(small, true, 0, false), c.slotBytes(big, true, 0, false)
	assert.GreaterOrEqual(t, s1, int64(3<<10*32))
	assert.Greater(t, s2, s1)
	assert.GreaterOrEqual(t, c.slotBytes(big, false, 0, false), s2, "streamed keys copy whole sections")
	assert.GreaterOrEqual(t, c.slotBytes(big, true, 70000, false), s2+70000*32, "witness slots add w beside a, b, c")
	key, err := c.LoadKey(context.Background(), big)
	require.NoError(t, err)
	assert.False(t, key.(*cudaKey).resident)
	assert.True(t, key.(*cudaKey).urgent, "a 2^16 domain runs on the urgent streams")
	assert.Zero(t, c.budget.Used())
	_, err = c.Acquire(context.Background(), key)
	var ob *pool.OverBudgetError
	require.ErrorAs(t, err, &ob, "a slot larger than the device fails at once")
	key.Release()
}

// Two keys whose slots do not fit the budget together take turns: the
// first slot of one waits while the other's slots are in use, then frees
// an idle one of them and takes its room; the released key is forgotten.
// No GPU: streamed keys' slots without an R1CS hold only their budget
// reservations.
func TestCUDASlotsTakeTurns(t *testing.T) {
	ctx := context.Background()
	newKey := func() *groth16.ProvingKey {
		return &groth16.ProvingKey{H: make([]bls.G1Affine, 1<<16-1), L: make([]bls.G1Affine, 60000), A: make([]bls.G1Affine, 50000)}
	}
	sb := (&CUDA{}).slotBytes(newKey(), false, 0, false)
	c := &CUDA{name: "cuda:test", budget: pool.NewBudget("cuda:test", 2*sb+sb/2)}
	c.SetSlots(2)
	// Keys as LoadKey streams them (no device to upload to here).
	k1, k2 := c.newKey(newKey()), c.newKey(newKey())
	defer k1.Release()
	defer k2.Release()
	require.Equal(t, sb, c.SlotBytes(k1))

	s1, err := c.Acquire(ctx, k1)
	require.NoError(t, err)
	s2, err := c.Acquire(ctx, k1)
	require.NoError(t, err)
	require.Equal(t, 2*sb, c.budget.Pinned())

	got := make(chan error, 1)
	go func() {
		s, err := c.Acquire(ctx, k2)
		if err == nil {
			s.Release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second key's slot came (%v) while the first key's slots were in use", err)
	case <-time.After(50 * time.Millisecond):
	}
	s1.Release()
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a released slot of the first key did not make room for the second")
	}
	assert.Equal(t, 1, k1.made, "one slot of the first key freed")
	assert.Equal(t, 2*sb, c.budget.Pinned(), "the second key's slot holds its room")

	// The first key's own slot comes back as before; a second one takes
	// the room of the second key's idle slot.
	s2.Release()
	a, err := c.Acquire(ctx, k1)
	require.NoError(t, err)
	b, err := c.Acquire(ctx, k1)
	require.NoError(t, err, "a second slot of the first key")
	assert.Zero(t, k2.made, "the second key's idle slot freed")
	a.Release()
	b.Release()
	k2.Release()
	c.mu.Lock()
	_, known := c.keys[k2]
	c.mu.Unlock()
	assert.False(t, known, "a released key is no longer evicted from")

	// Two keys making their first slots where pinned memory leaves room
	// for neither are refused, not left waiting for each other.
	k1.Release()
	require.Zero(t, c.budget.Used())
	other, ok := c.budget.TryReserve(c.budget.Total() - sb/2)
	require.True(t, ok)
	other.Pin()
	defer other.Release()
	k3, k4 := c.newKey(newKey()), c.newKey(newKey())
	defer k3.Release()
	defer k4.Release()
	errs := make(chan error, 2)
	for _, k := range []*cudaKey{k3, k4} {
		go func() {
			s, err := c.Acquire(ctx, k)
			if err == nil {
				s.Release()
			}
			errs <- err
		}()
	}
	for range 2 {
		select {
		case err := <-errs:
			var ob *pool.OverBudgetError
			require.ErrorAs(t, err, &ob)
		case <-time.After(10 * time.Second):
			t.Fatal("first slots in too little room waited for each other")
		}
	}
}

// BenchmarkCUDATail times the tail-MSM paths of the CUDA device (gathered
// host bases, resident full MSM, batch addition) against the CPU tail at the
// sizes PoRep partitions produce. Skipped without a GPU.
func BenchmarkCUDATail(b *testing.B) {
	devs, err := OpenCUDA(nil, 1<<30, 0)
	if err != nil {
		b.Skipf("no CUDA device: %v", err)
	}
	d := devs[0]
	defer d.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	_, _, g1, _ := bls.Generators()
	for _, logn := range []int{14, 17, 20} {
		n := 1 << logn
		pk := &groth16.ProvingKey{H: make([]bls.G1Affine, 1), L: bls.BatchScalarMultiplicationG1(&g1, synth.RandScalars(rng, 4*n))}
		key, err := d.LoadKey(ctx, pk)
		require.NoError(b, err)
		slot, err := d.Acquire(ctx, key)
		require.NoError(b, err)
		idx := make([]uint32, n)
		for i := range idx {
			idx[i] = uint32(4*i + rng.IntN(4))
		}
		sc := synth.RandScalars(rng, n)
		ones := make([]uint64, 4*n/64)
		for i := range ones {
			ones[i] = rng.Uint64()
		}
		b.Run(fmt.Sprintf("gathered-2^%d", logn), func(b *testing.B) {
			for b.Loop() {
				_, err := slot.TailG1(ctx, SectionL, idx, sc)
				require.NoError(b, err)
			}
		})
		b.Run(fmt.Sprintf("resident-full-2^%d", logn), func(b *testing.B) {
			for b.Loop() {
				_, err := slot.TailG1(ctx, SectionL, nil, sc)
				require.NoError(b, err)
			}
		})
		b.Run(fmt.Sprintf("batchadd-4x2^%d", logn), func(b *testing.B) {
			for b.Loop() {
				_, err := slot.BatchAddG1(ctx, SectionL, ones)
				require.NoError(b, err)
			}
		})
		b.Run(fmt.Sprintf("cpu-gathered-2^%d", logn), func(b *testing.B) {
			for b.Loop() {
				_, err := tailCPU(ctx, pk.L, idx, sc, 0, msm.MultiExpG1)
				require.NoError(b, err)
			}
		})
		slot.Release()
		key.Release()
	}
}

// TestMSMWindowsMirrorsLibrary pins msmWindows to the layouts that
// gpu/cuda/hosttest/digits_test.cc pins msm_pick_window to: the H200
// sweep's fastest at 2^20, 2^22 and 2^24 points, and the cap at 2^27.
func TestMSMWindowsMirrorsLibrary(t *testing.T) {
	for _, tc := range []struct {
		lg, maxC        int
		windows, widest int64
	}{
		{20, 21, 16, 16}, {22, 21, 15, 18}, {24, 21, 13, 20},
		{20, 20, 16, 16}, {22, 20, 15, 18}, {24, 20, 13, 20}, {27, 21, 13, 20},
	} {
		W, widest := msmWindows(1<<tc.lg, tc.maxC)
		if W != tc.windows || widest != tc.widest {
			t.Errorf("msmWindows(2^%d, %d) = %d windows of at most %d bits, want %d of %d",
				tc.lg, tc.maxC, W, widest, tc.windows, tc.widest)
		}
	}
}
