package porep

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckC1 mutates the refgen 2 KiB C1 where Partitions and Verify do
// not look: each inconsistency is named by CheckC1, natively.
func TestCheckC1(t *testing.T) {
	v := loadRefgen(t, "porep-2k")
	require.NoError(t, CheckC1(v.c1, v.shape, v.parts))
	// Synthetic PoRep and NI-PoRep derive their challenges from comm_r.
	for _, name := range []string{"porep-8m", "porep-2k-synth", "porep-2k-ni"} {
		w := loadRefgen(t, name)
		require.NoError(t, CheckC1(w.c1, w.shape, w.parts), name)
	}

	for _, tc := range []struct {
		name, field, msg string
		mut              func(c *C1Output, parts []*Partition)
	}{
		{"registered proof of another size", "registered_proof", "StackedDrg8MiBV1_1 is a 8388608-byte proof; the vanilla proofs are StackedDrg2KiBV1",
			func(c *C1Output, _ []*Partition) { c.RegisteredProof = "StackedDrg8MiBV1_1" }},
		{"unknown registered proof", "registered_proof", "unknown",
			func(c *C1Output, _ []*Partition) { c.RegisteredProof = "StackedDrg2KiBV9" }},
		{"an interactive C1 named synthetic", "challenge", "the synthetic derivation gives",
			func(c *C1Output, _ []*Partition) { c.RegisteredProof = "StackedDrg2KiBV1_1_Feat_SyntheticPoRep" }},
		{"an interactive C1 named non-interactive", "vanilla_proofs", "1 partitions, StackedDrg2KiBV1_2_Feat_NonInteractivePoRep has 13",
			func(c *C1Output, _ []*Partition) { c.RegisteredProof = "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep" }},
		{"another seed", "challenge", "the interactive derivation gives",
			func(c *C1Output, _ []*Partition) { c.Seed[0] ^= 1 }},
		{"another challenged node", "challenge", "the interactive derivation gives",
			func(_ *C1Output, parts []*Partition) { parts[0].Challenges[1].Node ^= 1 }},
		{"a parent of another node", "exp_parents[3]", "the graph's parent",
			func(_ *C1Output, parts []*Partition) { parts[0].Challenges[0].Parents[9].Path[0].Index ^= 1 }},
	} {
		c1 := *v.c1
		_, parts, err := Partitions(&c1) // a fresh copy to mutate
		require.NoError(t, err)
		tc.mut(&c1, parts)
		err = CheckC1(&c1, v.shape, parts)
		var ie *InputError
		require.ErrorAs(t, err, &ie, tc.name)
		require.Equal(t, tc.field, ie.Field, "%s: %v", tc.name, err)
		require.ErrorContains(t, err, tc.msg, tc.name)
	}
}

// A Commit2In whose SectorSize contradicts its C1 is refused when decoded.
func TestDecodeC1SectorSize(t *testing.T) {
	raw, _ := readC1Vector(t, "porep-2k")
	w, err := json.Marshal(Commit2In{SectorNum: 1, Phase1Out: raw, SectorSize: 8 << 20})
	require.NoError(t, err)
	_, err = DecodeC1(w)
	var ce *C1Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "SectorSize", ce.Field)
	require.ErrorContains(t, err, "8388608 bytes, but Phase1Out's vanilla proofs are StackedDrg2KiBV1 (2048 bytes)")

	// Absent, it is not checked.
	w, err = json.Marshal(struct{ Phase1Out []byte }{raw})
	require.NoError(t, err)
	_, err = DecodeC1(w)
	require.NoError(t, err)
}
