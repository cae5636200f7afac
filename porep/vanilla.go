package porep

import (
	"encoding/binary"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/graph"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/porep/poseidon"
)

// Partition is what the circuit of one partition reads from a C1 output
// (storage-proofs-porep stacked/circuit/params.rs, From<VanillaProof>): the
// public commitments, the private roots of trees C and R_last, and per
// challenge the tree-D leaf and the Merkle paths and parent columns. Columns
// of the challenged node and the labeling and encoding proofs are not read:
// the circuit recomputes the labels.
type Partition struct {
	ReplicaID fr.Element // public input 1
	CommD     fr.Element // public input 2: root of tree D
	CommR     fr.Element // public input 3: Poseidon(CommC, CommRLast)
	CommC     fr.Element // root of tree C (private)
	CommRLast fr.Element // root of tree R_last (private)

	Challenges []Challenge
}

// PathLevel is one level of a Merkle path (see [gadget.PathLevel]).
type PathLevel = gadget.PathLevel

// Challenge is the part of one challenge's vanilla proof the circuit reads.
// Paths run from the leaf up; their level indices spell the leaf position
// (which the circuit exposes as public inputs), and their siblings are
// private.
type Challenge struct {
	// Node is the challenged node (labeling_proofs[0].node).
	Node uint64
	// DataLeaf is the tree-D leaf of Node (comm_d_proofs' leaf); DataPath its
	// binary SHA-254 path to CommD.
	DataLeaf fr.Element
	DataPath []gadget.PathLevel
	// ReplicaPath is the tree-R_last path of Node (comm_r_last_proof); its
	// leaf, the encoded node, is recomputed by the circuit.
	ReplicaPath []gadget.PathLevel
	// ColumnPath is the tree-C path of Node (c_x's inclusion proof); its leaf,
	// the hash of Node's column of labels, is recomputed by the circuit.
	ColumnPath []gadget.PathLevel
	// Parents holds the DRGParents base parents then the ExpParents expander
	// parents: each column's Layers rows and its tree-C path.
	Parents []Column
}

// Column is a column of labels (one per layer) and its tree-C path.
type Column struct {
	Rows []fr.Element
	Path []gadget.PathLevel
}

// InputError reports a vanilla proof that does not fit the shape it is
// proved under. Challenge is −1 for partition-level fields, Partition −1
// for fields of the whole C1 output.
type InputError struct {
	Partition int
	Challenge int
	Field     string
	Msg       string
}

func (e *InputError) Error() string {
	if e.Partition < 0 {
		return fmt.Sprintf("porep: C1 output: %s: %s", e.Field, e.Msg)
	}
	if e.Challenge < 0 {
		return fmt.Sprintf("porep: partition %d: %s: %s", e.Partition, e.Field, e.Msg)
	}
	return fmt.Sprintf("porep: partition %d challenge %d: %s: %s", e.Partition, e.Challenge, e.Field, e.Msg)
}

