package gadget

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/r1cs"
)

// Num is bellpepper's AllocatedNum: a variable and its value.
type Num struct {
	Var   r1cs.Variable
	Value fr.Element
}

// AllocNum allocates an aux variable holding v (AllocatedNum::alloc).
func (cs *CS) AllocNum(v fr.Element) Num { return Num{cs.alloc(v), v} }

// Inputize allocates a public input equal to n and enforces input·1 = n
// (AllocatedNum::inputize).
func (cs *CS) Inputize(n Num) Num {
	in := cs.b.AllocInput(n.Value)
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: in, Coeff: feOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: n.Var, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return Num{in, n.Value}
}

// Equal enforces a·1 = b (storage-proofs-core constraint::equal).
func (cs *CS) Equal(a, b Num) {
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: a.Var, Coeff: feOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: b.Var, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
}

// Add allocates a + b and enforces (a + b)·1 = sum (constraint::add, which
// the PoRep encoding gadget uses).
func (cs *CS) Add(a, b Num) Num {
	var v fr.Element
	v.Add(&a.Value, &b.Value)
	r := cs.AllocNum(v)
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: a.Var, Coeff: feOne}, r1cs.Term{Var: b.Var, Coeff: feOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: r.Var, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return r
}

// ToBitsLE decomposes n into 255 allocated bits, least significant first,
// with one packing constraint 0·0 = Σ 2^i·b_i − n and no range check
// (AllocatedNum::to_bits_le, the non-strict decomposition the PoRep circuit
// uses). The bits are appended to dst.
func (cs *CS) ToBitsLE(dst []Bit, n Num) []Bit {
	limbs := n.Value.Bits()
	start := len(dst)
	for i := 0; i < NumBits; i++ {
		dst = append(dst, cs.AllocBit(limbs[i/64]>>(i%64)&1 == 1))
	}
	if cs.record {
		cs.lc = cs.lc[:0]
		for i, b := range dst[start:] {
			cs.lc = append(cs.lc, r1cs.Term{Var: b.v, Coeff: pow2[i]})
		}
		cs.lc = append(cs.lc, r1cs.Term{Var: n.Var, Coeff: feMinusOne})
		cs.enforce(nil, nil, cs.lc)
	}
	return dst
}

// packValue returns Σ 2^i·bits[i] for at most Capacity bits.
func packValue(bits []Bit) fr.Element {
	var buf [fr.Bytes]byte
	for i, b := range bits {
		if b.val {
			buf[i/8] |= 1 << (i % 8)
		}
	}
	e, _ := fr.LittleEndian.Element(&buf) // < 2^254 < r: never fails
	return e
}

func (cs *CS) packLC(bits []Bit) {
	cs.la = cs.la[:0]
	for i, b := range bits {
		cs.la = addBit(cs.la, b, &pow2[i], &negPow2[i])
	}
}

// PackBits allocates the number whose little-endian bits are the first
// Capacity of bits and enforces (Σ 2^i·b_i)·1 = num
// (storage-proofs-core multipack::pack_bits).
func (cs *CS) PackBits(bits []Bit) Num {
	if len(bits) > Capacity {
		bits = bits[:Capacity]
	}
	n := cs.AllocNum(packValue(bits))
	if cs.record {
		cs.packLC(bits)
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: n.Var, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return n
}

// PackIntoInputs packs bits, little-endian, Capacity bits per public input,
// each with one constraint (Σ 2^i·b_i)·1 = input (multipack::pack_into_inputs).
func (cs *CS) PackIntoInputs(bits []Bit) {
	for k := 0; k < len(bits); k += Capacity {
		chunk := bits[k:min(k+Capacity, len(bits))]
		in := cs.b.AllocInput(packValue(chunk))
		if cs.record {
			cs.packLC(chunk)
			cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne})
			cs.lc = append(cs.lc[:0], r1cs.Term{Var: in, Coeff: feOne})
			cs.enforce(cs.la, cs.lb, cs.lc)
		}
	}
}

// ReverseBitNumbering pads bits with constant zeros to whole bytes and
// reverses the bit order inside each byte, appending to dst
// (storage-proofs-core util::reverse_bit_numbering).
func ReverseBitNumbering(dst, bits []Bit) []Bit {
	for k := 0; k < len(bits); k += 8 {
		for i := 7; i >= 0; i-- {
			if k+i < len(bits) {
				dst = append(dst, bits[k+i])
			} else {
				dst = append(dst, bitFalse)
			}
		}
	}
	return dst
}
