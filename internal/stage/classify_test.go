package stage

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/r1cs"
)

// testQueries returns queries over n aux values, a tenth of them 0 and
// the rest 1 with probability pOne and random otherwise, with A and B
// selecting about two thirds and half of them.
func testQueries(rng *rand.Rand, n int, pOne float64) *queries {
	aux := make([]fr.Element, n)
	for i := range aux {
		switch r := rng.Float64(); {
		case r < 0.1:
		case r < 0.1+pOne:
			aux[i].SetOne()
		default:
			aux[i].SetUint64(rng.Uint64())
		}
	}
	inputs := []fr.Element{fr.One(), {}, {}}
	inputs[1].SetUint64(7)
	inputs[2].SetOne()
	bIn := r1cs.NewDensity(len(inputs), func(i int) bool { return i != 1 })
	aAux := r1cs.NewDensity(n, func(int) bool { return rng.IntN(3) != 0 })
	bAux := r1cs.NewDensity(n, func(int) bool { return rng.IntN(2) == 0 })
	return &queries{inputs: inputs, aux: aux, bInputs: &bIn, aAux: &aAux, bAux: &bAux}
}

// selected returns the values of segs in query order.
func selected(segs ...msm.Segment) []fr.Element {
	var v []fr.Element
	for _, s := range segs {
		for i, x := range s.Scalars {
			if s.Density == nil || s.Density.Get(i) {
				v = append(v, x)
			}
		}
	}
	return v
}

// classified runs q.classify and checks that lReady saw L first.
func classified(t *testing.T, q *queries) (l, A, B *Split) {
	t.Helper()
	var early *Split
	l, A, B, err := q.classify(context.Background(), func(l *Split, err error) {
		require.NoError(t, err)
		early = l
	})
	require.NoError(t, err)
	require.Same(t, early, l)
	return l, A, B
}

