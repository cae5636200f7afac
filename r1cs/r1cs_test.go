package r1cs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func elt(v int64) fr.Element {
	var e fr.Element
	e.SetInt64(v)
	return e
}

// square builds x·x = y with x private, y public, and a booleanity check
// b·(1−b) = 0, into any Builder.
func square(b Builder, x, bit int64) {
	xv := b.Alloc(elt(x))
	yv := b.AllocInput(elt(x * x))
	bv := b.Alloc(elt(bit))
	b.Enforce(LC{}.AddVar(xv), LC{}.AddVar(xv), LC{}.AddVar(yv))
	b.Enforce(LC{}.AddVar(bv), LC{}.AddVar(One).SubVar(bv), nil)
}

func TestSystemMergesAndTracksDensity(t *testing.T) {
	s := NewSystem()
	x := s.Alloc(elt(3))
	y := s.Alloc(elt(5))
	z := s.AllocInput(elt(8))
	// (x + 2y − 2y) · (z + y) = ... : y cancels in A, so A has only x.
	a := LC{}.AddVar(x).Add(y, elt(2)).Add(y, elt(-2))
	b := LC{}.AddVar(z).AddVar(y).AddVar(z)
	c := LC{}.Add(x, elt(21)).AddVar(y).SubVar(y)
	s.Enforce(a, b, c)

	require.Equal(t, []Variable{x}, s.A().Vars)
	require.Equal(t, []Variable{z, y}, s.B().Vars, "inputs before aux after sorting")
	require.Equal(t, elt(2), s.Coeffs()[s.B().CoeffIdx[0]], "z merged twice")
	require.True(t, s.ADensity().Get(0))
	require.False(t, s.ADensity().Get(1), "cancelled term does not count")
	require.True(t, s.BAuxDensity().Get(1))
	require.True(t, s.BInputDensity().Get(1))
	require.False(t, s.BInputDensity().Get(0))

	// 3·(16+5) = 63 = 21·3
	require.NoError(t, s.IsSatisfied())
	s.Finalize()
	require.Equal(t, Counts{Constraints: 3, Inputs: 2, Aux: 2, AAux: 1, BInputs: 1, BAux: 1}, s.Counts())
	require.Equal(t, []Variable{x, InputVariable(0), InputVariable(1)}, s.A().Vars)
	require.NoError(t, s.IsSatisfied())
}

func TestIsSatisfiedNamesFirstFailure(t *testing.T) {
	s := NewSystem()
	square(s, 4, 1)
	square(s, 5, 2) // bit = 2 is not boolean: constraint 3
	s.Finalize()
	err := s.IsSatisfied()
	var ue *UnsatisfiedError
	require.True(t, errors.As(err, &ue), "got %v", err)
	require.Equal(t, 3, ue.Index)
	require.False(t, ue.Input)

	s2 := NewSystem()
	square(s2, 4, 1)
	s2.Finalize()
	s2.Inputs()[0] = elt(2)
	require.Error(t, s2.IsSatisfied())
}

func TestModesAgree(t *testing.T) {
	s, w, c := NewSystem(), NewWitness(0, 0), NewCounter()
	for _, b := range []Builder{s, w, c} {
		for i := int64(0); i < 10; i++ {
			square(b, i+2, i&1)
		}
	}
	s.Finalize()
	c.Finalize()
	require.Equal(t, s.Inputs(), w.Inputs)
	require.Equal(t, s.Aux(), w.Aux)
	require.Equal(t, s.Counts(), c.Counts())
	require.Equal(t, s.Value(AuxVariable(3)), w.Value(AuxVariable(3)))

	a := make([]fr.Element, s.NumConstraints())
	bb := make([]fr.Element, s.NumConstraints())
	cc := make([]fr.Element, s.NumConstraints())
	require.NoError(t, s.Evaluate(a, bb, cc))
	for j := range a {
		var p fr.Element
		p.Mul(&a[j], &bb[j])
		require.Equal(t, cc[j], p, "constraint %d", j)
	}
}

