package paramdigest_test

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/blake2b"

	"github.com/sealc2/c2/internal/paramdigest"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/update"
)

// Every production shape's parameter and verifying-key file names are the
// names Filecoin publishes: c2's circuit identifiers (the hash in the name)
// agree with rust-fil-proofs' for every PoRep, PoSt and SnapDeals shape.
func TestPublishedNamesEveryShape(t *testing.T) {
	var names []string
	for _, s := range porep.Shapes {
		names = append(names, s.ParamsName())
	}
	for _, s := range post.Shapes {
		names = append(names, s.ParamsName())
	}
	for _, s := range update.Shapes {
		names = append(names, s.ParamsName())
	}
	require.NotEmpty(t, names)
	for _, n := range names {
		for _, ext := range []string{".params", ".vk"} {
			d, ok := paramdigest.Published(n + ext)
			require.True(t, ok, "%s%s is not a published file", n, ext)
			require.Len(t, d, 32)
			_, err := hex.DecodeString(d)
			require.NoError(t, err)
		}
	}
	// One entry as parameters.json prints it: the 32 GiB PoRep parameters.
	d, ok := paramdigest.Published("v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params")
	require.True(t, ok)
	require.Equal(t, "6a388072a518cf46ebd661f5cc46900a", d)
	_, ok = paramdigest.Published("dev-insecure-" + porep.Shape2KiB.ParamsName() + ".params")
	require.False(t, ok, "development files are not published")
}

// Sum is the hex of the first 16 bytes of BLAKE2b-512 over the whole file,
// across the chunks it reads; Check refuses another digest with the path and
// both digests named, and stops when its context ends.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.params")
	data := make([]byte, 3*(8<<20)+12345) // three chunks and a partial one
	for i := range data {
		data[i] = byte(i * 7 >> 3)
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
	full := blake2b.Sum512(data)
	want := hex.EncodeToString(full[:16])

	got, err := paramdigest.Sum(context.Background(), path)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NoError(t, paramdigest.Check(context.Background(), path, want))

	// The last byte changed.
	data[len(data)-1] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o644))
	err = paramdigest.Check(context.Background(), path, want)
	var me *paramdigest.MismatchError
	require.ErrorAs(t, err, &me)
	require.Equal(t, path, me.Path)
	require.Equal(t, want, me.Want)
	require.NotEqual(t, want, me.Got)
	require.Contains(t, err.Error(), path)
	require.Contains(t, err.Error(), want)

	// An empty file has the digest of no bytes.
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	none := blake2b.Sum512(nil)
	got, err = paramdigest.Sum(context.Background(), empty)
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(none[:16]), got)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, paramdigest.Check(ctx, path, want), context.Canceled)

	_, err = paramdigest.Sum(context.Background(), filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = paramdigest.Sum(context.Background(), dir)
	require.Error(t, err, "a directory is not a parameter file")
}