// Check reports whether p has the structure the circuit of shape s expects:
// the challenge count, path lengths and arities, level indices in range,
// the column count and row counts. It does not check that the proof is
// valid (that roots, labels and encodings agree); an invalid but
// well-formed proof synthesizes into an unsatisfied circuit. part only
// labels errors.
func (s Shape) Check(p *Partition, part int) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if p == nil {
		return &InputError{part, -1, "partition", "missing"}
	}
	if len(p.Challenges) != s.Challenges {
		return &InputError{part, -1, "challenges", fmt.Sprintf("%d, want %d", len(p.Challenges), s.Challenges)}
	}
	arities := s.TreeArities()
	dataLen := s.DataPathLen()
	for i := range p.Challenges {
		c := &p.Challenges[i]
		if c.Node >= s.Nodes() {
			return &InputError{part, i, "node", fmt.Sprintf("%d out of range (%d nodes)", c.Node, s.Nodes())}
		}
		if err := checkPath(c.DataPath, nil, dataLen); err != nil {
			return &InputError{part, i, "comm_d_proofs", err.Error()}
		}
		if err := checkPath(c.ReplicaPath, arities, 0); err != nil {
			return &InputError{part, i, "comm_r_last_proof", err.Error()}
		}
		if err := checkPath(c.ColumnPath, arities, 0); err != nil {
			return &InputError{part, i, "c_x", err.Error()}
		}
		if len(c.Parents) != DRGParents+ExpParents {
			return &InputError{part, i, "parents", fmt.Sprintf("%d columns, want %d", len(c.Parents), DRGParents+ExpParents)}
		}
		for j := range c.Parents {
			field := fmt.Sprintf("drg_parents[%d]", j)
			if j >= DRGParents {
				field = fmt.Sprintf("exp_parents[%d]", j-DRGParents)
			}
			if len(c.Parents[j].Rows) != s.Layers {
				return &InputError{part, i, field, fmt.Sprintf("%d rows, want %d", len(c.Parents[j].Rows), s.Layers)}
			}
			if err := checkPath(c.Parents[j].Path, arities, 0); err != nil {
				return &InputError{part, i, field, err.Error()}
			}
		}
	}
	return nil
}

// checkPath checks a path against per-level arities, or against n binary
// levels when arities is nil.
func checkPath(path []gadget.PathLevel, arities []int, n int) error {
	if arities == nil {
		if len(path) != n {
			return fmt.Errorf("%d levels, want %d", len(path), n)
		}
	} else if len(path) != len(arities) {
		return fmt.Errorf("%d levels, want %d", len(path), len(arities))
	}
	for i := range path {
		want := 2
		if arities != nil {
			want = arities[i]
		}
		l := &path[i]
		if l.Arity() != want {
			return fmt.Errorf("level %d: %d siblings, want %d", i, len(l.Siblings), want-1)
		}
		if l.Index < 0 || l.Index >= want {
			return fmt.Errorf("level %d: index %d out of range for arity %d", i, l.Index, want)
		}
	}
	return nil
}

// SyntheticPartition returns a partition of shape s that is structurally
// valid (it passes [Shape.Check] and synthesizes into exactly the R1CS of
// the shape) but is not a proof of anything: challenges, parent positions,
// leaves, siblings and rows are pseudo-random field elements derived from
// seed, so the circuit is not satisfied. It serves shape checks, key
// generation and benchmarks of sector sizes without sealing a sector.
func SyntheticPartition(s Shape, seed uint64) (*Partition, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r := splitMix{seed}
	arities := s.TreeArities()
	p := &Partition{
		ReplicaID: r.element(), CommD: r.element(), CommR: r.element(),
		CommC: r.element(), CommRLast: r.element(),
		Challenges: make([]Challenge, s.Challenges),
	}
	path := func(node uint64, arities []int) []gadget.PathLevel {
		out := make([]gadget.PathLevel, len(arities))
		for i, a := range arities {
			out[i].Index = int(node % uint64(a))
			node /= uint64(a)
			out[i].Siblings = make([]fr.Element, a-1)
			for j := range out[i].Siblings {
				out[i].Siblings[j] = r.element()
			}
		}
		return out
	}
	dataArities := make([]int, s.DataPathLen())
	for i := range dataArities {
		dataArities[i] = 2
	}
	for i := range p.Challenges {
		c := &p.Challenges[i]
		c.Node = 1 + r.next()%(s.Nodes()-1)
		c.DataLeaf = r.element()
		c.DataPath = path(c.Node, dataArities)
		c.ReplicaPath = path(c.Node, arities)
		c.ColumnPath = path(c.Node, arities)
		c.Parents = make([]Column, DRGParents+ExpParents)
		for j := range c.Parents {
			rows := make([]fr.Element, s.Layers)
			for k := range rows {
				rows[k] = r.element()
			}
			c.Parents[j] = Column{Rows: rows, Path: path(r.next()%s.Nodes(), arities)}
		}
	}
	return p, nil
}

