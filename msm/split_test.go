package msm

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// mixedScalars returns n scalars: 30 % zero, 60 % one, 10 % random.
func mixedScalars(rng *rand.Rand, n int) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		switch rng.IntN(10) {
		case 0, 1, 2:
		case 3:
			v[i].SetUint64(rng.Uint64())
		default:
			v[i].SetOne()
		}
	}
	return v
}

// NewSplit over many pieces (segments of several splitPiece each, a dense
// one and one selected by a density, lengths not multiples of 64) equals a
// one-pass classification.
func TestSplitPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	scalars := func(n int) []fr.Element { return mixedScalars(rng, n) }
	a, b := scalars(2*splitPiece+77), scalars(3*splitPiece+5)
	dens := r1cs.NewDensity(len(b), func(int) bool { return rng.IntN(3) != 0 })
	sp, sel := splitDense(t, a, b, &dens)
	require.Equal(t, classifyEach(sel), sp)
}

// NewSplit of mostly other values (a PoSt's witness), whose pieces keep
// too many to hold their tails and write them in a second pass, equals a
// one-pass classification: word-aligned and not, dense and selected.
func TestSplitPiecesOtherValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	scalars := func(n int) []fr.Element {
		v := make([]fr.Element, n)
		for i := range v {
			switch rng.IntN(20) {
			case 0:
			case 1:
				v[i].SetOne()
			default:
				v[i].SetUint64(rng.Uint64())
			}
		}
		return v
	}
	a, b, c := scalars(2*splitPiece+77), scalars(3*splitPiece+5), scalars(2*splitPiece+3)
	dens := r1cs.NewDensity(len(b), func(int) bool { return rng.IntN(8) != 0 })
	sp, err := NewSplit(Segment{Scalars: a}, Segment{Scalars: b, Density: &dens}, Segment{Scalars: c})
	require.NoError(t, err)
	var sel []fr.Element
	sel = append(sel, a...)
	for i := range b {
		if dens.Get(i) {
			sel = append(sel, b[i])
		}
	}
	sel = append(sel, c...)
	require.Equal(t, classifyEach(sel), sp)
}

// classifyEach classifies v one value at a time, as NewSplit must.
func classifyEach(v []fr.Element) *Split {
	sp := &Split{N: len(v), Ones: make([]uint64, (len(v)+63)/64)}
	for i, x := range v {
		switch {
		case x.IsZero():
			sp.NumZeros++
		case x.IsOne():
			sp.Ones[i>>6] |= 1 << (uint(i) & 63)
			sp.NumOnes++
		default:
			sp.TailIdx = append(sp.TailIdx, uint32(i))
			sp.Tail = append(sp.Tail, x)
		}
	}
	return sp
}

// Values one limb away from 1 or 0 go to the tail, in the word-aligned
// dense pass and in the unaligned one that follows it.
func TestSplitNearOne(t *testing.T) {
	var v []fr.Element
	for k := range 4 {
		one, lone := fr.One(), fr.Element{}
		one[k] ^= 1 << 40
		lone[k] = 1
		v = append(v, fr.One(), one, fr.Element{}, lone)
	}
	for len(v) < 130 {
		v = append(v, v[len(v)%16])
	}
	sp, err := NewSplit(Segment{Scalars: v}, Segment{Scalars: v[:70]})
	require.NoError(t, err)
	require.Equal(t, classifyEach(append(append([]fr.Element{}, v...), v[:70]...)), sp)
}

