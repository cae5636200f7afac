package gadget

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

// A minimal reading of the C1 JSON written by rust-fil-proofs (testdata from
// issue 3's refgen): only the fields these tests check.
type jsonDomain [32]byte

func (d jsonDomain) fr(t *testing.T) fr.Element {
	b := [32]byte(d)
	e, err := fr.LittleEndian.Element(&b)
	require.NoError(t, err)
	return e
}

type jsonProof struct {
	Data struct {
		Single *struct {
			Root jsonDomain `json:"root"`
			Leaf jsonDomain `json:"leaf"`
			Path struct {
				Path []struct {
					Hashes []jsonDomain `json:"hashes"`
					Index  int          `json:"index"`
				} `json:"path"`
			} `json:"path"`
		} `json:"Single"`
	} `json:"data"`
}

func (p *jsonProof) levels(t *testing.T) (leaf, root fr.Element, path []PathLevel) {
	s := p.Data.Single
	require.NotNil(t, s, "only Single proofs in the 2 KiB vectors")
	for _, l := range s.Path.Path {
		pl := PathLevel{Index: l.Index}
		for _, h := range l.Hashes {
			pl.Siblings = append(pl.Siblings, h.fr(t))
		}
		path = append(path, pl)
	}
	return s.Leaf.fr(t), s.Root.fr(t), path
}

type jsonColumnProof struct {
	Column struct {
		Index uint64       `json:"index"`
		Rows  []jsonDomain `json:"rows"`
	} `json:"column"`
	InclusionProof jsonProof `json:"inclusion_proof"`
}

type jsonLabelingProof struct {
	Parents    []jsonDomain `json:"parents"`
	LayerIndex uint32       `json:"layer_index"`
	Node       uint64       `json:"node"`
}

type jsonC1 struct {
	VanillaProofs map[string][][]struct {
		CommDProofs    jsonProof `json:"comm_d_proofs"`
		CommRLastProof jsonProof `json:"comm_r_last_proof"`
		ReplicaColumns struct {
			Cx         jsonColumnProof   `json:"c_x"`
			DrgParents []jsonColumnProof `json:"drg_parents"`
			ExpParents []jsonColumnProof `json:"exp_parents"`
		} `json:"replica_column_proofs"`
		LabelingProofs []jsonLabelingProof `json:"labeling_proofs"`
	} `json:"vanilla_proofs"`
	CommR     jsonDomain `json:"comm_r"`
	CommD     jsonDomain `json:"comm_d"`
	ReplicaID jsonDomain `json:"replica_id"`
}

func loadC1(t *testing.T) *jsonC1 {
	var c1 jsonC1
	refgen.ReadJSONIfPresent(t, &c1, "porep-2k", "c1.json")
	return &c1
}

