package c2

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"weak"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/gpu/gputest"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
	"github.com/sealc2/c2/update"
)

// fakeProver returns a Prover (closed at the test's end) on one fake
// device, and the device.
func fakeProver(t *testing.T) (*Prover, *gputest.Fake) {
	t.Helper()
	fake := gputest.NewFake(gputest.FakeOptions{})
	p, err := newProver(Config{}, []gpu.Device{fake})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p, fake
}

// cpuProver returns a CPU Prover (closed at the test's end) whose
// parameters are in dir.
func cpuProver(t *testing.T, dir string) *Prover {
	t.Helper()
	p, err := New(Config{Backend: BackendCPU, Params: dir})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// fillCache takes p's cache named name into use (done gives it back) and
// fills it by hand: a key of domain 2^10 (H of zero points) and an empty
// R1CS, the key loaded on p's first device.
func fillCache(t *testing.T, p *Prover, name string) (pk *groth16.ProvingKey, sys *r1cs.System, done func()) {
	t.Helper()
	ctx := context.Background()
	c, done := p.useCache(name)
	pk = &groth16.ProvingKey{H: make([]bls.G1Affine, 1<<10-1)}
	sys = r1cs.NewSystem()
	_, err := c.pk.GetCtx(ctx, func(context.Context) (*groth16.ProvingKey, error) { return pk, nil })
	require.NoError(t, err)
	_, err = c.sys.GetCtx(ctx, func(context.Context) (*r1cs.System, error) { return sys, nil })
	require.NoError(t, err)
	_, err = p.keys.Load(ctx, p.rot.Devices()[0], pk, sys)
	require.NoError(t, err)
	return pk, sys, done
}

// Evict refuses while a call uses the shape; afterwards it drops the key
// and the R1CS (nothing the Prover holds refers to them) and releases the
// device keys loaded from that key, of that shape only. No proving: the
// cache is filled by hand.
func TestEvictDropsOneShape(t *testing.T) {
	p, fake := fakeProver(t)
	ctx := context.Background()

	fill := func(s porep.Shape) (*groth16.ProvingKey, *r1cs.System, func()) { return fillCache(t, p, s.Name) }
	pk, sys, done := fill(porep.Shape2KiB)
	other, _, doneOther := fill(porep.Shape8MiB)
	doneOther()
	_, keys := fake.Live()
	require.Equal(t, 2, keys)

	err := p.Evict("StackedDrg2KiBV1_1")
	require.ErrorIs(t, err, ErrShapeInUse, "a call holds the shape")
	require.Contains(t, p.shapes, porep.Shape2KiB.Name)
	done()
	done() // idempotent: the count does not go below zero
	require.Zero(t, p.shapes[porep.Shape2KiB.Name].users)

	wpk, wsys := weak.Make(pk), weak.Make(sys)
	pk, sys = nil, nil
	runtime.GC()
	require.NotNil(t, wpk.Value(), "the cached key is held")

	require.NoError(t, p.Evict("StackedDrg2KiBV1")) // V1 and V1_1 share the shape
	require.NotContains(t, p.shapes, porep.Shape2KiB.Name)
	require.Contains(t, p.shapes, porep.Shape8MiB.Name, "other shapes stay")
	_, keys = fake.Live()
	require.Equal(t, 1, keys, "the evicted shape's device key is released")
	runtime.GC()
	require.True(t, wpk.Value() == nil, "the key is no longer referenced")
	require.True(t, wsys.Value() == nil, "the R1CS is no longer referenced")
	require.NoError(t, p.Evict("StackedDrg2KiBV1_1"), "a shape not cached")

	require.ErrorIs(t, p.Evict("StackedDrg4KiBV1"), inputs.ErrUnknownProof)
	require.NoError(t, p.Evict("StackedDrg2KiBV1_1_Feat_SyntheticPoRep"), "the 2 KiB shape, no longer cached")
	runtime.KeepAlive(other)

	require.NoError(t, p.Close())
	_, keys = fake.Live()
	require.Zero(t, keys)
	require.ErrorIs(t, p.Evict("StackedDrg8MiBV1_1"), ErrClosed)
	require.ErrorIs(t, p.Preload(ctx, "StackedDrg8MiBV1_1"), ErrClosed)
}

// Preload fails without parameters or a known proof name, and a cancelled
// Preload caches nothing and leaves the shape unused.
func TestPreloadErrors(t *testing.T) {
	dir := t.TempDir()
	p := cpuProver(t, dir)
	ctx := context.Background()
	require.ErrorIs(t, p.Preload(ctx, "StackedDrg2KiBV1_1"), ErrNoParams)
	require.ErrorIs(t, p.Preload(ctx, "StackedDrg3KiBV1_1"), inputs.ErrUnknownProof)

	require.NoError(t, os.WriteFile(filepath.Join(dir, porep.Shape2KiB.ParamsName()+".params"), nil, 0o644))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, p.Preload(cctx, "StackedDrg2KiBV1_1"), context.Canceled)
	c := p.shapes[porep.Shape2KiB.Name]
	require.NotNil(t, c)
	_, ok := c.pk.Peek()
	require.False(t, ok)
	require.Zero(t, c.users)
	require.NoError(t, p.Evict("StackedDrg2KiBV1_1"))
}

