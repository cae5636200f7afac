package stage

import (
	"context"
	"crypto/rand"
	mrand "math/rand/v2"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/gpu/gputest"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/route"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// squares is a circuit of m rows b·(1−b) = 0 and v·v = w: B takes the bits
// (0 or 1, its batch addition) and the values v, its tail, except where
// seed makes v 0 or 1 (every seventh row from row seed%7 when seed > 0), so
// that partitions' tails differ a little, as a PoRep's may.
func squares(m int, seed uint64) *r1cs.System {
	rng := mrand.New(mrand.NewPCG(seed, 7))
	s := r1cs.NewSystem()
	for j := range m {
		var bit, v, w fr.Element
		bit.SetUint64(uint64(rng.IntN(2)))
		v.SetUint64(rng.Uint64() | 2)
		if seed > 0 && j%7 == int(seed%7) {
			v.SetUint64(uint64(j % 2))
		}
		w.Square(&v)
		b, x, y := s.Alloc(bit), s.Alloc(v), s.Alloc(w)
		s.Enforce(r1cs.LC{}.AddVar(b), r1cs.LC{}.AddVar(r1cs.One).SubVar(b), r1cs.LC{})
		s.Enforce(r1cs.LC{}.AddVar(x), r1cs.LC{}.AddVar(x), r1cs.LC{}.AddVar(y))
	}
	s.Finalize()
	return s
}

// shareRunner returns a Runner over one fake device of the given host share
// (G2 on the device) and that device. Its CPU MSMs may use every core, so
// that the share is the device's fraction whatever the machine.
func shareRunner(t *testing.T, frac float64, faults ...gputest.Fault) (*Runner, *route.Device, *gputest.Fake) {
	t.Helper()
	fake := gputest.NewFake(gputest.FakeOptions{G2: true, HostG2: frac, Faults: faults})
	t.Cleanup(func() { fake.Close() })
	keys := route.NewKeys(nil)
	t.Cleanup(keys.Close)
	host := pool.New(pool.NewBudget("host", 1<<30), nil)
	t.Cleanup(host.Close)
	return New(keys, host, Options{Workers: 2}), route.New([]gpu.Device{fake}, route.Options{Ahead: 1}).Devices()[0], fake
}

// Beside a device that runs G2 and leaves a share to the host, the first
// partition copies the bases of the first half of its B_G2 tail; every
// later one sums the entries on them on the host and leaves the rest, with
// entries its tail has and the share's lacks, to the device. Every proof
// verifies.
func TestHostShareG2(t *testing.T) {
	defer func(n int) { minShare = n }(minShare)
	minShare = 8
	const m = 64
	// The first partition's tail lacks row 3's v (and every seventh after
	// it): the share lacks those bases, and the others' entries there go
	// to the device.
	parts := []*r1cs.System{squares(m, 3)}
	for _, seed := range []uint64{0, 1, 2, 4} {
		parts = append(parts, squares(m, seed))
	}
	r, _ := proveShared(t, parts, func(r *Runner, pk *groth16.ProvingKey, i int) {
		if i > 0 {
			return
		}
		require.Zero(t, r.o.Times.BG2.Load(), "the first partition finds no bases on the host")
		idx, bases, ok := r.takeShare(pk).ready()
		require.True(t, ok, "the first partition fills the share")
		require.Len(t, idx, (m-m/7)/2, "half of the tail")
		for j, x := range idx {
			require.True(t, bases[j].Equal(&pk.BG2[x]), "base %d", j)
		}
		r.shares[pk].drop()
	})
	require.Positive(t, r.o.Times.BG2.Load(), "later partitions sum their share on the host")
}

// proveShared proves parts in order with a key of the first, beside a fake
// device that leaves half of B_G2's tail to the host, checks that every
// proof verifies and calls after (if not nil) after each; it returns the
// runner and the key.
func proveShared(t *testing.T, parts []*r1cs.System, after func(r *Runner, pk *groth16.ProvingKey, i int)) (*Runner, *groth16.ProvingKey) {
	t.Helper()
	pk, err := groth16.Setup(parts[0], rand.Reader)
	require.NoError(t, err)
	r, d, _ := shareRunner(t, 0.5)
	for i, sys := range parts {
		proof, err := r.Prove(context.Background(), d, pk, sys, nil)
		require.NoError(t, err, "partition %d", i)
		require.NoError(t, groth16.Verify(&pk.VK, &proof, sys.Inputs()[1:]), "partition %d", i)
		if after != nil {
			after(r, pk, i)
		}
	}
	return r, pk
}

// A share that cannot be copied stays off, and the device keeps the whole
// tail: the proofs still verify. Serial runs never share.
func TestHostShareG2Off(t *testing.T) {
	defer func(n int) { minShare = n }(minShare)
	minShare = 8
	parts := []*r1cs.System{squares(40, 0), squares(40, 1), squares(40, 2)}
	pk, err := groth16.Setup(parts[0], rand.Reader)
	require.NoError(t, err)
	// The first B_G2 tail call is the first partition's TailG2, the
	// second its ReadBasesG2.
	r, d, fake := shareRunner(t, 0.5, gputest.Fault{Stage: gpu.StageTail, Section: gpu.SectionBG2, Skip: 1, Err: gpu.ErrKernel})
	ctx := context.Background()
	for i, sys := range parts {
		proof, err := r.Prove(ctx, d, pk, sys, nil)
		require.NoError(t, err, "partition %d", i)
		require.NoError(t, groth16.Verify(&pk.VK, &proof, sys.Inputs()[1:]), "partition %d", i)
	}
	require.Zero(t, r.o.Times.BG2.Load())
	require.Equal(t, shareOff, r.shares[pk].state)
	require.Equal(t, 4*len(parts)+1, fake.Calls(gpu.StageTail), "four tails a partition and the failed copy, once")

	serial, d2, _ := shareRunner(t, 0.5)
	serial.o.Serial = true
	for _, sys := range parts {
		_, err := serial.Prove(ctx, d2, pk, sys, nil)
		require.NoError(t, err)
	}
	require.Empty(t, serial.shares)
}

// The least recently used share is evicted beyond maxShares; a share in
// use keeps its bases until its last user drops it.
func TestHostShareEviction(t *testing.T) {
	r, _, _ := shareRunner(t, 0.5)
	pks := make([]*groth16.ProvingKey, maxShares+1)
	for i := range pks {
		pks[i] = new(groth16.ProvingKey)
	}
	first := r.takeShare(pks[0])
	require.True(t, first.claim())
	buf, err := r.host.Get(context.Background(), 1000)
	require.NoError(t, err)
	first.mu.Lock()
	first.buf, first.state = buf, shareReady
	first.mu.Unlock()
	for _, pk := range pks[1:] {
		r.takeShare(pk).drop()
	}
	require.Len(t, r.shares, maxShares)
	_, kept := r.shares[pks[0]]
	require.False(t, kept, "the oldest share is evicted")
	require.Equal(t, shareOff, first.state)
	require.NotNil(t, first.buf, "in use: its bases stay")
	first.drop()
	require.Nil(t, first.buf, "released with its last user")
}

// A fraction is kept when the host's sum may use every core and scaled
// down by the cores it may use otherwise.
func TestShareOf(t *testing.T) {
	for _, c := range []struct {
		threads, procs int
		want           float64
	}{{0, 16, 0.5}, {16, 16, 0.5}, {32, 16, 0.5}, {8, 16, 0.25}, {1, 2, 0.25}, {-1, 4, 0.5}} {
		require.InDelta(t, c.want, shareOf(0.5, c.threads, c.procs), 1e-12, "%d threads of %d", c.threads, c.procs)
	}
}

// A share's prefix halves after a late host sum, drops to none below
// minShare, and grows back by an eighth of the share a partition on time,
// never beyond the share; a share not ready does not move.
func TestShareAdapt(t *testing.T) {
	defer func(n int) { minShare = n }(minShare)
	minShare = 11
	sh := &g2Share{state: shareReady, idx: make([]uint32, 160), bases: make([]bls.G2Affine, 160), use: 160}
	uses := func() int {
		idx, bases, ok := sh.ready()
		require.True(t, ok)
		require.Len(t, bases, len(idx))
		return len(idx)
	}
	var got []int
	for _, late := range []bool{true, true, true, true, false, false, true, false, false, false, false, false, false, false, false} {
		sh.adapt(late)
		got = append(got, uses())
	}
	require.Equal(t, []int{80, 40, 20, 0, 20, 40, 20, 40, 60, 80, 100, 120, 140, 160, 160}, got)

	sh = &g2Share{state: shareFilling}
	sh.adapt(false)
	require.Zero(t, sh.use)
	_, _, ok := sh.ready()
	require.False(t, ok)
}

// Partitions that count every wait for their host sum as late shrink the
// share they use, and the waits are summed in Times.BG2Wait; every proof
// still verifies whatever prefix it used.
func TestHostShareG2Late(t *testing.T) {
	defer func(n int, d time.Duration) { minShare, lateTolerance = n, d }(minShare, lateTolerance)
	minShare, lateTolerance = 8, -1
	const m = 64
	parts := []*r1cs.System{squares(m, 0)}
	for _, seed := range []uint64{1, 2, 4, 5, 6} {
		parts = append(parts, squares(m, seed))
	}
	r, pk := proveShared(t, parts, nil)
	sh := r.shares[pk]
	require.Equal(t, shareReady, sh.state)
	require.Less(t, sh.use, len(sh.idx), "late sums shrink the prefix")
	require.Positive(t, r.o.Times.BG2Wait.Load(), "the waits are counted")
}
