package graph

import (
	"encoding/binary"

	"golang.org/x/crypto/blake2b"
)

// feistelRounds is the number of Feistel rounds (storage-proofs-core
// crypto/feistel.rs, FEISTEL_ROUNDS).
const feistelRounds = 3

// feistel is the keyed permutation of [0, n) used by the expander: a balanced
// Feistel network over the smallest even bit width 2*halfBits with
// 4^halfBits >= n (at least 4), walked in cycles until the value falls below n.
type feistel struct {
	n         uint64
	keys      [4]uint64
	halfBits  uint
	rightMask uint64
}

func newFeistel(n uint64, keys [4]uint64) feistel {
	half := uint(1)
	pow4 := uint64(4)
	for pow4 < n {
		pow4 *= 4
		half++
	}
	return feistel{n: n, keys: keys, halfBits: half, rightMask: 1<<half - 1}
}

// round is F(right, key): the first 8 bytes, big-endian, of BLAKE2b-512 of
// right and key each as 8 big-endian bytes, masked to the half width.
func (f *feistel) round(right, key uint64) uint64 {
	var in [16]byte
	binary.BigEndian.PutUint64(in[0:8], right)
	binary.BigEndian.PutUint64(in[8:16], key)
	h := blake2b.Sum512(in[:])
	return binary.BigEndian.Uint64(h[:8]) & f.rightMask
}

// encode is one pass of the network over the 2*halfBits-bit value v; bits of v
// above that width are dropped, as in the reference.
func (f *feistel) encode(v uint64) uint64 {
	left := (v >> f.halfBits) & f.rightMask
	right := v & f.rightMask
	for i := range feistelRounds {
		left, right = right, left^f.round(right, f.keys[i])
	}
	return left<<f.halfBits | right
}

// permute maps v in [0, n) to its image in [0, n).
func (f *feistel) permute(v uint64) uint64 { return f.walk(v, f.encode) }

// walk applies pass to v, then again to its result while that is not below
// n (cycle walking): for pass a permutation of the network's whole range,
// such as encode or its inverse, it maps v in [0, n) into [0, n).
func (f *feistel) walk(v uint64, pass func(uint64) uint64) uint64 {
	u := pass(v)
	for u >= f.n {
		u = pass(u)
	}
	return u
}
