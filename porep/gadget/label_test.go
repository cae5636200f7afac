package gadget

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// synthLabel allocates replica_id, the parents and the challenge as the
// stacked circuit would (model order: replica_id and its bits, each parent
// then its bits, the 64 challenge bits) and computes the label.
func synthLabel(b r1cs.Builder, rid fr.Element, layer uint32, node uint64, parents []fr.Element) (Num, int) {
	cs := New(b)
	ridBits := ReverseBitNumbering(nil, cs.ToBitsLE(nil, cs.AllocNum(rid)))
	pb := make([][]Bit, len(parents))
	for i, p := range parents {
		pb[i] = ReverseBitNumbering(nil, cs.ToBitsLE(nil, cs.AllocNum(p)))
	}
	ch := cs.AllocUInt64(node)
	var before int
	if s, ok := b.(*r1cs.System); ok {
		before = s.NumConstraints()
	}
	return cs.Label(ridBits, layer, &ch, pb), before
}

func TestLabel14(t *testing.T) {
	rid := randElements(1, 11)[0]
	parents := randElements(14, 12)
	const layer, node = 3, 0x0123456789abcdef
	want, err := LabelNative(rid, layer, node, parents)
	require.NoError(t, err)

	s := r1cs.NewSystem()
	got, before := synthLabel(s, rid, layer, node, parents)
	require.Equal(t, want, got.Value)
	require.Equal(t, 522269, s.NumConstraints()-before)
	// Model oracle (porep-r1cs-model.py label(), 14 parents).
	require.Equal(t, r1cs.Counts{Constraints: 526173, Inputs: 1, Aux: 525653, AAux: 525637, BInputs: 1, BAux: 130089}, s.Counts())
	require.NoError(t, s.IsSatisfied())
	requireFlipBreaks(t, s, 300)          // a parent bit
	requireFlipBreaks(t, s, s.NumAux()-2) // a digest bit
	s.Aux()[s.NumAux()-1].Add(&s.Aux()[s.NumAux()-1], &feOne)
	require.Error(t, s.IsSatisfied(), "wrong packed label")
}

func TestLabelLayer1(t *testing.T) {
	rid := randElements(1, 21)[0]
	parents := randElements(6, 22)
	want, err := LabelNative(rid, 1, 77, parents)
	require.NoError(t, err)
	w, c := r1cs.NewWitness(0, 0), r1cs.NewCounter()
	got, _ := synthLabel(w, rid, 1, 77, parents)
	require.Equal(t, want, got.Value)
	synthLabel(c, rid, 1, 77, parents)
	require.Equal(t, r1cs.Counts{Constraints: 524125, Inputs: 1, Aux: 523605, AAux: 523597, BInputs: 1, BAux: 128049}, c.Counts())

	_, err = LabelNative(rid, 2, 77, parents)
	require.ErrorAs(t, err, new(*ParentCountError))
}

// BenchmarkLabelWitness is one 14-parent label (20 compressions and the
// packing) in witness-only mode, the dominant cost of the PoRep circuit.
func BenchmarkLabelWitness(b *testing.B) {
	w := r1cs.NewWitness(1, 530000)
	cs := New(w)
	rid := ReverseBitNumbering(nil, cs.ToBitsLE(nil, cs.AllocNum(randElements(1, 1)[0])))
	var parents [][]Bit
	for _, p := range randElements(14, 2) {
		parents = append(parents, ReverseBitNumbering(nil, cs.ToBitsLE(nil, cs.AllocNum(p))))
	}
	node := cs.AllocUInt64(12345)
	n := len(w.Aux)
	measureCPU(b, func() {
		w.Aux = w.Aux[:n]
		cs.Label(rid, 2, &node, parents)
	})
}
