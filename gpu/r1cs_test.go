package gpu

import (
	"errors"
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/r1cs"
)

// synthSystem returns the synthetic circuit of 2^logSize constraints (its
// public inputs used in B) of seed, finalized, and its public inputs.
func synthSystem(t testing.TB, logSize int, seed uint64) (*r1cs.System, []fr.Element) {
	t.Helper()
	sys, inputs, err := synth.System(synth.Shape{LogSize: logSize, InputsB: true, Seed: seed})
	require.NoError(t, err)
	return sys, inputs
}

// newWitness makes the handoff of sys's assignment by classifying every aux
// value, as the pipeline's L split does.
func newWitness(sys *r1cs.System) *Witness {
	aux := sys.Aux()
	w := &Witness{Inputs: sys.Inputs(), NumAux: len(aux), Ones: make([]uint64, (len(aux)+63)/64)}
	one := fr.One()
	for i := range aux {
		switch {
		case aux[i].IsZero():
		case aux[i] == one:
			w.Ones[i>>6] |= 1 << (uint(i) & 63)
		default:
			w.TailIdx = append(w.TailIdx, uint32(i))
			w.Tail = append(w.Tail, aux[i])
		}
	}
	return w
}

// The device layout evaluated term by term, from the witness handoff,
// equals r1cs's own evaluation; the layout's size is what Bytes says.
func TestR1CSEvalMatchesSystem(t *testing.T) {
	sys, _ := synthSystem(t, 12, 5)
	r, err := newHostR1CS(sys)
	require.NoError(t, err)
	m := sys.NumConstraints()
	want := [3][]fr.Element{make([]fr.Element, m), make([]fr.Element, m), make([]fr.Element, m)}
	require.NoError(t, sys.Evaluate(want[0], want[1], want[2]))
	w := newWitness(sys)
	require.NotEmpty(t, w.Tail, "the synthetic circuit has values outside {0, 1}")
	got := [3][]fr.Element{make([]fr.Element, m), make([]fr.Element, m), make([]fr.Element, m)}
	bad, err := r.eval(w, got[0], got[1], got[2])
	require.NoError(t, err)
	assert.Equal(t, -1, bad)
	assert.Equal(t, want, got)

	terms := len(sys.A().Vars) + len(sys.B().Vars) + len(sys.C().Vars)
	assert.Equal(t, terms, len(r.Col[0])+len(r.Col[1])+len(r.Col[2]))
	assert.Equal(t, layoutBytesOf(sys), r.bytes())
	for k := range 3 {
		assert.Len(t, r.RowStart[k], m+1)
		for _, c := range r.Col[k] {
			require.Less(t, int(c), r.Inputs+r.Aux)
		}
	}
	// ±1 coefficients are marked so that the device skips their products.
	var minusOne fr.Element
	one := fr.One()
	minusOne.Neg(&one)
	for i, c := range r.Coeffs {
		switch c {
		case one:
			assert.EqualValues(t, coeffOne, r.Kinds[i])
		case minusOne:
			assert.EqualValues(t, coeffMinusOne, r.Kinds[i])
		default:
			assert.EqualValues(t, coeffOther, r.Kinds[i])
		}
	}
}

// A witness changed in one value is refused at the first constraint it
// breaks, the one r1cs names.
func TestR1CSEvalFindsFirstUnsatisfied(t *testing.T) {
	sys, _ := synthSystem(t, 10, 7)
	r, err := newHostR1CS(sys)
	require.NoError(t, err)
	sys.Aux()[len(sys.Aux())/3].SetUint64(5)
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, sys.IsSatisfied(), &ue)
	m := sys.NumConstraints()
	a, b, c := make([]fr.Element, m), make([]fr.Element, m), make([]fr.Element, m)
	bad, err := r.eval(newWitness(sys), a, b, c)
	require.NoError(t, err)
	assert.Equal(t, ue.Index, bad)
	assert.Equal(t, ue.A, a[bad])
	assert.Equal(t, ue.C, c[bad])
}

// Systems made by WithAssignment share the recorded matrices; a system
// recorded again does not.
func TestR1CSRecords(t *testing.T) {
	sys, _ := synthSystem(t, 8, 1)
	r, err := newHostR1CS(sys)
	require.NoError(t, err)
	other, err := sys.WithAssignment(sys.Inputs(), sys.Aux())
	require.NoError(t, err)
	assert.True(t, r.records(sys))
	assert.True(t, r.records(other))
	again, _ := synthSystem(t, 8, 1)
	assert.False(t, r.records(again))
}

