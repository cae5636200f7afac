package gadget

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

// This file holds the gadgets the SnapDeals (empty-sector update) circuit
// needs beyond the PoRep ones: multiplication, an exported selector, a
// decomposition into allocated bits with a packing equality, and
// storage-proofs-core's por_no_challenge_input, the inclusion proof whose
// path bits and siblings the caller has already allocated.

// Mul allocates a·b and enforces a·b = product (AllocatedNum::mul).
func (cs *CS) Mul(a, b Num) Num {
	var v fr.Element
	v.Mul(&a.Value, &b.Value)
	r := cs.AllocNum(v)
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: a.Var, Coeff: feOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: b.Var, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: r.Var, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return r
}

// Select returns from[i], i the little-endian number bits spell, through a
// tree of [CS.Pick] that consumes the most significant bit first
// (storage-proofs-core insertion::select); len(from) must be 2^len(bits).
func (cs *CS) Select(from []Num, bits []Bit) Num {
	if len(from) != 1<<len(bits) {
		panic("gadget: Select needs 2^len(bits) candidates") // a circuit bug
	}
	return cs.selectNum(from, bits)
}

// EnforcePacked enforces (Σ 2^i·bits[i])·1 = n: the packing equality
// storage-proofs-update writes after allocating the bits of a number
// itself (its "binary decomp" constraints).
func (cs *CS) EnforcePacked(bits []Bit, n Num) {
	if !cs.record {
		return
	}
	cs.la = cs.la[:0]
	for i, b := range bits {
		cs.la = addBit(cs.la, b, &pow2[i], &negPow2[i])
	}
	cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne})
	cs.lc = append(cs.lc[:0], r1cs.Term{Var: n.Var, Coeff: feOne})
	cs.enforce(cs.la, cs.lb, cs.lc)
}

// AllocBitsLE allocates the NumBits bits of v, least significant first,
// each with its booleanity constraint and no other
// (bellpepper field_into_allocated_bits_le), and appends them to dst.
func (cs *CS) AllocBitsLE(dst []Bit, v fr.Element) []Bit {
	limbs := v.Bits()
	for i := 0; i < NumBits; i++ {
		dst = append(dst, cs.AllocBit(limbs[i/64]>>(i%64)&1 == 1))
	}
	return dst
}

// NumToAllocatedBits decomposes n into NumBits allocated bits with
// [CS.AllocBitsLE] and enforces (Σ 2^i·b_i)·1 = n
// (storage-proofs-update allocated_num_to_allocated_bits). Like the Rust
// gadget it does not prove the bits encode an integer below r.
func (cs *CS) NumToAllocatedBits(dst []Bit, n Num) []Bit {
	start := len(dst)
	dst = cs.AllocBitsLE(dst, n.Value)
	cs.EnforcePacked(dst[start:], n)
	return dst
}

// PoRBitsError reports arguments that do not fit por_no_challenge_input's
// tree shape.
type PoRBitsError struct{ Msg string }

func (e *PoRBitsError) Error() string { return "gadget: PoRBits: " + e.Msg }

// PoRBits proves that leaf lies under root along path, as storage-proofs-core's
// por_no_challenge_input does: the challenge's bits (little-endian, already
// allocated, log2(arity) per level) and the siblings of every level
// (path[l] holds arity−1 numbers, already allocated) are given; per level it
// inserts the current node ([CS.Insert]) and hashes (SHA-254 node hash or
// Poseidon of the level's arity); then it enforces computed·1 = root. No
// public input is made. The levels' arities are len(path[l])+1 and their
// bits must add up to len(challenge).
func (cs *CS) PoRBits(h TreeHash, challenge []Bit, leaf Num, path [][]Num, root Num) error {
	need := 0
	for l, sib := range path {
		a := len(sib) + 1
		switch {
		case a&(a-1) != 0:
			return &PoRBitsError{fmt.Sprintf("level %d: arity %d is not a power of two ≥ 2", l, a)}
		case h == TreeSHA254 && a != 2:
			return &PoRBitsError{fmt.Sprintf("level %d: SHA-254 trees are binary, got arity %d", l, a)}
		case a > poseidon.MaxArity:
			return &PoRBitsError{fmt.Sprintf("level %d: arity %d exceeds %d", l, a, poseidon.MaxArity)}
		}
		need += bits.TrailingZeros(uint(a))
	}
	if need != len(challenge) {
		return &PoRBitsError{fmt.Sprintf("%d challenge bits for a path of %d bits", len(challenge), need)}
	}
	cur := leaf
	var ins [poseidon.MaxArity]Num
	off := 0
	for _, sib := range path {
		a := len(sib) + 1
		nb := bits.TrailingZeros(uint(a))
		in := cs.Insert(ins[:0], cur, challenge[off:off+nb], sib)
		off += nb
		if h == TreeSHA254 {
			cur = cs.SHA254NodeCircuit(in...)
		} else {
			cur = cs.Poseidon(poseidon.MustGet(a), in)
		}
	}
	cs.Equal(cur, root)
	return nil
}
