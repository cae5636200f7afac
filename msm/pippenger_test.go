package msm

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// hardScalars returns n scalars that exercise the digit recoding and the
// buckets: zeros, ±1, r−1, scalars whose every window is 2^(c−1)−1 or
// 2^(c−1) (a borrow into each next window), the top window full, and
// random ones.
func hardScalars(rng *rand.Rand, n int) []fr.Element {
	s := make([]fr.Element, n)
	var minusOne fr.Element
	minusOne.SetOne()
	minusOne.Neg(&minusOne)
	for i := range s {
		switch rng.IntN(10) {
		case 0:
		case 1:
			s[i].SetOne()
		case 2:
			s[i] = minusOne
		case 3, 4: // every 16-bit window 0x8000 or 0x7fff
			var b [32]byte
			for k := range b {
				b[k] = [2]byte{0x80, 0x00}[k%2]
				if rng.IntN(2) == 0 {
					b[k] = [2]byte{0x7f, 0xff}[k%2]
				}
			}
			s[i].SetBytes(b[:]) // reduced mod r
		case 5: // small
			s[i].SetUint64(rng.Uint64N(1 << 20))
		default:
			s[i].MustSetRandom()
		}
	}
	return s
}

// MultiExp equals gnark-crypto's MultiExp in G1 and G2 over sizes that
// take every window size, with the point at infinity, repeated and
// opposite bases among the bases (doublings and cancellations in the
// buckets), on one and several goroutines.
func TestMultiExpEqualsGnark(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g1s, g2s := randomBases(64)
	ctx := context.Background()
	for _, n := range []int{0, 1, 100, msmSmall - 1, msmSmall, 3000, 1 << 13, 20000, 70001} {
		b1 := make([]bls.G1Affine, n)
		b2 := make([]bls.G2Affine, n)
		for i := range b1 {
			k := rng.IntN(len(g1s))
			b1[i], b2[i] = g1s[k], g2s[k]
			switch rng.IntN(20) {
			case 0:
				b1[i], b2[i] = bls.G1Affine{}, bls.G2Affine{}
			case 1:
				b1[i].Neg(&b1[i])
				b2[i].Neg(&b2[i])
			}
		}
		sc := hardScalars(rng, n)
		tasks := []int{1, 3}
		if n > 20000 {
			tasks = append(tasks, 40) // windows in parts
		}
		for _, tasks := range tasks {
			var w1 bls.G1Jac
			_, err := w1.MultiExp(b1, sc, ecc.MultiExpConfig{NbTasks: 2})
			require.NoError(t, err)
			got1, err := MultiExpG1(ctx, b1, nil, sc, tasks)
			require.NoError(t, err)
			require.True(t, got1.Equal(&w1), "G1 n=%d tasks=%d", n, tasks)
			// The same bases by index, among others.
			idx := make([]uint32, n)
			wide := make([]bls.G1Affine, 2*n)
			for i := range wide {
				wide[i] = g1s[rng.IntN(len(g1s))]
			}
			for i := range idx {
				idx[i] = uint32(2*i + rng.IntN(2))
				wide[idx[i]] = b1[i]
			}
			got1, err = MultiExpG1(ctx, wide, idx, sc, tasks)
			require.NoError(t, err)
			require.True(t, got1.Equal(&w1), "G1 by index n=%d tasks=%d", n, tasks)
			if n > 20000 {
				continue // G2 is slow
			}
			var w2 bls.G2Jac
			_, err = w2.MultiExp(b2, sc, ecc.MultiExpConfig{NbTasks: 2})
			require.NoError(t, err)
			got2, err := MultiExpG2(ctx, b2, nil, sc, tasks)
			require.NoError(t, err)
			require.True(t, got2.Equal(&w2), "G2 n=%d tasks=%d", n, tasks)
		}
	}
	_, err := MultiExpG1(ctx, g1s, nil, make([]fr.Element, 3), 1)
	require.Error(t, err)
	_, err = MultiExpG1(ctx, g1s, []uint32{1, 64}, make([]fr.Element, 2), 1)
	require.Error(t, err)
}

// MultiExp stops with ctx's error within a few pieces of a cancel and
// leaves no goroutine behind.
func TestMultiExpCancel(t *testing.T) {
	g1s, _ := randomBases(256)
	const n = 1 << 18
	b := make([]bls.G1Affine, n)
	for i := range b {
		b[i] = g1s[i%len(g1s)]
	}
	sc := make([]fr.Element, n)
	for i := range sc {
		sc[i].MustSetRandom()
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := MultiExpG1(done, b, nil, sc, 2)
	require.ErrorIs(t, err, context.Canceled)

	base := runtime.NumGoroutine()
	t0 := time.Now()
	_, err = MultiExpG1(context.Background(), b, nil, sc, 2)
	require.NoError(t, err)
	whole := time.Since(t0)
	for _, frac := range []float64{0.05, 0.3, 0.6, 0.9} {
		ctx, cancel := context.WithCancel(context.Background())
		at := time.Duration(frac * float64(whole))
		var cancelled time.Time
		timer := time.AfterFunc(at, func() { cancelled = time.Now(); cancel() })
		_, err := MultiExpG1(ctx, b, nil, sc, 2)
		end := time.Now()
		if timer.Stop() {
			cancel()
			continue // finished first
		}
		require.True(t, errors.Is(err, context.Canceled), "at %v: %v", at, err)
		lat := end.Sub(cancelled)
		t.Logf("whole %v, cancelled at %v: returned %v later", whole, at, lat)
		require.Less(t, lat, 200*time.Millisecond)
		// The workers have returned; the timer's own goroutine may still be
		// on its way out (polled here: assert.Eventually adds a goroutine).
		for wait := time.Now(); runtime.NumGoroutine() > base && time.Since(wait) < time.Second; {
			time.Sleep(time.Millisecond)
		}
		require.LessOrEqual(t, runtime.NumGoroutine(), base)
	}
}
