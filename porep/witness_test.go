package porep

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// TestWitnessConcurrent checks that the concurrent, segmented witness
// equals the sequential synthesis into an r1cs.Witness, on the first call
// for a shape (which first learns the segment sizes) and on later ones.
func TestWitnessConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7 M constraints")
	}
	s := Shape2KiB
	s.Name = "test-witness" // a fresh memo entry
	p, err := SyntheticPartition(s, 3)
	require.NoError(t, err)
	want := r1cs.NewWitness(0, 0)
	require.NoError(t, Synthesize(want, s, p))
	for _, workers := range []int{1, 3, 0} {
		got, err := Witness(s, p, workers)
		require.NoError(t, err)
		require.Equal(t, len(want.Aux), len(got.Aux))
		require.Equal(t, want.Inputs, got.Inputs)
		require.True(t, r1cs.WitnessDigest(want.Inputs, want.Aux) == r1cs.WitnessDigest(got.Inputs, got.Aux), "workers=%d", workers)
	}

	// A reused buffer, full of another partition's values and of garbage,
	// gives the same witness in its own array; a short one is not used.
	other, err := SyntheticPartition(s, 4)
	require.NoError(t, err)
	buf := make([]fr.Element, len(want.Aux)+5)
	for i := range buf {
		buf[i].SetUint64(uint64(i) + 7)
	}
	prev, err := WitnessInto(context.Background(), s, other, 2, buf)
	require.NoError(t, err)
	require.Same(t, &buf[0], &prev.Aux[0])
	got, err := WitnessInto(context.Background(), s, p, 2, prev.Aux)
	require.NoError(t, err)
	require.Same(t, &buf[0], &got.Aux[0])
	require.Equal(t, len(want.Aux), len(got.Aux))
	require.True(t, r1cs.WitnessDigest(want.Inputs, want.Aux) == r1cs.WitnessDigest(got.Inputs, got.Aux))
	short := make([]fr.Element, 10)
	got, err = WitnessInto(context.Background(), s, p, 2, short)
	require.NoError(t, err)
	require.NotSame(t, &short[0], &got.Aux[0])
	require.True(t, r1cs.WitnessDigest(want.Inputs, want.Aux) == r1cs.WitnessDigest(got.Inputs, got.Aux))
}

// BenchmarkWitness32GiB computes the witness of one 32 GiB partition
// (130 M variables) from a synthetic vanilla proof, in witness-only mode on
// all cores.
func BenchmarkWitness32GiB(b *testing.B) { benchWitness(b, Shape32GiB, false) }

// BenchmarkWitnessInto32GiB is BenchmarkWitness32GiB into one reused
// buffer, as the prover synthesizes partition after partition
// (WitnessInto): no allocation, no page faults, no clearing.
func BenchmarkWitnessInto32GiB(b *testing.B) { benchWitness(b, Shape32GiB, true) }

// BenchmarkWitness2KiB is the same for a 2 KiB partition (2.7 M variables).
func BenchmarkWitness2KiB(b *testing.B) { benchWitness(b, Shape2KiB, false) }

func benchWitness(b *testing.B, s Shape, reuse bool) {
	p, err := SyntheticPartition(s, 1)
	require.NoError(b, err)
	w, err := Witness(s, p, 0) // learns the segment sizes
	require.NoError(b, err)
	aux := len(w.Aux)
	// The aux values other than 0 and 1: the size of L's tail MSM (A's and
	// B's tails are the ones among the variables their query uses).
	var one fr.Element
	one.SetOne()
	tail := 0
	for i := range w.Aux {
		if !w.Aux[i].IsZero() && !w.Aux[i].Equal(&one) {
			tail++
		}
	}
	var buf []fr.Element
	if reuse {
		buf = w.Aux
	}
	w = nil
	runtime.GC() // the warm-up witness is garbage before timing starts
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := WitnessInto(context.Background(), s, p, 0, buf); err != nil {
			b.Fatal(err)
		}
	}
	// (after the loop: ResetTimer drops the metrics reported before it)
	b.ReportMetric(float64(aux), "aux")
	b.ReportMetric(float64(tail), "tail-aux")
}

// BenchmarkEvaluate2KiB evaluates a, b, c of one 2 KiB partition (2.7 M
// constraints of the same gadgets as a 32 GiB one) from its witness and
// checks a·b = c, as a prover's plain slot has the host do for every
// partition (r1cs.EvaluateChecked), on one goroutine and on all; ns/term is
// wall time per term of A, B and C.
func BenchmarkEvaluate2KiB(b *testing.B) {
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) { benchEvaluate(b, threads) })
	}
}

func benchEvaluate(b *testing.B, evalThreads int) {
	s := Shape2KiB
	sys, err := RecordShapeContext(context.Background(), s, 0)
	require.NoError(b, err)
	p, err := satisfyingPartition(s, 1)
	require.NoError(b, err)
	w, err := Witness(s, p, 0)
	require.NoError(b, err)
	full, err := sys.WithAssignment(w.Inputs, w.Aux)
	require.NoError(b, err)
	m, err := full.Matrices(context.Background())
	require.NoError(b, err)
	n := m.NumConstraints()
	terms := len(m.A().Vars) + len(m.B().Vars) + len(m.C().Vars)
	abc := make([]fr.Element, 3*n)
	b.ResetTimer()
	for range b.N {
		if err := m.EvaluateChecked(abc[:n], abc[n:2*n], abc[2*n:], evalThreads); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(terms), "ns/term")
	b.ReportMetric(float64(terms)/float64(n), "terms/row")
}
