package groth16

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"
)

// A ParamsFile reads any piece of any section exactly as ReadParams reads
// the whole key, and its key without bases carries the verifying key and
// the sizes.
func TestParamsFilePieces(t *testing.T) {
	shape := keyShape{ic: 3, h: 1000, l: 700, a: 500, b: 300}
	pk := randomKey(5, shape, true)
	path := filepath.Join(t.TempDir(), "k.params")
	require.NoError(t, os.WriteFile(path, encode(t, pk), 0o644))
	ctx := context.Background()
	f, err := OpenParams(ctx, path)
	require.NoError(t, err)
	defer f.Close()
	k := f.Key()
	require.False(t, k.HostBases())
	require.Equal(t, pk.Sizes(), k.Sizes())
	require.Equal(t, pk.VK, k.VK)
	require.Same(t, k, f.Key())

	lay := f.Layout()
	for _, s := range []struct {
		sec  Section
		want []bls.G1Affine
	}{{lay.H, pk.H}, {lay.L, pk.L}, {lay.A, pk.A}, {lay.BG1, pk.BG1}} {
		for _, r := range [][2]int{{0, len(s.want)}, {17, min(400, len(s.want))}, {len(s.want) - 1, len(s.want)}, {5, 5}} {
			dst := make([]bls.G1Affine, r[1]-r[0])
			require.NoError(t, f.ReadG1(ctx, s.sec, r[0], dst))
			require.Equal(t, s.want[r[0]:r[1]], dst)
		}
	}
	dst2 := make([]bls.G2Affine, 123)
	require.NoError(t, f.ReadG2(ctx, 100, dst2))
	require.Equal(t, pk.BG2[100:223], dst2)

	require.Error(t, f.ReadG1(ctx, lay.H, 990, make([]bls.G1Affine, 11)), "past the end")
	require.Error(t, f.ReadG1(ctx, lay.BG2, 0, make([]bls.G1Affine, 1)), "not a G1 section")
	all, err := f.ReadAll(ctx)
	require.NoError(t, err)
	require.Equal(t, pk.H, all.H)
	require.Equal(t, pk.BG2, all.BG2)

	require.NoError(t, f.Close())
	require.ErrorIs(t, f.ReadG1(ctx, lay.H, 0, make([]bls.G1Affine, 1)), ErrParamsClosed)
	require.NoError(t, f.Close())
}

// A bad point is reported with its file offset when its piece is read,
// subgroup included unless the file is trusted; a bad verifying key fails
// at open.
func TestParamsFileBadPoints(t *testing.T) {
	shape := keyShape{ic: 2, h: 150, l: 2, a: 2, b: 170}
	r := rand.New(rand.NewPCG(9, 9))
	good := encode(t, randomKey(9, shape, false))
	lay, err := ScanParams(bytes.NewReader(good), int64(len(good)))
	require.NoError(t, err)
	dir := t.TempDir()
	ctx := context.Background()

	b := bytes.Clone(good)
	off := lay.H.Offset + 97*int64(lay.H.PointSize)
	corruptions[len(corruptions)-1].apply(r, b[off:off+int64(lay.H.PointSize)]) // off the subgroup
	path := filepath.Join(dir, "sub.params")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	f, err := OpenParams(ctx, path)
	require.NoError(t, err)
	require.NoError(t, f.ReadG1(ctx, lay.H, 0, make([]bls.G1Affine, 90)), "the bad point is not in this piece")
	fe := requireFormatError(t, f.ReadG1(ctx, lay.H, 90, make([]bls.G1Affine, 20)), "h", off, ErrNotInSubgroup)
	require.Equal(t, path, fe.File)
	f.Close()
	f, err = OpenParams(ctx, path, TrustedFile())
	require.NoError(t, err)
	require.NoError(t, f.ReadG1(ctx, lay.H, 90, make([]bls.G1Affine, 20)))
	f.Close()

	b = bytes.Clone(good)
	b[lay.IC.Offset] ^= 0x20 // the infinity flag on a non-zero point
	path = filepath.Join(dir, "vk.params")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, err = OpenParams(ctx, path, TrustedFile())
	fe = requireFormatError(t, err, "vk", lay.IC.Offset, errFlags)
	require.Equal(t, path, fe.File)
}
