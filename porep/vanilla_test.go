package porep

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// TestPartitionsRejects mutates the refgen 2 KiB C1 output: each defect is
// reported as an *InputError or *ShapeError naming where it is.
func TestPartitionsRejects(t *testing.T) {
	v := loadRefgen(t, "porep-2k")
	for _, tc := range []struct {
		name  string
		mut   func(c *C1Output)
		field string
	}{
		{"comm_c differs", func(c *C1Output) {
			c.VanillaProofs.Partitions[0][1].ReplicaColumnProofs.CX.InclusionProof.Root[0] ^= 1
		}, "replica_column_proofs.c_x.inclusion_proof.root"},
		{"comm_r_last differs", func(c *C1Output) {
			c.VanillaProofs.Partitions[0][1].CommRLastProof.Root[0] ^= 1
		}, "comm_r_last_proof.root"},
		{"non-canonical row", func(c *C1Output) {
			c.VanillaProofs.Partitions[0][0].ReplicaColumnProofs.ExpParents[2].Column.Rows[1] = Domain{31: 0xff}
		}, "replica_column_proofs.exp_parents[2].column.rows[1]"},
		{"no labeling proofs", func(c *C1Output) { c.VanillaProofs.Partitions[0][0].LabelingProofs = nil }, "labeling_proofs"},
		{"huge index", func(c *C1Output) { c.VanillaProofs.Partitions[0][0].CommDProofs.Base[3].Index = 1 << 40 }, "comm_d_proofs.path[3].index"},
		{"short path", func(c *C1Output) {
			c.VanillaProofs.Partitions[0][1].CommDProofs.Base = c.VanillaProofs.Partitions[0][1].CommDProofs.Base[:5]
		}, "comm_d_proofs"},
		{"missing parent", func(c *C1Output) {
			rc := &c.VanillaProofs.Partitions[0][0].ReplicaColumnProofs
			rc.DRGParents = rc.DRGParents[:5]
		}, "parents"},
		{"partitions", func(c *C1Output) { c.VanillaProofs.Partitions = append(c.VanillaProofs.Partitions, nil) }, "vanilla_proofs"},
		{"replica_id", func(c *C1Output) { c.ReplicaID = Domain{31: 0x80} }, "replica_id"},
	} {
		c1 := *v.c1
		c1.VanillaProofs.Partitions = [][]VanillaProof{append([]VanillaProof(nil), v.c1.VanillaProofs.Partitions[0]...)}
		for i := range c1.VanillaProofs.Partitions[0] { // deep-copy what the cases mutate
			vp := &c1.VanillaProofs.Partitions[0][i]
			vp.CommDProofs.Base = append([]PathElement(nil), vp.CommDProofs.Base...)
			rc := &vp.ReplicaColumnProofs
			rc.ExpParents = append([]ColumnProof(nil), rc.ExpParents...)
			for j := range rc.ExpParents {
				rc.ExpParents[j].Column.Rows = append([]Domain(nil), rc.ExpParents[j].Column.Rows...)
			}
		}
		tc.mut(&c1)
		_, _, err := Partitions(&c1)
		var ie *InputError
		require.ErrorAs(t, err, &ie, tc.name)
		require.Equal(t, tc.field, ie.Field, "%s: %v", tc.name, err)
	}
	// The original is untouched and converts.
	_, parts, err := Partitions(v.c1)
	require.NoError(t, err)
	require.Len(t, parts, 1)

	c1 := *v.c1
	c1.VanillaProofs.Shape = "StackedDrg4KiBV1"
	_, _, err = Partitions(&c1)
	var se *ShapeError
	require.ErrorAs(t, err, &se)
}

