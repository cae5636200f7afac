package sparsetree

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/gadget"
)

// A sparse tree equals the dense tree of the same leaves (explicit ones,
// the default elsewhere): roots, leaves and every path.
func TestMatchesDense(t *testing.T) {
	for _, tc := range []struct {
		h       gadget.TreeHash
		arities []int
	}{{gadget.TreeSHA254, []int{2, 2, 2, 2, 2}}, {gadget.TreePoseidon, []int{8, 8, 2}}, {gadget.TreePoseidon, []int{8, 8}}} {
		n := uint64(1)
		for _, a := range tc.arities {
			n *= uint64(a)
		}
		var def fr.Element
		def.SetUint64(0xdef)
		leaves := map[uint64]fr.Element{}
		for _, pos := range []uint64{0, 3, 4, n / 2, n - 1} {
			var v fr.Element
			v.SetUint64(1000 + pos)
			leaves[pos] = v
		}
		tree := New(tc.h, tc.arities, leaves, def, 3)

		level := make([]fr.Element, n)
		for i := range level {
			level[i] = tree.Leaf(uint64(i))
			if v, ok := leaves[uint64(i)]; ok {
				require.Equal(t, v, level[i])
			} else {
				require.Equal(t, def, level[i])
			}
		}
		for _, a := range tc.arities {
			next := make([]fr.Element, len(level)/a)
			for i := range next {
				next[i] = gadget.NodeHash(tc.h, level[i*a:(i+1)*a])
			}
			level = next
		}
		require.Equal(t, level[0], tree.Root())
		for pos := range n {
			root, err := gadget.PathRoot(tc.h, tree.Leaf(pos), tree.Path(pos))
			require.NoError(t, err)
			require.Equal(t, level[0], root, "position %d", pos)
		}
	}
}

// MerkleProof splits the path into base, sub and top levels as
// storage-proofs-core serializes them.
func TestMerkleProofLevels(t *testing.T) {
	var def fr.Element
	leaves := map[uint64]fr.Element{77: def}
	tree := New(gadget.TreePoseidon, []int{8, 8, 8, 4, 2}, leaves, def, 1)
	m := tree.MerkleProof(77, 4, 2)
	require.Equal(t, porep.MerkleTop, m.Kind)
	require.Len(t, m.Base, 3)
	require.Len(t, m.Sub, 1)
	require.Len(t, m.Top, 1)
	require.Len(t, m.Sub[0].Hashes, 3)
	require.Len(t, m.Top[0].Hashes, 1)
	require.Equal(t, Domain(tree.Root()), m.Root)
	require.EqualValues(t, 77%8, m.Base[0].Index)
	require.EqualValues(t, 77/8%8, m.Base[1].Index)

	m = tree.MerkleProof(77, 0, 0)
	require.Equal(t, porep.MerkleSingle, m.Kind)
	require.Len(t, m.Base, 5)
}