// splitMix is SplitMix64, a small deterministic generator for synthetic
// proofs (not for anything secret).
type splitMix struct{ s uint64 }

func (r *splitMix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// element returns a field element from 256 pseudo-random bits with the top
// two cleared (below the modulus, like a SHA-254 digest).
func (r *splitMix) element() fr.Element {
	var b [32]byte
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint64(b[8*i:], r.next())
	}
	b[31] &= 0x3f
	e, _ := fr.LittleEndian.Element(&b) // below 2^254 < r: never fails
	return e
}

// Partitions converts a decoded C1 output into the partitions its circuits
// prove, under the shape its vanilla proofs are tagged with. Like
// StackedCompound::circuit, it takes comm_c and comm_r_last from the roots
// of the first challenge's tree-C and tree-R_last proofs and requires every
// challenge of a partition to share them. Every partition passes
// [Shape.Check]. Errors are *InputError or *ShapeError.
func Partitions(c1 *C1Output) (Shape, []*Partition, error) {
	s, ok := ShapeByName(c1.VanillaProofs.Shape)
	if !ok {
		return Shape{}, nil, &ShapeError{c1.VanillaProofs.Shape, "not a supported PoRep shape"}
	}
	if want := partitionsOf(c1, s); len(c1.VanillaProofs.Partitions) != want {
		return s, nil, &InputError{-1, -1, "vanilla_proofs", fmt.Sprintf("%d partitions, want %d", len(c1.VanillaProofs.Partitions), want)}
	}
	var common [3]fr.Element
	for i, f := range []struct {
		d    Domain
		name string
	}{{c1.ReplicaID, "replica_id"}, {c1.CommD, "comm_d"}, {c1.CommR, "comm_r"}} {
		e, err := f.d.Element()
		if err != nil {
			return s, nil, &InputError{-1, -1, f.name, "not a canonical field element"}
		}
		common[i] = e
	}
	parts := make([]*Partition, len(c1.VanillaProofs.Partitions))
	for k, vps := range c1.VanillaProofs.Partitions {
		p := &Partition{ReplicaID: common[0], CommD: common[1], CommR: common[2], Challenges: make([]Challenge, len(vps))}
		for i := range vps {
			if err := fromVanilla(&p.Challenges[i], &vps[i], p, i == 0); err != nil {
				err.Partition, err.Challenge = k, i
				return s, nil, err
			}
		}
		if err := s.Check(p, k); err != nil {
			return s, nil, err
		}
		parts[k] = p
	}
	return s, parts, nil
}

// PublicInputs derives the public inputs (ONE excluded) of every partition
// of c, as a verifier does: from its registered proof, replica id, comm_d,
// comm_r and seed (package inputs), never from its vanilla proofs. It
// returns them with the registered proof's shape.
func (c *C1Output) PublicInputs() ([][]fr.Element, inputs.Shape, error) {
	proof, err := inputs.ParseProof(c.RegisteredProof)
	if err != nil {
		return nil, inputs.Shape{}, err
	}
	is, err := proof.Shape()
	if err != nil {
		return nil, inputs.Shape{}, err
	}
	pub := make([][]fr.Element, is.Partitions)
	for k := range pub {
		if pub[k], err = inputs.Partition(is, c.ReplicaID, c.CommD, c.CommR, c.Seed, proof.PoRepID(), k); err != nil {
			return nil, inputs.Shape{}, err
		}
	}
	return pub, is, nil
}

// partitionsOf returns the partition count of c1's registered proof when it
// names a proof of s's sector size (NI-PoRep has more partitions than the
// interactive proofs of its shape), and s.Partitions otherwise, where
// CheckC1 reports the registered proof.
func partitionsOf(c1 *C1Output, s Shape) int {
	if rp, err := inputs.ParseProof(c1.RegisteredProof); err == nil {
		if is, err := rp.Shape(); err == nil && is.SectorSize == s.SectorSize {
			return is.Partitions
		}
	}
	return s.Partitions
}

