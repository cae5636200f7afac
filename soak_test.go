package c2_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/pool"
)

// cancelBound is the generous bound TestCancelPrompt and TestSoakCancel put
// on the time from a cancel to Prove's return on a warm CPU prover at
// 2 KiB. The goal is 100 ms; every long CPU operation checks the context
// within tens of milliseconds (the MSMs between pieces of 2^14 points of a
// window, the NTTs between pieces and 2^18-element sub-transforms, the
// batch additions between 2^16-base chunks, the classification between
// 2^16-scalar pieces), and the 500 ms leave room for a loaded 2-core
// machine. BENCHMARKS.md records the measured distribution.
const cancelBound = 500 * time.Millisecond

// TestCancelPrompt cancels Prove on a warm CPU prover $C2_CANCELS times
// (default 5) at random moments of a 2 KiB proof ($C2_CANCEL_SEED seeds
// them), spread so that every stage gets its turn: the first within the
// first second (the C1's checks, the synthesis, the evaluation and
// classification), the last in [90 %, 97 %) of a warm proof's time (batch
// additions, tail MSMs), the others one in each equal part of the NTTs and H's MSM
// between. Each call must return context.Canceled (or a proof, when it
// finished first) within cancelBound of the cancel, with the goroutines
// back to their count before the cancels; a proof after the cancels must
// succeed, so they left the CPU device's slot and the budgets free.
func TestCancelPrompt(t *testing.T) {
	if testing.Short() {
		t.Skip("proves the 2 KiB PoRep circuit (2^22 constraints) about six times on the CPU")
	}
	seed, err := strconv.ParseUint(os.Getenv("C2_CANCEL_SEED"), 10, 64)
	if err != nil {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (C2_CANCEL_SEED)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	cancels := 5
	if n, err := strconv.Atoi(os.Getenv("C2_CANCELS")); err == nil && n > 0 {
		cancels = n
	}

	p, raw := devProver2KiB(t)
	ctx := context.Background()

	// The first call reads the key and records the R1CS (and touches the
	// bases first); the second shows how long a warm proof takes.
	t0 := time.Now()
	_, err = p.Prove(ctx, raw)
	require.NoError(t, err)
	first := time.Since(t0)
	t0 = time.Now()
	_, err = p.Prove(ctx, raw)
	require.NoError(t, err)
	warm := time.Since(t0)
	g0 := runtime.NumGoroutine()
	t.Logf("first proof %v, warm proof %v; %d goroutines", first.Round(time.Millisecond), warm.Round(time.Millisecond), g0)

	var lat []time.Duration
	moment := func(i int) time.Duration {
		u := rng.Float64()
		switch early, late := time.Second, warm*90/100; {
		case i == 0 || warm < 2*early:
			return time.Duration(u * float64(min(early, warm)))
		case i == cancels-1: // before the end, which may come a little sooner than the last time
			return late + time.Duration(u*float64(warm*97/100-late))
		default: // one of cancels−2 equal parts of [early, late)
			return early + time.Duration((float64(i-1)+u)/float64(cancels-2)*float64(late-early))
		}
	}
	for i, retries := 0, 0; i < cancels; i++ {
		after := moment(i)
		cctx, cancel := context.WithCancel(ctx)
		at := make(chan time.Time, 1)
		timer := time.AfterFunc(after, func() { at <- time.Now(); cancel() })
		start := time.Now()
		_, err := p.Prove(cctx, raw)
		end := time.Now()
		if timer.Stop() {
			require.NoError(t, err)
			t.Logf("cancel %d at %v: the proof finished first, in %v", i, after.Round(time.Millisecond), end.Sub(start).Round(time.Millisecond))
			if retries < 3 { // the machine got faster: again with this proof's time
				retries++
				warm = min(warm, end.Sub(start))
				i--
			}
		} else {
			cancelAt := <-at
			if err != nil {
				require.ErrorIs(t, err, context.Canceled, "cancel %d", i)
			}
			lat = append(lat, end.Sub(cancelAt))
			t.Logf("cancel %d at %v: returned %v later (%v)", i, after.Round(time.Millisecond), end.Sub(cancelAt).Round(100*time.Microsecond), err)
			assert.LessOrEqual(t, end.Sub(cancelAt), cancelBound, "cancel %d", i)
		}
		cancel()
		g := runtime.NumGoroutine()
		for deadline := time.Now().Add(2 * time.Second); g > g0 && time.Now().Before(deadline); g = runtime.NumGoroutine() {
			time.Sleep(10 * time.Millisecond)
		}
		require.LessOrEqual(t, g, g0, "goroutines after cancel %d", i)
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		t.Logf("cancel -> return over %d cancels: median %v, max %v", len(lat), lat[len(lat)/2].Round(100*time.Microsecond), lat[len(lat)-1].Round(100*time.Microsecond))
	}

	// Nothing is held any more: a proof goes through.
	dctx, cancel := context.WithTimeout(ctx, 4*warm+time.Minute)
	defer cancel()
	proof, err := p.Prove(dctx, raw)
	require.NoError(t, err)
	require.Len(t, proof, groth16.ProofSize)
}

// TestSoakCancel proves the 2 KiB C1 $C2_SOAK times in sequence on one warm
// CPU Prover, cancelling each call with probability 1/2 at a uniformly
// random moment within an uncancelled proof's duration ($C2_SOAK_SEED seeds
// the choices). It logs RSS, goroutines and cancel latencies, and checks
// that uncancelled proofs succeed, cancelled calls end with
// context.Canceled (or a proof, when it finished first) within
// cancelBound, goroutines return to their count before the run, and RSS
// at the end is within 15% of RSS after the warm-up proof. Skipped unless
// $C2_SOAK is set. $C2_SOAK_FOR (a duration) stops the run early: no call
// starts once that long has passed since the test began, and the figures
// cover the calls made.
func TestSoakCancel(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("C2_SOAK"))
	if n <= 0 {
		t.Skip("set C2_SOAK=N to run N proofs with random cancellations and watch RSS and goroutines")
	}
	stop := time.Time{}
	if v := os.Getenv("C2_SOAK_FOR"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "$C2_SOAK_FOR")
		stop = time.Now().Add(d)
	}
	seed, err := strconv.ParseUint(os.Getenv("C2_SOAK_SEED"), 10, 64)
	if err != nil {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (C2_SOAK_SEED)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	p, raw := devProver2KiB(t)
	ctx := context.Background()

	t0 := time.Now()
	_, err = p.Prove(ctx, raw) // loads the key and records the R1CS
	require.NoError(t, err)
	t.Logf("first proof (key read, R1CS recorded): %v", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	proof, err := p.Prove(ctx, raw)
	require.NoError(t, err)
	require.Len(t, proof, groth16.ProofSize)
	warm := time.Since(t0)

	g0 := runtime.NumGoroutine()
	rss0 := settledRSS(t)
	t.Logf("warm proof %v; start: %d goroutines, RSS %.1f MiB", warm.Round(time.Millisecond), g0, mib(rss0))

	var lat []time.Duration
	proved, cancelled := 0, 0
	calls := 0
	for i := range n {
		if !stop.IsZero() && time.Now().After(stop) {
			t.Logf("$C2_SOAK_FOR has passed: stopping after %d of %d calls", i, n)
			break
		}
		calls++
		if i > 0 && i%10 == 0 {
			t.Logf("after %d calls: %d goroutines, RSS %.1f MiB", i, runtime.NumGoroutine(), mib(settledRSS(t)))
		}
		if rng.IntN(2) == 0 {
			_, err := p.Prove(ctx, raw)
			require.NoError(t, err, "proof %d", i)
			proved++
			continue
		}
		after := time.Duration(rng.Int64N(int64(warm)))
		cctx, cancel := context.WithCancel(ctx)
		at := make(chan time.Time, 1)
		timer := time.AfterFunc(after, func() { at <- time.Now(); cancel() })
		_, err := p.Prove(cctx, raw)
		end := time.Now()
		if !timer.Stop() {
			cancelAt := <-at
			if err == nil {
				proved++ // finished as the cancel came
			} else {
				require.True(t, errors.Is(err, context.Canceled), "proof %d: %v", i, err)
				lat = append(lat, end.Sub(cancelAt))
				cancelled++
			}
		} else {
			require.NoError(t, err, "proof %d", i)
			proved++
		}
		cancel()
	}

	// Goroutines of cancelled calls may still be on their way out.
	var g1 int
	for range 50 {
		if g1 = runtime.NumGoroutine(); g1 <= g0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	rss1 := settledRSS(t)
	slices.Sort(lat)
	t.Logf("%d calls: %d proofs, %d cancelled; end: %d goroutines, RSS %.1f MiB (start %d, %.1f MiB)",
		calls, proved, cancelled, g1, mib(rss1), g0, mib(rss0))
	if len(lat) > 0 {
		t.Logf("cancel -> return: median %v, max %v", lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
		assert.LessOrEqual(t, lat[len(lat)-1], cancelBound)
	}
	assert.LessOrEqual(t, g1, g0, "goroutines")
	assert.LessOrEqual(t, rss1, rss0+rss0*15/100, "RSS")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// settledRSS returns the resident set after a collection that returns
// freed memory to the operating system, so that it counts live memory and
// the allocator's retained pages only.
func settledRSS(t *testing.T) int64 {
	debug.FreeOSMemory()
	rss, err := pool.RSS()
	require.NoError(t, err)
	return rss
}
