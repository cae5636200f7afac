package gadget

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/r1cs"
)

type bitKind uint8

const (
	kindConst bitKind = iota // a constant, no variable
	kindIs                   // the value of an allocated bit
	kindNot                  // the negation of an allocated bit
)

// Bit is bellpepper-core's Boolean: a constant, an allocated bit, or the
// negation of an allocated bit. It carries its value.
type Bit struct {
	v    r1cs.Variable
	kind bitKind
	val  bool // value of the Boolean itself (already negated for kindNot)
}

// Constant returns the constant Boolean b.
func Constant(b bool) Bit { return Bit{kind: kindConst, val: b} }

var (
	bitFalse = Constant(false)
	bitTrue  = Constant(true)
)

// Value returns the bit's value.
func (x Bit) Value() bool { return x.val }

// Variable returns the variable under x (meaningless for constants).
func (x Bit) Variable() r1cs.Variable { return x.v }

// Not returns the negation of x; it costs nothing.
func (x Bit) Not() Bit {
	switch x.kind {
	case kindIs:
		x.kind = kindNot
	case kindNot:
		x.kind = kindIs
	}
	x.val = !x.val
	return x
}

// varVal is the value of the variable under a non-constant x.
func (x Bit) varVal() bool { return x.val != (x.kind == kindNot) }

func isBit(v r1cs.Variable, val bool) Bit { return Bit{v: v, kind: kindIs, val: val} }

// addBit appends coeff·x to lc (Boolean::lc): a true constant is coeff·ONE, a
// negated bit is coeff·ONE − coeff·v.
func addBit(lc r1cs.LC, x Bit, coeff, negCoeff *fr.Element) r1cs.LC {
	switch x.kind {
	case kindConst:
		if x.val {
			lc = append(lc, r1cs.Term{Var: r1cs.One, Coeff: *coeff})
		}
	case kindIs:
		lc = append(lc, r1cs.Term{Var: x.v, Coeff: *coeff})
	default:
		lc = append(lc, r1cs.Term{Var: r1cs.One, Coeff: *coeff}, r1cs.Term{Var: x.v, Coeff: *negCoeff})
	}
	return lc
}

func addBit1(lc r1cs.LC, x Bit) r1cs.LC { return addBit(lc, x, &feOne, &feMinusOne) }
func subBit1(lc r1cs.LC, x Bit) r1cs.LC { return addBit(lc, x, &feMinusOne, &feOne) }

// AllocBit allocates a bit holding val and enforces (1 − v)·v = 0
// (AllocatedBit::alloc).
func (cs *CS) AllocBit(val bool) Bit {
	v := cs.alloc(feBool(val))
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne}, r1cs.Term{Var: v, Coeff: feMinusOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: v, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, nil)
	}
	return isBit(v, val)
}

// allocated-bit operations; a and b are allocated (kindIs or kindNot) and the
// operation applies to their variables.

