package poseidon

import (
	"encoding/binary"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// limbs builds an element from four little-endian 64-bit limbs of its
// canonical value, as neptune's tests write their vectors.
func limbs(t *testing.T, l [4]uint64) fr.Element {
	var b [32]byte
	for i, x := range l {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	e, err := fr.LittleEndian.Element(&b)
	require.NoError(t, err)
	return e
}

func TestRoundNumbers(t *testing.T) {
	// neptune parameters/round_numbers.txt (Standard strength).
	for arity, want := range map[int]int{1: 55, 2: 55, 4: 56, 8: 57, 11: 57, 16: 59, 24: 59, 36: 60} {
		rf, rp := RoundNumbers(arity)
		require.Equal(t, 8, rf, "arity %d", arity)
		require.Equal(t, want, rp, "arity %d", arity)
	}
}

// TestNeptuneVectors checks the hash of [0, 1, …, arity−1] against the
// Standard-strength MerkleTree vectors of neptune's poseidon.rs
// (hash_values_aux).
func TestNeptuneVectors(t *testing.T) {
	vectors := map[int][4]uint64{
		2:  {0x2e203c369a02e7ff, 0xa6fba9339d05a69d, 0x739e0fd902efe161, 0x396508d75e76a56b},
		4:  {0x019814ff6662075d, 0xfb6b4605bf1327ec, 0x00db3c6579229399, 0x58a54b10a9e5848a},
		8:  {0x2a9934f56d38a5e6, 0x4b682e9d9cc4aed9, 0x1201004211677077, 0x2394611da3a5de55},
		11: {0xcee3bbc32b693163, 0x09f3dcd8ccb08fc1, 0x6ca537e232ebe87a, 0x0c0fc1b2e5227f28},
		16: {0x1291c74060266d37, 0x5b8dbc6d30680a6f, 0xc1c2fb5a6f871e63, 0x2d3ae2663381ae8a},
	}
	for arity, v := range vectors {
		c, err := Get(arity)
		require.NoError(t, err)
		in := make([]fr.Element, arity)
		for i := range in {
			in[i].SetUint64(uint64(i))
		}
		got, err := c.Hash(in)
		require.NoError(t, err)
		require.Equal(t, limbs(t, v), got, "arity %d optimized", arity)
		require.Equal(t, limbs(t, v), c.hashReference(in), "arity %d reference", arity)
		require.Len(t, c.Compressed, c.FullRounds*c.Width+c.PartialRounds)
		require.Len(t, c.Sparse, c.PartialRounds)
	}
}

func TestErrors(t *testing.T) {
	_, err := Get(0)
	require.ErrorAs(t, err, new(UnsupportedArityError))
	c := MustGet(2)
	_, err = c.Hash(make([]fr.Element, 3))
	var le *LengthError
	require.ErrorAs(t, err, &le)
}

func BenchmarkHash11(b *testing.B) {
	c := MustGet(11)
	in := make([]fr.Element, 11)
	for i := range in {
		in[i].SetUint64(uint64(i))
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _ = c.Hash(in)
	}
}

// hashReference is the textbook permutation with the raw round constants
// and the MDS matrix (neptune hash_correct); tests compare it with Hash.
func (c *Constants) hashReference(preimage []fr.Element) fr.Element {
	s := make([]fr.Element, c.Width)
	s[0] = c.DomainTag
	copy(s[1:], preimage)
	half := c.FullRounds / 2
	rounds := c.FullRounds + c.PartialRounds
	for r := 0; r < rounds; r++ {
		for i := range s {
			s[i].Add(&s[i], &c.RoundConstants[r*c.Width+i])
		}
		if r < half || r >= half+c.PartialRounds {
			for i := range s {
				sbox(&s[i])
			}
		} else {
			sbox(&s[0])
		}
		s = apply(c.MDS, s)
	}
	return s[1]
}
