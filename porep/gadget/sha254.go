package gadget

import (
	"crypto/sha256"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// SHA254 returns SHA-256(data) with the two most significant bits of the last
// byte cleared, so that the digest read little-endian is an element of Fr
// (filecoin-hashers Sha256Function::hash, trim_to_fr32).
func SHA254(data ...[]byte) [32]byte {
	h := sha256.New()
	for _, d := range data {
		h.Write(d)
	}
	var out [32]byte
	h.Sum(out[:0])
	out[31] &= 0x3f
	return out
}

// SHA254Node returns the tree-D node hash of its children: SHA254 of their
// 32-byte little-endian encodings, concatenated, read as a little-endian
// element.
func SHA254Node(children ...fr.Element) fr.Element {
	buf := make([]byte, 0, 32*len(children))
	for i := range children {
		var b [32]byte
		fr.LittleEndian.PutElement(&b, children[i])
		buf = append(buf, b[:]...)
	}
	d := SHA254(buf)
	e, _ := fr.LittleEndian.Element(&d) // top two bits clear: below r
	return e
}

// SHA254NodeCircuit is the in-circuit tree-D node hash
// (filecoin-hashers Sha256Function::hash_multi_leaf_circuit): each child is
// decomposed with the non-strict [CS.ToBitsLE], padded to 256 bits and
// byte-bit-reversed; the concatenation is hashed with [CS.SHA256]; the digest
// bits are re-ordered little-endian within each byte and the first 254 are
// packed with [CS.PackBits]. For two children it costs 45,379 constraints.
func (cs *CS) SHA254NodeCircuit(children ...Num) Num {
	msg := cs.bits[:0]
	var tmp [256]Bit
	for _, c := range children {
		b := cs.ToBitsLE(tmp[:0], c)
		msg = ReverseBitNumbering(msg, b)
	}
	cs.bits = msg[:0]
	var dig [256]Bit
	digest := cs.SHA256(dig[:0], msg)
	le := ReverseBitNumbering(tmp[:0], digest)
	return cs.PackBits(le[:Capacity])
}
