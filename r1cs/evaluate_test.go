package r1cs_test

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/r1cs"
)

// The parallel, checked evaluation equals Evaluate whatever the number of
// goroutines, and refuses a broken witness with IsSatisfied's error.
func TestEvaluateChecked(t *testing.T) {
	sys, _, err := synth.System(synth.Shape{LogSize: 14, InputsB: true, Seed: 3})
	require.NoError(t, err)
	m := sys.NumConstraints()
	vecs := func() [3][]fr.Element {
		return [3][]fr.Element{make([]fr.Element, m), make([]fr.Element, m), make([]fr.Element, m)}
	}
	want := vecs()
	require.NoError(t, sys.Evaluate(want[0], want[1], want[2]))
	for _, threads := range []int{1, 3, 8} {
		got := vecs()
		require.NoError(t, sys.EvaluateChecked(got[0], got[1], got[2], threads))
		assert.Equal(t, want, got, "threads=%d", threads)
	}
	sys.Aux()[len(sys.Aux())/2].SetUint64(5) // neither 0 nor 1: breaks its constraints
	wantErr := sys.IsSatisfied()
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, wantErr, &ue)
	for _, threads := range []int{1, 4} {
		got := vecs()
		require.Equal(t, wantErr, sys.EvaluateChecked(got[0], got[1], got[2], threads), "threads=%d", threads)
	}
	sys.Inputs()[0].SetUint64(2)
	got := vecs()
	require.ErrorContains(t, sys.EvaluateChecked(got[0], got[1], got[2], 2), "ONE")
}
