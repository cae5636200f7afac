package route

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/gpu/gputest"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
)

// rotation returns a Rotation of n fake devices named a, b, …, with o.
func rotation(n int, o Options) *Rotation {
	devs := make([]gpu.Device, n)
	for i := range devs {
		devs[i] = gputest.NewFake(gputest.FakeOptions{Name: string(rune('a' + i))})
	}
	return New(devs, o)
}

// circuit names the partitions' circuit in the tests that use one.
const circuit = "porep"

// pick is Pick of circuit with a background context, failing t on an error.
func pick(t *testing.T, r *Rotation, exclude map[*Device]bool) *Device {
	t.Helper()
	d, err := r.Pick(context.Background(), circuit, exclude)
	require.NoError(t, err)
	return d
}

// Pick routes to the device with the fewest partitions routed and not
// finished, the lowest index on ties; a device at the bound (2×Ahead+1)
// takes nothing until Unload frees a place, and a Pick waiting for one
// returns ctx's error when ctx ends.
func TestPickFewestWithinBound(t *testing.T) {
	r := rotation(2, Options{Ahead: 0}) // one partition per device
	a, b := r.Devices()[0], r.Devices()[1]
	require.Equal(t, "a", a.Name)
	require.Same(t, a, pick(t, r, nil), "tie: the lowest index")
	require.Same(t, b, pick(t, r, nil), "fewest routed")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := r.Pick(ctx, circuit, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded, "both devices are full")

	got := make(chan *Device, 1)
	go func() {
		d, _ := r.Pick(context.Background(), circuit, nil)
		got <- d
	}()
	select {
	case d := <-got:
		t.Fatalf("Pick routed to %s while both devices were full", d.Name)
	case <-time.After(20 * time.Millisecond):
	}
	r.Unload(b, circuit)
	select {
	case d := <-got:
		require.Same(t, b, d, "the device Unload freed")
	case <-time.After(10 * time.Second):
		t.Fatal("Unload did not wake the waiting Pick")
	}
}

// Pick passes over excluded and retired devices; once every device is
// retired it returns the fallback when the rotation has one, else no
// device. Retire keeps the first failure, never retires the fallback or
// nil, and NoDevice names the last failure.
func TestPickExcludeRetireFallback(t *testing.T) {
	for _, withFallback := range []bool{false, true} {
		o := Options{Ahead: 4}
		if withFallback {
			o.Fallback = gputest.NewFake(gputest.FakeOptions{Name: "cpu"})
		}
		r := rotation(2, o)
		a, b := r.Devices()[0], r.Devices()[1]
		require.Same(t, b, pick(t, r, map[*Device]bool{a: true}))
		require.Same(t, a, pick(t, r, nil))
		require.ErrorIs(t, r.NoDevice(), ErrNoDevice)

		errA, errB := errors.New("lost a"), errors.New("lost b")
		r.Retire(a, errA)
		r.Retire(a, errB)
		require.False(t, a.Live())
		require.Same(t, errA, a.Failure(), "the first failure stays")
		require.True(t, b.Live())
		require.NoError(t, b.Failure())
		require.Same(t, b, pick(t, r, nil), "a retired device takes nothing")

		r.Retire(b, errB)
		r.Retire(nil, errA)
		d := pick(t, r, nil)
		if !withFallback {
			require.Nil(t, d, "no device and no fallback")
			require.Nil(t, r.Fallback())
		} else {
			require.Same(t, r.Fallback(), d)
			require.True(t, r.IsFallback(d))
			require.Equal(t, "cpu", d.Name)
			r.Retire(d, errA)
			require.True(t, d.Live(), "the fallback is never retired")
			require.Same(t, d, pick(t, r, nil))
		}
		require.False(t, r.IsFallback(a))
		require.False(t, r.IsFallback(nil))
		err := r.NoDevice()
		require.ErrorIs(t, err, ErrNoDevice)
		require.ErrorContains(t, err, "b: lost b", "the last failure")
	}
}

// Ahead lends at most Options.Ahead places per device; admitted gives one
// back, once however often it is called, and a wait for a place ends with
// ctx.
func TestAhead(t *testing.T) {
	r := rotation(1, Options{Ahead: 1})
	d := r.Devices()[0]
	admitted, err := d.Ahead(context.Background(), circuit)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = d.Ahead(ctx, circuit)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the one place is taken")

	admitted()
	admitted()
	second, err := d.Ahead(context.Background(), circuit)
	require.NoError(t, err)
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = d.Ahead(ctx, circuit)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a second admitted() gave back nothing more")
	other, err := d.Ahead(context.Background(), "winning")
	require.NoError(t, err, "another circuit has places of its own")
	other()
	second()
}

