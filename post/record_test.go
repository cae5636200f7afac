package post

import (
	"context"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/r1cs"
)

// RecordContext records, on any number of workers, the system the
// sequential blank synthesis records: the same matrices row by row, the
// same coefficient table and densities, and the R1CS digest rust-fil-proofs
// recorded for every committed 2 KiB and 8 MiB vector. A done context stops
// it.
func TestRecordContext(t *testing.T) {
	for _, name := range append(append([]string{}, vectors...), vectors8MiB...) {
		v := loadVector(t, name)
		want := r1cs.NewSystem()
		require.NoError(t, SynthesizeBlank(want, v.shape))
		want.Finalize()
		for _, workers := range []int{1, 3} {
			got, err := RecordContext(context.Background(), v.shape, workers)
			require.NoError(t, err, name)
			require.True(t, got.Finalized())
			require.False(t, got.Assigned())
			refgen.SameConstraints(t, want, got, name)
			dig, err := got.CanonicalDigest()
			require.NoError(t, err)
			for k, p := range v.meta.Partitions {
				require.Equal(t, p.R1CSSHA256, hex.EncodeToString(dig[:]), "%s partition %d: Rust's R1CS", name, k)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, _ := ShapeByName("StackedDrgWindow2KiBV1_2")
	_, err := RecordContext(ctx, s, 2)
	require.ErrorIs(t, err, context.Canceled)
}
