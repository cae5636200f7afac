package gpu

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/r1cs"
)

// hostR1CS is a recorded constraint system in the device layout, held on
// the host as the tests' reference of the device's evaluation:
// per matrix (A, B, C) compressed sparse rows with uint32 row starts,
// uint32 columns over w = inputs ‖ aux and uint16 indices into Coeffs, plus
// one kind byte per coefficient (1: one, 2: minus one, 0: other) so that
// ±1 terms cost no multiplication. That is 6 bytes per non-zero and 4 per
// row; PoRep circuits have a few hundred distinct coefficients.
type hostR1CS struct {
	Constraints, Inputs, Aux int
	RowStart                 [3][]uint32
	Col                      [3][]uint32
	Coeff                    [3][]uint16
	Coeffs                   []fr.Element
	Kinds                    []uint8
	recording                uint64
}

// convertMatrix returns matrix k (0 A, 1 B, 2 C) of sys in the device
// layout. sys must pass checkLayout.
func convertMatrix(sys *r1cs.System, k int) (rows, cols []uint32, coef []uint16) {
	m := []*r1cs.Matrix{sys.A(), sys.B(), sys.C()}[k]
	cols = make([]uint32, len(m.Vars))
	coef = make([]uint16, len(m.Vars))
	convertTerms(m, sys.NumInputs(), 0, cols, coef)
	return m.RowStart, cols, coef
}

// newHostR1CS converts sys's recorded matrices into the device layout. It
// fails with ErrR1CSLayout (wrapped) when sys does not fit.
func newHostR1CS(sys *r1cs.System) (*hostR1CS, error) {
	if err := checkLayout(sys); err != nil {
		return nil, err
	}
	r := &hostR1CS{
		Constraints: sys.NumConstraints(), Inputs: sys.NumInputs(), Aux: sys.NumAux(),
		Coeffs: sys.Coeffs(), Kinds: coeffKinds(sys.Coeffs()), recording: sys.Recording(),
	}
	for k := range 3 {
		r.RowStart[k], r.Col[k], r.Coeff[k] = convertMatrix(sys, k)
	}
	return r, nil
}

// records reports whether sys's constraints are the ones r was made from
// (sys shares the recorded matrices, as systems made by WithAssignment do).
func (r *hostR1CS) records(sys *r1cs.System) bool { return r.recording == sys.Recording() }

// eval is the host reference of the device pass's first steps: it expands
// w and writes a = A·w, b = B·w, c = C·w into a, b, c (each at least
// Constraints long; entries past it untouched), term by term as the device
// does. It returns the first constraint with a·b ≠ c, or -1.
func (r *hostR1CS) eval(w *Witness, a, b, c []fr.Element) (int, error) {
	if err := w.Check(r.Inputs, r.Aux); err != nil {
		return 0, err
	}
	if len(a) < r.Constraints || len(b) < r.Constraints || len(c) < r.Constraints {
		return 0, fmt.Errorf("%w: vectors of %d, %d, %d for %d constraints", ErrBadArgument, len(a), len(b), len(c), r.Constraints)
	}
	full := make([]fr.Element, r.Inputs+r.Aux)
	copy(full, w.Inputs)
	w.Expand(full[r.Inputs:])
	one := fr.One()
	dot := func(k, j int) fr.Element {
		var acc, t fr.Element
		for x := r.RowStart[k][j]; x < r.RowStart[k][j+1]; x++ {
			v := &full[r.Col[k][x]]
			if v.IsZero() {
				continue
			}
			ci := r.Coeff[k][x]
			switch {
			case r.Kinds[ci] == coeffOne:
				acc.Add(&acc, v)
			case r.Kinds[ci] == coeffMinusOne:
				acc.Sub(&acc, v)
			case *v == one:
				acc.Add(&acc, &r.Coeffs[ci])
			default:
				t.Mul(v, &r.Coeffs[ci])
				acc.Add(&acc, &t)
			}
		}
		return acc
	}
	bad := -1
	var ab fr.Element
	for j := range r.Constraints {
		a[j], b[j], c[j] = dot(0, j), dot(1, j), dot(2, j)
		if ab.Mul(&a[j], &b[j]); ab != c[j] && bad < 0 {
			bad = j
		}
	}
	return bad, nil
}
