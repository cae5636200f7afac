package r1cs

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// segCircuit is a toy circuit cut into segments: segment k allocates
// ins[k] inputs and aux[k] aux variables and enforces constraints over its
// own variables and random earlier ones (repeated terms, zero sums,
// coefficients new to the segment), so that density bits cross segment
// words and the coefficient table grows in every segment.
type segCircuit struct {
	ins, aux []int
	seed     uint64
}

// run synthesizes segment k into b; first are the variables of the earlier
// segments (and the global ones), which b must already hold.
func (c *segCircuit) run(b Builder, k int, firstIn, firstAux int) {
	r := rand.New(rand.NewPCG(c.seed, uint64(k)))
	elem := func(v uint64) (e fr.Element) { e.SetUint64(v); return }
	var own []Variable
	for i := 0; i < c.aux[k]; i++ {
		own = append(own, b.Alloc(elem(r.Uint64N(100))))
		if r.IntN(4) == 0 && len(own) > 0 || i == c.aux[k]-1 {
			pick := func() Variable {
				switch r.IntN(4) {
				case 0:
					return InputVariable(r.IntN(firstIn))
				case 1:
					if firstAux > 0 {
						return AuxVariable(r.IntN(firstAux))
					}
				}
				return own[r.IntN(len(own))]
			}
			lc := func() LC {
				var l LC
				for range r.IntN(5) {
					v := pick()
					l = l.Add(v, elem(uint64(1+r.IntN(3+k))))
					if r.IntN(5) == 0 { // a zero sum, dropped
						var neg fr.Element
						neg.Neg(&l[len(l)-1].Coeff)
						l = l.Add(v, neg)
					}
				}
				return l
			}
			b.Enforce(lc(), lc(), lc())
		}
		if i < c.ins[k] {
			in := b.AllocInput(elem(r.Uint64N(100)))
			firstIn++
			b.Enforce(LC{}.AddVar(in), LC{}.AddVar(One), LC{}.AddVar(own[len(own)-1]))
		}
	}
	for i := c.aux[k]; i < c.ins[k]; i++ {
		b.AllocInput(elem(7))
	}
}

func TestSegmentedEqualsSystem(t *testing.T) {
	c := &segCircuit{seed: 5}
	for k := range 40 {
		c.ins = append(c.ins, []int{0, 1, 2}[k%3])
		c.aux = append(c.aux, []int{0, 1, 63, 64, 65, 200, 3}[k%7])
	}
	want := NewSystem()
	in, aux := 1, 0
	starts := make([][2]int, len(c.ins))
	for k := range c.ins {
		starts[k] = [2]int{in, aux}
		c.run(want, k, in, aux)
		in += c.ins[k]
		aux += c.aux[k]
	}
	want.Finalize()
	wantDigest, err := want.CanonicalDigest()
	require.NoError(t, err)

	for _, tc := range []struct {
		workers   int
		shapeOnly bool
	}{{1, false}, {3, false}, {2, true}} {
		workers := tc.workers
		rec := NewSegmented(in, aux)
		if tc.shapeOnly {
			rec = NewSegmentedShape(in, aux)
		}
		segs := make([]*Segment, len(c.ins))
		for k := range segs {
			segs[k] = rec.Segment(c.ins[k], c.aux[k])
		}
		// Record in reverse order, concurrently: the toy circuit reads no
		// values, so order does not matter.
		var wg sync.WaitGroup
		for k := len(segs) - 1; k >= 0; k-- {
			wg.Go(func() { c.run(segs[k], k, starts[k][0], starts[k][1]) })
		}
		wg.Wait()
		if tc.shapeOnly {
			for _, g := range segs {
				g.Done()
			}
		}
		got, err := rec.System(context.Background(), workers)
		require.NoError(t, err)
		require.True(t, got.Finalized())
		requireSameConstraints(t, want, got)
		require.NotZero(t, got.Recording())
		require.NotEqual(t, want.Recording(), got.Recording(), "a recording of its own")
		require.Equal(t, !tc.shapeOnly, got.Assigned())
		require.Equal(t, want.NumInputs(), got.NumInputs())
		require.Equal(t, want.NumAux(), got.NumAux())
		if !tc.shapeOnly {
			require.Equal(t, want.Inputs(), got.Inputs())
			require.Equal(t, want.Aux(), got.Aux())
		}
		d, err := got.CanonicalDigest()
		require.NoError(t, err)
		require.Equal(t, wantDigest, d)
		if !tc.shapeOnly {
			require.Equal(t, want.IsSatisfied() == nil, got.IsSatisfied() == nil)
		}
		_, err = rec.System(context.Background(), workers)
		require.Error(t, err, "joined twice")
	}
}