// EvictPoSt and EvictUpdate drop the cache their circuit's Prove calls
// use (V1 and V1_2 Window proofs share one), refuse while a call holds it,
// release its device keys and leave the other caches; unknown names are
// refused with the kind's InputError. No proving: the caches are filled by
// hand.
func TestEvictPoStUpdate(t *testing.T) {
	p, fake := fakeProver(t)
	ctx := context.Background()

	window, _ := post.ShapeByName("StackedDrgWindow2KiBV1_2")
	winning, _ := post.ShapeByName("StackedDrgWinning2KiBV1")
	snap, _ := update.ShapeByName("StackedDrg2KiBV1")
	fill := func(c vanillaCircuit) (*groth16.ProvingKey, func()) {
		pk, _, done := fillCache(t, p, c.cache)
		return pk, done
	}
	wpk, doneWindow := fill(postCircuits.circuit(p, window))
	_, doneWinning := fill(postCircuits.circuit(p, winning))
	_, doneSnap := fill(updateCircuits.circuit(p, snap))
	doneWinning()
	_, keys := fake.Live()
	require.Equal(t, 3, keys)

	err := p.EvictPoSt("StackedDrgWindow2KiBV1") // V1 shares V1_2's circuit
	require.ErrorIs(t, err, ErrShapeInUse)
	require.ErrorContains(t, err, "StackedDrgWindow2KiBV1")
	require.ErrorIs(t, p.EvictUpdate("StackedDrg2KiBV1"), ErrShapeInUse)
	doneWindow()
	doneSnap()
	doneSnap() // idempotent

	require.NoError(t, p.EvictPoSt("StackedDrgWindow2KiBV1"))
	require.NotContains(t, p.shapes, postCircuits.circuit(p, window).cache)
	require.Contains(t, p.shapes, postCircuits.circuit(p, winning).cache, "Winning's circuit stays")
	_, keys = fake.Live()
	require.Equal(t, 2, keys, "the evicted circuit's device key is released")
	require.NoError(t, p.EvictPoSt("StackedDrgWindow2KiBV1_2"), "a circuit not cached")
	require.NoError(t, p.EvictUpdate("StackedDrg2KiBV1"))
	require.NotContains(t, p.shapes, updateCircuits.circuit(p, snap).cache)
	_, keys = fake.Live()
	require.Equal(t, 1, keys)
	runtime.KeepAlive(wpk)

	var pie *post.InputError
	var uie *update.InputError
	require.ErrorAs(t, p.EvictPoSt("StackedDrg2KiBV1"), &pie, "an update (and PoRep) name")
	require.ErrorAs(t, p.EvictUpdate("StackedDrgWindow2KiBV1"), &uie)
	require.ErrorAs(t, p.PreloadPoSt(ctx, "StackedDrgWindow3KiBV1"), &pie)
	require.ErrorAs(t, p.PreloadUpdate(ctx, "StackedDrg2KiBV1_1"), &uie)

	require.NoError(t, p.Close())
	require.ErrorIs(t, p.EvictPoSt("StackedDrgWinning2KiBV1"), ErrClosed)
	require.ErrorIs(t, p.EvictUpdate("StackedDrg2KiBV1"), ErrClosed)
	require.ErrorIs(t, p.PreloadPoSt(ctx, "StackedDrgWinning2KiBV1"), ErrClosed)
	require.ErrorIs(t, p.PreloadUpdate(ctx, "StackedDrg2KiBV1"), ErrClosed)
}

// PreloadPoSt and PreloadUpdate fail without parameters, naming the
// official file; a cancelled one caches nothing and leaves the circuit
// unused.
func TestPreloadPoStUpdateErrors(t *testing.T) {
	dir := t.TempDir()
	p := cpuProver(t, dir)
	ctx := context.Background()
	window, _ := post.ShapeByName("StackedDrgWindow2KiBV1_2")
	snap, _ := update.ShapeByName("StackedDrg2KiBV1")

	err := p.PreloadPoSt(ctx, "StackedDrgWindow2KiBV1")
	require.ErrorIs(t, err, ErrNoParams)
	require.ErrorContains(t, err, window.ParamsName())
	err = p.PreloadUpdate(ctx, "StackedDrg2KiBV1")
	require.ErrorIs(t, err, ErrNoParams)
	require.ErrorContains(t, err, snap.ParamsName())

	for _, c := range []struct {
		file    string
		preload func(context.Context) error
		cache   string
	}{
		{window.ParamsName(), func(ctx context.Context) error { return p.PreloadPoSt(ctx, window.Name) }, postCircuits.circuit(p, window).cache},
		{snap.ParamsName(), func(ctx context.Context) error { return p.PreloadUpdate(ctx, snap.Name) }, updateCircuits.circuit(p, snap).cache},
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, c.file+".params"), nil, 0o644))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, c.preload(cctx), context.Canceled)
		cache := p.shapes[c.cache]
		require.NotNil(t, cache)
		_, ok := cache.pk.Peek()
		require.False(t, ok)
		require.Zero(t, cache.users)
	}
	require.NoError(t, p.EvictPoSt(window.Name))
	require.NoError(t, p.EvictUpdate(snap.Name))
}