// TestVerify checks the native verification of partitions: refgen's real
// ones pass; a synthetic one does not; each tampered part is named.
func TestVerify(t *testing.T) {
	for _, name := range []string{"porep-2k", "porep-8m"} {
		v := loadRefgen(t, name)
		for k, p := range v.parts {
			require.NoError(t, v.shape.Verify(p, k), name)
		}
	}
	v := loadRefgen(t, "porep-2k")
	syn, err := SyntheticPartition(v.shape, 1)
	require.NoError(t, err)
	var ie *InputError
	require.ErrorAs(t, v.shape.Verify(syn, 0), &ie)
	require.Equal(t, "comm_r", ie.Field)

	for _, tc := range []struct {
		field string
		mut   func(p *Partition)
	}{
		{"comm_d_proofs", func(p *Partition) { p.Challenges[0].DataLeaf.SetUint64(1) }},
		{"comm_d_proofs", func(p *Partition) { p.Challenges[1].Node ^= 1 }},
		{"drg_parents[2]", func(p *Partition) { p.Challenges[1].Parents[2].Rows[0].SetUint64(1) }},
		{"exp_parents[5]", func(p *Partition) { p.Challenges[0].Parents[11].Path[0].Siblings[3].SetUint64(1) }},
		{"comm_r_last_proof", func(p *Partition) { p.Challenges[1].ReplicaPath[1].Siblings[0].SetUint64(1) }},
		{"replica_column_proofs.c_x", func(p *Partition) { p.Challenges[0].ColumnPath[0].Siblings[6].SetUint64(1) }},
	} {
		_, parts, err := Partitions(v.c1) // a fresh copy to mutate
		require.NoError(t, err)
		tc.mut(parts[0])
		require.ErrorAs(t, v.shape.Verify(parts[0], 0), &ie, tc.field)
		require.Equal(t, tc.field, ie.Field, ie.Error())
	}
}

// TestVerifyLowestError checks that the side-by-side checks return what a
// loop in order would: the lowest failing challenge's error in a
// partition, the lowest failing partition's in VerifyAll.
func TestVerifyLowestError(t *testing.T) {
	fresh := func() []*Partition {
		parts := make([]*Partition, 3)
		for k := range parts {
			p, err := satisfyingPartition(Shape2KiB, uint64(20+k))
			require.NoError(t, err)
			parts[k] = p
		}
		return parts
	}
	parts := fresh()
	require.NoError(t, Shape2KiB.VerifyAll(parts))
	last := len(parts[0].Challenges) - 1
	require.Positive(t, last)
	// challenge 0 fails at its last check, the last challenge at its first
	parts[0].Challenges[last].DataLeaf.SetUint64(1)
	parts[0].Challenges[0].ColumnPath[0].Siblings[6].SetUint64(1)
	parts[2].Challenges[0].ReplicaPath[1].Siblings[0].SetUint64(1)
	var ie *InputError
	require.ErrorAs(t, Shape2KiB.VerifyAll(parts), &ie)
	require.Equal(t, InputError{0, 0, "replica_column_proofs.c_x", ie.Msg}, *ie)

	parts = fresh()
	parts[2].Challenges[0].ReplicaPath[1].Siblings[0].SetUint64(1)
	parts[1].Challenges[last].ReplicaPath[1].Siblings[0].SetUint64(1)
	require.ErrorAs(t, Shape2KiB.VerifyAll(parts), &ie)
	require.Equal(t, InputError{1, last, "comm_r_last_proof", ie.Msg}, *ie)
}

// TestSatisfyingPartition checks the generator of fictitious sectors: its
// partitions pass the native verification for every shape and, for 2 KiB,
// synthesize into a satisfied system (and a tampered one does not).
func TestSatisfyingPartition(t *testing.T) {
	for _, s := range Shapes {
		p, err := satisfyingPartition(s, 11)
		require.NoError(t, err, s.Name)
		require.NoError(t, s.Verify(p, 0), s.Name)
	}
	if testing.Short() {
		t.Skip("2.7 M constraints")
	}
	p, err := satisfyingPartition(Shape2KiB, 12)
	require.NoError(t, err)
	sys := r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, Shape2KiB, p))
	sys.Finalize()
	require.NoError(t, sys.IsSatisfied())

	p.Challenges[1].Parents[13].Rows[0].SetUint64(3)
	var ie *InputError
	require.ErrorAs(t, Shape2KiB.Verify(p, 0), &ie)
	sys = r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, Shape2KiB, p))
	sys.Finalize()
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, sys.IsSatisfied(), &ue)
}
