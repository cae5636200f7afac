package post

import (
	"context"
	"encoding/hex"
	"runtime"
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

// BenchmarkRecordContext records whole partitions of the largest Window and
// Winning shapes, as a daemon's first call does: constraints and terms
// recorded, and the Go heap in use afterwards (the recording kept).
// StackedDrgWindow32GiBV1_2 wants about 11 GB.
func BenchmarkRecordContext(b *testing.B) {
	for _, name := range []string{"StackedDrgWinning32GiBV1", "StackedDrgWindow512MiBV1_2", "StackedDrgWindow32GiBV1_2"} {
		s, ok := ShapeByName(name)
		require.True(b, ok)
		b.Run(name, func(b *testing.B) {
			var sys *r1cs.System
			for range b.N {
				sys = nil
				runtime.GC()
				var err error
				if sys, err = RecordContext(context.Background(), s, 0); err != nil {
					b.Fatal(err)
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(sys.NumConstraints()), "constraints")
			b.ReportMetric(float64(len(sys.A().Vars)+len(sys.B().Vars)+len(sys.C().Vars)), "terms")
			b.ReportMetric(float64(ms.HeapAlloc)/1e9, "heap-GB")
		})
	}
}
