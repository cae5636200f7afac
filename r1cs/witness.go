package r1cs

import (
	"context"
	"fmt"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Witness is the witness-only mode: it keeps the assignment and ignores
// constraints. Synthesizing into a Witness produces exactly the Inputs and Aux
// a [System] would hold for the same circuit and values.
type Witness struct {
	Inputs []fr.Element // Inputs[0] is ONE
	Aux    []fr.Element
}

// NewWitness returns an empty witness holding input ONE. The hints size the
// assignment vectors to avoid regrowth; zero is fine.
func NewWitness(inputsHint, auxHint int) *Witness {
	w := &Witness{
		Inputs: make([]fr.Element, 1, max(inputsHint, 1)),
		Aux:    make([]fr.Element, 0, auxHint),
	}
	w.Inputs[0] = oneElement
	return w
}

// AppendParts synthesizes n parts of a circuit, synth(i, part) building
// part i, and appends their inputs and aux values to w, part after part:
// the assignment a sequential synthesis into w gives, when each part
// allocates only variables of its own and every part as many inputs and
// aux values as part 0. Part 0 runs first; the others then run on up to
// workers goroutines (GOMAXPROCS when workers ≤ 0), each writing straight
// into its place in w's vectors, which grow once. A part that allocates
// other counts than part 0 fails the call. No part starts once ctx is done,
// and ctx's error is returned when those running end.
func (w *Witness) AppendParts(ctx context.Context, n, workers int, synth func(i int, part *Witness) error) error {
	if n == 0 {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var first Witness
	if err := synth(0, &first); err != nil {
		return err
	}
	nIn, nAux := len(first.Inputs), len(first.Aux)
	in0, aux0 := len(w.Inputs), len(w.Aux)
	w.Inputs = slices.Grow(w.Inputs, n*nIn)[:in0+n*nIn]
	w.Aux = slices.Grow(w.Aux, n*nAux)[:aux0+n*nAux]
	copy(w.Inputs[in0:], first.Inputs)
	copy(w.Aux[aux0:], first.Aux)
	g := NewGroup(ctx, workers)
	for i := 1; i < n; i++ {
		g.Go(func() error {
			// Empty views of the part's place: its appends fill it, and
			// one past it would move the part to an array of its own.
			bi, ba := in0+i*nIn, aux0+i*nAux
			part := Witness{Inputs: w.Inputs[bi : bi : bi+nIn], Aux: w.Aux[ba : ba : ba+nAux]}
			if err := synth(i, &part); err != nil {
				return err
			}
			if len(part.Inputs) != nIn || len(part.Aux) != nAux {
				return fmt.Errorf("r1cs: part %d allocated %d inputs and %d aux values, part 0 %d and %d",
					i, len(part.Inputs), len(part.Aux), nIn, nAux)
			}
			return nil
		})
	}
	return g.Wait()
}

// Alloc implements [Builder].
func (w *Witness) Alloc(value fr.Element) Variable {
	w.Aux = append(w.Aux, value)
	return AuxVariable(len(w.Aux) - 1)
}

// AllocInput implements [Builder].
func (w *Witness) AllocInput(value fr.Element) Variable {
	w.Inputs = append(w.Inputs, value)
	return InputVariable(len(w.Inputs) - 1)
}

// Enforce implements [Builder]; it does nothing.
func (w *Witness) Enforce(a, b, c LC) {}

// Value implements [Builder].
func (w *Witness) Value(v Variable) fr.Element {
	if v.IsAux() {
		return w.Aux[v.Index()]
	}
	return w.Inputs[v.Index()]
}

// Counter is the counting mode: it stores no constraint and no value, only
// the counts and densities (one bit per variable), so the shape of circuits
// far too large to record can be checked.
type Counter struct {
	constraints int
	inputs, aux int
	aAux, bAux  Density
	bInputs     Density
	scratch     LC
	finalized   bool
}

// NewCounter returns a counter holding input ONE.
func NewCounter() *Counter {
	c := &Counter{}
	c.AllocInput(fr.Element{})
	return c
}

// Alloc implements [Builder].
func (c *Counter) Alloc(fr.Element) Variable {
	c.aux++
	c.aAux.grow()
	c.bAux.grow()
	return AuxVariable(c.aux - 1)
}

// AllocInput implements [Builder].
func (c *Counter) AllocInput(fr.Element) Variable {
	c.inputs++
	c.bInputs.grow()
	return InputVariable(c.inputs - 1)
}

// Enforce implements [Builder]: it counts the constraint and updates the
// densities after merging terms, as [System] does.
func (c *Counter) Enforce(a, b, cc LC) {
	c.constraints++
	c.scratch = mergeTerms(append(c.scratch[:0], a...))
	for _, t := range c.scratch {
		if t.Var.IsAux() {
			c.aAux.set(t.Var.Index())
		}
	}
	c.scratch = mergeTerms(append(c.scratch[:0], b...))
	for _, t := range c.scratch {
		if t.Var.IsAux() {
			c.bAux.set(t.Var.Index())
		} else {
			c.bInputs.set(t.Var.Index())
		}
	}
}

// Value implements [Builder]; a Counter keeps no values and returns zero.
func (c *Counter) Value(Variable) fr.Element { return fr.Element{} }

// Finalize counts the per-input constraints, as [System.Finalize] appends
// them. It is idempotent.
func (c *Counter) Finalize() {
	if !c.finalized {
		c.constraints += c.inputs
		c.finalized = true
	}
}

// Counts returns the shape counted so far.
func (c *Counter) Counts() Counts {
	return Counts{
		Constraints: c.constraints,
		Inputs:      c.inputs,
		Aux:         c.aux,
		AAux:        c.aAux.Count(),
		BInputs:     c.bInputs.Count(),
		BAux:        c.bAux.Count(),
	}
}

var (
	_ Builder = (*System)(nil)
	_ Builder = (*Witness)(nil)
	_ Builder = (*Counter)(nil)
)
