package stage

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// A Lease gives its buffer back once, whatever the concurrent Release
// calls, and reports it Gone from then on; Rebuild synthesizes through the
// lease's function. A nil Lease lends nothing: Release does nothing and it
// is never Gone.
func TestLease(t *testing.T) {
	var gives int
	var mu sync.Mutex
	rebuilt := r1cs.NewSystem()
	l := NewLease(func() { mu.Lock(); gives++; mu.Unlock() },
		func(context.Context) (*r1cs.System, error) { return rebuilt, nil })
	require.False(t, l.Gone())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); l.Release() }()
	}
	wg.Wait()
	require.Equal(t, 1, gives)
	require.True(t, l.Gone())
	sys, err := l.Rebuild(context.Background())
	require.NoError(t, err)
	require.Same(t, rebuilt, sys)

	var none *Lease
	none.Release()
	require.False(t, none.Gone())
}

// Times.Add accumulates into the accumulator given, and each accumulator
// has its stage's name for the logs ("?" for one not of this Times).
func TestTimes(t *testing.T) {
	var tm Times
	tm.Add(&tm.H, 2*time.Millisecond)
	tm.Add(&tm.H, 3*time.Millisecond)
	tm.Add(&tm.Tail, time.Millisecond)
	require.Equal(t, int64(5*time.Millisecond), tm.H.Load())
	require.Equal(t, int64(time.Millisecond), tm.Tail.Load())
	require.Zero(t, tm.Prep.Load())

	for acc, want := range map[*atomic.Int64]string{
		&tm.Prep: "prep", &tm.H: "h", &tm.Batch: "batch-add", &tm.Tail: "tail-msm",
		&tm.BG2: "b_g2", &tm.BG2Wait: "b_g2-wait", &tm.Epilogue: "epilogue", &tm.Verify: "verify",
	} {
		require.Equal(t, want, tm.name(acc))
	}
	var other Times
	require.Equal(t, "?", tm.name(&other.H), "another Times' accumulator")
}

// Scalars that are mostly 0 and 1, as a PoRep witness's, are split; when
// more than half are other values L's MSM stays dense over the witness
// itself, not a copy.
func TestClassify(t *testing.T) {
	scalars := func(others int) []fr.Element {
		v := make([]fr.Element, 1000)
		for i := range v {
			switch {
			case i < others:
				v[i].SetUint64(uint64(i) + 2)
			case i%2 == 0:
				v[i].SetOne()
			}
		}
		return v
	}
	none := r1cs.NewDensity(1000, func(int) bool { return false })
	noInput := r1cs.NewDensity(1, func(int) bool { return false })
	classifyL := func(ctx context.Context, aux []fr.Element) (*Split, error) {
		q := &queries{inputs: []fr.Element{fr.One()}, aux: aux, bInputs: &noInput, aAux: &none, bAux: &none}
		l, _, _, err := q.classify(ctx, func(*Split, error) {})
		return l, err
	}
	narrow := scalars(100)
	sp, err := classifyL(context.Background(), narrow)
	require.NoError(t, err)
	require.Nil(t, sp.Full)
	require.Len(t, sp.Tail, 100)
	require.Equal(t, len(narrow), sp.N)

	wide := scalars(600)
	sp, err = classifyL(context.Background(), wide)
	require.NoError(t, err)
	require.Equal(t, wide, sp.Full)
	require.Same(t, &wide[0], &sp.Full[0], "a dense L reads the witness")
	require.Greater(t, 2*len(sp.Tail), sp.N)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = classifyL(ctx, wide)
	require.ErrorIs(t, err, context.Canceled)
}
