package gadget

import (
	"github.com/sealc2/c2/r1cs"
)

// Pick allocates cond ? a : b and enforces (b − a)·cond = b − c
// (storage-proofs-core insertion::pick).
func (cs *CS) Pick(cond Bit, a, b Num) Num {
	v := b.Value
	if cond.val {
		v = a.Value
	}
	c := cs.AllocNum(v)
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: b.Var, Coeff: feOne}, r1cs.Term{Var: a.Var, Coeff: feMinusOne})
		cs.lb = addBit1(cs.lb[:0], cond)
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: b.Var, Coeff: feOne}, r1cs.Term{Var: c.Var, Coeff: feMinusOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return c
}

// Insert returns the len(els)+1 numbers obtained by inserting el into els at
// the position whose little-endian bits are bits (insertion::insert),
// appended to dst. Sizes 2, 4 and 8 use the hand-made networks of
// storage-proofs-core (2, 8 and 22 constraints); other powers of two use the
// generic selector. For size 8 the first two bits must be allocated,
// un-negated bits.
func (cs *CS) Insert(dst []Num, el Num, bits []Bit, els []Num) []Num {
	size := len(els) + 1
	if 1<<len(bits) != size {
		panic("gadget: Insert needs log2(len(els)+1) bits") // a circuit bug
	}
	switch size {
	case 2:
		return append(dst, cs.Pick(bits[0], els[0], el), cs.Pick(bits[0], el, els[0]))
	case 4:
		b0, b1 := bits[0], bits[1]
		a, b, c, d := el, els[0], els[1], els[2]
		p0x0 := cs.Pick(b0, b, a)
		p0 := cs.Pick(b1, b, p0x0)
		p1x0 := cs.Pick(b0, a, b)
		p1 := cs.Pick(b1, c, p1x0)
		p2x1 := cs.Pick(b0, d, a)
		p2 := cs.Pick(b1, p2x1, c)
		p3x1 := cs.Pick(b0, a, d)
		p3 := cs.Pick(b1, p3x1, d)
		return append(dst, p0, p1, p2, p3)
	case 8:
		b0, b1, b2 := bits[0], bits[1], bits[2]
		if b0.kind != kindIs || b1.kind != kindIs {
			panic("gadget: Insert of 8 needs allocated, un-negated bits")
		}
		a, b, c, d, e, f, g, h := el, els[0], els[1], els[2], els[3], els[4], els[5], els[6]
		nor := cs.bitNor(b0, b1)
		and := cs.bitAnd(b0, b1)
		p0xx0 := cs.Pick(nor, a, b)
		p0 := cs.Pick(b2, b, p0xx0)
		p1x00 := cs.Pick(b0, a, b)
		p1xx0 := cs.Pick(b1, c, p1x00)
		p1 := cs.Pick(b2, c, p1xx0)
		p2x10 := cs.Pick(b0, d, a)
		p2xx0 := cs.Pick(b1, p2x10, c)
		p2 := cs.Pick(b2, d, p2xx0)
		p3xx0 := cs.Pick(and, a, d)
		p3 := cs.Pick(b2, e, p3xx0)
		p4xx1 := cs.Pick(nor, a, f)
		p4 := cs.Pick(b2, p4xx1, e)
		p5x01 := cs.Pick(b0, a, f)
		p5xx1 := cs.Pick(b1, g, p5x01)
		p5 := cs.Pick(b2, p5xx1, f)
		p6x11 := cs.Pick(b0, h, a)
		p6xx1 := cs.Pick(b1, p6x11, g)
		p6 := cs.Pick(b2, p6xx1, g)
		p7xx1 := cs.Pick(and, a, h)
		p7 := cs.Pick(b2, p7xx1, h)
		return append(dst, p0, p1, p2, p3, p4, p5, p6, p7)
	}
	// Generic: for each output position, select among the candidates
	// (insertion::insert + select).
	choices := make([]Num, size)
	for pos := 0; pos < size; pos++ {
		for index := 0; index < size; index++ {
			switch {
			case pos < index:
				choices[index] = els[pos]
			case pos == index:
				choices[index] = el
			default:
				choices[index] = els[pos-1]
			}
		}
		dst = append(dst, cs.selectNum(choices, bits))
	}
	return dst
}

// selectNum returns from[index(bits)] through a tree of picks, consuming the
// most significant bit first (insertion::select).
func (cs *CS) selectNum(from []Num, bits []Bit) Num {
	state := append([]Num(nil), from...)
	half := len(from) / 2
	for i := len(bits) - 1; i >= 0; i-- {
		next := make([]Num, half)
		for j := 0; j < half; j++ {
			next[j] = cs.Pick(bits[i], state[half+j], state[j])
		}
		state = next
		half /= 2
	}
	return state[0]
}
