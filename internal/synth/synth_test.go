package synth

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

func TestShapeIsPoRepLike(t *testing.T) {
	for _, inB := range []bool{false, true} {
		sys, _, err := System(Shape{LogSize: 12, InputsB: inB, Seed: 7})
		require.NoError(t, err)
		require.NoError(t, sys.IsSatisfied())
		c := sys.Counts()
		require.Equal(t, 1<<12, c.Constraints, "fills the domain exactly")
		require.Equal(t, 5, c.Inputs)

		binary := 0
		for _, v := range sys.Aux() {
			if v.IsZero() || v.IsOne() {
				binary++
			}
		}
		frac := float64(binary) / float64(c.Aux)
		require.Greater(t, frac, 0.97)
		require.Less(t, frac, 0.995)
		bd := float64(c.BAux) / float64(c.Aux)
		require.Greater(t, bd, 0.15, "B density")
		require.Less(t, bd, 0.40, "B density")
		if inB {
			require.Equal(t, 5, c.BInputs, "ONE and the 4 inputs are in B")
		} else {
			require.Equal(t, 1, c.BInputs, "only ONE is in B")
		}
	}
}

func TestDeterministicAndModesAgree(t *testing.T) {
	s := Shape{LogSize: 10, Seed: 3}
	sys := r1cs.NewSystem()
	in1, err := Build(sys, s)
	require.NoError(t, err)
	w := r1cs.NewWitness(0, 0)
	in2, err := Build(w, s)
	require.NoError(t, err)
	require.Equal(t, in1, in2)
	require.Equal(t, sys.Aux(), w.Aux)
	require.Equal(t, sys.Inputs(), w.Inputs)

	other := r1cs.NewSystem()
	_, err = Build(other, Shape{LogSize: 10, Seed: 4})
	require.NoError(t, err)
	require.NotEqual(t, sys.Aux(), other.Aux())

	_, err = Build(r1cs.NewSystem(), Shape{LogSize: 2})
	require.Error(t, err)
}

// TestEverySeedBuilds checks small shapes over many seeds: each builds a
// satisfied system, even where the random body made no number (a pack or
// product) for the inputs to be tied to.
func TestEverySeedBuilds(t *testing.T) {
	for seed := range uint64(2000) {
		sys, _, err := System(Shape{LogSize: 8, InputsB: seed%2 == 1, Seed: seed})
		require.NoError(t, err, "seed %d", seed)
		require.NoError(t, sys.IsSatisfied(), "seed %d", seed)
		require.Equal(t, 1<<8, sys.Counts().Constraints, "seed %d", seed)
	}
}