// CheckC1 checks natively, in milliseconds, that c1 agrees with itself
// where Partitions and Verify do not look: its registered_proof is a
// proof of the shape s its vanilla proofs are tagged with, and every
// challenge, and every parent column's position, is the one its seed (or,
// for Synthetic and NI-PoRep, comm_r), replica id and PoRep id derive (the
// public inputs a verifier computes). parts are Partitions' result for c1. A C1 that fails here
// would fail only after parameters load and witnesses are synthesized, as
// a public input that differs. Errors are *InputError naming the field and
// both values.
func CheckC1(c1 *C1Output, s Shape, parts []*Partition) error {
	proof, err := inputs.ParseProof(c1.RegisteredProof)
	if err != nil {
		return &InputError{-1, -1, "registered_proof", err.Error()}
	}
	is, err := proof.Shape()
	if err != nil {
		return &InputError{-1, -1, "registered_proof", err.Error()}
	}
	if is.SectorSize != s.SectorSize || is.Layers != s.Layers || is.ChallengesPerPartition != s.Challenges {
		return &InputError{-1, -1, "registered_proof", fmt.Sprintf("%s is a %d-byte proof; the vanilla proofs are %s (%d bytes)",
			c1.RegisteredProof, is.SectorSize, s.Name, s.SectorSize)}
	}
	if len(parts) != is.Partitions {
		return &InputError{-1, -1, "vanilla_proofs", fmt.Sprintf("%d partitions, %s has %d", len(parts), c1.RegisteredProof, is.Partitions)}
	}
	g, err := graph.New(is.Nodes, proof.PoRepID(), is.APIVersion)
	if err != nil {
		return err
	}
	var want [graph.Degree]uint32
	for k, p := range parts {
		nodes, err := inputs.Challenges(is, c1.ReplicaID, c1.CommR, c1.Seed, k)
		if err != nil {
			return err
		}
		for i := range p.Challenges {
			c := &p.Challenges[i]
			if c.Node != nodes[i] {
				return &InputError{k, i, "challenge", fmt.Sprintf("node %d, the %v derivation gives node %d", c.Node, is.Derivation, nodes[i])}
			}
			if err := g.Parents(c.Node, want[:]); err != nil {
				return err
			}
			for j := range c.Parents {
				if pos := pathPosition(c.Parents[j].Path); pos != uint64(want[j]) {
					return &InputError{k, i, parentField(j), fmt.Sprintf("column of node %d, the graph's parent of node %d is %d", pos, c.Node, want[j])}
				}
			}
		}
	}
	return nil
}

// pathPosition returns the leaf position a Merkle path's level indices
// spell.
func pathPosition(path []PathLevel) uint64 {
	pos, mul := uint64(0), uint64(1)
	for _, l := range path {
		pos += uint64(l.Index) * mul
		mul *= uint64(l.Arity())
	}
	return pos
}

