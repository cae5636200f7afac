package gadget

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// allocBytes allocates the bits of msg, most significant bit of each byte first.
func allocBytes(cs *CS, msg []byte) []Bit {
	out := make([]Bit, 0, 8*len(msg))
	for _, x := range msg {
		for i := 7; i >= 0; i-- {
			out = append(out, cs.AllocBit(x>>i&1 == 1))
		}
	}
	return out
}

func bitsToBytes(t *testing.T, b []Bit) []byte {
	require.Zero(t, len(b)%8)
	out := make([]byte, len(b)/8)
	for i, x := range b {
		if x.Value() {
			out[i/8] |= 0x80 >> (i % 8)
		}
	}
	return out
}

// compressNative is the textbook SHA-256 compression function (FIPS 180-4 §6.2.2).
func compressNative(h [8]uint32, block []byte) [8]uint32 {
	var w [64]uint32
	for i := 0; i < 16; i++ {
		w[i] = binary.BigEndian.Uint32(block[4*i:])
	}
	for i := 16; i < 64; i++ {
		s0 := bits.RotateLeft32(w[i-15], -7) ^ bits.RotateLeft32(w[i-15], -18) ^ w[i-15]>>3
		s1 := bits.RotateLeft32(w[i-2], -17) ^ bits.RotateLeft32(w[i-2], -19) ^ w[i-2]>>10
		w[i] = w[i-16] + s0 + w[i-7] + s1
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for i := 0; i < 64; i++ {
		s1 := bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)
		ch := e&f ^ ^e&g
		t1 := hh + s1 + ch + sha256K[i] + w[i]
		s0 := bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)
		t2 := s0 + (a&b ^ a&c ^ b&c)
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	for i, x := range [8]uint32{a, b, c, d, e, f, g, hh} {
		h[i] += x
	}
	return h
}

// flipAux flips an aux value that holds a 0/1 bit and reports whether the
// system became unsatisfied.
func requireFlipBreaks(t *testing.T, s *r1cs.System, auxIndex int) {
	t.Helper()
	aux := s.Aux()
	old := aux[auxIndex]
	var one = feOne
	aux[auxIndex].Sub(&one, &old)
	require.Error(t, s.IsSatisfied(), "flipping aux %d must break the system", auxIndex)
	aux[auxIndex] = old
	require.NoError(t, s.IsSatisfied())
}

// randMessage returns n random bytes and a new system holding them as
// allocated bits in.
func randMessage(rng *rand.Rand, n int) (msg []byte, s *r1cs.System, cs *CS, in []Bit) {
	msg = make([]byte, n)
	for i := range msg {
		msg[i] = byte(rng.Uint32())
	}
	s = r1cs.NewSystem()
	cs = New(s)
	return msg, s, cs, allocBytes(cs, msg)
}

func TestSHA256CompressionCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	block, s, cs, in := randMessage(rng, 64)
	before := s.Counts()
	iv := SHA256IV()
	out := cs.SHA256Compress(in, &iv)
	after := s.Counts()
	require.Equal(t, 25840, after.Constraints-before.Constraints, "bellperson test_full_block")

	want := compressNative(sha256IV, block)
	for i := range out {
		require.Equal(t, want[i], out[i].Value, "word %d value", i)
		var v uint32
		for j, b := range out[i].Bits {
			if b.Value() {
				v |= 1 << j
			}
		}
		require.Equal(t, want[i], v, "word %d bits", i)
	}
	require.NoError(t, s.IsSatisfied())
	// Model oracle (porep-r1cs-model.py, 512 allocated input bits + one compression).
	require.Equal(t, r1cs.Counts{Constraints: 26352, Inputs: 1, Aux: 26326, AAux: 26326, BInputs: 1, BAux: 6822}, after)
	requireFlipBreaks(t, s, 3)            // an input bit
	requireFlipBreaks(t, s, s.NumAux()-1) // the last result bit
	requireFlipBreaks(t, s, s.NumAux()/2) // somewhere in the rounds
}

func TestSHA256MatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 3, 55, 56, 64, 100} {
		msg, s, cs, in := randMessage(rng, n)
		before := s.NumConstraints()
		out := cs.SHA256(nil, in)
		want := sha256.Sum256(msg)
		require.Equal(t, want[:], bitsToBytes(t, out), "len %d", n)
		require.NoError(t, s.IsSatisfied())
		if n == 64 {
			require.Equal(t, 44874, s.NumConstraints()-before, "bellperson test_full_hash")
		}
	}
}

func TestSHA256ModesAgree(t *testing.T) {
	msg := []byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox")
	s, w, c := r1cs.NewSystem(), r1cs.NewWitness(0, 0), r1cs.NewCounter()
	for _, b := range []r1cs.Builder{s, w, c} {
		cs := New(b)
		cs.SHA256(nil, allocBytes(cs, msg))
	}
	require.Equal(t, s.Aux(), w.Aux)
	require.Equal(t, s.Counts(), c.Counts())
}

func BenchmarkSHA256CompressionWitness(b *testing.B) {
	block := make([]byte, 64)
	for i := range block {
		block[i] = byte(i * 7)
	}
	w := r1cs.NewWitness(1, 30000)
	cs := New(w)
	in := allocBytes(cs, block)
	n := len(w.Aux)
	iv := SHA256IV()
	measureCPU(b, func() {
		w.Aux = w.Aux[:n]
		cs.SHA256Compress(in, &iv)
	})
}

func TestResetReusesCS(t *testing.T) {
	msg := []byte("reset me")
	cs := New(r1cs.NewCounter())
	cs.SHA256(nil, allocBytes(cs, msg))
	s, w := r1cs.NewSystem(), r1cs.NewWitness(0, 0)
	cs.Reset(s)
	cs.SHA256(nil, allocBytes(cs, msg))
	cs.Reset(w)
	out := cs.SHA256(nil, allocBytes(cs, msg))
	want := sha256.Sum256(msg)
	require.Equal(t, want[:], bitsToBytes(t, out))
	require.Equal(t, s.Aux(), w.Aux)
	require.NoError(t, s.IsSatisfied())
}
