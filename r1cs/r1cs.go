// Package r1cs builds rank-1 constraint systems with bellperson's semantics.
//
// A circuit is written once against the [Builder] interface and run in one of
// three modes:
//
//   - [System] records the constraints as sparse matrices (CSR, coefficients
//     deduplicated into a table) together with the assignment, the density of
//     the A and B queries, and can check satisfaction. Keys are generated and
//     small circuits proved from it.
//   - [Witness] keeps only the assignment; Enforce costs nothing. It is the
//     fast path used to produce witnesses for a shape whose R1CS is already
//     recorded.
//   - [Counter] stores nothing and counts constraints, variables and density,
//     for shape checks of circuits too large to record.
//
// Variables follow bellperson: input 0 is the constant ONE, allocated by the
// constructor; inputs and auxiliary (private) variables are numbered in two
// separate sequences. After synthesis, [System.Finalize] appends bellperson's
// per-input constraints (input_i · 0 = 0), which make every input dense in A.
// The unified numbering used by matrices and digests is inputs 0..n-1 followed
// by aux n..n+m-1.
package r1cs

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Variable names an input or an auxiliary variable. The zero Variable is
// [One], input 0.
type Variable uint32

const auxFlag Variable = 1 << 31

// One is input 0, whose value is always 1.
const One Variable = 0

// MaxVariables is the largest number of inputs, or of aux variables, a system
// can hold (2^31 − 1).
const MaxVariables = int(auxFlag - 1)

// InputVariable returns the Variable of input i.
func InputVariable(i int) Variable { return Variable(i) }

// AuxVariable returns the Variable of aux variable i.
func AuxVariable(i int) Variable { return Variable(i) | auxFlag }

// IsAux reports whether v is an auxiliary variable.
func (v Variable) IsAux() bool { return v&auxFlag != 0 }

// Index returns v's index within its own sequence (inputs or aux).
func (v Variable) Index() int { return int(v &^ auxFlag) }

func (v Variable) String() string {
	if v.IsAux() {
		return fmt.Sprintf("aux[%d]", v.Index())
	}
	return fmt.Sprintf("input[%d]", v.Index())
}

// Term is coeff·variable.
type Term struct {
	Var   Variable
	Coeff fr.Element
}

// LC is a linear combination Σ coeff·variable. Terms may repeat a variable;
// they are merged when the constraint is recorded, and a variable whose merged
// coefficient is zero is dropped (and does not count towards density), as in
// bellperson.
type LC []Term

// Add returns lc + coeff·v. It appends; it does not merge.
func (lc LC) Add(v Variable, coeff fr.Element) LC { return append(lc, Term{v, coeff}) }

// AddVar returns lc + v.
func (lc LC) AddVar(v Variable) LC { return append(lc, Term{v, oneElement}) }

// SubVar returns lc − v.
func (lc LC) SubVar(v Variable) LC { return append(lc, Term{v, minusOneElement}) }

// Eval returns the value of lc under the assignment.
func (lc LC) Eval(inputs, aux []fr.Element) fr.Element {
	var acc, t fr.Element
	for i := range lc {
		x := &lc[i]
		var val *fr.Element
		if x.Var.IsAux() {
			val = &aux[x.Var.Index()]
		} else {
			val = &inputs[x.Var.Index()]
		}
		if x.Coeff == oneElement {
			acc.Add(&acc, val)
			continue
		}
		t.Mul(val, &x.Coeff)
		acc.Add(&acc, &t)
	}
	return acc
}

var (
	oneElement      = fr.One()
	minusOneElement = func() fr.Element { var e fr.Element; e.Neg(&oneElement); return e }()
)

// Builder is what circuits are written against. Values are always supplied;
// in modes that need no witness (key generation, counting) they may be zero.
type Builder interface {
	// Alloc allocates an auxiliary variable holding value.
	Alloc(value fr.Element) Variable
	// AllocInput allocates a public input holding value.
	AllocInput(value fr.Element) Variable
	// Enforce adds the constraint a · b = c.
	Enforce(a, b, c LC)
	// Value returns the value assigned to v (zero in modes that keep none).
	Value(v Variable) fr.Element
}

// Counts describes the shape of a constraint system. Constraints includes the
// per-input constraints once the system is finalized.
type Counts struct {
	Constraints int
	Inputs      int // including ONE
	Aux         int
	AAux        int // aux variables with a non-zero coefficient in some A
	BInputs     int // inputs with a non-zero coefficient in some B
	BAux        int // aux variables with a non-zero coefficient in some B
}

func (c Counts) String() string {
	return fmt.Sprintf("constraints=%d inputs=%d aux=%d a_aux=%d b_inputs=%d b_aux=%d",
		c.Constraints, c.Inputs, c.Aux, c.AAux, c.BInputs, c.BAux)
}