// classify gives L, A and B as NewSplit over their own segments would, or,
// for values mostly neither 0 nor 1 (a PoSt's Poseidon witness), their
// scalars in query order; lReady sees L's split first.
func TestClassifyQueries(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		name  string
		pOne  float64
		dense bool
	}{{"PoRep-like", 0.85, false}, {"Poseidon-like", 0.05, true}} {
		t.Run(tc.name, func(t *testing.T) {
			q := testQueries(rng, 5*(1<<16)+77, tc.pOne)
			l, A, B := classified(t, q)
			segsL := []msm.Segment{{Scalars: q.aux}}
			segsA := []msm.Segment{{Scalars: q.inputs}, {Scalars: q.aux, Density: q.aAux}}
			segsB := []msm.Segment{{Scalars: q.inputs, Density: q.bInputs}, {Scalars: q.aux, Density: q.bAux}}
			for _, c := range []struct {
				name string
				got  *Split
				segs []msm.Segment
			}{{"L", l, segsL}, {"A", A, segsA}, {"B", B, segsB}} {
				want, err := msm.NewSplit(c.segs...)
				require.NoError(t, err)
				require.Equal(t, want.N, c.got.N, c.name)
				if !tc.dense {
					require.Nil(t, c.got.Full, c.name)
					require.Equal(t, want, c.got.Split, c.name)
					continue
				}
				require.Equal(t, selected(c.segs...), c.got.Full, c.name)
				if c.name == "L" {
					require.Equal(t, want, c.got.Split, "L's split is the device's witness")
				} else {
					require.Nil(t, c.got.Tail, "%s: a dense query keeps no tail", c.name)
				}
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q := testQueries(rng, 1000, 0.05)
	_, _, _, err := q.classify(ctx, func(_ *Split, err error) { require.ErrorIs(t, err, context.Canceled) })
	require.ErrorIs(t, err, context.Canceled)
}

// picked returns the variables of inputs ‖ aux that sel selects (nil: every
// aux value), in order: the scalars a device reads from its witness.
func picked(sel []uint64, inputs, aux []fr.Element) []fr.Element {
	if sel == nil {
		return aux
	}
	var v []fr.Element
	for i, x := range append(append([]fr.Element(nil), inputs...), aux...) {
		if sel[i>>6]>>(uint(i)&63)&1 == 1 {
			v = append(v, x)
		}
	}
	return v
}

// With a device that holds the witness, a PoSt-like witness is not
// classified: L, A and B are the device's selections (A and B gathered on
// the host when they exceed the device's scratch); a PoRep-like one is
// split as before, and a dense A beside a split L is selected too.
func TestClassifyOnDevice(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 5*(1<<16) + 77
	check := func(t *testing.T, q *queries, wantWitness [3]bool) {
		t.Helper()
		l, A, B := classified(t, q)
		for i, c := range []struct {
			name string
			got  *Split
			segs []msm.Segment
		}{
			{"L", l, []msm.Segment{{Scalars: q.aux}}},
			{"A", A, []msm.Segment{{Scalars: q.inputs}, {Scalars: q.aux, Density: q.aAux}}},
			{"B", B, []msm.Segment{{Scalars: q.inputs, Density: q.bInputs}, {Scalars: q.aux, Density: q.bAux}}},
		} {
			want := selected(c.segs...)
			require.Equal(t, len(want), c.got.N, c.name)
			require.Equal(t, wantWitness[i], c.got.Witness, c.name)
			switch {
			case c.got.Witness:
				require.Nil(t, c.got.Full, c.name)
				require.Nil(t, c.got.Tail, c.name)
				require.Equal(t, want, picked(c.got.Sel, q.inputs, q.aux), c.name)
			case c.got.Full != nil:
				require.Equal(t, want, c.got.Full, c.name)
			default:
				sp, err := msm.NewSplit(c.segs...)
				require.NoError(t, err)
				require.Equal(t, sp, c.got.Split, c.name)
			}
		}
	}
	// Each case draws its queries from rng in turn; dense, when set, makes
	// every fourth aux a dense A entry of a value other than 0 and 1.
	for _, c := range []struct {
		name        string
		pOne        float64
		onDevice    int
		dense       bool
		wantWitness [3]bool
	}{
		{"Poseidon-like", 0.05, 3 * n, false, [3]bool{true, true, true}},
		{"Poseidon-like/small scratch", 0.05, 1000, false, [3]bool{true, false, false}},
		{"PoRep-like", 0.85, 3 * n, false, [3]bool{false, false, false}},
		{"dense A beside split L", 0.85, 3 * n, true, [3]bool{false, true, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := testQueries(rng, n, c.pOne)
			if c.dense {
				for i := 0; i < n; i += 4 {
					q.aux[i].SetUint64(rng.Uint64() | 2)
				}
				aAux := r1cs.NewDensity(n, func(i int) bool { return i%4 == 0 })
				q.aAux = &aAux
			}
			q.onDevice = c.onDevice
			check(t, q, c.wantWitness)
		})
	}
}

// mostlyOther's sample agrees with a full count away from the boundary.
func TestMostlyOther(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{0, 100, 1 << 20} {
		for _, pOne := range []float64{0.05, 0.85} {
			q := testQueries(rng, n, pOne)
			got, err := mostlyOther(context.Background(), q.aux)
			require.NoError(t, err)
			require.Equal(t, n > 0 && pOne < 0.5, got, "n %d, 1 with probability %.2f", n, pOne)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := mostlyOther(ctx, make([]fr.Element, 1<<20))
	require.ErrorIs(t, err, context.Canceled)
}

// selection over inputs ‖ aux picks what the densities pick for every
// offset of the aux values within a word.
func TestSelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for _, nIn := range []int{1, 2, 63, 64, 65, 130} {
		nAux := 200 + rng.IntN(100)
		in := r1cs.NewDensity(nIn, func(int) bool { return rng.IntN(2) == 0 })
		aux := r1cs.NewDensity(nAux, func(int) bool { return rng.IntN(3) == 0 })
		for _, di := range []*r1cs.Density{nil, &in} {
			sel := selection(nIn, di, &aux)
			require.Len(t, sel, (nIn+nAux+63)/64)
			for i := range nIn + nAux {
				want := i >= nIn && aux.Get(i-nIn) || i < nIn && (di == nil || di.Get(i))
				require.Equal(t, want, sel[i>>6]>>(uint(i)&63)&1 == 1, "inputs %d, variable %d", nIn, i)
			}
			if r := (nIn + nAux) % 64; r != 0 {
				require.Zero(t, sel[len(sel)-1]>>r, "no bit past the variables")
			}
		}
	}
}

// BenchmarkClassifyQueries prepares the L, A and B MSMs of 2^22 aux values
// as a partition does: mostly 0 and 1 (PoRep) or mostly other values
// (PoSt), whose A and B then go dense.
func BenchmarkClassifyQueries(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, bc := range []struct {
		name string
		pOne float64
	}{{"PoRep-like", 0.85}, {"Poseidon-like", 0.05}} {
		q := testQueries(rng, 1<<22, bc.pOne)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(q.aux)) * 32)
			for range b.N {
				if _, _, _, err := q.classify(context.Background(), func(*Split, error) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
