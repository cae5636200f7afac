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
	"github.com/sealc2/c2/r1cs"
)

// Evict refuses while a call uses the shape; afterwards it drops the key
// and the R1CS (nothing the Prover holds refers to them) and releases the
// device keys loaded from that key, of that shape only. No proving: the
// cache is filled by hand.
func TestEvictDropsOneShape(t *testing.T) {
	fake := gputest.NewFake(gputest.FakeOptions{})
	p, err := newProver(Config{}, []gpu.Device{fake})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()

	fill := func(s porep.Shape) (*groth16.ProvingKey, *r1cs.System, func()) {
		c, done := p.useShape(s)
		pk := &groth16.ProvingKey{H: make([]bls.G1Affine, 1<<10-1)} // domain 2^10
		sys := r1cs.NewSystem()
		_, err := c.pk.getCtx(ctx, func(context.Context) (*groth16.ProvingKey, error) { return pk, nil })
		require.NoError(t, err)
		_, err = c.sys.getCtx(ctx, func(context.Context) (*r1cs.System, error) { return sys, nil })
		require.NoError(t, err)
		_, err = p.key(ctx, p.devs[0], pk, sys)
		require.NoError(t, err)
		return pk, sys, done
	}
	pk, sys, done := fill(porep.Shape2KiB)
	other, _, doneOther := fill(porep.Shape8MiB)
	doneOther()
	_, keys := fake.Live()
	require.Equal(t, 2, keys)

	err = p.Evict("StackedDrg2KiBV1_1")
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
	require.ErrorIs(t, p.Evict("StackedDrg2KiBV1_1_Feat_SyntheticPoRep"), inputs.ErrUnsupported)
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
	p, err := New(Config{Backend: BackendCPU, Params: dir})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	require.ErrorIs(t, p.Preload(ctx, "StackedDrg2KiBV1_1"), ErrNoParams)
	require.ErrorIs(t, p.Preload(ctx, "StackedDrg3KiBV1_1"), inputs.ErrUnknownProof)

	require.NoError(t, os.WriteFile(filepath.Join(dir, porep.Shape2KiB.ParamsName()+".params"), nil, 0o644))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, p.Preload(cctx, "StackedDrg2KiBV1_1"), context.Canceled)
	c := p.shapes[porep.Shape2KiB.Name]
	require.NotNil(t, c)
	_, ok := c.pk.peek()
	require.False(t, ok)
	require.Zero(t, c.users)
	require.NoError(t, p.Evict("StackedDrg2KiBV1_1"))
}
