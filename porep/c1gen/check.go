package c1gen

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// CheckCircuit synthesizes the circuit of partition p of shape s and checks
// each constraint a·b = c against the assignment as it is enforced, keeping
// the assignment but no constraint, so it costs a witness's memory, not a
// recorded system's. It returns the public inputs (ONE first) and, for the
// first constraint that does not hold, an *r1cs.UnsatisfiedError (Index in
// synthesis order). The per-input constraints a finalized system appends
// (input·0 = 0) always hold and are not checked. Errors of synthesis (a
// partition that fails [porep.Shape.Check]) are returned as they are.
func CheckCircuit(s porep.Shape, p *porep.Partition) ([]fr.Element, error) {
	c := &checker{w: r1cs.NewWitness(s.NumInputs(), 0)}
	if err := porep.Synthesize(c, s, p); err != nil {
		return nil, err
	}
	if len(c.w.Inputs) != s.NumInputs() {
		return nil, fmt.Errorf("c1gen: circuit has %d inputs, shape %d", len(c.w.Inputs), s.NumInputs())
	}
	if c.bad != nil {
		return c.w.Inputs, c.bad
	}
	return c.w.Inputs, nil
}

// checker is an r1cs.Builder that evaluates each constraint when it is
// enforced and remembers the first that fails.
type checker struct {
	w   *r1cs.Witness
	n   int
	bad *r1cs.UnsatisfiedError
}

func (c *checker) Alloc(v fr.Element) r1cs.Variable      { return c.w.Alloc(v) }
func (c *checker) AllocInput(v fr.Element) r1cs.Variable { return c.w.AllocInput(v) }
func (c *checker) Value(v r1cs.Variable) fr.Element      { return c.w.Value(v) }

func (c *checker) Enforce(a, b, cc r1cs.LC) {
	if c.bad == nil {
		av := a.Eval(c.w.Inputs, c.w.Aux)
		bv := b.Eval(c.w.Inputs, c.w.Aux)
		cv := cc.Eval(c.w.Inputs, c.w.Aux)
		var ab fr.Element
		ab.Mul(&av, &bv)
		if ab != cv {
			c.bad = &r1cs.UnsatisfiedError{Index: c.n, A: av, B: bv, C: cv}
		}
	}
	c.n++
}
