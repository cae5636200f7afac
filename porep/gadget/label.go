package gadget

import (
	"encoding/binary"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// parentCount is the number of distinct parents of a label at layer: the 6
// DRG parents, plus the 8 expander parents after layer 1.
func parentCount(layer uint32) int {
	if layer > 1 {
		return 14
	}
	return 6
}

// TotalParents is the number of parents hashed into an SDR label (after
// expansion): 6 DRG and 8 expander parents, repeated.
const TotalParents = 37

// expandParents repeats the parents to TotalParents as the stacked circuit
// does: layer 1 (DRG parents only) repeats them six times and then the first
// once more; later layers take all of them twice and then the first nine.
func expandParents(dst, parents [][]Bit, layer uint32) [][]Bit {
	dst = append(dst, parents...)
	if layer > 1 {
		dst = append(dst, parents...)
		return append(dst, parents[:9]...)
	}
	for i := 0; i < 5; i++ {
		dst = append(dst, parents...)
	}
	return append(dst, parents[0])
}

// Label computes an SDR label in the circuit (storage-proofs-porep
// create_label_circuit after the stacked circuit's parent expansion): the
// SHA-256 of replica_id (padded to 256 bits) ‖ layer (32 bits, big-endian,
// constant) ‖ node (64 bits, big-endian) ‖ zeros to 512 bits ‖ each of the
// 37 expanded parents padded to 256 bits, whose digest is byte-bit-reversed
// and packed to 254 bits. Parent and replica_id bits are given as the stacked
// circuit builds them: [CS.ToBitsLE] then [ReverseBitNumbering]. parents holds
// the 6 DRG parents for layer 1 and the 6 DRG then 8 expander parents for
// later layers; other counts are a circuit bug and panic. With 14 parents
// the hash and packing cost 522,269 constraints.
func (cs *CS) Label(replicaID []Bit, layer uint32, node *UInt64, parents [][]Bit) Num {
	if len(replicaID) < 32 || len(replicaID) > 256 || len(parents) != parentCount(layer) {
		panic("gadget: Label shape") // a circuit bug
	}
	var ex [TotalParents][]Bit
	expanded := expandParents(ex[:0], parents, layer)

	msg := append(cs.bits[:0], replicaID...)
	for len(msg) < 256 {
		msg = append(msg, bitFalse)
	}
	l := ConstUInt32(layer)
	msg = l.AppendBitsBE(msg)
	msg = node.AppendBitsBE(msg)
	for len(msg) < 512 {
		msg = append(msg, bitFalse)
	}
	for _, p := range expanded {
		msg = append(msg, p...)
		for len(msg)%256 != 0 {
			msg = append(msg, bitFalse)
		}
	}
	cs.bits = msg[:0]
	var dig, le [256]Bit
	d := cs.SHA256(dig[:0], msg)
	return cs.PackBits(ReverseBitNumbering(le[:0], d)[:Capacity])
}

// LabelNative computes the same label natively: SHA254 of replica_id ‖
// layer (u32 big-endian) ‖ node (u64 big-endian) ‖ 20 zero bytes ‖ the 37
// expanded parents, every element as 32 little-endian bytes; read as a
// little-endian element. parents holds 6 values at layer 1 and 14 after.
func LabelNative(replicaID fr.Element, layer uint32, node uint64, parents []fr.Element) (fr.Element, error) {
	if len(parents) != parentCount(layer) {
		return fr.Element{}, &ParentCountError{Layer: layer, Got: len(parents)}
	}
	buf := make([]byte, 64, 64+32*TotalParents)
	var b [32]byte
	fr.LittleEndian.PutElement(&b, replicaID)
	copy(buf, b[:])
	binary.BigEndian.PutUint32(buf[32:], layer)
	binary.BigEndian.PutUint64(buf[36:], node)
	put := func(e fr.Element) {
		fr.LittleEndian.PutElement(&b, e)
		buf = append(buf, b[:]...)
	}
	for _, p := range parents {
		put(p)
	}
	if layer > 1 {
		for _, p := range parents {
			put(p)
		}
		for _, p := range parents[:9] {
			put(p)
		}
	} else {
		for i := 0; i < 5; i++ {
			for _, p := range parents {
				put(p)
			}
		}
		put(parents[0])
	}
	d := SHA254(buf)
	e, _ := fr.LittleEndian.Element(&d)
	return e, nil
}

// ParentCountError reports a label computed from the wrong number of parents.
type ParentCountError struct {
	Layer uint32
	Got   int
}

func (e *ParentCountError) Error() string {
	return fmt.Sprintf("gadget: label at layer %d needs %d parents, got %d", e.Layer, parentCount(e.Layer), e.Got)
}
