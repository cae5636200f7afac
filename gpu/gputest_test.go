package gpu_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/gpu/gputest"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/stress"
	"github.com/sealc2/c2/pool"
)

// The fault-injecting device of package gputest, tested here because it is
// checked against the same references as the devices of package gpu.

func TestFakePassesThrough(t *testing.T) {
	f := gputest.NewFake(gputest.FakeOptions{Name: "fake:0"})
	gpu.CheckSlot(t, f)
	require.NoError(t, f.Close())
	slots, keys := f.Live()
	assert.Zero(t, slots)
	assert.Zero(t, keys)
	assert.Equal(t, 1, f.Calls(gpu.StageH))
	// 3 sections × (tail, full, bad) + 2 B_G2 + 7 B_G2 base reads (4 good, 3 bad)
	assert.Equal(t, 18, f.Calls(gpu.StageTail))
}

// 100 concurrent reservers with random cancellations on a simulated device:
// its memory is never overcommitted and everything is returned.
func TestFakeBudgetConcurrentReservers(t *testing.T) {
	const mem, slot, keyBytes = 1000, 90, 300
	f := gputest.NewFake(gputest.FakeOptions{Memory: mem, SlotBytes: slot, KeyBytes: keyBytes})
	defer f.Close()
	pk := &groth16.ProvingKey{H: make([]bls.G1Affine, 7)}
	ctx := context.Background()
	key, err := f.LoadKey(ctx, pk)
	require.NoError(t, err)

	granted, cancelled := stress.Run(100, 10, 3, func(rng *rand.Rand) bool {
		cctx, cancel := context.WithTimeout(ctx, time.Duration(rng.IntN(3000))*time.Microsecond)
		defer cancel()
		s, err := f.Acquire(cctx, key)
		if err != nil {
			assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
			return false
		}
		time.Sleep(time.Duration(rng.IntN(100)) * time.Microsecond)
		s.Release()
		s.Release()
		return true
	})
	inUse, peak, over := f.Memory()
	assert.Zero(t, over, "device memory overcommitted")
	assert.LessOrEqual(t, peak, int64(mem))
	assert.Equal(t, int64(keyBytes+7*slot), peak, "the budget is used up to the last whole slot")
	assert.Equal(t, int64(keyBytes), inUse)
	assert.Equal(t, int64(keyBytes), f.Budget().Used())
	assert.Positive(t, granted)
	assert.Equal(t, 1000, granted+cancelled)
	key.Release()
	slots, keys := f.Live()
	assert.Zero(t, slots)
	assert.Zero(t, keys)
	assert.Zero(t, f.Budget().Used())
}

func TestFakeSlotLargerThanDevice(t *testing.T) {
	f := gputest.NewFake(gputest.FakeOptions{Memory: 1000, SlotBytes: 1001})
	defer f.Close()
	key, err := f.LoadKey(context.Background(), &groth16.ProvingKey{H: make([]bls.G1Affine, 1)})
	require.NoError(t, err)
	defer key.Release()
	_, err = f.Acquire(context.Background(), key)
	var ob *pool.OverBudgetError
	require.ErrorAs(t, err, &ob)
	assert.Equal(t, int64(1001), ob.Requested)
	assert.Contains(t, err.Error(), "fake budget")
}

func TestFakeFaults(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pk := gpu.TestKey(t, rng, 8, 10, 10, 10, fr.One())
	ctx := context.Background()
	ones := make([]uint64, 1)
	ones[0] = 0b1011

	t.Run("kernel error once, after a skip", func(t *testing.T) {
		f := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageBatchAdd, Section: gpu.SectionA, Skip: 1, Err: gpu.ErrKernel}}})
		defer f.Close()
		key, _ := f.LoadKey(ctx, pk)
		defer key.Release()
		s, err := f.Acquire(ctx, key)
		require.NoError(t, err)
		defer s.Release()
		_, err = s.BatchAddG1(ctx, gpu.SectionL, ones)
		require.NoError(t, err, "other sections unaffected")
		_, err = s.BatchAddG1(ctx, gpu.SectionA, ones)
		require.NoError(t, err, "skipped")
		_, err = s.BatchAddG1(ctx, gpu.SectionA, ones)
		var de *gpu.Error
		require.ErrorAs(t, err, &de)
		assert.Equal(t, gpu.StageBatchAdd, de.Stage)
		assert.Equal(t, gpu.SectionA, de.Section)
		assert.ErrorIs(t, err, gpu.ErrKernel)
		assert.NotErrorIs(t, err, gpu.ErrDeviceLost)
		_, err = s.BatchAddG1(ctx, gpu.SectionA, ones)
		require.NoError(t, err, "fired once only")
	})

	t.Run("device lost is sticky", func(t *testing.T) {
		f := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageTail, Err: gpu.ErrDeviceLost}}})
		defer f.Close()
		key, _ := f.LoadKey(ctx, pk)
		defer key.Release()
		s, _ := f.Acquire(ctx, key)
		_, err := s.TailG2(ctx, nil, nil)
		require.ErrorIs(t, err, gpu.ErrDeviceLost)
		_, err = s.BatchAddG2(ctx, ones)
		require.ErrorIs(t, err, gpu.ErrDeviceLost)
		s.Release()
		_, err = f.Acquire(ctx, key)
		require.ErrorIs(t, err, gpu.ErrDeviceLost)
		assert.True(t, f.Lost())
	})

	t.Run("out of memory on acquire", func(t *testing.T) {
		f := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageAcquire, Err: gpu.ErrOutOfMemory, Times: -1}}})
		defer f.Close()
		key, _ := f.LoadKey(ctx, pk)
		defer key.Release()
		for range 3 {
			_, err := f.Acquire(ctx, key)
			require.ErrorIs(t, err, gpu.ErrOutOfMemory)
		}
		slots, _ := f.Live()
		assert.Zero(t, slots)
		assert.Zero(t, f.Budget().Used())
	})

	t.Run("corrupt result", func(t *testing.T) {
		f := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageBatchAdd, Section: gpu.SectionBG2, Corrupt: true}}})
		defer f.Close()
		key, _ := f.LoadKey(ctx, pk)
		defer key.Release()
		s, _ := f.Acquire(ctx, key)
		defer s.Release()
		bad, err := s.BatchAddG2(ctx, ones)
		require.NoError(t, err)
		good, err := s.BatchAddG2(ctx, ones)
		require.NoError(t, err)
		var ba, ga bls.G2Affine
		ba.FromJacobian(&bad)
		ga.FromJacobian(&good)
		assert.False(t, ba.Equal(&ga))
	})

	t.Run("hang ends with the context", func(t *testing.T) {
		f := gputest.NewFake(gputest.FakeOptions{Faults: []gputest.Fault{{Stage: gpu.StageH, Hang: true}}})
		defer f.Close()
		key, _ := f.LoadKey(ctx, pk)
		defer key.Release()
		s, _ := f.Acquire(ctx, key)
		defer s.Release()
		cctx, cancel := context.WithCancel(ctx)
		go func() { time.Sleep(time.Millisecond); cancel() }()
		v := make([]fr.Element, 8)
		_, err := s.ComputeH(cctx, v, v, v)
		require.ErrorIs(t, err, context.Canceled)
	})
}
