package porep

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/poseidon"
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
	for _, name := range []string{"porep-2k", "porep-8m", "porep-2k-synth", "porep-2k-ni"} {
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

// satisfyingPartition returns a partition of shape s of a fictitious sector
// whose vanilla proofs hold: [Shape.Verify] accepts it and its circuit is
// satisfied, so it can be proved. Replica id, data, parent columns, challenge
// and parent positions are pseudo-random from seed; the labels, encodings,
// Merkle paths and roots are computed from them. Tree nodes off the proved
// paths are pseudo-random values rather than hashes of a full sector, which
// no path can tell apart. The challenge and parent positions are not those
// of the SDR graph and the seed, so the public inputs are not the ones a
// chain verifier would derive; it serves tests and benchmarks of the whole
// prover on any sector size without sealing a sector.
func satisfyingPartition(s Shape, seed uint64) (*Partition, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := s.Nodes()
	if uint64(s.Challenges)*(1+DRGParents+ExpParents) > n/2 {
		return nil, &ShapeError{s.Name, "too few nodes for distinct challenge and parent positions"}
	}
	r := splitMix{seed}
	p := &Partition{ReplicaID: r.element(), Challenges: make([]Challenge, s.Challenges)}

	// Challenged nodes are distinct and never a parent, so that every
	// column a challenge reads is free (a random column) and no label
	// depends on another challenge's.
	challenged := map[uint64]bool{}
	for i := range p.Challenges {
		c := &p.Challenges[i]
		for c.Node == 0 || challenged[c.Node] {
			c.Node = 1 + r.next()%(n-1)
		}
		challenged[c.Node] = true
	}
	columns := map[uint64][]fr.Element{}
	positions := make([][]uint64, s.Challenges)
	dataLeaves := map[uint64]fr.Element{}
	colLeaves := map[uint64]fr.Element{}
	repLeaves := map[uint64]fr.Element{}
	labels := make([]fr.Element, s.Layers)
	parents := make([]fr.Element, 0, DRGParents+ExpParents)
	for i := range p.Challenges {
		c := &p.Challenges[i]
		positions[i] = make([]uint64, DRGParents+ExpParents)
		for j := range positions[i] {
			pos := r.next() % n
			for challenged[pos] {
				pos = r.next() % n
			}
			positions[i][j] = pos
			if columns[pos] == nil {
				rows := make([]fr.Element, s.Layers)
				for k := range rows {
					rows[k] = r.element()
				}
				columns[pos] = rows
				h, err := poseidon.MustGet(s.Layers).Hash(rows)
				if err != nil {
					return nil, err
				}
				colLeaves[pos] = h
			}
		}
		for layer := 1; layer <= s.Layers; layer++ {
			parents = parents[:0]
			for j, pos := range positions[i] {
				if j < DRGParents {
					parents = append(parents, columns[pos][layer-1])
				} else if layer > 1 {
					parents = append(parents, columns[pos][layer-2])
				}
			}
			var err error
			if labels[layer-1], err = gadget.LabelNative(p.ReplicaID, uint32(layer), c.Node, parents); err != nil {
				return nil, err
			}
		}
		c.DataLeaf = r.element()
		dataLeaves[c.Node] = c.DataLeaf
		var enc fr.Element
		enc.Add(&labels[s.Layers-1], &c.DataLeaf)
		repLeaves[c.Node] = enc
		h, err := poseidon.MustGet(s.Layers).Hash(labels)
		if err != nil {
			return nil, err
		}
		colLeaves[c.Node] = h
	}

	dataArities := make([]int, s.DataPathLen())
	for i := range dataArities {
		dataArities[i] = 2
	}
	treeD := newSparseTree(gadget.TreeSHA254, dataArities, dataLeaves, r.next())
	treeC := newSparseTree(gadget.TreePoseidon, s.TreeArities(), colLeaves, r.next())
	treeR := newSparseTree(gadget.TreePoseidon, s.TreeArities(), repLeaves, r.next())
	p.CommD, p.CommC, p.CommRLast = treeD.root(), treeC.root(), treeR.root()
	var err error
	if p.CommR, err = poseidon.MustGet(2).Hash([]fr.Element{p.CommC, p.CommRLast}); err != nil {
		return nil, err
	}
	for i := range p.Challenges {
		c := &p.Challenges[i]
		c.DataPath = treeD.path(c.Node)
		c.ReplicaPath = treeR.path(c.Node)
		c.ColumnPath = treeC.path(c.Node)
		c.Parents = make([]Column, len(positions[i]))
		for j, pos := range positions[i] {
			c.Parents[j] = Column{Rows: columns[pos], Path: treeC.path(pos)}
		}
	}
	return p, nil
}

// sparseTree is a Merkle tree known only along the paths of some leaves:
// a node whose subtree holds one of them is the hash of its children; any
// other node is a pseudo-random value fixed by its level and index.
type sparseTree struct {
	h       gadget.TreeHash
	arities []int                   // per level, from the leaves up
	marked  []map[uint64]bool       // per level, nodes above a given leaf
	memo    []map[uint64]fr.Element // per level, computed nodes
	leaves  map[uint64]fr.Element
	seed    uint64
}

func newSparseTree(h gadget.TreeHash, arities []int, leaves map[uint64]fr.Element, seed uint64) *sparseTree {
	t := &sparseTree{h: h, arities: arities, leaves: leaves, seed: seed}
	t.marked = make([]map[uint64]bool, len(arities)+1)
	t.memo = make([]map[uint64]fr.Element, len(arities)+1)
	for l := range t.marked {
		t.marked[l] = map[uint64]bool{}
		t.memo[l] = map[uint64]fr.Element{}
	}
	for pos := range leaves {
		for l := 0; l <= len(arities); l++ {
			t.marked[l][pos] = true
			if l < len(arities) {
				pos /= uint64(arities[l])
			}
		}
	}
	return t
}

func (t *sparseTree) node(l int, idx uint64) fr.Element {
	if !t.marked[l][idx] {
		r := splitMix{t.seed ^ uint64(l)<<56 ^ idx*0x9e3779b97f4a7c15}
		return r.element()
	}
	if l == 0 {
		return t.leaves[idx]
	}
	if v, ok := t.memo[l][idx]; ok {
		return v
	}
	a := uint64(t.arities[l-1])
	children := make([]fr.Element, a)
	for j := range children {
		children[j] = t.node(l-1, idx*a+uint64(j))
	}
	v := gadget.NodeHash(t.h, children)
	t.memo[l][idx] = v
	return v
}

func (t *sparseTree) root() fr.Element { return t.node(len(t.arities), 0) }

func (t *sparseTree) path(pos uint64) []PathLevel {
	out := make([]PathLevel, len(t.arities))
	for l, a := range t.arities {
		a := uint64(a)
		out[l].Index = int(pos % a)
		base := pos - pos%a
		for j := uint64(0); j < a; j++ {
			if j != pos%a {
				out[l].Siblings = append(out[l].Siblings, t.node(l, base+j))
			}
		}
		pos /= a
	}
	return out
}
