package update

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/internal/vanilla"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/poseidon"
)

// proofLevels returns the leaf, the recorded root and the levels (base,
// sub, top; leaf level first) of m, each value checked to be a canonical
// field element and each index to be below its level's arity.
func proofLevels(m *porep.MerkleProof, at string) (leaf, root fr.Element, levels []gadget.PathLevel, err error) {
	if leaf, err = element(m.Leaf, at+".leaf"); err != nil {
		return
	}
	if root, err = element(m.Root, at+".root"); err != nil {
		return
	}
	levels, err = vanilla.Levels(m, at)
	return leaf, root, levels, placed(err)
}

func siblings(path []gadget.PathLevel) [][]fr.Element {
	out := make([][]fr.Element, len(path))
	for l := range path {
		out[l] = path[l].Siblings
	}
	return out
}

// FromVanilla turns a decoded vanilla partition proof into what the
// circuit reads (EmptySectorUpdateCompound::circuit with
// PrivateInputs::new): comm_c, the roots recorded in challenge 0's tree R
// proofs, the apex leaves, and per challenge the leaves and siblings. It
// checks the shape ([Shape.Check] runs at synthesis); errors are
// *VanillaError values naming the JSON path, prefixed with at.
func (s Shape) FromVanilla(v *PartitionProof, at string) (*Partition, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	f := func(x string) string { return vanilla.Join(at, x) }
	if len(v.ApexLeafs) != s.ApexLeaves {
		return nil, fieldErr(f("apex_leafs"), "%d leaves, want %d", len(v.ApexLeafs), s.ApexLeaves)
	}
	if len(v.ChallengeProofs) != s.Challenges {
		return nil, fieldErr(f("challenge_proofs"), "%d proofs, want %d", len(v.ChallengeProofs), s.Challenges)
	}
	p := &Partition{ApexLeaves: make([]fr.Element, s.ApexLeaves), Challenges: make([]Challenge, s.Challenges)}
	var err error
	if p.CommC, err = element(v.CommC, f("comm_c")); err != nil {
		return nil, err
	}
	for i := range v.ApexLeafs {
		if p.ApexLeaves[i], err = element(v.ApexLeafs[i], f(fmt.Sprintf("apex_leafs[%d]", i))); err != nil {
			return nil, err
		}
	}
	arities := s.TreeArities()
	for i := range v.ChallengeProofs {
		cp := &v.ChallengeProofs[i]
		c := &p.Challenges[i]
		at := f(fmt.Sprintf("challenge_proofs[%d]", i))
		for j, t := range []struct {
			name string
			m    *porep.MerkleProof
			leaf *fr.Element
			path *[][]fr.Element
		}{{"proof_r_old", &cp.ProofROld, &c.LeafROld, &c.PathROld}, {"proof_r_new", &cp.ProofRNew, &c.LeafRNew, &c.PathRNew}} {
			g := at + "." + t.name + ".data." + string(t.m.Kind)
			leaf, root, levels, err := proofLevels(t.m, g)
			if err != nil {
				return nil, err
			}
			if len(levels) != len(arities) {
				return nil, fieldErr(g, "%d path levels, want %d", len(levels), len(arities))
			}
			for l := range levels {
				if levels[l].Arity() != arities[l] {
					return nil, fieldErr(g, "level %d has arity %d, want %d", l, levels[l].Arity(), arities[l])
				}
			}
			*t.leaf, *t.path = leaf, siblings(levels)
			if i == 0 && j == 0 {
				p.RootROld = root
			} else if i == 0 {
				p.RootRNew = root
			}
		}
		g := at + ".proof_d_new.data." + string(cp.ProofDNew.Kind)
		leaf, _, levels, err := proofLevels(&cp.ProofDNew, g)
		if err != nil {
			return nil, err
		}
		if len(levels) != s.ChallengeBits() {
			return nil, fieldErr(g, "%d path levels, want %d", len(levels), s.ChallengeBits())
		}
		c.LeafDNew = leaf
		c.PathDNew = make([]fr.Element, len(levels))
		for l := range levels {
			if levels[l].Arity() != 2 {
				return nil, fieldErr(g, "level %d has arity %d, want 2", l, levels[l].Arity())
			}
			c.PathDNew[l] = levels[l].Siblings[0]
		}
	}
	return p, nil
}

