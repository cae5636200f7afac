package gadget

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

// pelt is one Poseidon state element in the circuit (neptune circuit.rs Elt):
// either an allocated variable or a linear combination not yet allocated.
type pelt struct {
	alloc bool
	v     r1cs.Variable
	val   fr.Element
	lc    r1cs.LC // when !alloc and recording: sorted by variable, merged
}

func (e *pelt) terms() r1cs.LC {
	if e.alloc {
		return r1cs.LC{{Var: e.v, Coeff: feOne}}
	}
	return e.lc
}

// lcAxpy returns a + s·b for sorted, merged a and b, as a new sorted, merged
// combination (bellpepper's LinearCombination addition, which merges terms
// by variable).
func lcAxpy(a, b r1cs.LC, s *fr.Element) r1cs.LC {
	out := make(r1cs.LC, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Var < b[j].Var):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Var < a[i].Var:
			t := b[j]
			t.Coeff.Mul(&t.Coeff, s)
			out = append(out, t)
			j++
		default:
			t := b[j]
			t.Coeff.Mul(&t.Coeff, s)
			t.Coeff.Add(&t.Coeff, &a[i].Coeff)
			out = append(out, t)
			i++
			j++
		}
	}
	return out
}

// axpy sets acc = acc + s·e (Elt scale then Num add).
func (cs *CS) axpy(acc *pelt, e *pelt, s *fr.Element) {
	var t fr.Element
	t.Mul(&e.val, s)
	acc.val.Add(&acc.val, &t)
	if cs.record {
		acc.lc = lcAxpy(acc.lc, e.terms(), s)
	}
}

// ensureAllocated allocates a linear-combination element and enforces
// lc·1 = v (Elt::ensure_allocated with enforce).
func (cs *CS) ensureAllocated(e *pelt) r1cs.Variable {
	if e.alloc {
		return e.v
	}
	v := cs.alloc(e.val)
	if cs.record {
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: v, Coeff: feOne})
		cs.enforce(e.lc, cs.lb, cs.lc)
	}
	*e = pelt{alloc: true, v: v, val: e.val}
	return v
}

// sboxCircuit replaces e by e^5 + post (or (e + pre)^5 + post in the first
// round, when pre is given): x² (or (x + pre)²), x⁴, then x⁴·(x + pre) + post,
// three constraints after the input is allocated (neptune quintic_s_box and
// quintic_s_box_pre_add).
func (cs *CS) sboxCircuit(e *pelt, pre, post *fr.Element) {
	l := cs.ensureAllocated(e)
	var x, x2, x4, x5 fr.Element
	x = e.val
	if pre != nil {
		x.Add(&x, pre)
	}
	x2.Square(&x)
	x4.Square(&x2)
	x5.Mul(&x4, &x)
	if post != nil {
		x5.Add(&x5, post)
	}
	v2 := cs.alloc(x2)
	if cs.record {
		cs.setShifted(l, pre)
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: v2, Coeff: feOne})
		cs.enforce(cs.la, cs.la, cs.lc)
	}
	v4 := cs.alloc(x4)
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: v2, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: v4, Coeff: feOne})
		cs.enforce(cs.la, cs.la, cs.lc)
	}
	v5 := cs.alloc(x5)
	if cs.record {
		cs.setShifted(l, pre)
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: v4, Coeff: feOne})
		cs.lc = append(cs.lc[:0], r1cs.Term{Var: v5, Coeff: feOne})
		if post != nil {
			var neg fr.Element
			neg.Neg(post)
			cs.lc = append(cs.lc, r1cs.Term{Var: r1cs.One, Coeff: neg})
		}
		cs.enforce(cs.la, cs.lb, cs.lc)
	}
	*e = pelt{alloc: true, v: v5, val: x5}
}

// setShifted sets cs.la to the LC l + pre (l alone when pre is nil).
func (cs *CS) setShifted(l r1cs.Variable, pre *fr.Element) {
	cs.la = append(cs.la[:0], r1cs.Term{Var: l, Coeff: feOne})
	if pre != nil {
		cs.la = append(cs.la, r1cs.Term{Var: r1cs.One, Coeff: *pre})
	}
}

// Poseidon hashes preimage (exactly c.Arity numbers) in the circuit as
// neptune's original circuit::poseidon_hash does with the optimized
// constants: the domain-tag element stays a constant through the first S-box,
// full-round S-boxes cost 4 constraints (3 in the first round, whose inputs
// are allocated), partial rounds 4, and the result is allocated with one
// more. Arity 2, 8 and 11 cost 311, 505 and 598 constraints.
func (cs *CS) Poseidon(c *poseidon.Constants, preimage []Num) Num {
	if len(preimage) != c.Arity {
		panic("gadget: Poseidon preimage length differs from arity") // a circuit bug
	}
	t := c.Width
	var st, nx [poseidon.MaxArity + 1]pelt
	s, next := st[:t], nx[:t]
	s[0] = pelt{val: c.DomainTag}
	if cs.record {
		s[0].lc = r1cs.LC{{Var: r1cs.One, Coeff: c.DomainTag}}
	}
	for i, p := range preimage {
		s[i+1] = pelt{alloc: true, v: p.Var, val: p.Value}
	}
	k := c.Compressed
	off := 0
	half := c.FullRounds / 2
	round := 0

	mix := func() {
		switch {
		case round == half-1 || round < half-1 || round >= half+c.PartialRounds:
			m := c.MDS
			if round == half-1 {
				m = c.PreSparse
			}
			for j := 0; j < t; j++ {
				next[j] = pelt{}
				for i := 0; i < t; i++ {
					cs.axpy(&next[j], &s[i], &m[i][j])
				}
			}
			copy(s, next)
		default:
			sp := &c.Sparse[round-half]
			var r0 pelt
			for i := 0; i < t; i++ {
				cs.axpy(&r0, &s[i], &sp.WHat[i])
			}
			for j := 1; j < t; j++ {
				cs.axpy(&s[j], &s[0], &sp.VRest[j-1])
			}
			s[0] = r0
		}
		round++
	}

	// First full round: pre-keys k[0:t], post-keys k[t:2t]; the tag element
	// is computed as a constant.
	pre, post := k[0:t], k[t:2*t]
	off = 2 * t
	{
		var x fr.Element
		x.Add(&s[0].val, &pre[0])
		sboxValue(&x)
		x.Add(&x, &post[0])
		s[0] = pelt{val: x}
		if cs.record {
			s[0].lc = r1cs.LC{{Var: r1cs.One, Coeff: x}}
		}
	}
	for i := 1; i < t; i++ {
		cs.sboxCircuit(&s[i], &pre[i], &post[i])
	}
	mix()
	fullRound := func(last bool) {
		for i := 0; i < t; i++ {
			if last {
				cs.sboxCircuit(&s[i], nil, nil)
			} else {
				cs.sboxCircuit(&s[i], nil, &k[off+i])
			}
		}
		if !last {
			off += t
		}
		mix()
	}
	for r := 1; r < half; r++ {
		fullRound(false)
	}
	for r := 0; r < c.PartialRounds; r++ {
		cs.sboxCircuit(&s[0], nil, &k[off])
		off++
		mix()
	}
	for r := 0; r < half-1; r++ {
		fullRound(false)
	}
	fullRound(true)
	v := cs.ensureAllocated(&s[1])
	return Num{Var: v, Value: s[1].val}
}

func sboxValue(x *fr.Element) {
	var t fr.Element
	t.Square(x)
	t.Square(&t)
	x.Mul(x, &t)
}
