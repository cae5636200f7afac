package porep

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// recordSequential is the reference: synthesizeContext into a System,
// then Finalize.
func recordSequential(t testing.TB, s Shape, p *Partition) *r1cs.System {
	sys := r1cs.NewSystem()
	require.NoError(t, synthesizeContext(context.Background(), sys, s, p))
	sys.Finalize()
	return sys
}

// layoutDigest hashes the recorded layout of s as the device receives it:
// each matrix's row starts, variables and coefficient indices, and the
// coefficient table in its order.
func layoutDigest(t testing.TB, s *r1cs.System) [sha256.Size]byte {
	h := sha256.New()
	for _, m := range []*r1cs.Matrix{s.A(), s.B(), s.C()} {
		for _, v := range []any{m.RowStart, m.Vars, m.CoeffIdx} {
			require.NoError(t, binary.Write(h, binary.LittleEndian, v))
		}
	}
	require.NoError(t, binary.Write(h, binary.LittleEndian, s.Coeffs()))
	return [sha256.Size]byte(h.Sum(nil))
}

// checkRecord compares the parallel recording of s with the sequential
// one, for several worker counts: digest, layout (the matrices row by
// row and the coefficient table), counts, densities and
// assignment. It then pairs the recording with the witness of a
// satisfying partition.
func checkRecord(t *testing.T, s Shape) {
	p, err := SyntheticPartition(s, 11)
	require.NoError(t, err)
	want := recordSequential(t, s, p)
	wantDigest, err := want.CanonicalDigest()
	require.NoError(t, err)
	wantLayout := layoutDigest(t, want)
	wantWitness := r1cs.WitnessDigest(want.Inputs(), want.Aux())
	wantCounts := want.Counts()
	wantA, wantBIn, wantBAux := want.ADensity().Words(), want.BInputDensity().Words(), want.BAuxDensity().Words()
	want = nil

	sat, err := satisfyingPartition(s, 12)
	require.NoError(t, err)
	w, err := Witness(s, sat, 0)
	require.NoError(t, err)

	for _, workers := range []int{1, 2, 5} {
		got, err := RecordContext(context.Background(), s, p, workers)
		require.NoError(t, err, "workers=%d", workers)
		require.True(t, got.Finalized())
		require.Equal(t, wantCounts, got.Counts(), "workers=%d", workers)
		d, err := got.CanonicalDigest()
		require.NoError(t, err)
		require.Equal(t, hex.EncodeToString(wantDigest[:]), hex.EncodeToString(d[:]), "workers=%d: canonical digest", workers)
		require.Equal(t, wantLayout, layoutDigest(t, got), "workers=%d: layout", workers)
		require.Equal(t, wantA, got.ADensity().Words(), "workers=%d", workers)
		require.Equal(t, wantBIn, got.BInputDensity().Words(), "workers=%d", workers)
		require.Equal(t, wantBAux, got.BAuxDensity().Words(), "workers=%d", workers)
		require.Equal(t, wantWitness, r1cs.WitnessDigest(got.Inputs(), got.Aux()), "workers=%d: recorded assignment", workers)

		ok, err := got.WithAssignment(w.Inputs, w.Aux)
		require.NoError(t, err)
		require.NoError(t, ok.IsSatisfied(), "workers=%d: another partition's witness", workers)
		got = nil
		runtime.GC()
	}
}

// TestRecord2KiB: the parallel recording of a 2 KiB partition is the
// sequential one, on a first call for the shape (which learns the segment
// sizes) and on later ones.
func TestRecord2KiB(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7 M constraints, recorded four times")
	}
	s := Shape2KiB
	s.Name = "test-record-2k" // a fresh memo entry
	checkRecord(t, s)
}

func TestRecord8MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("3.8 M constraints, recorded four times")
	}
	checkRecord(t, Shape8MiB)
}

