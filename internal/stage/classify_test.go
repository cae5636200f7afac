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
			var early *Split
			l, A, B, err := q.classify(context.Background(), func(l *Split, err error) {
				require.NoError(t, err)
				early = l
			})
			require.NoError(t, err)
			require.Same(t, early, l)
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