// TestWitnessAppendParts: parts synthesized in place, concurrently, give
// the assignment of the sequential synthesis; a part that allocates other
// counts than part 0 fails, and so does a cancelled context.
func TestWitnessAppendParts(t *testing.T) {
	part := func(b Builder, i int64) {
		b.AllocInput(elt(100 + i))
		square(b, i+2, i&1)
	}
	want := NewWitness(0, 0)
	square(want, 7, 1)
	for i := range int64(50) {
		part(want, i)
	}
	got := NewWitness(0, 0)
	square(got, 7, 1)
	require.NoError(t, got.AppendParts(context.Background(), 50, 4, func(i int, w *Witness) error {
		part(w, int64(i))
		return nil
	}))
	require.Equal(t, want.Inputs, got.Inputs)
	require.Equal(t, want.Aux, got.Aux)

	for name, extra := range map[string]func(w *Witness){
		"more aux":   func(w *Witness) { w.Alloc(elt(1)) },
		"more input": func(w *Witness) { w.AllocInput(elt(1)) },
	} {
		w := NewWitness(0, 0)
		err := w.AppendParts(context.Background(), 5, 2, func(i int, w *Witness) error {
			part(w, int64(i))
			if i == 3 {
				extra(w)
			}
			return nil
		})
		require.ErrorContains(t, err, "part 3 allocated", name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := NewWitness(0, 0).AppendParts(ctx, 5, 2, func(int, *Witness) error { t.Fatal("a part ran"); return nil })
	require.ErrorIs(t, err, context.Canceled)
}

func TestCanonicalSerialization(t *testing.T) {
	s := NewSystem()
	x := s.Alloc(elt(3))
	in := s.AllocInput(elt(9))
	// x·x = in, written with a repeated and a cancelling term.
	s.Enforce(LC{}.AddVar(x).AddVar(in).SubVar(in), LC{}.AddVar(x), LC{}.AddVar(in))
	_, err := s.CanonicalDigest()
	require.Error(t, err, "not finalized")
	s.Finalize()

	var buf bytes.Buffer
	require.NoError(t, s.WriteCanonical(&buf))
	le := func(v int64) []byte {
		var b [32]byte
		fr.LittleEndian.PutElement(&b, elt(v))
		return b[:]
	}
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	var want []byte
	want = append(append(append(want, u64(2)...), u64(1)...), u64(3)...)
	// constraint 0: A = {aux0 → var 2}, B = {var 2}, C = {input 1}
	want = append(append(append(want, u32(1)...), u32(2)...), le(1)...)
	want = append(append(append(want, u32(1)...), u32(2)...), le(1)...)
	want = append(append(append(want, u32(1)...), u32(1)...), le(1)...)
	// per-input constraints: A = {i: 1}, B = C = {}
	for i := uint32(0); i < 2; i++ {
		want = append(append(append(want, u32(1)...), u32(i)...), le(1)...)
		want = append(append(want, u32(0)...), u32(0)...)
	}
	require.Equal(t, want, buf.Bytes())

	d, err := s.CanonicalDigest()
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(want), d)

	var wb []byte
	for _, v := range []int64{1, 9, 3} {
		wb = append(wb, le(v)...)
	}
	require.Equal(t, sha256.Sum256(wb), WitnessDigest(s.Inputs(), s.Aux()))
}

func TestLongLinearCombinationMerges(t *testing.T) {
	s := NewSystem()
	vars := make([]Variable, 300)
	for i := range vars {
		vars[i] = s.Alloc(elt(int64(i % 2)))
	}
	var lc LC
	for i := len(vars) - 1; i >= 0; i-- { // reverse order, each twice
		lc = lc.Add(vars[i], elt(int64(i+1))).Add(vars[i], elt(1))
	}
	s.Enforce(lc, LC{}.AddVar(One), lc)
	a := s.A()
	require.Len(t, a.Vars, 300)
	for i, v := range a.Vars {
		require.Equal(t, vars[i], v)
		require.Equal(t, elt(int64(i+2)), s.Coeffs()[a.CoeffIdx[i]])
	}
	require.NoError(t, s.IsSatisfied())
}

// An Unassigned system keeps the shape of the recording (counts, densities,
// constraints and coefficient table, identity of the matrices), refuses
// evaluation, and takes a witness through WithAssignment.
func TestUnassigned(t *testing.T) {
	s := NewSystem()
	_, err := s.Unassigned()
	require.Error(t, err, "not finalized")
	for i := int64(0); i < 40; i++ {
		square(s, i+2, i&1)
	}
	s.Finalize()
	u, err := s.Unassigned()
	require.NoError(t, err)
	require.False(t, u.Assigned())
	require.True(t, s.Assigned())
	require.Equal(t, s.Counts(), u.Counts())
	require.Equal(t, s.NumInputs(), u.NumInputs())
	require.Equal(t, s.NumAux(), u.NumAux())
	require.Empty(t, u.Inputs())
	require.Empty(t, u.Aux())
	require.Same(t, &s.A().Vars[0], &u.A().Vars[0], "constraints shared")

	n := s.NumConstraints()
	a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
	require.Error(t, u.Evaluate(a, b, c))
	require.Error(t, u.EvaluateChecked(a, b, c, 2))
	require.Error(t, u.IsSatisfied())

	require.Equal(t, s.Coeffs(), u.Coeffs())
	ds, err := s.CanonicalDigest()
	require.NoError(t, err)
	du, err := u.CanonicalDigest()
	require.NoError(t, err)
	require.Equal(t, ds, du)

	_, err = u.WithAssignment(s.Inputs(), s.Aux()[1:])
	require.Error(t, err, "aux count differs")
	w, err := u.WithAssignment(s.Inputs(), s.Aux())
	require.NoError(t, err)
	require.True(t, w.Assigned())
	require.NoError(t, w.IsSatisfied())
	require.NoError(t, w.Evaluate(a, b, c))
	require.False(t, u.Assigned(), "WithAssignment leaves the unassigned system as it was")
}

// A system without its matrices keeps its recording, counts, densities
// and coefficients, pairs with witnesses, and refuses evaluation until a
// recording of the same circuit gives its matrices back; one of another
// circuit is refused.
func TestWithoutMatrices(t *testing.T) {
	record := func(n int64) *System {
		s := NewSystem()
		for i := int64(0); i < n; i++ {
			square(s, i+2, i&1)
		}
		s.Finalize()
		return s
	}
	s := record(40)
	_, err := NewSystem().WithoutMatrices(nil)
	require.Error(t, err, "not finalized")
	u, err := s.Unassigned()
	require.NoError(t, err)
	require.Equal(t, s.Recording(), u.Recording())
	again := record(40)
	require.NotEqual(t, s.Recording(), again.Recording(), "recorded on its own")
	require.NotZero(t, again.Recording())

	recorded := 0
	bare, err := u.WithoutMatrices(func(context.Context) (*System, error) { recorded++; return record(40), nil })
	require.NoError(t, err)
	require.True(t, u.HasMatrices())
	require.False(t, bare.HasMatrices())
	require.Equal(t, s.Recording(), bare.Recording())
	require.Equal(t, s.Counts(), bare.Counts())
	require.Equal(t, s.Coeffs(), bare.Coeffs())
	require.Equal(t, s.BAuxDensity().Words(), bare.BAuxDensity().Words())
	for _, m := range []*Matrix{bare.A(), bare.B(), bare.C()} {
		require.Empty(t, m.Vars)
		require.Empty(t, m.RowStart)
	}

	w, err := bare.WithAssignment(s.Inputs(), s.Aux())
	require.NoError(t, err)
	require.Equal(t, s.Recording(), w.Recording())
	n := s.NumConstraints()
	a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
	require.ErrorIs(t, w.Evaluate(a, b, c), ErrNoMatrices)
	require.ErrorIs(t, w.EvaluateChecked(a, b, c, 2), ErrNoMatrices)
	require.ErrorIs(t, w.IsSatisfied(), ErrNoMatrices)
	_, err = bare.CanonicalDigest()
	require.ErrorIs(t, err, ErrNoMatrices)

	// Matrices records them again once for every system made from bare.
	full, err := w.Matrices(context.Background())
	require.NoError(t, err)
	require.True(t, full.HasMatrices())
	require.NoError(t, full.EvaluateChecked(a, b, c, 2))
	require.False(t, w.HasMatrices(), "w stays without")
	u2, err := bare.Matrices(context.Background())
	require.NoError(t, err)
	require.False(t, u2.Assigned())
	require.Equal(t, s.Recording(), u2.Recording())
	require.Equal(t, 1, recorded)
	same, err := s.Matrices(context.Background())
	require.NoError(t, err)
	require.Same(t, s, same, "a system with its matrices is its own")
	none, err := u.WithoutMatrices(nil)
	require.NoError(t, err)
	_, err = none.Matrices(context.Background())
	require.ErrorIs(t, err, ErrNoMatrices)
	other, err := u.WithoutMatrices(func(context.Context) (*System, error) { return record(41), nil })
	require.NoError(t, err)
	_, err = other.Matrices(context.Background())
	require.Error(t, err, "a recording of another circuit")
	failing, err := u.WithoutMatrices(func(context.Context) (*System, error) { return nil, errors.New("boom") })
	require.NoError(t, err)
	_, err = failing.Matrices(context.Background())
	require.ErrorContains(t, err, "boom")

	_, err = bare.WithMatrices(record(41))
	require.Error(t, err, "another circuit")
	_, err = bare.WithMatrices(bare)
	require.Error(t, err, "no matrices to give")
	back, err := bare.WithMatrices(again)
	require.NoError(t, err)
	require.Equal(t, s.Recording(), back.Recording(), "the recording stays")
	require.True(t, back.HasMatrices())
	require.False(t, back.Assigned())
	dw, err := back.CanonicalDigest()
	require.NoError(t, err)
	ds, err := s.CanonicalDigest()
	require.NoError(t, err)
	require.Equal(t, ds, dw)
	w, err = back.WithAssignment(s.Inputs(), s.Aux())
	require.NoError(t, err)
	require.NoError(t, w.EvaluateChecked(a, b, c, 2))
}

// Finalize leaves the matrices without the spare capacity appending left.
func TestFinalizeTrims(t *testing.T) {
	s := NewSystem()
	for i := int64(0); i < 5000; i++ {
		square(s, i+2, i&1)
	}
	require.Greater(t, cap(s.A().Vars)-len(s.A().Vars), len(s.A().Vars)/64, "appending left spare capacity")
	s.Finalize()
	for _, m := range []*Matrix{s.A(), s.B(), s.C()} {
		assert.LessOrEqual(t, cap(m.Vars)-len(m.Vars), len(m.Vars)/64)
		assert.LessOrEqual(t, cap(m.CoeffIdx)-len(m.CoeffIdx), len(m.CoeffIdx)/64)
		assert.LessOrEqual(t, cap(m.RowStart)-len(m.RowStart), len(m.RowStart)/64)
	}
	require.NoError(t, s.IsSatisfied())
}

// TestEvaluateZeroOne: rows whose values are 0 or 1 take the evaluation's
// and the check's paths without products; for every combination of values
// 0, 1, −1 and 7 and coefficients 1 and 3, a·b and c evaluate as with
// products, and the constraint is accepted exactly when a·b = c.
func TestEvaluateZeroOne(t *testing.T) {
	vals := []fr.Element{elt(0), elt(1), elt(-1), elt(7)}
	coeffs := []fr.Element{elt(1), elt(3)}
	for _, x := range vals {
		for _, y := range vals {
			for _, z := range vals {
				for _, k := range coeffs {
					s := NewSystem()
					xv, yv, zv := s.Alloc(x), s.Alloc(y), s.Alloc(z)
					// (k·x + y)·(y) = z + x
					s.Enforce(LC{}.Add(xv, k).AddVar(yv), LC{}.AddVar(yv), LC{}.AddVar(zv).AddVar(xv))
					s.Finalize()
					var a, b, c, ab fr.Element
					a.Mul(&k, &x)
					a.Add(&a, &y)
					b = y
					c.Add(&z, &x)
					ab.Mul(&a, &b)
					n := s.NumConstraints()
					va, vb, vc := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
					err := s.EvaluateChecked(va, vb, vc, 1)
					if ab != c {
						var ue *UnsatisfiedError
						require.ErrorAs(t, err, &ue)
						require.Equal(t, 0, ue.Index)
						require.ErrorAs(t, s.IsSatisfied(), &ue)
						continue
					}
					require.NoError(t, err)
					require.NoError(t, s.IsSatisfied())
					require.Equal(t, []fr.Element{a, b, c}, []fr.Element{va[0], vb[0], vc[0]})
				}
			}
		}
	}
}
