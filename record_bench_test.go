package c2_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
	"github.com/sealc2/c2/update"
)

// BenchmarkRecordCircuits records the R1CS of the largest circuits as a
// prover's first call does (porep.RecordShapeContext, post.RecordContext,
// update.RecordContext) and reports constraints, terms and the Go heap in
// use afterwards (the recording kept). The 32 GiB Window circuit wants
// about 11 GB, the 32 GiB PoRep circuit about 8.
func BenchmarkRecordCircuits(b *testing.B) {
	for _, c := range []struct {
		name   string
		record func(ctx context.Context) (*r1cs.System, error)
	}{
		{"PoRep32GiB", func(ctx context.Context) (*r1cs.System, error) {
			s, ok := porep.ShapeByName("StackedDrg32GiBV1")
			require.True(b, ok)
			return porep.RecordShapeContext(ctx, s, 0)
		}},
		{"StackedDrgWinning32GiBV1", postRecorder(b, "StackedDrgWinning32GiBV1")},
		{"StackedDrgWindow32GiBV1_2", postRecorder(b, "StackedDrgWindow32GiBV1_2")},
		{"SnapDeals32GiB", func(ctx context.Context) (*r1cs.System, error) {
			s, ok := update.ShapeByName("StackedDrg32GiBV1")
			require.True(b, ok)
			return update.RecordContext(ctx, s, 0)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var sys *r1cs.System
			for range b.N {
				sys = nil
				runtime.GC()
				var err error
				if sys, err = c.record(context.Background()); err != nil {
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

// postRecorder returns the recording of the PoSt shape named name.
func postRecorder(b *testing.B, name string) func(ctx context.Context) (*r1cs.System, error) {
	s, ok := post.ShapeByName(name)
	require.True(b, ok)
	return func(ctx context.Context) (*r1cs.System, error) { return post.RecordContext(ctx, s, 0) }
}
