package gadget

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

func randElements(n int, seed uint64) []fr.Element {
	out := make([]fr.Element, n)
	for i := range out {
		out[i].SetUint64(seed*1000003 + uint64(i)*7919)
		out[i].Exp(out[i], bigFive) // spread over the field
	}
	return out
}

func TestPoseidonCircuit(t *testing.T) {
	// Constraint counts: neptune circuit.rs test_poseidon_hash. Aux and
	// density: porep-r1cs-model.py (arity inputs allocated, then the hash).
	cases := []struct {
		arity int
		want  r1cs.Counts
	}{
		{2, r1cs.Counts{Constraints: 311, Inputs: 1, Aux: 313, AAux: 234, BInputs: 1, BAux: 234}},
		{4, r1cs.Counts{Constraints: 377, Inputs: 1, Aux: 381, AAux: 285, BInputs: 1, BAux: 285}},
		{8, r1cs.Counts{Constraints: 505, Inputs: 1, Aux: 513, AAux: 384, BInputs: 1, BAux: 384}},
		{11, r1cs.Counts{Constraints: 598, Inputs: 1, Aux: 609, AAux: 456, BInputs: 1, BAux: 456}},
	}
	for _, tc := range cases {
		c := poseidon.MustGet(tc.arity)
		in := randElements(tc.arity, uint64(tc.arity))
		want, err := c.Hash(in)
		require.NoError(t, err)

		s, w, cnt := r1cs.NewSystem(), r1cs.NewWitness(0, 0), r1cs.NewCounter()
		var outs []Num
		for _, b := range []r1cs.Builder{s, w, cnt} {
			cs := New(b)
			nums := make([]Num, len(in))
			for i := range in {
				nums[i] = cs.AllocNum(in[i])
			}
			outs = append(outs, cs.Poseidon(c, nums))
		}
		for _, o := range outs {
			require.Equal(t, want, o.Value, "arity %d", tc.arity)
		}
		require.Equal(t, want, s.Value(outs[0].Var))
		require.Equal(t, tc.want, s.Counts(), "arity %d", tc.arity)
		require.Equal(t, tc.want, cnt.Counts(), "arity %d", tc.arity)
		require.Equal(t, s.Aux(), w.Aux)
		require.NoError(t, s.IsSatisfied())
		// Corrupt an input, an intermediate and the output.
		for _, i := range []int{0, s.NumAux() / 2, s.NumAux() - 1} {
			old := s.Aux()[i]
			s.Aux()[i].Add(&old, &feOne)
			require.Error(t, s.IsSatisfied(), "arity %d aux %d", tc.arity, i)
			s.Aux()[i] = old
		}
	}
}

func BenchmarkPoseidon11Witness(b *testing.B) {
	c := poseidon.MustGet(11)
	in := randElements(11, 5)
	w := r1cs.NewWitness(1, 1000)
	cs := New(w)
	nums := make([]Num, len(in))
	for i := range in {
		nums[i] = cs.AllocNum(in[i])
	}
	n := len(w.Aux)
	measureCPU(b, func() {
		w.Aux = w.Aux[:n]
		cs.Poseidon(c, nums)
	})
}

var bigFive = func() *big.Int { return big.NewInt(5) }()
