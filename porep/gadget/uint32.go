package gadget

import (
	"math/bits"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/r1cs"
)

// UInt32 is bellperson's UInt32: 32 bits, least significant first, and the
// word's value.
type UInt32 struct {
	Bits  [32]Bit
	Value uint32
}

// ConstUInt32 returns the constant word x.
func ConstUInt32(x uint32) UInt32 {
	var u UInt32
	for i := range u.Bits {
		u.Bits[i] = Constant(x>>i&1 == 1)
	}
	u.Value = x
	return u
}

// UInt32FromBitsBE builds a word from 32 bits, most significant first
// (UInt32::from_bits_be).
func UInt32FromBitsBE(be []Bit) UInt32 {
	var u UInt32
	for i := 0; i < 32; i++ {
		b := be[31-i]
		u.Bits[i] = b
		if b.val {
			u.Value |= 1 << i
		}
	}
	return u
}

// AppendBitsBE appends u's bits, most significant first (UInt32::into_bits_be).
func (u *UInt32) AppendBitsBE(dst []Bit) []Bit {
	for i := 31; i >= 0; i-- {
		dst = append(dst, u.Bits[i])
	}
	return dst
}

// Rotr rotates right by n bits; it costs nothing.
func (u *UInt32) Rotr(n int) UInt32 {
	n %= 32
	var r UInt32
	copy(r.Bits[:], u.Bits[n:])
	copy(r.Bits[32-n:], u.Bits[:n])
	r.Value = bits.RotateLeft32(u.Value, -n)
	return r
}

// Shr shifts right by n bits, filling with constant zeros; it costs nothing.
func (u *UInt32) Shr(n int) UInt32 {
	n %= 32
	var r UInt32
	copy(r.Bits[:], u.Bits[n:])
	for i := 32 - n; i < 32; i++ {
		r.Bits[i] = bitFalse
	}
	r.Value = u.Value >> n
	return r
}

// XorUInt32 returns a ⊕ b bit by bit, least significant bit first.
func (cs *CS) XorUInt32(a, b *UInt32) UInt32 {
	var r UInt32
	if w := cs.w; w != nil && allIs(a) && allIs(b) {
		// Witness-only fast path: two words of allocated bits, 32 allocations.
		aux, base := growAux(w, 32)
		for i := range r.Bits {
			v := a.Bits[i].val != b.Bits[i].val
			setBool(&aux[i], v)
			r.Bits[i] = Bit{v: r1cs.AuxVariable(base + i), kind: kindIs, val: v}
		}
		r.Value = a.Value ^ b.Value
		return r
	}
	if w := cs.w; w != nil {
		// Witness-only path for mixed words: allocated pairs append directly,
		// anything involving a constant or a negation takes the general rule.
		for i := range r.Bits {
			x, y := a.Bits[i], b.Bits[i]
			if x.kind == kindIs && y.kind == kindIs {
				v := x.val != y.val
				w.Aux = append(w.Aux, feBool(v))
				r.Bits[i] = Bit{v: r1cs.AuxVariable(len(w.Aux) - 1), kind: kindIs, val: v}
				continue
			}
			r.Bits[i] = cs.Xor(x, y)
		}
		r.Value = a.Value ^ b.Value
		return r
	}
	for i := range r.Bits {
		r.Bits[i] = cs.Xor(a.Bits[i], b.Bits[i])
	}
	r.Value = a.Value ^ b.Value
	return r
}

// allIs reports whether every bit of u is an allocated, un-negated bit.
func allIs(u *UInt32) bool {
	for i := range u.Bits {
		if u.Bits[i].kind != kindIs {
			return false
		}
	}
	return true
}

// growAux extends w.Aux by n entries and returns them with the index of the
// first.
func growAux(w *r1cs.Witness, n int) ([]fr.Element, int) {
	base := len(w.Aux)
	w.Aux = slices.Grow(w.Aux, n)[:base+n]
	return w.Aux[base : base+n], base
}

func setBool(e *fr.Element, v bool) {
	if v {
		*e = feOne
	} else {
		*e = fr.Element{}
	}
}

// Sha256ChUInt32 applies [CS.Sha256Ch] bitwise.
func (cs *CS) Sha256ChUInt32(a, b, c *UInt32) UInt32 {
	var r UInt32
	if w := cs.w; w != nil && allIs(a) && allIs(b) && allIs(c) {
		// Witness-only fast path of the general case: one allocation per bit.
		aux, base := growAux(w, 32)
		for i := range r.Bits {
			x, y, z := a.Bits[i].val, b.Bits[i].val, c.Bits[i].val
			v := (x && y) != (!x && z)
			setBool(&aux[i], v)
			r.Bits[i] = Bit{v: r1cs.AuxVariable(base + i), kind: kindIs, val: v}
		}
		r.Value = a.Value&b.Value ^ ^a.Value&c.Value
		return r
	}
	for i := range r.Bits {
		r.Bits[i] = cs.Sha256Ch(a.Bits[i], b.Bits[i], c.Bits[i])
	}
	r.Value = a.Value&b.Value ^ ^a.Value&c.Value
	return r
}