// NewSplitContext stops with ctx's error: at once when ctx has ended, and
// part-way through when it ends during the classification.
func TestSplitContext(t *testing.T) {
	v := make([]fr.Element, 64*splitPiece)
	for i := range v {
		v[i].SetUint64(uint64(i % 3))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewSplitContext(ctx, Segment{Scalars: v})
	require.ErrorIs(t, err, context.Canceled)

	t0 := time.Now()
	_, err = NewSplitContext(context.Background(), Segment{Scalars: v})
	require.NoError(t, err)
	whole := time.Since(t0)
	ctx, cancel = context.WithTimeout(context.Background(), whole/4)
	defer cancel()
	t0 = time.Now()
	_, err = NewSplitContext(ctx, Segment{Scalars: v})
	if err != nil { // else it finished first
		require.ErrorIs(t, err, context.DeadlineExceeded)
		t.Logf("whole %v, deadline %v: returned after %v", whole, whole/4, time.Since(t0))
	}
}

// NewSplitSelect from the dense classification equals NewSplit over the
// selected values, with and without a head, for densities that select
// none, all or a random part of the values (across several pieces, lengths
// not multiples of 64).
func TestSplitSelectEqualsSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	scalars := func(n int) []fr.Element { return mixedScalars(rng, n) }
	ctx := context.Background()
	headValues := scalars(21)
	headDens := r1cs.NewDensity(len(headValues), func(int) bool { return rng.IntN(2) == 0 })
	// dense: 90 % other values, so that the tail spans several pieces
	dense := make([]fr.Element, 3*splitPiece+77)
	for i := range dense {
		if rng.IntN(10) != 0 {
			dense[i].SetUint64(rng.Uint64())
		}
	}
	for vname, values := range map[string][]fr.Element{"mixed": scalars(3*splitPiece + 77), "dense": dense} {
		src, err := NewSplit(Segment{Scalars: values})
		require.NoError(t, err)
		for name, sel := range map[string]func(int) bool{
			"none":   func(int) bool { return false },
			"all":    func(int) bool { return true },
			"random": func(int) bool { return rng.IntN(3) != 0 },
			"sparse": func(int) bool { return rng.IntN(50) == 0 },
		} {
			d := r1cs.NewDensity(len(values), sel)
			for hname, head := range map[string][]Segment{
				"no head":       nil,
				"dense head":    {{Scalars: headValues}},
				"selected head": {{Scalars: headValues, Density: &headDens}},
			} {
				want, err := NewSplit(append(append([]Segment{}, head...), Segment{Scalars: values, Density: &d})...)
				require.NoError(t, err)
				got, err := NewSplitSelect(ctx, head, src, &d)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s values, %s, %s", vname, name, hname)
			}
			nt, err := src.SelectedTail(ctx, &d)
			require.NoError(t, err)
			want, err := NewSplit(Segment{Scalars: values, Density: &d})
			require.NoError(t, err)
			require.Equal(t, len(want.Tail), nt, "%s values, %s: SelectedTail", vname, name)
		}
	}
	values := scalars(3*splitPiece + 77)
	src, err := NewSplit(Segment{Scalars: values})
	require.NoError(t, err)

	short := r1cs.NewDensity(len(values)-1, func(int) bool { return true })
	_, err = NewSplitSelect(ctx, nil, src, &short)
	require.ErrorContains(t, err, "selects from a split of")
	_, err = src.SelectedTail(ctx, &short)
	require.ErrorContains(t, err, "selects from a split of")
	_, err = NewSplitSelect(ctx, nil, nil, &short)
	require.ErrorContains(t, err, "needs a split and a density")
	all0 := r1cs.NewDensity(len(values), func(int) bool { return true })
	for field, bad := range map[string]*Split{
		"Ones":    {N: src.N, Ones: src.Ones[1:], TailIdx: src.TailIdx, Tail: src.Tail},
		"Tail":    {N: src.N, Ones: src.Ones, TailIdx: src.TailIdx, Tail: src.Tail[1:]},
		"TailIdx": {N: src.N, Ones: src.Ones, TailIdx: append(append([]uint32{}, src.TailIdx...), uint32(src.N)), Tail: append(append([]fr.Element{}, src.Tail...), fr.Element{})},
	} {
		_, err = NewSplitSelect(ctx, nil, bad, &all0)
		require.ErrorContains(t, err, field, "a split with a bad %s", field)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	all := r1cs.NewDensity(len(values), func(int) bool { return true })
	_, err = NewSplitSelect(cancelled, nil, src, &all)
	require.ErrorIs(t, err, context.Canceled)
}

// BenchmarkSplitSelect classifies the values that a density selects (one
// in three) of 2^24 PoRep-like values (98 % 0 or 1): reading the values
// (NewSplit) against selecting from their dense classification
// (NewSplitSelect); "all values" classifies every value, as L's split does.
func BenchmarkSplitSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	values := make([]fr.Element, 1<<24)
	for i := range values {
		switch r := rng.IntN(100); {
		case r < 2:
			values[i].SetUint64(rng.Uint64())
		case r < 50:
			values[i].SetOne()
		}
	}
	d := r1cs.NewDensity(len(values), func(int) bool { return rng.IntN(3) == 0 })
	src, err := NewSplit(Segment{Scalars: values})
	require.NoError(b, err)
	b.Run("read values", func(b *testing.B) {
		for range b.N {
			if _, err := NewSplit(Segment{Scalars: values, Density: &d}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("all values", func(b *testing.B) {
		b.SetBytes(int64(len(values)) * 32)
		for range b.N {
			if _, err := NewSplit(Segment{Scalars: values}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("from split", func(b *testing.B) {
		for range b.N {
			if _, err := NewSplitSelect(context.Background(), nil, src, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}
