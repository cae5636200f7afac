package graph

import (
	"encoding/binary"
	"math/bits"
)

// chachaStream is the keystream of the original (Bernstein) ChaCha with a
// 256-bit key, a 64-bit block counter starting at 0 in state words 12-13 and a
// zero 64-bit stream id in words 14-15. With doubleRounds = 4 it is the
// ChaCha8Rng of rand_chacha 0.3 seeded with from_seed(key); its next_u64
// returns the keystream read as consecutive little-endian 64-bit words, which
// is what next64 returns.
type chachaStream struct {
	key          [8]uint32
	doubleRounds int
	counter      uint64
	block        [16]uint32
	pos          int // next unread word of block; 16 when exhausted
}

// reset rekeys s in place and rewinds it to block 0.
func (s *chachaStream) reset(key *[32]byte) {
	for i := range s.key {
		s.key[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	s.counter = 0
	s.pos = 16
}

func quarterRound(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	a += b
	d = bits.RotateLeft32(d^a, 16)
	c += d
	b = bits.RotateLeft32(b^c, 12)
	a += b
	d = bits.RotateLeft32(d^a, 8)
	c += d
	b = bits.RotateLeft32(b^c, 7)
	return a, b, c, d
}

// refill computes the block at s.counter into s.block and advances the counter.
func (s *chachaStream) refill() {
	in := [16]uint32{
		0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
		s.key[0], s.key[1], s.key[2], s.key[3],
		s.key[4], s.key[5], s.key[6], s.key[7],
		uint32(s.counter), uint32(s.counter >> 32), 0, 0,
	}
	x := in
	for range s.doubleRounds {
		x[0], x[4], x[8], x[12] = quarterRound(x[0], x[4], x[8], x[12])
		x[1], x[5], x[9], x[13] = quarterRound(x[1], x[5], x[9], x[13])
		x[2], x[6], x[10], x[14] = quarterRound(x[2], x[6], x[10], x[14])
		x[3], x[7], x[11], x[15] = quarterRound(x[3], x[7], x[11], x[15])
		x[0], x[5], x[10], x[15] = quarterRound(x[0], x[5], x[10], x[15])
		x[1], x[6], x[11], x[12] = quarterRound(x[1], x[6], x[11], x[12])
		x[2], x[7], x[8], x[13] = quarterRound(x[2], x[7], x[8], x[13])
		x[3], x[4], x[9], x[14] = quarterRound(x[3], x[4], x[9], x[14])
	}
	for i := range x {
		s.block[i] = x[i] + in[i]
	}
	s.counter++
	s.pos = 0
}

// next32 returns the next keystream word (little-endian).
func (s *chachaStream) next32() uint32 {
	if s.pos == 16 {
		s.refill()
	}
	w := s.block[s.pos]
	s.pos++
	return w
}

// next64 returns the next two keystream words as one little-endian uint64.
// Callers that draw only 64-bit values never straddle a block (16 is even),
// exactly as rand_core's BlockRng behaves in that case.
func (s *chachaStream) next64() uint64 {
	lo := s.next32()
	hi := s.next32()
	return uint64(hi)<<32 | uint64(lo)
}
