package groth16

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/synth"
)

// hostSource serves a host key's bases as a ParamsSource.
type hostSource struct {
	pk   *ProvingKey
	fail int // G1 calls before an error, when > 0
}

func (s *hostSource) G1(q ParamsSection, lo int, dst []bls.G1Affine) error {
	if s.fail > 0 {
		if s.fail--; s.fail == 0 {
			return errors.New("source failed")
		}
	}
	copy(dst, [][]bls.G1Affine{s.pk.H, s.pk.L, s.pk.A, s.pk.BG1}[q][lo:])
	return nil
}

func (s *hostSource) G2(lo int, dst []bls.G2Affine) error {
	copy(dst, s.pk.BG2[lo:])
	return nil
}

// WriteParamsFrom writes the bytes WriteTo writes, whatever the chunk, and
// stops at the source's first error.
func TestWriteParamsFromMatchesWriteTo(t *testing.T) {
	sys, _, err := synth.System(synth.Shape{LogSize: 10, InputsB: true, Seed: 3})
	require.NoError(t, err)
	var seed [32]byte
	pk, err := Setup(sys, rand.NewChaCha8(seed))
	require.NoError(t, err)
	var want bytes.Buffer
	n, err := pk.WriteTo(&want)
	require.NoError(t, err)
	require.Equal(t, int64(want.Len()), n)

	defer func(c int) { streamChunk = c }(streamChunk)
	for _, chunk := range []int{1 << 20, 100, 7} {
		streamChunk = chunk
		var got bytes.Buffer
		n, err := WriteParamsFrom(&got, &pk.VK, pk.Sizes(), &hostSource{pk: pk})
		require.NoError(t, err)
		require.Equal(t, int64(got.Len()), n)
		require.True(t, bytes.Equal(want.Bytes(), got.Bytes()), "chunk %d", chunk)
	}
	_, err = WriteParamsFrom(&bytes.Buffer{}, &pk.VK, pk.Sizes(), &hostSource{pk: pk, fail: 3})
	require.ErrorContains(t, err, "source failed")
}
