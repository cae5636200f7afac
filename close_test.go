package c2

import (
	"context"
	"os"
	"runtime"
	"testing"
	"weak"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// shape returns the cache of shape s as a Prove call finds it.
func (p *Prover) shape(s porep.Shape) *shapeCache {
	p.shapesMu.Lock()
	defer p.shapesMu.Unlock()
	return p.cacheLocked(s.Name)
}

// Close releases the proving keys and R1CS of every shape: nothing the
// Prover holds refers to them any more (they used to stay reachable until
// the Prover itself was dropped), and Prove after Close fails at once.
func TestCloseDropsShapes(t *testing.T) {
	p, err := New(Config{Backend: BackendCPU})
	require.NoError(t, err)
	pk := &groth16.ProvingKey{H: make([]bls.G1Affine, 1<<16)}
	sys := r1cs.NewSystem()
	wpk, wsys := weak.Make(pk), weak.Make(sys)
	c := p.shape(porep.Shape2KiB)
	_, err = c.pk.GetCtx(context.Background(), func(context.Context) (*groth16.ProvingKey, error) { return pk, nil })
	require.NoError(t, err)
	_, err = c.sys.GetCtx(context.Background(), func(context.Context) (*r1cs.System, error) { return sys, nil })
	require.NoError(t, err)
	pk, sys, c = nil, nil, nil
	runtime.GC()
	require.NotNil(t, wpk.Value(), "the open Prover keeps its key")

	require.NoError(t, p.Close())
	runtime.GC()
	require.True(t, wpk.Value() == nil, "the key is released by Close")
	require.True(t, wsys.Value() == nil, "the R1CS is released by Close")

	raw, err := os.ReadFile("testdata/refgen/out/porep-2k/c1.json")
	require.NoError(t, err)
	_, err = p.Prove(context.Background(), raw)
	require.ErrorIs(t, err, ErrClosed)
	require.Empty(t, p.shapes, "a call after Close caches nothing")
	runtime.KeepAlive(p)
}