// fromVanilla fills c from one challenge's vanilla proof. The first
// challenge sets p's private roots; the others must repeat them.
func fromVanilla(c *Challenge, vp *VanillaProof, p *Partition, first bool) *InputError {
	bad := func(field, msg string) *InputError { return &InputError{Field: field, Msg: msg} }
	if len(vp.LabelingProofs) == 0 {
		return bad("labeling_proofs", "empty")
	}
	c.Node = vp.LabelingProofs[0].Node
	var err *InputError
	var rootR, rootC fr.Element
	if c.DataLeaf, _, c.DataPath, err = merkle(&vp.CommDProofs, "comm_d_proofs"); err != nil {
		return err
	}
	if _, rootR, c.ReplicaPath, err = merkle(&vp.CommRLastProof, "comm_r_last_proof"); err != nil {
		return err
	}
	if _, rootC, c.ColumnPath, err = merkle(&vp.ReplicaColumnProofs.CX.InclusionProof, "replica_column_proofs.c_x.inclusion_proof"); err != nil {
		return err
	}
	if first {
		p.CommRLast, p.CommC = rootR, rootC
	} else if rootR != p.CommRLast {
		return bad("comm_r_last_proof.root", "differs from the first challenge's (comm_r_last)")
	} else if rootC != p.CommC {
		return bad("replica_column_proofs.c_x.inclusion_proof.root", "differs from the first challenge's (comm_c)")
	}
	rc := &vp.ReplicaColumnProofs
	c.Parents = make([]Column, 0, len(rc.DRGParents)+len(rc.ExpParents))
	for j := range len(rc.DRGParents) + len(rc.ExpParents) {
		var cp *ColumnProof
		var field string
		if j < len(rc.DRGParents) {
			cp, field = &rc.DRGParents[j], fmt.Sprintf("replica_column_proofs.drg_parents[%d]", j)
		} else {
			cp, field = &rc.ExpParents[j-len(rc.DRGParents)], fmt.Sprintf("replica_column_proofs.exp_parents[%d]", j-len(rc.DRGParents))
		}
		col := Column{Rows: make([]fr.Element, len(cp.Column.Rows))}
		for r, d := range cp.Column.Rows {
			e, err := d.Element()
			if err != nil {
				return bad(fmt.Sprintf("%s.column.rows[%d]", field, r), "not a canonical field element")
			}
			col.Rows[r] = e
		}
		var ierr *InputError
		if _, _, col.Path, ierr = merkle(&cp.InclusionProof, field+".inclusion_proof"); ierr != nil {
			return ierr
		}
		c.Parents = append(c.Parents, col)
	}
	return nil
}

// merkle converts a Merkle proof: its leaf, root and path (base, then sub,
// then top levels).
func merkle(m *MerkleProof, field string) (leaf, root fr.Element, path []PathLevel, _ *InputError) {
	var err error
	if leaf, err = m.Leaf.Element(); err != nil {
		return leaf, root, nil, &InputError{Field: field + ".leaf", Msg: "not a canonical field element"}
	}
	if root, err = m.Root.Element(); err != nil {
		return leaf, root, nil, &InputError{Field: field + ".root", Msg: "not a canonical field element"}
	}
	path = make([]PathLevel, 0, len(m.Base)+len(m.Sub)+len(m.Top))
	for _, seg := range [][]PathElement{m.Base, m.Sub, m.Top} {
		for _, el := range seg {
			l := len(path)
			if el.Index >= 1<<16 {
				return leaf, root, nil, &InputError{Field: fmt.Sprintf("%s.path[%d].index", field, l), Msg: fmt.Sprintf("%d out of range", el.Index)}
			}
			pl := PathLevel{Index: int(el.Index), Siblings: make([]fr.Element, len(el.Hashes))}
			for h, d := range el.Hashes {
				if pl.Siblings[h], err = d.Element(); err != nil {
					return leaf, root, nil, &InputError{Field: fmt.Sprintf("%s.path[%d].hashes[%d]", field, l, h), Msg: "not a canonical field element"}
				}
			}
			path = append(path, pl)
		}
	}
	return leaf, root, path, nil
}

