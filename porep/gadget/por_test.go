package gadget

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

func randPath(arities []int, seed uint64) []PathLevel {
	path := make([]PathLevel, len(arities))
	for i, a := range arities {
		path[i] = PathLevel{Index: int(seed+uint64(3*i)) % a, Siblings: randElements(a-1, seed+uint64(i)+1)}
		if i%2 == 1 {
			path[i].Index = a - 1
		}
	}
	return path
}

// randPoR returns a random leaf, a random path over arities and the root
// they hash to under h.
func randPoR(t *testing.T, h TreeHash, arities []int, leafSeed, pathSeed uint64) (leaf fr.Element, path []PathLevel, root fr.Element) {
	t.Helper()
	leaf = randElements(1, leafSeed)[0]
	path = randPath(arities, pathSeed)
	var err error
	root, err = PathRoot(h, leaf, path)
	require.NoError(t, err)
	return leaf, path, root
}

func TestPoR(t *testing.T) {
	// Model oracle: porep-r1cs-model.py por(), with leaf and root allocated first.
	cases := []struct {
		h       TreeHash
		arities []int
		want    r1cs.Counts
	}{
		{TreeSHA254, []int{2, 2, 2}, r1cs.Counts{Constraints: 136148, Inputs: 2, Aux: 136007, AAux: 136000, BInputs: 1, BAux: 34497}},
		{TreePoseidon, []int{8, 8}, r1cs.Counts{Constraints: 1062, Inputs: 2, Aux: 1076, AAux: 815, BInputs: 1, BAux: 778}},
		{TreePoseidon, []int{8, 8, 2}, r1cs.Counts{Constraints: 1376, Inputs: 2, Aux: 1391, AAux: 1052, BInputs: 1, BAux: 1013}},
		{TreePoseidon, []int{4, 4}, r1cs.Counts{Constraints: 776, Inputs: 2, Aux: 782, AAux: 591, BInputs: 1, BAux: 574}},
	}
	for _, tc := range cases {
		leaf, path, root := randPoR(t, tc.h, tc.arities, 99, 7)

		s := r1cs.NewSystem()
		cs := New(s)
		l, r := cs.AllocNum(leaf), cs.AllocNum(root)
		require.NoError(t, cs.PoR(tc.h, l, path, r))
		require.Equal(t, tc.want, s.Counts(), "%v", tc.arities)
		require.NoError(t, s.IsSatisfied())

		// The packed index is the leaf position, read little-endian in base arity.
		pos, mul := 0, 1
		for i, a := range tc.arities {
			pos += path[i].Index * mul
			mul *= a
		}
		var want fr.Element
		want.SetUint64(uint64(pos))
		require.Equal(t, want, s.Inputs()[1])

		// A flipped index bit (the first one allocated after leaf and root) breaks it.
		requireFlipBreaks(t, s, 2)
		// A wrong root breaks it.
		s.Aux()[1].Add(&s.Aux()[1], &feOne)
		require.Error(t, s.IsSatisfied())
	}
}

func TestPoRErrors(t *testing.T) {
	cs := New(r1cs.NewCounter())
	var n Num
	require.Error(t, cs.PoR(TreeSHA254, n, []PathLevel{{Index: 0, Siblings: make([]fr.Element, 3)}}, n))
	require.Error(t, cs.PoR(TreePoseidon, n, []PathLevel{{Index: 8, Siblings: make([]fr.Element, 7)}}, n))
	require.Error(t, cs.PoR(TreePoseidon, n, []PathLevel{{Index: 0, Siblings: make([]fr.Element, 2)}}, n))
}