// requireSameConstraints checks that got records want's constraints:
// counts, coefficient table, matrices row by row and densities.
func requireSameConstraints(t *testing.T, want, got *System) {
	t.Helper()
	require.Equal(t, want.Counts(), got.Counts())
	require.Equal(t, want.Coeffs(), got.Coeffs())
	for k, m := range []*Matrix{want.A(), want.B(), want.C()} {
		g := []*Matrix{got.A(), got.B(), got.C()}[k]
		require.Equal(t, m.RowStart, g.RowStart, "matrix %d", k)
		require.Equal(t, m.Vars, g.Vars, "matrix %d", k)
		require.Equal(t, m.CoeffIdx, g.CoeffIdx, "matrix %d", k)
	}
	require.Equal(t, want.ADensity(), got.ADensity())
	require.Equal(t, want.BAuxDensity(), got.BAuxDensity())
	require.Equal(t, want.BInputDensity(), got.BInputDensity())
}

func TestSegmentedErrors(t *testing.T) {
	// Unclaimed variables.
	rec := NewSegmented(2, 3)
	rec.Segment(1, 2)
	_, err := rec.System(context.Background(), 1)
	require.Error(t, err)

	// A segment that allocated fewer than it claimed.
	rec = NewSegmented(1, 3)
	g := rec.Segment(0, 3)
	g.Alloc(fr.One())
	_, err = rec.System(context.Background(), 1)
	require.Error(t, err)

	// Over-allocation and unallocated variables are circuit bugs.
	rec = NewSegmented(1, 2)
	a, b := rec.Segment(0, 1), rec.Segment(0, 1)
	a.Alloc(fr.One())
	require.Panics(t, func() { a.Alloc(fr.One()) })
	require.Panics(t, func() { a.Enforce(LC{}.AddVar(AuxVariable(1)), nil, nil) }, "b's variable, not yet allocated")
	b.Alloc(fr.One())
	b.Enforce(LC{}.AddVar(AuxVariable(0)), LC{}.AddVar(AuxVariable(1)), nil)
	require.Panics(t, func() { rec.Segment(0, 1) })
	s, err := rec.System(context.Background(), 2)
	require.NoError(t, err)
	require.Equal(t, Counts{Constraints: 2, Inputs: 1, Aux: 2, AAux: 1, BInputs: 0, BAux: 1}, s.Counts())
}