// The bounds are a circuit's: a device full of one circuit's partitions
// takes another circuit's at once, and balances by all partitions routed;
// a circuit's places are dropped once it holds none.
func TestBoundsPerCircuit(t *testing.T) {
	r := rotation(2, Options{Ahead: 0}) // one partition of a circuit per device
	a, b := r.Devices()[0], r.Devices()[1]
	require.Same(t, a, pick(t, r, nil))
	require.Same(t, b, pick(t, r, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := r.Pick(ctx, circuit, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded, "both devices are full of the circuit")

	w, err := r.Pick(context.Background(), "winning", map[*Device]bool{a: true})
	require.NoError(t, err)
	require.Same(t, b, w, "a device full of another circuit takes this one")
	w2, err := r.Pick(context.Background(), "window", nil)
	require.NoError(t, err)
	require.Same(t, a, w2, "the fewest partitions of any circuit routed")
	r.Unload(b, "winning")
	r.Unload(a, "window")
	want := map[any]int32{circuit: 1}
	require.Equal(t, want, a.routed, "a circuit with nothing routed is forgotten")
	require.Equal(t, want, b.routed)

	p := NewPlaces(2)
	give, err := p.Take(context.Background(), circuit)
	require.NoError(t, err)
	require.Equal(t, map[any]int{circuit: 1}, p.held)
	give()
	give()
	require.Empty(t, p.held, "a circuit without places is forgotten")
}

// Stage returns f's error and duration and counts the time during which at
// least one stage runs: nested stages count once.
func TestStageBusy(t *testing.T) {
	r := rotation(1, Options{})
	d := r.Devices()[0]
	require.Zero(t, d.Busy())
	boom := errors.New("boom")
	var inner time.Duration
	outer, err := d.Stage(func() error {
		var err error
		inner, err = d.Stage(func() error { time.Sleep(10 * time.Millisecond); return boom })
		require.ErrorIs(t, err, boom)
		require.Positive(t, d.Busy(), "read while a stage runs")
		time.Sleep(10 * time.Millisecond)
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, inner, 10*time.Millisecond)
	require.GreaterOrEqual(t, outer, inner+10*time.Millisecond)
	busy := d.Busy()
	require.GreaterOrEqual(t, busy, outer)
	require.Less(t, busy, outer+inner, "the nested stage's time is not counted twice")
	require.Equal(t, busy, d.Busy(), "no stage runs: the total stays")

	require.Zero(t, d.Completed())
	d.Complete()
	d.Complete()
	require.Equal(t, 2, d.Completed())
}

// Load loads a proving key onto a device once, whatever the concurrent
// callers, and on each device on its own; Release releases and forgets the
// loads of one key (a later Load loads again), Close those of every key.
// Put records a key made on a device as its load there.
func TestKeysLoadOncePerDevice(t *testing.T) {
	sys, _, err := synth.System(synth.Shape{LogSize: 8, Seed: 1})
	require.NoError(t, err)
	pk, err := groth16.Setup(sys, rand.Reader)
	require.NoError(t, err)
	other, err := groth16.Setup(sys, rand.Reader)
	require.NoError(t, err)
	fa := gputest.NewFake(gputest.FakeOptions{Name: "a"})
	fb := gputest.NewFake(gputest.FakeOptions{Name: "b"})
	r := New([]gpu.Device{fa, fb}, Options{})
	a, b := r.Devices()[0], r.Devices()[1]
	k := NewKeys(nil)
	ctx := context.Background()

	require.False(t, k.Holds(pk, a))
	keys := make([]gpu.Key, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], _ = k.Load(ctx, a, pk, sys)
		}()
	}
	wg.Wait()
	require.NotNil(t, keys[0])
	for _, key := range keys {
		require.Same(t, keys[0], key)
	}
	require.Same(t, pk, keys[0].ProvingKey())
	require.Equal(t, 1, fa.Calls(gpu.StageLoadKey), "one load for every caller")
	require.True(t, k.Holds(pk, a))
	require.False(t, k.Holds(pk, b), "each device loads on its own")
	require.False(t, k.FromFile(pk))

	_, err = k.Load(ctx, b, pk, sys)
	require.NoError(t, err)
	_, err = k.Load(ctx, a, other, sys)
	require.NoError(t, err)
	made, err := fb.LoadKey(ctx, other)
	require.NoError(t, err)
	k.Put(b, made)
	require.True(t, k.Holds(other, b))
	got, err := k.Load(ctx, b, other, sys)
	require.NoError(t, err)
	require.Same(t, made, got, "the key Put recorded")
	require.Equal(t, 2, fb.Calls(gpu.StageLoadKey), "pk and the key Put recorded, each loaded once")

	k.Release(pk)
	require.False(t, k.Holds(pk, a))
	require.False(t, k.Holds(pk, b))
	require.True(t, k.Holds(other, a), "other keys stay")
	_, live := fa.Live()
	require.Equal(t, 1, live, "a's load of pk released")
	_, err = k.Load(ctx, a, pk, sys)
	require.NoError(t, err)
	require.Equal(t, 3, fa.Calls(gpu.StageLoadKey), "loaded again after Release")

	k.Close()
	_, liveA := fa.Live()
	_, liveB := fb.Live()
	require.Zero(t, liveA+liveB, "Close releases every key")
	require.False(t, k.Holds(other, b))
}