// TestRecordShape: the recording of one challenge repeated into the
// others is RecordContext's System without its values: the same digest,
// layout, counts and densities, for 2 KiB (also Rust's digest) and 8 MiB;
// a satisfying partition's witness satisfies it.
func TestRecordShape(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7 M and 3.8 M constraints, recorded twice each")
	}
	v := loadRefgen(t, "porep-2k")
	for _, s := range []Shape{Shape2KiB, Shape8MiB} {
		got, err := RecordShapeContext(context.Background(), s, 2)
		require.NoError(t, err, s.Name)
		require.False(t, got.Assigned())
		if s.Name == v.shape.Name {
			v.requireR1CSDigest(t, got)
		}
		p, err := SyntheticPartition(s, 3)
		require.NoError(t, err)
		want, err := RecordContext(context.Background(), s, p, 2)
		require.NoError(t, err)
		require.Equal(t, want.Counts(), got.Counts(), s.Name)
		dw, err := want.CanonicalDigest()
		require.NoError(t, err)
		dg, err := got.CanonicalDigest()
		require.NoError(t, err)
		require.Equal(t, dw, dg, s.Name)
		require.Equal(t, layoutDigest(t, want), layoutDigest(t, got), s.Name)
		require.Equal(t, want.ADensity().Words(), got.ADensity().Words(), s.Name)
		require.Equal(t, want.BInputDensity().Words(), got.BInputDensity().Words(), s.Name)
		require.Equal(t, want.BAuxDensity().Words(), got.BAuxDensity().Words(), s.Name)
		want = nil

		sat, err := satisfyingPartition(s, 12)
		require.NoError(t, err)
		w, err := Witness(s, sat, 0)
		require.NoError(t, err)
		ok, err := got.WithAssignment(w.Inputs, w.Aux)
		require.NoError(t, err)
		require.NoError(t, ok.IsSatisfied(), s.Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := RecordShapeContext(ctx, Shape2KiB, 2)
	require.ErrorIs(t, err, context.Canceled)
}

// TestRecordRefgen: the parallel recording has the Rust reference's
// canonical digest.
func TestRecordRefgen(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7 M constraints")
	}
	v := loadRefgen(t, "porep-2k")
	sys, err := RecordContext(context.Background(), v.shape, v.synthetic(t), 0)
	require.NoError(t, err)
	v.requireR1CSDigest(t, sys)
	w, err := Witness(v.shape, v.parts[0], 0)
	require.NoError(t, err)
	ok, err := sys.WithAssignment(w.Inputs, w.Aux)
	require.NoError(t, err)
	require.NoError(t, ok.IsSatisfied())
}

// TestRecordContext: a done context stops the recording with its error;
// a partition that fails the shape check is refused before anything runs.
func TestRecordContext(t *testing.T) {
	s := Shape2KiB
	p, err := SyntheticPartition(s, 2)
	require.NoError(t, err)
	cancelBefore(t, func(ctx context.Context) (*r1cs.System, error) {
		return RecordContext(ctx, s, p, 2)
	})

	// Cancelled while recording (after the segment sizes are known).
	s.Name = "test-record-cancel"
	_, err = recordSizes(context.Background(), s, p, 2)
	require.NoError(t, err)
	const after = 50 * time.Millisecond
	took, err := cancelDuring(t, "recording (2 workers)", after, func(ctx context.Context) (*r1cs.System, error) {
		return RecordContext(ctx, s, p, 2)
	})
	if err != nil {
		require.Less(t, took, after+time.Second)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	_, err = RecordContext(ctx, s, p, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	bad := *p
	bad.Challenges = bad.Challenges[1:]
	_, err = RecordContext(context.Background(), s, &bad, 2)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
}

// BenchmarkRecord2KiB records a 2 KiB partition sequentially
// (synthesizeContext + Finalize) and in parallel on all cores.
func BenchmarkRecord2KiB(b *testing.B) { benchRecord(b, Shape2KiB) }

// BenchmarkRecord32GiB is the same for a 32 GiB partition (~130 M
// constraints, tens of GB: set C2_BENCH_RECORD_32GIB to run it).
func BenchmarkRecord32GiB(b *testing.B) {
	if os.Getenv("C2_BENCH_RECORD_32GIB") == "" {
		b.Skip("set C2_BENCH_RECORD_32GIB=1 (needs ~60 GB of memory)")
	}
	benchRecord(b, Shape32GiB)
}

func benchRecord(b *testing.B, s Shape) {
	p, err := SyntheticPartition(s, 1)
	require.NoError(b, err)
	b.Run("sequential", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sys := r1cs.NewSystem()
			if err := synthesizeContext(context.Background(), sys, s, p); err != nil {
				b.Fatal(err)
			}
			sys.Finalize()
			b.ReportMetric(float64(sys.NumConstraints()), "constraints")
			sys = nil
			runtime.GC()
		}
	})
	for _, workers := range []int{1, 0} {
		name := "parallel"
		if workers == 1 {
			name = "segmented-1worker"
		}
		b.Run(name, func(b *testing.B) {
			if _, err := recordSizes(context.Background(), s, p, workers); err != nil { // learned once per shape
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sys, err := RecordContext(context.Background(), s, p, workers)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(sys.NumConstraints()), "constraints")
				sys = nil
				runtime.GC()
			}
		})
	}
}