// Sha256MajUInt32 applies [CS.Sha256Maj] bitwise.
func (cs *CS) Sha256MajUInt32(a, b, c *UInt32) UInt32 {
	var r UInt32
	if w := cs.w; w != nil && allIs(a) && allIs(b) && allIs(c) {
		// Witness-only fast path of the general case: maj, then b ∧ c, per bit.
		aux, base := growAux(w, 64)
		for i := range r.Bits {
			x, y, z := a.Bits[i].val, b.Bits[i].val, c.Bits[i].val
			v := (x && y) != (x && z) != (y && z)
			setBool(&aux[2*i], v)
			setBool(&aux[2*i+1], y && z)
			r.Bits[i] = Bit{v: r1cs.AuxVariable(base + 2*i), kind: kindIs, val: v}
		}
		r.Value = a.Value&b.Value ^ a.Value&c.Value ^ b.Value&c.Value
		return r
	}
	for i := range r.Bits {
		r.Bits[i] = cs.Sha256Maj(a.Bits[i], b.Bits[i], c.Bits[i])
	}
	r.Value = a.Value&b.Value ^ a.Value&c.Value ^ b.Value&c.Value
	return r
}

// addMany returns the sum of 2 to 10 words modulo 2^32 (UInt32::addmany).
// Unless every bit is constant, it allocates ⌈log2(n·(2^32−1))⌉ result bits
// and defers the equality "Σ operands = Σ result bits" to the MultiEq
// batcher, so it must be called between [CS.multiEqBegin] and
// [CS.multiEqEnd].
func (cs *CS) addMany(ops ...*UInt32) UInt32 {
	if len(ops) < 2 || len(ops) > 10 {
		panic("gadget: addMany takes 2 to 10 operands") // a circuit bug
	}
	var sum uint64
	allConst := true
	for _, op := range ops {
		sum += uint64(op.Value)
		for i := 0; allConst && i < len(op.Bits); i++ {
			allConst = op.Bits[i].kind == kindConst
		}
	}
	if allConst {
		return ConstUInt32(uint32(sum))
	}
	maxValue := uint64(len(ops)) * 0xffffffff
	n := bits.Len64(maxValue)
	var res UInt32
	// MultiEq::enforce_equal comes after the result bits are allocated: it
	// flushes the pending batch if this equality would not fit, then adds
	// the equality shifted by the bits in use. The shift is known now, so
	// the shifted coefficients ±2^(i+shift) are read from the tables.
	flush := Capacity <= cs.meBits+n
	sh := cs.meBits
	if flush {
		sh = 0
	}
	if cs.record {
		cs.t1 = cs.t1[:0]
		for _, op := range ops {
			for i := range op.Bits {
				cs.t1 = addBit(cs.t1, op.Bits[i], &pow2[sh+i], &negPow2[sh+i])
			}
		}
		cs.t2 = cs.t2[:0]
	}
	if w := cs.w; w != nil {
		// Witness-only: the result bits are all the work.
		aux, base := growAux(w, n)
		for i := range aux {
			v := sum>>i&1 == 1
			setBool(&aux[i], v)
			if i < 32 {
				res.Bits[i] = Bit{v: r1cs.AuxVariable(base + i), kind: kindIs, val: v}
			}
		}
		res.Value = uint32(sum)
		return res
	}
	for i := 0; i < n; i++ {
		b := cs.AllocBit(sum>>i&1 == 1)
		if i < 32 {
			res.Bits[i] = b
		}
		if cs.record {
			cs.t2 = append(cs.t2, r1cs.Term{Var: b.v, Coeff: pow2[sh+i]})
		}
	}
	if cs.record {
		if flush {
			cs.multiEqFlush()
		}
		cs.meLHS = append(cs.meLHS, cs.t1...)
		cs.meRHS = append(cs.meRHS, cs.t2...)
		cs.meBits = sh + n
	}
	res.Value = uint32(sum)
	return res
}

// multiEqFlush enforces lhs·1 = rhs for the pending batch
// (MultiEq::accumulate).
func (cs *CS) multiEqFlush() {
	// The batch holds hundreds of terms in operand order; hand the builder a
	// sorted, merged combination (the same linear combination) so that its
	// per-constraint merge is linear.
	cs.meLHS = sortMerge(cs.meLHS, &cs.keys, &cs.spare)
	cs.meRHS = sortMerge(cs.meRHS, &cs.keys, &cs.spare)
	cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne})
	cs.enforce(cs.meLHS, cs.lb, cs.meRHS)
	cs.meLHS, cs.meRHS, cs.meBits = cs.meLHS[:0], cs.meRHS[:0], 0
}

// sortMerge returns lc sorted by variable with repeated variables merged,
// using keys and out as scratch (it sorts 8-byte keys rather than terms).
func sortMerge(lc r1cs.LC, keys *[]uint64, out *r1cs.LC) r1cs.LC {
	k := (*keys)[:0]
	for i := range lc {
		k = append(k, uint64(lc[i].Var)<<32|uint64(i))
	}
	slices.Sort(k)
	o := (*out)[:0]
	for _, key := range k {
		t := &lc[uint32(key)]
		if n := len(o); n > 0 && o[n-1].Var == t.Var {
			o[n-1].Coeff.Add(&o[n-1].Coeff, &t.Coeff)
			continue
		}
		o = append(o, *t)
	}
	*keys = k
	*out = lc[:0] // the input buffer becomes the next scratch
	return o
}

// multiEqBegin starts a MultiEq scope (MultiEq::new).
func (cs *CS) multiEqBegin() {
	cs.meLHS, cs.meRHS, cs.meBits = cs.meLHS[:0], cs.meRHS[:0], 0
}

// multiEqEnd closes the scope, flushing a non-empty batch (MultiEq's Drop).
func (cs *CS) multiEqEnd() {
	if cs.meBits > 0 {
		cs.multiEqFlush()
	}
}
