package gadget

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// TestPoRBits: por_no_challenge_input costs what PoR costs less the index
// bit allocations (one constraint each) and the packed-index public input
// (one per 254 bits); it is satisfied on a valid path and broken by a
// flipped challenge bit or a wrong root.
func TestPoRBits(t *testing.T) {
	for _, tc := range []struct {
		h       TreeHash
		arities []int
	}{
		{TreeSHA254, []int{2, 2, 2}},
		{TreePoseidon, []int{8, 8}},
		{TreePoseidon, []int{8, 8, 2}},
		{TreePoseidon, []int{8, 4, 2}},
	} {
		leaf, path, root := randPoR(t, tc.h, tc.arities, 5, 11)

		ref := r1cs.NewSystem()
		rcs := New(ref)
		require.NoError(t, rcs.PoR(tc.h, rcs.AllocNum(leaf), path, rcs.AllocNum(root)))

		s := r1cs.NewSystem()
		cs := New(s)
		l, r := cs.AllocNum(leaf), cs.AllocNum(root)
		var bits []Bit
		for _, lv := range path {
			for a := lv.Arity(); a > 1; a /= 2 {
				bits = append(bits, cs.AllocBit(false))
			}
		}
		// Set the bits to the path's position, little-endian.
		nb := 0
		for _, lv := range path {
			for j := 0; 1<<j < lv.Arity(); j++ {
				bits[nb] = isBit(bits[nb].v, lv.Index>>j&1 == 1)
				s.Aux()[bits[nb].v.Index()] = feBool(bits[nb].val)
				nb++
			}
		}
		sib := make([][]Num, len(path))
		for i := range path {
			for _, v := range path[i].Siblings {
				sib[i] = append(sib[i], cs.AllocNum(v))
			}
		}
		before := s.NumConstraints()
		require.NoError(t, cs.PoRBits(tc.h, bits, l, sib, r))
		require.NoError(t, s.IsSatisfied(), "%v", tc.arities)
		// PoR: its bits (one constraint each), the gadget, one packing row.
		require.Equal(t, ref.NumConstraints()-len(bits)-1, s.NumConstraints()-before, "%v", tc.arities)
		require.Equal(t, 1, s.NumInputs(), "no public input")

		requireFlipBreaks(t, s, bits[0].v.Index())
		s.Aux()[1].Add(&s.Aux()[1], &feOne)
		require.Error(t, s.IsSatisfied())
	}
}

func TestPoRBitsErrors(t *testing.T) {
	cs := New(r1cs.NewCounter())
	var n Num
	b := cs.AllocBit(false)
	var e *PoRBitsError
	require.ErrorAs(t, cs.PoRBits(TreeSHA254, []Bit{b, b}, n, [][]Num{{n}}, n), &e) // 2 bits, 1 level
	require.ErrorAs(t, cs.PoRBits(TreeSHA254, []Bit{b, b}, n, [][]Num{{n, n, n}}, n), &e)
	require.ErrorAs(t, cs.PoRBits(TreePoseidon, []Bit{b, b}, n, [][]Num{{n, n}}, n), &e)
	require.NoError(t, cs.PoRBits(TreePoseidon, nil, n, nil, n)) // no level: root equality only
}

func TestSelectMulBits(t *testing.T) {
	vals := randElements(8, 3)
	for idx := 0; idx < 8; idx++ {
		s := r1cs.NewSystem()
		cs := New(s)
		from := make([]Num, len(vals))
		for i := range vals {
			from[i] = cs.AllocNum(vals[i])
		}
		bits := []Bit{cs.AllocBit(idx&1 == 1), cs.AllocBit(idx&2 != 0), cs.AllocBit(idx&4 != 0)}
		got := cs.Select(from, bits)
		require.Equal(t, vals[idx], got.Value)
		require.Equal(t, 3+7, s.NumConstraints()) // bits, then 4 + 2 + 1 picks
		require.NoError(t, s.IsSatisfied())
	}

	s := r1cs.NewSystem()
	cs := New(s)
	a, b := cs.AllocNum(vals[0]), cs.AllocNum(vals[1])
	p := cs.Mul(a, b)
	var want fr.Element
	want.Mul(&vals[0], &vals[1])
	require.Equal(t, want, p.Value)
	require.NoError(t, s.IsSatisfied())
	s.Aux()[p.Var.Index()].Add(&want, &feOne)
	require.Error(t, s.IsSatisfied())

	// NumToAllocatedBits: 255 booleanity rows and one packing row (A = the
	// bits, B = ONE, C = the number, so n is dense in no query).
	s = r1cs.NewSystem()
	cs = New(s)
	n := cs.AllocNum(vals[2])
	bs := cs.NumToAllocatedBits(nil, n)
	require.Len(t, bs, NumBits)
	require.Equal(t, NumBits+1, s.NumConstraints())
	require.Equal(t, r1cs.Counts{Constraints: 256, Inputs: 1, Aux: 256, AAux: 255, BInputs: 1, BAux: 255}, s.Counts())
	require.NoError(t, s.IsSatisfied())
	requireFlipBreaks(t, s, bs[7].v.Index())

	require.Panics(t, func() { cs.Select([]Num{n, n, n}, bs[:2]) })
}
