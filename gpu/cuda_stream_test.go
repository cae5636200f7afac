package gpu

import (
	"context"
	"testing"
	"time"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/pool"

	"github.com/stretchr/testify/require"
)

// A key's queue of batch additions hands a pass its oldest request and
// every other request for that section, in order, and leaves the others in
// order; a request withdrawn from it is gone, one taken cannot be withdrawn.
func TestKeyStreamQueue(t *testing.T) {
	var s keyStream
	require.Nil(t, s.take())
	l1, a1, l2, g1, a2 := &streamReq{sec: SectionL}, &streamReq{sec: SectionA}, &streamReq{sec: SectionL},
		&streamReq{sec: SectionBG2}, &streamReq{sec: SectionA}
	s.queue = []*streamReq{l1, a1, l2, g1, a2}
	require.Equal(t, []*streamReq{l1, l2}, s.take())
	require.Equal(t, []*streamReq{a1, g1, a2}, s.queue)
	require.True(t, s.withdraw(g1))
	require.False(t, s.withdraw(g1))
	require.False(t, s.withdraw(l1), "taken by a pass")
	require.Equal(t, []*streamReq{a1, a2}, s.take())
	require.Empty(t, s.queue)
	require.Nil(t, s.take())
}

// streamPoints gives whole bitmap words of bases that fill at most a chunk
// buffer, at least one word's worth.
func TestStreamPoints(t *testing.T) {
	defer func(n int64) { streamChunkBytes = n }(streamChunkBytes)
	for _, b := range []int64{1 << 27, 64 * g1Size, 1000} {
		streamChunkBytes = b
		buf := max(streamChunkBytes, 64*g2Size)
		for _, size := range []int64{g1Size, g2Size} {
			n := streamPoints(size)
			require.Zero(t, n%64)
			require.GreaterOrEqual(t, n, 64)
			require.LessOrEqual(t, int64(n)*size, buf, "%d bases of %d bytes in a %d-byte buffer", n, size, buf)
		}
	}
	streamChunkBytes = 1 << 27
	require.Equal(t, 1398080, streamPoints(g1Size))
}

// A key's own batch additions refuse, as a slot's do, a section that is not
// of the call's group, one the key does not stream, and a bitmap of the
// wrong length, before any device work.
func TestKeyBatchAddBadArguments(t *testing.T) {
	pk := groth16.KeyWithoutBases(groth16.VerifyingKey{}, shape32GiB)
	c := &CUDA{name: "cuda:test", sms: 132, budget: pool.NewBudget("cuda:test", 1<<30)}
	k := c.newKey(pk)
	k.stream = &keyStream{} // without its buffers: no device here
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := k.BatchAddG1(ctx, SectionBG2, make([]uint64, (shape32GiB.BG2+63)/64))
	require.ErrorIs(t, err, ErrBadArgument)
	_, err = k.BatchAddG1(ctx, SectionH, nil)
	require.ErrorIs(t, err, ErrBadArgument)
	_, err = k.BatchAddG1(ctx, SectionL, make([]uint64, 1))
	require.ErrorIs(t, err, ErrBadArgument)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, SectionL, e.Section)
	_, err = k.BatchAddG2(ctx, nil)
	require.ErrorIs(t, err, ErrBadArgument)
	k.stream = nil
	_, err = k.BatchAddG2(ctx, make([]uint64, (shape32GiB.BG2+63)/64))
	require.ErrorIs(t, err, ErrBadArgument, "a key without its own batch additions streams nothing")
}
