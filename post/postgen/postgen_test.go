package postgen

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/post"
)

var (
	testSeed = [32]byte{1, 2, 3}
	testRand = [32]byte{9, 8, 7} // canonical: the top byte is 0
)

// verify decodes proofs into partitions and checks each natively, as the
// prover does before proving.
func verify(t *testing.T, s post.Shape, rnd [32]byte, proofs []post.SectorProof) int {
	t.Helper()
	parts, pub, err := post.Partitions(s, proofs)
	require.NoError(t, err)
	for k, p := range parts {
		own, err := s.PartitionSectors(pub, k)
		require.NoError(t, err)
		require.NoError(t, s.VerifyPartition(rnd, own, p, k), "%s partition %d", s.Name, k)
	}
	return len(parts)
}

// Proofs made for every small shape, Window over several partitions, pass
// the native checks; a JSON round trip keeps them; other randomness does
// not verify them.
func TestGenerateVerifies(t *testing.T) {
	for _, s := range post.Shapes {
		if s.SectorSize > 512<<20 {
			continue
		}
		n := 1
		if s.Kind == post.Window {
			n = 2*s.Sectors + 1
		}
		proofs, err := Generate(context.Background(), s, testSeed, testRand, 1000, n)
		require.NoError(t, err, s.Name)
		require.Len(t, proofs, n)
		parts := verify(t, s, testRand, proofs)
		require.Equal(t, s.Partitions(n), parts)

		for i := range proofs {
			b, err := proofs[i].MarshalJSON()
			require.NoError(t, err)
			back, err := post.DecodeSectorProofJSON(b)
			require.NoError(t, err)
			require.Equal(t, proofs[i], *back)
		}

		again, err := Generate(context.Background(), s, testSeed, testRand, 1000, n)
		require.NoError(t, err)
		require.Equal(t, proofs, again, "deterministic")

		other := testRand
		other[0] ^= 1
		ps, pub, err := post.Partitions(s, proofs)
		require.NoError(t, err)
		own, err := s.PartitionSectors(pub, 0)
		require.NoError(t, err)
		require.Error(t, s.VerifyPartition(other, own, ps[0], 0), "%s under other randomness", s.Name)
	}
}

// The largest trees: a 32 GiB Window PoSt of a few sectors (its partition
// padded to 2,349 sectors, all checked) and the 32 GiB and 64 GiB Winning
// PoSt.
func TestGenerateLargeSectors(t *testing.T) {
	for _, s := range post.Shapes {
		if s.SectorSize < 32<<30 || (s.Kind == post.Window && (s.Version != post.V1_2_0 || s.SectorSize != 32<<30)) {
			continue
		}
		n := 1
		if s.Kind == post.Window {
			n = 3
		}
		proofs, err := Generate(context.Background(), s, testSeed, testRand, 7, n)
		require.NoError(t, err, s.Name)
		verify(t, s, testRand, proofs)
	}
}

func TestGenerateRejects(t *testing.T) {
	s, ok := post.ShapeByName("StackedDrgWinning2KiBV1")
	require.True(t, ok)
	_, err := Generate(context.Background(), s, testSeed, testRand, 1, 2)
	var ie *post.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "sectors", ie.Field)
	require.ErrorContains(t, err, "1 sector")
	w, ok := post.ShapeByName("StackedDrgWindow2KiBV1_2")
	require.True(t, ok)
	_, err = Generate(context.Background(), w, testSeed, testRand, 1, 0)
	require.Error(t, err)
	bad := testRand
	bad[31] = 0xff
	_, err = Generate(context.Background(), w, testSeed, bad, 1, 1)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "randomness", ie.Field)
	_, err = Generate(context.Background(), w, testSeed, testRand, ^uint64(0)-1, 3)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "first_id", ie.Field)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Generate(ctx, w, testSeed, testRand, 1, 3)
	require.ErrorIs(t, err, context.Canceled)
}
