// Package gadget holds the R1CS gadgets of the Filecoin PoRep circuit —
// booleans, 32- and 64-bit words, SHA-256, field-element packing, Merkle
// insertion and inclusion, and the SDR label — written against an
// [r1cs.Builder] so that the variables they allocate and the constraints they
// enforce come in exactly the order, and with exactly the coefficients,
// bellperson, bellpepper-core and storage-proofs-core produce.
//
// Every gadget carries its witness values with it (a [Bit] knows its bool, a
// [Num] its field element), so synthesis never reads values back from the
// builder. When the builder keeps only a witness ([r1cs.Witness]) no linear
// combination is built at all.
package gadget

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/r1cs"
)

// Capacity is the number of bits a BLS12-381 scalar can hold without
// reduction (Fr::CAPACITY): multipacking uses chunks of this size.
const Capacity = 254

// NumBits is the bit length of the scalar field modulus (Fr::NUM_BITS).
const NumBits = 255

// CS drives an [r1cs.Builder] for the gadgets of this package. It owns the
// scratch buffers the gadgets reuse, and the state of the MultiEq batcher
// used by SHA-256. A CS is not safe for concurrent use.
type CS struct {
	b      r1cs.Builder
	w      *r1cs.Witness // b, when it keeps only the witness
	record bool          // false when b keeps only the witness: no LC is built

	// scratch linear combinations; gadgets fill them and hand them to Enforce,
	// which copies (System, Counter) or ignores (Witness) them.
	la, lb, lc, t1, t2 r1cs.LC

	// MultiEq state (bellperson gadgets/multieq.rs).
	meLHS, meRHS r1cs.LC
	meBits       int
	keys         []uint64 // sort scratch
	spare        r1cs.LC  // merge scratch

	pad  []Bit // SHA-256 padding buffer
	bits []Bit // scratch bits
}

// New returns a CS over b.
func New(b r1cs.Builder) *CS {
	cs := &CS{}
	cs.Reset(b)
	return cs
}

// Reset points cs at another builder and clears the MultiEq state, keeping
// the scratch buffers, so that one CS per goroutine can synthesize many
// segments without reallocating.
func (cs *CS) Reset(b r1cs.Builder) {
	w, witnessOnly := b.(*r1cs.Witness)
	cs.b, cs.w, cs.record = b, w, !witnessOnly
	cs.meLHS, cs.meRHS, cs.meBits = cs.meLHS[:0], cs.meRHS[:0], 0
}

// alloc allocates an aux variable, appending directly to a witness.
func (cs *CS) alloc(v fr.Element) r1cs.Variable {
	if cs.w != nil {
		cs.w.Aux = append(cs.w.Aux, v)
		return r1cs.AuxVariable(len(cs.w.Aux) - 1)
	}
	return cs.b.Alloc(v)
}

// Builder returns the builder cs drives.
func (cs *CS) Builder() r1cs.Builder { return cs.b }

// Records reports whether constraints are built (false in witness-only mode).
func (cs *CS) Records() bool { return cs.record }

var (
	feZero     fr.Element
	feOne      = fr.One()
	feMinusOne = func() fr.Element { var e fr.Element; e.Neg(&feOne); return e }()
	// pow2[i] = 2^i and negPow2[i] = −2^i, for i ≤ 256.
	pow2, negPow2 = func() (p, n [257]fr.Element) {
		p[0] = fr.One()
		for i := 1; i < len(p); i++ {
			p[i].Double(&p[i-1])
		}
		for i := range p {
			n[i].Neg(&p[i])
		}
		return
	}()
)

func feBool(b bool) fr.Element {
	if b {
		return feOne
	}
	return feZero
}

func (cs *CS) enforce(a, b, c r1cs.LC) { cs.b.Enforce(a, b, c) }
