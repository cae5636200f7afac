package porep

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// TestShapeTrees checks path shapes against filecoin-proofs' sector shapes
// (porep-circuit.md §1.5): tree D is binary over all nodes; trees C and
// R_last are 8-0-0, 8-8-0 or 8-8-2.
func TestShapeTrees(t *testing.T) {
	rep := func(n, a int, tail ...int) []int {
		var r []int
		for i := 0; i < n; i++ {
			r = append(r, a)
		}
		return append(r, tail...)
	}
	for _, tc := range []struct {
		s      Shape
		data   int
		trees  []int
		inputs int
	}{
		{Shape2KiB, 6, rep(2, 8), 40},
		{Shape8MiB, 18, rep(6, 8), 40},
		{Shape512MiB, 24, rep(8, 8), 40},
		{Shape32GiB, 30, rep(9, 8, 8), 328},
		{Shape64GiB, 31, rep(9, 8, 8, 2), 328},
	} {
		require.NoError(t, tc.s.Validate(), tc.s.Name)
		require.Equal(t, tc.data, tc.s.DataPathLen(), tc.s.Name)
		require.Equal(t, tc.trees, tc.s.TreeArities(), tc.s.Name)
		require.Equal(t, tc.inputs, tc.s.NumInputs(), tc.s.Name)
		got, ok := ShapeByName(tc.s.Name)
		require.True(t, ok)
		require.Equal(t, tc.s, got)
		got, ok = ShapeBySize(tc.s.SectorSize)
		require.True(t, ok)
		require.Equal(t, tc.s, got)
	}
	bad := Shape32GiB
	bad.SubArity = 4 // 2^30 / 4 is not a power of 8
	var se *ShapeError
	require.ErrorAs(t, bad.Validate(), &se)
	bad = Shape2KiB
	bad.SectorSize = 3000
	require.ErrorAs(t, bad.Validate(), &se)
	bad.SectorSize = 128
	require.ErrorAs(t, bad.Validate(), &se)
}

// testShapes are the circuits of rust-fil-proofs' storage-proofs-porep
// tests/stacked_circuit.rs: 2 layers, 1 challenge, 8 nodes per base tree,
// with the constraint counts (before the per-input constraints) it asserts.
var testShapes = []struct {
	s           Shape
	constraints int
}{
	{Shape{Name: "test-8-0-0", SectorSize: 8 * NodeSize, Layers: 2, Partitions: 1, Challenges: 1}, 1_199_620},
	{Shape{Name: "test-8-4-0", SectorSize: 32 * NodeSize, Layers: 2, Partitions: 1, Challenges: 1, SubArity: 4}, 1_296_576},
	{Shape{Name: "test-8-4-2", SectorSize: 64 * NodeSize, Layers: 2, Partitions: 1, Challenges: 1, SubArity: 4, TopArity: 2}, 1_346_982},
}

// TestRustTestCircuits counts the rust-fil-proofs test circuits, whose
// sub and top tree levels the production 2 KiB and 8 MiB vectors lack, and
// proves satisfiable ones with sub and top levels satisfied.
func TestRustTestCircuits(t *testing.T) {
	if testing.Short() {
		t.Skip("4 M constraints")
	}
	for _, tc := range testShapes {
		got := countShape(t, tc.s)
		require.Equal(t, tc.constraints, got.Constraints-got.Inputs, tc.s.Name)
		require.Equal(t, tc.s.NumInputs(), got.Inputs)
		if tc.s.Nodes() < 32 {
			continue // too few nodes for satisfyingPartition
		}
		p, err := satisfyingPartition(tc.s, 2)
		require.NoError(t, err)
		require.NoError(t, tc.s.Verify(p, 0))
		sys := r1cs.NewSystem()
		require.NoError(t, Synthesize(sys, tc.s, p))
		sys.Finalize()
		require.Equal(t, got, sys.Counts())
		require.NoError(t, sys.IsSatisfied(), tc.s.Name)
	}
}

// TestCheckRejects feeds malformed partitions to Synthesize: each is
// rejected with an InputError naming the field, before anything is
// synthesized.
func TestCheckRejects(t *testing.T) {
	s := Shape2KiB
	for _, tc := range []struct {
		field string
		mut   func(p *Partition)
	}{
		{"challenges", func(p *Partition) { p.Challenges = p.Challenges[:1] }},
		{"node", func(p *Partition) { p.Challenges[1].Node = 64 }},
		{"comm_d_proofs", func(p *Partition) { p.Challenges[0].DataPath = p.Challenges[0].DataPath[1:] }},
		{"comm_d_proofs", func(p *Partition) { p.Challenges[0].DataPath[2].Index = 2 }},
		{"comm_r_last_proof", func(p *Partition) {
			p.Challenges[0].ReplicaPath[0].Siblings = p.Challenges[0].ReplicaPath[0].Siblings[:6]
		}},
		{"c_x", func(p *Partition) { p.Challenges[1].ColumnPath[1].Index = -1 }},
		{"parents", func(p *Partition) { p.Challenges[0].Parents = p.Challenges[0].Parents[:13] }},
		{"drg_parents[3]", func(p *Partition) { p.Challenges[0].Parents[3].Rows = p.Challenges[0].Parents[3].Rows[:1] }},
		{"exp_parents[7]", func(p *Partition) { p.Challenges[1].Parents[13].Path = nil }},
	} {
		p, err := SyntheticPartition(s, 7)
		require.NoError(t, err)
		tc.mut(p)
		c := r1cs.NewCounter()
		err = Synthesize(c, s, p)
		var ie *InputError
		require.True(t, errors.As(err, &ie), "%s: %v", tc.field, err)
		require.Equal(t, tc.field, ie.Field, err.Error())
		require.Equal(t, 1, c.Counts().Inputs, "nothing synthesized")
		_, err = Witness(s, p, 0)
		require.ErrorAs(t, err, &ie)
	}
	var ie *InputError
	require.ErrorAs(t, Synthesize(r1cs.NewCounter(), s, nil), &ie)
}