// A shape-only segment reads ONE and its own values until Done, and
// nothing else; the joined system has no assignment.
func TestSegmentedShapeValues(t *testing.T) {
	rec := NewSegmentedShape(2, 3)
	a, b := rec.Segment(1, 2), rec.Segment(0, 1)
	var seven fr.Element
	seven.SetUint64(7)
	x := a.Alloc(seven)
	in := a.AllocInput(fr.One())
	require.Equal(t, seven, a.Value(x))
	require.Equal(t, fr.One(), a.Value(in))
	require.Equal(t, fr.One(), b.Value(One))
	require.Panics(t, func() { b.Value(x) }, "another segment's value")
	y := a.Alloc(seven)
	a.Enforce(LC{}.AddVar(x), LC{}.AddVar(One), LC{}.AddVar(y))
	a.Done()
	require.Panics(t, func() { a.Value(x) }, "after Done")
	require.Panics(t, func() { a.Alloc(seven) }, "after Done")
	a.Enforce(LC{}.AddVar(y), LC{}.AddVar(One), LC{}.AddVar(x))
	b.Alloc(seven)
	s, err := rec.System(context.Background(), 1)
	require.NoError(t, err)
	require.False(t, s.Assigned())
	require.Equal(t, Counts{Constraints: 4, Inputs: 2, Aux: 3, AAux: 2, BInputs: 1, BAux: 0}, s.Counts(), "two constraints and a per-input one each")
	require.Error(t, s.IsSatisfied(), "no assignment to check")
}

// alikePart allocates nIn inputs and 77 aux variables and enforces
// constraints over them and ONE only, the same whatever its place: the
// shape of one PoSt sector.
func alikePart(b Builder, nIn int) {
	r := rand.New(rand.NewPCG(11, 12))
	elem := func(v uint64) (e fr.Element) { e.SetUint64(v); return }
	var own []Variable
	for range nIn {
		own = append(own, b.AllocInput(elem(r.Uint64N(50))))
	}
	for range 77 {
		own = append(own, b.Alloc(elem(r.Uint64N(50))))
	}
	lc := func() LC {
		var l LC
		for range r.IntN(4) {
			v := own[r.IntN(len(own))]
			if r.IntN(6) == 0 {
				v = One
			}
			l = l.Add(v, elem(uint64(1+r.IntN(5))))
		}
		return l
	}
	for range 60 {
		b.Enforce(lc(), lc(), lc())
	}
}