// Verify checks natively, without the circuit, that vanilla partition
// proof v proves partition k of pub, as EmptySectorUpdate::verify does —
// comm_r_old and comm_r_new against comm_c and the recorded tree R roots,
// each challenge's three proofs at the derived node, with their recorded
// roots, leading there, and the encoding of leaf_r_new — and also what
// the circuit alone checks: the apex tree of the apex leaves leads to
// comm_d_new along the partition's own path, and each tree D proof passes
// through the apex leaf its node selects. A proof that passes Verify
// synthesizes into a satisfied circuit. Errors are *VanillaError values
// (path prefixed with at) or *InputError values.
func (s Shape) Verify(pub PublicInputs, v *PartitionProof, k int, at string) error {
	p, err := s.FromVanilla(v, at)
	if err != nil {
		return err
	}
	if err := s.Check(pub, p, k); err != nil {
		return err
	}
	f := func(x string) string { return vanilla.Join(at, x) }
	h2 := poseidon.MustGet(2)
	for _, t := range []struct {
		name       string
		root, comm fr.Element
	}{{"comm_r_old", p.RootROld, pub.CommROld}, {"comm_r_new", p.RootRNew, pub.CommRNew}} {
		got, err := h2.Hash([]fr.Element{p.CommC, t.root})
		if err != nil {
			return err
		}
		if !got.Equal(&t.comm) {
			return fieldErr(f("comm_c"), "Poseidon(comm_c, tree root) is not the public %s", t.name)
		}
	}
	// The apex tree, and its root's path to comm_d_new along k's bits.
	row := p.ApexLeaves
	for len(row) > 1 {
		next := make([]fr.Element, len(row)/2)
		for i := range next {
			next[i] = gadget.SHA254Node(row[2*i], row[2*i+1])
		}
		row = next
	}
	cb, pb, ab := s.ChallengeBits(), s.PartitionBits(), s.ApexBits()
	start := cb - pb - ab
	dPath := func(sibs []fr.Element, node uint64) []gadget.PathLevel {
		out := make([]gadget.PathLevel, len(sibs))
		for l := range sibs {
			out[l] = gadget.PathLevel{Index: int(node >> l & 1), Siblings: sibs[l : l+1]}
		}
		return out
	}
	root, err := gadget.PathRoot(gadget.TreeSHA254, row[0], dPath(p.Challenges[0].PathDNew[cb-pb:], uint64(k)))
	if err != nil {
		return err
	}
	if !root.Equal(&pub.CommDNew) {
		return fieldErr(f("apex_leafs"), "the apex tree does not lead to comm_d_new along partition %d's path", k)
	}
	nodes, err := s.ChallengeNodes(pub.CommRNew, k)
	if err != nil {
		return err
	}
	// Challenges are checked on all cores; the error is the first failing
	// challenge's, as in order.
	return parallel.FirstError(len(nodes), func(i int) error {
		node := nodes[i]
		cp := &v.ChallengeProofs[i]
		c := &p.Challenges[i]
		at := f(fmt.Sprintf("challenge_proofs[%d]", i))
		for _, t := range []struct {
			name string
			m    *porep.MerkleProof
			h    gadget.TreeHash
			root fr.Element
		}{
			{"proof_r_old", &cp.ProofROld, gadget.TreePoseidon, p.RootROld},
			{"proof_d_new", &cp.ProofDNew, gadget.TreeSHA254, pub.CommDNew},
			{"proof_r_new", &cp.ProofRNew, gadget.TreePoseidon, p.RootRNew},
		} {
			g := at + "." + t.name
			leaf, rec, levels, err := proofLevels(t.m, g+".data."+string(t.m.Kind))
			if err != nil {
				return err
			}
			if pos := vanilla.Position(levels); pos != node {
				return fieldErr(g, "proves node %d, the challenge is node %d", pos, node)
			}
			if !rec.Equal(&t.root) {
				return fieldErr(g, "its root is not the partition's")
			}
			got, err := gadget.PathRoot(t.h, leaf, levels)
			if err != nil {
				return fieldErr(g, "%v", err)
			}
			if !got.Equal(&rec) {
				return fieldErr(g, "the path does not lead to its root")
			}
		}
		apex := p.ApexLeaves[node>>start&uint64(s.ApexLeaves-1)]
		got, err := gadget.PathRoot(gadget.TreeSHA254, c.LeafDNew, dPath(c.PathDNew[:start], node))
		if err != nil {
			return err
		}
		if !got.Equal(&apex) {
			return fieldErr(at+".proof_d_new", "does not pass through the apex leaf of node %d", node)
		}
		return nil
	})
}