// modelCounts are the counts of one partition per sector size, finalized
// (per-input constraints included): the structural model of the circuit
// (shared/reference/porep-r1cs-model.py, porep-circuit.md §2.4), which for
// 32 GiB reproduces the published numbers of rust-fil-proofs PR #1325 and
// Curio's cuzk PCE table.
var modelCounts = map[string]r1cs.Counts{
	Shape2KiB.Name:   {Constraints: 2_687_961, Inputs: 40, Aux: 2_685_673, AAux: 2_674_908, BInputs: 1, BAux: 685_521},
	Shape8MiB.Name:   {Constraints: 3_844_969, Inputs: 40, Aux: 3_842_449, AAux: 3_814_996, BInputs: 1, BAux: 1_011_289},
	Shape512MiB.Name: {Constraints: 4_423_473, Inputs: 40, Aux: 4_420_837, AAux: 4_385_040, BInputs: 1, BAux: 1_174_173},
	Shape32GiB.Name:  {Constraints: 130_278_869, Inputs: 328, Aux: 130_169_893, AAux: 129_753_292, BInputs: 1, BAux: 33_112_281},
	Shape64GiB.Name:  {Constraints: 131_186_177, Inputs: 328, Aux: 131_076_643, AAux: 130_637_542, BInputs: 1, BAux: 33_386_943},
}

func countShape(t *testing.T, s Shape) r1cs.Counts {
	p, err := SyntheticPartition(s, 1)
	require.NoError(t, err)
	c := r1cs.NewCounter()
	require.NoError(t, Synthesize(c, s, p))
	c.Finalize()
	return c.Counts()
}

// TestSyntheticCounts counts synthetic partitions of the small shapes: the
// shape, not the values, fixes the R1CS, so they match the model (and, for
// 2 KiB, refgen's partition of a real sector).
func TestSyntheticCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("11 M constraints")
	}
	for _, s := range []Shape{Shape2KiB, Shape8MiB, Shape512MiB} {
		require.Equal(t, modelCounts[s.Name], countShape(t, s), s.Name)
	}
}

// TestLargeShapeCounts counts one 32 GiB and one 64 GiB partition (130 M
// constraints each) in counting mode, which stores nothing (150 MiB peak):
// about half a minute of one core each. C2_LARGE_SHAPES=32GiB or 64GiB
// restricts it to one shape; -short skips it.
func TestLargeShapeCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("130 M-constraint partitions")
	}
	which := os.Getenv("C2_LARGE_SHAPES")
	for _, s := range []Shape{Shape32GiB, Shape64GiB} {
		if which != "" && which != "all" && s.Name != "StackedDrg"+which+"V1" {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			got := countShape(t, s)
			t.Log(got)
			require.Equal(t, modelCounts[s.Name], got)
		})
	}
}

// TestLargeShapesSatisfied proves one challenge of the 32 GiB and 64 GiB
// circuits (11 layers, trees 8-8-0 and 8-8-2, 7.2 M constraints each) from a
// satisfying partition: the recorded system is satisfied, and the
// concurrent witness equals the recorded assignment.
func TestLargeShapesSatisfied(t *testing.T) {
	if testing.Short() {
		t.Skip("15 M constraints")
	}
	for _, s := range []Shape{Shape32GiB, Shape64GiB} {
		s.Challenges = 1
		s.Name += "-1-challenge"
		p, err := satisfyingPartition(s, 3)
		require.NoError(t, err)
		require.NoError(t, s.Verify(p, 0))
		sys := r1cs.NewSystem()
		require.NoError(t, Synthesize(sys, s, p))
		sys.Finalize()
		require.NoError(t, sys.IsSatisfied(), s.Name)
		w, err := Witness(s, p, 0)
		require.NoError(t, err)
		require.Equal(t, sys.Inputs(), w.Inputs)
		require.True(t, r1cs.WitnessDigest(sys.Inputs(), sys.Aux()) == r1cs.WitnessDigest(w.Inputs, w.Aux), s.Name)
	}
}