// Verify checks natively, without the circuit, that p proves what its
// circuit proves: comm_r = Poseidon(comm_c, comm_r_last); per challenge the
// data leaf is in tree D under comm_d, every parent column is in tree C
// under comm_c, the labels recomputed from the parents hash into the
// challenged column, which is in tree C under comm_c, the last label plus
// the data leaf is in tree R_last under comm_r_last, and every path leads
// to the challenged node (or the parent's position). It also runs
// [Shape.Check]. A partition that passes Verify synthesizes into a
// satisfied circuit; one that fails would make the prover fail later, so
// checking first turns a bad C1 output into an *InputError naming the
// challenge and the part that does not hold (the lowest failing challenge;
// challenges are checked side by side on all cores). part only labels errors.
func (s Shape) Verify(p *Partition, part int) error {
	if err := s.Check(p, part); err != nil {
		return err
	}
	bad := func(i int, field, msg string) error { return &InputError{part, i, field, msg} }
	h, err := poseidon.MustGet(2).Hash([]fr.Element{p.CommC, p.CommRLast})
	if err != nil {
		return err
	}
	if h != p.CommR {
		return bad(-1, "comm_r", "is not Poseidon(comm_c, comm_r_last)")
	}
	return parallel.FirstError(len(p.Challenges), func(i int) error { return s.verifyChallenge(p, part, i) })
}

// VerifyAll runs Verify on every partition of a C1 output (parts[k] is
// partition k), side by side, and returns the lowest failing partition's
// error.
func (s Shape) VerifyAll(parts []*Partition) error {
	return parallel.FirstError(len(parts), func(k int) error { return s.Verify(parts[k], k) })
}

// verifyChallenge is Verify's check of challenge i of p.
func (s Shape) verifyChallenge(p *Partition, part, i int) error {
	bad := func(field, msg string) error { return &InputError{part, i, field, msg} }
	c := &p.Challenges[i]
	if err := provePath(gadget.TreeSHA254, c.DataLeaf, c.DataPath, p.CommD, c.Node); err != "" {
		return bad("comm_d_proofs", err)
	}
	for j := range c.Parents {
		col := &c.Parents[j]
		leaf, err := poseidon.MustGet(len(col.Rows)).Hash(col.Rows)
		if err != nil {
			return err
		}
		if root, _ := gadget.PathRoot(gadget.TreePoseidon, leaf, col.Path); root != p.CommC {
			return bad(parentField(j), "column is not in tree C under comm_c")
		}
	}
	labels := make([]fr.Element, s.Layers)
	parents := make([]fr.Element, 0, DRGParents+ExpParents)
	for layer := 1; layer <= s.Layers; layer++ {
		parents = parents[:0]
		for j := 0; j < DRGParents; j++ {
			parents = append(parents, c.Parents[j].Rows[layer-1])
		}
		if layer > 1 {
			for j := DRGParents; j < DRGParents+ExpParents; j++ {
				parents = append(parents, c.Parents[j].Rows[layer-2])
			}
		}
		var err error
		if labels[layer-1], err = gadget.LabelNative(p.ReplicaID, uint32(layer), c.Node, parents); err != nil {
			return err
		}
	}
	var enc fr.Element
	enc.Add(&labels[s.Layers-1], &c.DataLeaf)
	if err := provePath(gadget.TreePoseidon, enc, c.ReplicaPath, p.CommRLast, c.Node); err != "" {
		return bad("comm_r_last_proof", "encoded node: "+err)
	}
	col, err := poseidon.MustGet(s.Layers).Hash(labels)
	if err != nil {
		return err
	}
	if err := provePath(gadget.TreePoseidon, col, c.ColumnPath, p.CommC, c.Node); err != "" {
		return bad("replica_column_proofs.c_x", "column of recomputed labels: "+err)
	}
	return nil
}

// provePath reports why leaf is not at position node under root, or "".
func provePath(h gadget.TreeHash, leaf fr.Element, path []PathLevel, root fr.Element, node uint64) string {
	got, err := gadget.PathRoot(h, leaf, path)
	if err != nil {
		return err.Error()
	}
	if got != root {
		return "path does not lead to the root"
	}
	if pos := pathPosition(path); pos != node {
		return fmt.Sprintf("path is at position %d, not the challenged node %d", pos, node)
	}
	return ""
}

func parentField(j int) string {
	if j < DRGParents {
		return fmt.Sprintf("drg_parents[%d]", j)
	}
	return fmt.Sprintf("exp_parents[%d]", j-DRGParents)
}
