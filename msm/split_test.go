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

// NewSplit over many pieces (segments of several splitPiece each, a dense
// one and one selected by a density, lengths not multiples of 64) equals a
// one-pass classification.
func TestSplitPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	scalars := func(n int) []fr.Element {
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
	a, b := scalars(2*splitPiece+77), scalars(3*splitPiece+5)
	dens := r1cs.NewDensity(len(b), func(int) bool { return rng.IntN(3) != 0 })
	sp, sel := splitDense(t, a, b, &dens)
	want := &Split{N: len(sel), Ones: make([]uint64, (len(sel)+63)/64)}
	for i, v := range sel {
		switch {
		case v.IsZero():
			want.NumZeros++
		case v.IsOne():
			want.Ones[i>>6] |= 1 << (uint(i) & 63)
			want.NumOnes++
		default:
			want.TailIdx = append(want.TailIdx, uint32(i))
			want.Tail = append(want.Tail, v)
		}
	}
	require.Equal(t, want, sp)
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