func TestWitnessCheck(t *testing.T) {
	sys, _ := synthSystem(t, 8, 2)
	w := newWitness(sys)
	nin, naux := sys.NumInputs(), sys.NumAux()
	require.NoError(t, w.Check(nin, naux))
	aux := make([]fr.Element, naux)
	w.Expand(aux)
	assert.Equal(t, sys.Aux(), aux)

	// The dense form: every aux value in Tail.
	dw := &Witness{Inputs: sys.Inputs(), NumAux: naux, Tail: sys.Aux()}
	require.True(t, dw.Dense())
	require.False(t, w.Dense())
	require.NoError(t, dw.Check(nin, naux))
	clear(aux)
	dw.Expand(aux)
	assert.Equal(t, sys.Aux(), aux)
	got := [3][]fr.Element{make([]fr.Element, sys.NumConstraints()), make([]fr.Element, sys.NumConstraints()), make([]fr.Element, sys.NumConstraints())}
	r, err := newHostR1CS(sys)
	require.NoError(t, err)
	first, err := r.eval(dw, got[0], got[1], got[2])
	require.NoError(t, err)
	assert.Equal(t, -1, first)
	short := &Witness{Inputs: sys.Inputs(), NumAux: naux, Tail: sys.Aux()[1:]}
	require.ErrorIs(t, short.Check(nin, naux), ErrBadArgument, "a dense witness one value short")

	bad := func(f func(w *Witness)) error {
		c := *w
		c.Ones = append([]uint64(nil), w.Ones...)
		c.TailIdx = append([]uint32(nil), w.TailIdx...)
		c.Tail = append([]fr.Element(nil), w.Tail...)
		f(&c)
		return c.Check(nin, naux)
	}
	for name, f := range map[string]func(w *Witness){
		"short inputs":     func(w *Witness) { w.Inputs = w.Inputs[1:] },
		"short bitmap":     func(w *Witness) { w.Ones = w.Ones[1:] },
		"bits past aux":    func(w *Witness) { w.Ones[len(w.Ones)-1] |= 1 << 63 },
		"index past aux":   func(w *Witness) { w.TailIdx[len(w.TailIdx)-1] = uint32(naux) },
		"unsorted indices": func(w *Witness) { w.TailIdx[0], w.TailIdx[1] = w.TailIdx[1], w.TailIdx[0] },
		"missing value":    func(w *Witness) { w.Tail = w.Tail[1:] },
	} {
		err := bad(f)
		assert.True(t, errors.Is(err, ErrBadArgument), "%s: %v", name, err)
	}
}

// A tail of several million indices is checked in pieces; the error still
// names the lowest bad position, wherever the pieces end.
func TestWitnessCheckLongTail(t *testing.T) {
	const n = 3<<20 + 5
	w := &Witness{Inputs: make([]fr.Element, 1), NumAux: n + 1, Ones: make([]uint64, (n+1+63)/64),
		TailIdx: make([]uint32, n), Tail: make([]fr.Element, n)}
	for j := range w.TailIdx {
		w.TailIdx[j] = uint32(j)
	}
	require.NoError(t, w.Check(1, n+1))
	w.TailIdx[2<<20+7] = n + 1 // past aux, in the third piece
	w.TailIdx[1<<20] = 0       // not increasing, at the second piece's start
	require.ErrorContains(t, w.Check(1, n+1), fmt.Sprintf("position %d", 1<<20))
	w.TailIdx[1<<20] = 1 << 20
	require.ErrorContains(t, w.Check(1, n+1), fmt.Sprintf("position %d", 2<<20+7))
}

// Unfinalized systems and coefficient tables past 2^16 entries do not fit
// the layout.
func TestR1CSLayoutLimits(t *testing.T) {
	sys := r1cs.NewSystem()
	x := sys.Alloc(fr.One())
	sys.Enforce(r1cs.LC{{Var: x, Coeff: fr.One()}}, r1cs.LC{{Var: r1cs.InputVariable(0), Coeff: fr.One()}}, r1cs.LC{{Var: x, Coeff: fr.One()}})
	_, err := newHostR1CS(sys)
	require.ErrorIs(t, err, ErrBadArgument)
	for i := range 1 << 16 {
		var c fr.Element
		c.SetUint64(uint64(i + 2))
		sys.Enforce(r1cs.LC{{Var: x, Coeff: c}}, r1cs.LC{{Var: r1cs.InputVariable(0), Coeff: fr.One()}}, r1cs.LC{{Var: x, Coeff: c}})
	}
	sys.Finalize()
	_, err = newHostR1CS(sys)
	require.ErrorIs(t, err, ErrR1CSLayout)
}

// bytes is the device memory r takes.
func (r *hostR1CS) bytes() int64 {
	return layoutBytes(r.Constraints, len(r.Col[0])+len(r.Col[1])+len(r.Col[2]), len(r.Coeffs))
}

// convertChunks hands over, chunk after chunk and matrix after matrix,
// exactly the conversion of the whole matrices, for chunks smaller than a
// goroutine's piece, spanning several pieces, and larger than any matrix;
// put's error stops it.
func TestConvertChunks(t *testing.T) {
	sys, _ := synthSystem(t, 16, 3)
	var want [3]struct {
		cols []uint32
		coef []uint16
	}
	for k := range want {
		_, want[k].cols, want[k].coef = convertMatrix(sys, k)
	}
	require.Greater(t, len(want[0].cols), 1<<16, "A spans several pieces")
	for _, chunk := range []int{1000, 1<<16 + 5, 1 << 24} {
		var got [3]struct {
			cols []uint32
			coef []uint16
		}
		err := convertChunks(sys, chunk, func(k, lo int, cols []uint32, coef []uint16) error {
			require.Equal(t, len(got[k].cols), lo, "chunk %d: matrix %d in term order", chunk, k)
			require.LessOrEqual(t, len(cols), chunk)
			got[k].cols = append(got[k].cols, cols...)
			got[k].coef = append(got[k].coef, coef...)
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, want, got, "chunk %d", chunk)
	}
	stop := errors.New("stop")
	calls := 0
	err := convertChunks(sys, 1000, func(int, int, []uint32, []uint16) error { calls++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, calls)
}
