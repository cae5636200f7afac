package update

import (
	"context"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/r1cs"
)

// RecordContext records, on any number of workers, the system the
// sequential blank synthesis records (matrices row by row, coefficient
// table, densities) and the R1CS rust-fil-proofs recorded for the 2 KiB
// vector. A done context stops it.
func TestRecordContext(t *testing.T) {
	m, _ := loadUpdate(t)
	s, ok := ShapeByName(m.RegisteredProof)
	require.True(t, ok)
	want := r1cs.NewSystem()
	require.NoError(t, SynthesizeBlank(want, s))
	want.Finalize()
	for _, workers := range []int{1, 3} {
		got, err := RecordContext(context.Background(), s, workers)
		require.NoError(t, err)
		require.True(t, got.Finalized())
		require.False(t, got.Assigned())
		refgen.SameConstraints(t, want, got, "update-2k")
		dig, err := got.CanonicalDigest()
		require.NoError(t, err)
		require.Equal(t, m.Partitions[0].R1CSSHA256, hex.EncodeToString(dig[:]), "Rust's R1CS")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := RecordContext(ctx, s, 2)
	require.ErrorIs(t, err, context.Canceled)
}

// RecordContext claims every challenge's segment with challenge 0's
// sizes: for every registered shape, each challenge of the blank partition
// allocates exactly what challenge 0 does.
func TestChallengesAllocateAlike(t *testing.T) {
	for _, s := range Shapes {
		blank, err := BlankPartition(s)
		require.NoError(t, err)
		pre, err := synthPrefix(gadget.New(r1cs.NewWitness(0, 0)), s, BlankInputs(s), blank, 0)
		require.NoError(t, err)
		var first [2]int
		for ci := range pre.random {
			var w r1cs.Witness
			require.NoError(t, synthChallenge(gadget.New(&w), s, pre, &blank.Challenges[ci], ci))
			got := [2]int{len(w.Inputs), len(w.Aux)}
			if ci == 0 {
				first = got
			}
			require.Equal(t, first, got, "%s challenge %d (inputs, aux)", s.Name, ci)
		}
	}
}