// A part recorded once and repeated gives the System that recording every
// part gives (matrices, coefficients, densities across word boundaries),
// after a first segment unlike the others.
func TestSegmentedRepeat(t *testing.T) {
	const parts, nIn = 9, 2
	head := &segCircuit{seed: 3, ins: []int{1}, aux: []int{70}}
	want := NewSystem()
	head.run(want, 0, 1, 0)
	for range parts {
		alikePart(want, nIn)
	}
	want.Finalize()

	// record records the head and the first part, Done unless early.
	record := func(early bool) (*Segmented, *Segment) {
		rec := NewSegmentedShape(1+1+parts*nIn, 70+parts*77)
		h := rec.Segment(1, 70)
		head.run(h, 0, 1, 0)
		h.Done()
		first := rec.Segment(nIn, 77)
		alikePart(first, nIn)
		if !early {
			first.Done()
		}
		return rec, first
	}
	rec, first := record(true)
	require.Error(t, rec.Repeat(first, parts-1, nil), "before Done")
	first.Done()
	require.Error(t, rec.Repeat(first, parts, nil), "more copies than variables")
	require.ErrorContains(t, rec.Repeat(first, math.MaxInt/10, nil), "exceed", "a count whose product overflows")
	require.NoError(t, rec.Repeat(first, parts-1, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := rec.System(ctx, 2)
	require.ErrorIs(t, err, context.Canceled)
	_, err = rec.System(context.Background(), 2)
	require.Error(t, err, "a cancelled join leaves the recording spent")

	rec, first = record(false)
	require.NoError(t, rec.Repeat(first, parts-1, nil))
	got, err := rec.System(context.Background(), 2)
	require.NoError(t, err)
	requireSameConstraints(t, want, got)

	// Copies would have no values in a recording with an assignment.
	withValues := NewSegmented(1, 2)
	v0 := withValues.Segment(0, 1)
	v0.Alloc(fr.One())
	v0.Done()
	require.ErrorContains(t, withValues.Repeat(v0, 1, nil), "assignment")

	// A part that uses an earlier part's variable cannot be repeated.
	rec = NewSegmentedShape(1, 2+2)
	a := rec.Segment(0, 1)
	a.Alloc(fr.One())
	a.Done()
	b := rec.Segment(0, 1)
	v := b.Alloc(fr.One())
	b.Enforce(LC{}.AddVar(AuxVariable(0)), LC{}.AddVar(v), nil)
	b.Done()
	require.ErrorContains(t, rec.Repeat(b, 1, nil), "earlier segment")
	require.NoError(t, rec.Repeat(a, 0, nil))
	c := rec.Segment(0, 1)
	c.Done()
	require.ErrorContains(t, rec.Repeat(c, 1, nil), "allocated 0")
	empty := NewSegmentedShape(1, 0)
	e := empty.Segment(0, 0)
	e.Done()
	require.ErrorContains(t, empty.Repeat(e, 1<<40, nil), "no variables")
}

// sharingPart is alikePart that also uses variables of an earlier segment:
// mine (its own three, e.g. a challenge's bits) and common (the same for
// every part).
func sharingPart(b Builder, mine []Variable, common Variable) {
	r := rand.New(rand.NewPCG(13, 14))
	elem := func(v uint64) (e fr.Element) { e.SetUint64(v); return }
	var own []Variable
	for range 40 {
		own = append(own, b.Alloc(elem(r.Uint64N(50))))
	}
	pool := append(append(append([]Variable{}, own...), mine...), common, One)
	lc := func() LC {
		var l LC
		for range 1 + r.IntN(4) {
			l = l.Add(pool[r.IntN(len(pool))], elem(uint64(1+r.IntN(5))))
		}
		return l
	}
	for range 50 {
		b.Enforce(lc(), lc(), lc())
	}
}

// A part that uses its own variables of an earlier segment and common
// ones is repeated with shared naming each copy's: the System equals the
// recording of every part; a shared that breaks the variables' kind or
// order, or names one not yet claimed, is refused.
func TestSegmentedRepeatShared(t *testing.T) {
	const parts = 7
	// The head allocates a common aux variable, then three per part.
	head := func(b Builder) (common Variable, mine [][]Variable) {
		common = b.Alloc(fr.One())
		for range parts {
			var m []Variable
			for range 3 {
				m = append(m, b.Alloc(fr.One()))
			}
			mine = append(mine, m)
		}
		return common, mine
	}
	want := NewSystem()
	common, mine := head(want)
	for k := range parts {
		sharingPart(want, mine[k], common)
	}
	want.Finalize()

	record := func() (*Segmented, *Segment, func(i int, v Variable) Variable) {
		rec := NewSegmentedShape(1, 1+3*parts+40*parts)
		h := rec.Segment(0, 1+3*parts)
		common, mine := head(h)
		h.Done()
		first := rec.Segment(0, 40)
		sharingPart(first, mine[0], common)
		first.Done()
		shared := func(i int, v Variable) Variable {
			for j, m := range mine[0] {
				if v == m {
					return mine[i][j]
				}
			}
			return v
		}
		return rec, first, shared
	}
	rec, first, shared := record()
	require.ErrorContains(t, rec.Repeat(first, parts-1, nil), "earlier segment")
	require.NoError(t, rec.Repeat(first, parts-1, shared))
	got, err := rec.System(context.Background(), 2)
	require.NoError(t, err)
	requireSameConstraints(t, want, got)

	for name, bad := range map[string]func(i int, v Variable) Variable{
		"another kind": func(i int, v Variable) Variable { return InputVariable(0) },
		"not claimed before it": func(i int, v Variable) Variable {
			return AuxVariable(1 + 3*parts + 40*i)
		},
		"out of the order": func(i int, v Variable) Variable {
			if w := shared(i, v); w != v {
				return AuxVariable(1 + 3*parts - 1 - (w.Index() - 1)) // reversed within the head
			}
			return v
		},
	} {
		rec, first, _ := record()
		require.ErrorContains(t, rec.Repeat(first, parts-1, bad), name)
	}
}
