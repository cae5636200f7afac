package gadget

import (
	"crypto/sha256"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

// FuzzSHA256 checks the gadget's digest against crypto/sha256, mixing
// allocated, negated and constant message bits (constant propagation takes
// different paths for each).
func FuzzSHA256(f *testing.F) {
	f.Add([]byte{}, uint8(0))
	f.Add([]byte("abc"), uint8(1))
	f.Add(make([]byte, 64), uint8(2))
	f.Add([]byte("a message that spans two blocks of sha-256 for sure, yes it does"), uint8(3))
	f.Fuzz(func(t *testing.T, msg []byte, mode uint8) {
		if len(msg) > 200 {
			msg = msg[:200]
		}
		cs := New(r1cs.NewWitness(0, 0))
		var in []Bit
		for i, x := range msg {
			for j := 7; j >= 0; j-- {
				v := x>>j&1 == 1
				switch (int(mode) + i + j) % 3 {
				case 0:
					in = append(in, Constant(v))
				case 1:
					in = append(in, cs.AllocBit(v))
				default:
					in = append(in, cs.AllocBit(!v).Not())
				}
			}
		}
		got := cs.SHA256(nil, in)
		want := sha256.Sum256(msg)
		for i, b := range got {
			if b.Value() != (want[i/8]>>(7-i%8)&1 == 1) {
				t.Fatalf("digest bit %d differs for %x", i, msg)
			}
		}
	})
}

// FuzzPoseidonCircuit checks the circuit's value against the native hash.
func FuzzPoseidonCircuit(f *testing.F) {
	f.Add(uint64(1), uint8(2))
	f.Add(uint64(99), uint8(11))
	f.Fuzz(func(t *testing.T, seed uint64, a uint8) {
		arity := []int{2, 4, 8, 11}[int(a)%4]
		c := poseidon.MustGet(arity)
		in := make([]fr.Element, arity)
		for i := range in {
			in[i].SetUint64(seed + uint64(i))
			in[i].Square(&in[i])
		}
		want, err := c.Hash(in)
		if err != nil {
			t.Fatal(err)
		}
		cs := New(r1cs.NewWitness(0, 0))
		nums := make([]Num, arity)
		for i := range in {
			nums[i] = cs.AllocNum(in[i])
		}
		if got := cs.Poseidon(c, nums); got.Value != want {
			t.Fatalf("arity %d seed %d: circuit %v, native %v", arity, seed, got.Value.String(), want.String())
		}
	})
}