// TestRefgenC1Native recomputes, natively, every root, column hash, label and
// the encoding of the Rust-generated 2 KiB C1 output.
func TestRefgenC1Native(t *testing.T) {
	c1 := loadC1(t)
	proofs := c1.VanillaProofs["StackedDrg2KiBV1"]
	require.NotEmpty(t, proofs)
	rid := c1.ReplicaID.fr(t)
	p2 := poseidon.MustGet(2)
	checked := 0
	for _, part := range proofs {
		for _, vp := range part {
			dLeaf, dRoot, dPath := vp.CommDProofs.levels(t)
			got, err := PathRoot(TreeSHA254, dLeaf, dPath)
			require.NoError(t, err)
			require.Equal(t, dRoot, got, "tree D root")
			require.Equal(t, c1.CommD.fr(t), dRoot)

			rLeaf, rRoot, rPath := vp.CommRLastProof.levels(t)
			commRLast, err := PathRoot(TreePoseidon, rLeaf, rPath)
			require.NoError(t, err)
			require.Equal(t, rRoot, commRLast, "tree R root")

			cols := append([]jsonColumnProof{vp.ReplicaColumns.Cx}, vp.ReplicaColumns.DrgParents...)
			cols = append(cols, vp.ReplicaColumns.ExpParents...)
			var commC fr.Element
			for i, cp := range cols {
				rows := make([]fr.Element, len(cp.Column.Rows))
				for j, r := range cp.Column.Rows {
					rows[j] = r.fr(t)
				}
				h, err := poseidon.MustGet(len(rows)).Hash(rows)
				require.NoError(t, err)
				leaf, root, path := cp.InclusionProof.levels(t)
				require.Equal(t, leaf, h, "column %d hash", i)
				got, err := PathRoot(TreePoseidon, leaf, path)
				require.NoError(t, err)
				require.Equal(t, root, got, "column %d tree C root", i)
				commC = root
			}
			commR, err := p2.Hash([]fr.Element{commC, commRLast})
			require.NoError(t, err)
			require.Equal(t, c1.CommR.fr(t), commR, "comm_r = H(comm_c, comm_r_last)")

			// Labels: each labeling proof's label is the challenged column's row.
			for _, lp := range vp.LabelingProofs {
				require.Len(t, lp.Parents, TotalParents)
				all := make([]fr.Element, len(lp.Parents))
				for j, p := range lp.Parents {
					all[j] = p.fr(t)
				}
				got, err := LabelNative(rid, lp.LayerIndex, lp.Node, all[:parentCount(lp.LayerIndex)])
				require.NoError(t, err)
				require.Equal(t, vp.ReplicaColumns.Cx.Column.Rows[lp.LayerIndex-1].fr(t), got, "label layer %d", lp.LayerIndex)
			}
			// Encoding: replica node = last label + data node.
			last := vp.ReplicaColumns.Cx.Column.Rows[len(vp.ReplicaColumns.Cx.Column.Rows)-1].fr(t)
			var enc fr.Element
			enc.Add(&last, &dLeaf)
			require.Equal(t, rLeaf, enc, "encoding")
			checked++
		}
	}
	require.Equal(t, 2, checked)
}

// TestRefgenC1Circuit proves the first challenge's tree-D, tree-R and column
// inclusions and its first label in the circuit and checks satisfaction.
func TestRefgenC1Circuit(t *testing.T) {
	if testing.Short() {
		t.Skip("large circuit")
	}
	c1 := loadC1(t)
	vp := c1.VanillaProofs["StackedDrg2KiBV1"][0][0]
	s := r1cs.NewSystem()
	cs := New(s)

	leaf, root, path := vp.CommDProofs.levels(t)
	require.NoError(t, cs.PoR(TreeSHA254, cs.AllocNum(leaf), path, cs.AllocNum(root)))
	leaf, root, path = vp.CommRLastProof.levels(t)
	require.NoError(t, cs.PoR(TreePoseidon, cs.AllocNum(leaf), path, cs.AllocNum(root)))
	for _, cp := range vp.ReplicaColumns.DrgParents {
		var rows []Num
		for _, r := range cp.Column.Rows {
			rows = append(rows, cs.AllocNum(r.fr(t)))
		}
		h := cs.Poseidon(poseidon.MustGet(len(rows)), rows)
		_, root, path := cp.InclusionProof.levels(t)
		require.NoError(t, cs.PoR(TreePoseidon, h, path, cs.AllocNum(root)))
	}
	lp := vp.LabelingProofs[0]
	ridBits := ReverseBitNumbering(nil, cs.ToBitsLE(nil, cs.AllocNum(c1.ReplicaID.fr(t))))
	var parents [][]Bit
	for _, p := range lp.Parents[:parentCount(lp.LayerIndex)] {
		parents = append(parents, ReverseBitNumbering(nil, cs.ToBitsLE(nil, cs.AllocNum(p.fr(t)))))
	}
	node := cs.AllocUInt64(lp.Node)
	label := cs.Label(ridBits, lp.LayerIndex, &node, parents)
	require.Equal(t, vp.ReplicaColumns.Cx.Column.Rows[lp.LayerIndex-1].fr(t), label.Value)
	require.NoError(t, s.IsSatisfied())
}