// bitXor: (2a)·b = a + b − r.
func (cs *CS) bitXor(a, b Bit) Bit {
	av, bv := a.varVal(), b.varVal()
	r := cs.alloc(feBool(av != bv))
	if cs.record {
		var two fr.Element
		two.Double(&feOne)
		cs.la = append(cs.la[:0], r1cs.Term{Var: a.v, Coeff: two})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: b.v, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: a.v, Coeff: feOne}, r1cs.Term{Var: b.v, Coeff: feOne},
			r1cs.Term{Var: r, Coeff: feMinusOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return isBit(r, av != bv)
}

// bitAnd: a·b = r.
func (cs *CS) bitAnd(a, b Bit) Bit {
	val := a.varVal() && b.varVal()
	r := cs.alloc(feBool(val))
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: a.v, Coeff: feOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: b.v, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: r, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return isBit(r, val)
}

// bitAndNot: a·(1 − b) = r.
func (cs *CS) bitAndNot(a, b Bit) Bit {
	val := a.varVal() && !b.varVal()
	r := cs.alloc(feBool(val))
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: a.v, Coeff: feOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne}, r1cs.Term{Var: b.v, Coeff: feMinusOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: r, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return isBit(r, val)
}

// bitNor: (1 − a)·(1 − b) = r.
func (cs *CS) bitNor(a, b Bit) Bit {
	val := !a.varVal() && !b.varVal()
	r := cs.alloc(feBool(val))
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne}, r1cs.Term{Var: a.v, Coeff: feMinusOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne}, r1cs.Term{Var: b.v, Coeff: feMinusOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: r, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return isBit(r, val)
}

// Xor returns a ⊕ b with bellpepper's constant propagation (Boolean::xor).
func (cs *CS) Xor(a, b Bit) Bit {
	switch {
	case a.kind == kindConst && !a.val:
		return b
	case b.kind == kindConst && !b.val:
		return a
	case a.kind == kindConst:
		return b.Not()
	case b.kind == kindConst:
		return a.Not()
	case a.kind == kindIs && b.kind == kindNot:
		return cs.bitXor(a, b).Not()
	case a.kind == kindNot && b.kind == kindIs:
		return cs.bitXor(b, a).Not()
	default:
		return cs.bitXor(a, b)
	}
}

// And returns a ∧ b with bellpepper's constant propagation (Boolean::and).
func (cs *CS) And(a, b Bit) Bit {
	switch {
	case a.kind == kindConst && !a.val, b.kind == kindConst && !b.val:
		return bitFalse
	case a.kind == kindConst:
		return b
	case b.kind == kindConst:
		return a
	case a.kind == kindIs && b.kind == kindNot:
		return cs.bitAndNot(a, b)
	case a.kind == kindNot && b.kind == kindIs:
		return cs.bitAndNot(b, a)
	case a.kind == kindNot:
		return cs.bitNor(a, b)
	default:
		return cs.bitAnd(a, b)
	}
}

// Sha256Ch returns (a ∧ b) ⊕ (¬a ∧ c) (Boolean::sha256_ch).
func (cs *CS) Sha256Ch(a, b, c Bit) Bit {
	val := (a.val && b.val) != (!a.val && c.val)
	switch {
	case a.kind == kindConst && b.kind == kindConst && c.kind == kindConst:
		return Constant(val)
	case a.kind == kindConst && !a.val:
		return c
	case b.kind == kindConst && !b.val:
		return cs.And(a.Not(), c)
	case c.kind == kindConst && !c.val:
		return cs.And(a, b)
	case c.kind == kindConst: // c true
		return cs.And(a, b.Not()).Not()
	case b.kind == kindConst: // b true
		return cs.And(a.Not(), c.Not()).Not()
	}
	// a is allocated or the constant true: a·(b − c) = ch − c.
	ch := cs.alloc(feBool(val))
	if cs.record {
		cs.la = subBit1(addBit1(cs.la[:0], b), c)
		cs.lb = addBit1(cs.lb[:0], a)
		cs.lc = subBit1(append(cs.lc[:0], r1cs.Term{Var: ch, Coeff: feOne}), c)
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return isBit(ch, val)
}

// Sha256Maj returns the majority of a, b, c (Boolean::sha256_maj).
func (cs *CS) Sha256Maj(a, b, c Bit) Bit {
	val := (a.val && b.val) != (a.val && c.val) != (b.val && c.val)
	switch {
	case a.kind == kindConst && b.kind == kindConst && c.kind == kindConst:
		return Constant(val)
	case a.kind == kindConst && !a.val:
		return cs.And(b, c)
	case b.kind == kindConst && !b.val:
		return cs.And(a, c)
	case c.kind == kindConst && !c.val:
		return cs.And(a, b)
	case c.kind == kindConst:
		return cs.And(a.Not(), b.Not()).Not()
	case b.kind == kindConst:
		return cs.And(a.Not(), c.Not()).Not()
	case a.kind == kindConst:
		return cs.And(b.Not(), c.Not()).Not()
	}
	maj := cs.alloc(feBool(val))
	bc := cs.And(b, c)
	if cs.record {
		// (2bc − b − c)·a = bc − maj
		var two, negTwo fr.Element
		two.Double(&feOne)
		negTwo.Neg(&two)
		cs.la = subBit1(subBit1(addBit(cs.la[:0], bc, &two, &negTwo), b), c)
		cs.lb = addBit1(cs.lb[:0], a)
		cs.lc = append(addBit1(cs.lc[:0], bc), r1cs.Term{Var: maj, Coeff: feMinusOne})
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	return isBit(maj, val)
}
