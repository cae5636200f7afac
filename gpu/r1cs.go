package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/r1cs"
)

// Witness is one partition's assignment in the form it crosses to a device:
// the inputs (ONE first), a bitmap over the aux values equal to 1 (bit i of
// word i/64) and the aux values not in {0, 1} at their increasing indices.
// Every other aux value is 0. For PoRep partitions, where ~99 % of the aux
// values are 0 or 1, it is ~1/20 of the field elements it stands for. A
// dense witness (a PoSt's, mostly other values) has Ones and TailIdx nil
// and every aux value in Tail, in order.
type Witness struct {
	Inputs  []fr.Element
	NumAux  int
	Ones    []uint64
	TailIdx []uint32
	Tail    []fr.Element
}

// Check validates w's shape against a system of nInputs inputs and nAux aux
// variables.
func (w *Witness) Check(nInputs, nAux int) error {
	switch {
	case len(w.Inputs) != nInputs || w.NumAux != nAux:
		return fmt.Errorf("%w: witness of %d inputs and %d aux values for a system of %d and %d",
			ErrBadArgument, len(w.Inputs), w.NumAux, nInputs, nAux)
	case w.Dense() && len(w.Tail) != nAux:
		return fmt.Errorf("%w: dense witness of %d aux values for %d", ErrBadArgument, len(w.Tail), nAux)
	case w.Dense():
		return nil
	case len(w.Ones) != (nAux+63)/64:
		return fmt.Errorf("%w: ones bitmap of %d words for %d aux values", ErrBadArgument, len(w.Ones), nAux)
	case len(w.TailIdx) != len(w.Tail):
		return fmt.Errorf("%w: %d tail indices for %d values", ErrBadArgument, len(w.TailIdx), len(w.Tail))
	}
	if err := checkOnes(nAux, w.Ones); err != nil {
		return err
	}
	if j := parallel.FirstUnsorted(w.TailIdx, nAux); j >= 0 {
		return fmt.Errorf("%w: tail index %d (position %d) out of range or not increasing", ErrBadArgument, w.TailIdx[j], j)
	}
	return nil
}

// Dense reports whether w is in the dense form: every aux value in Tail.
func (w *Witness) Dense() bool { return w.Ones == nil && w.TailIdx == nil && w.NumAux > 0 }

// Expand writes the aux assignment w stands for into aux (len NumAux).
func (w *Witness) Expand(aux []fr.Element) {
	if w.Dense() {
		copy(aux, w.Tail)
		return
	}
	one := fr.One()
	for i := range aux {
		if w.Ones[i>>6]>>(uint(i)&63)&1 == 1 {
			aux[i] = one
		} else {
			aux[i] = fr.Element{}
		}
	}
	for j, i := range w.TailIdx {
		aux[i] = w.Tail[j]
	}
}

// The device layout of a recorded system: per matrix (A, B, C) compressed
// sparse rows with uint32 row starts, uint32 columns over w = inputs ‖ aux
// and uint16 indices into the coefficient table, plus one kind byte per
// coefficient so that ±1 terms cost no multiplication. That is 6 bytes per
// term and 4 per row; PoRep circuits have a few hundred distinct
// coefficients.

// Coefficient kinds of the device layout.
const (
	coeffOther    = 0
	coeffOne      = 1
	coeffMinusOne = 2
)

// ErrR1CSLayout is returned (wrapped) for a system the device layout cannot
// hold: more than 2^16 distinct coefficients, 2^32 variables, or 2^32 terms
// in one matrix.
var ErrR1CSLayout = errors.New("gpu: system exceeds the device R1CS layout")

// checkLayout reports whether sys fits the device layout.
func checkLayout(sys *r1cs.System) error {
	if !sys.Finalized() {
		return fmt.Errorf("%w: system is not finalized", ErrBadArgument)
	}
	if !sys.HasMatrices() {
		return fmt.Errorf("%w: %w", ErrBadArgument, r1cs.ErrNoMatrices)
	}
	if n := len(sys.Coeffs()); n > 1<<16 {
		return fmt.Errorf("%w: %d distinct coefficients", ErrR1CSLayout, n)
	}
	if uint64(sys.NumInputs())+uint64(sys.NumAux()) > math.MaxUint32 {
		return fmt.Errorf("%w: %d variables", ErrR1CSLayout, sys.NumInputs()+sys.NumAux())
	}
	for k, m := range []*r1cs.Matrix{sys.A(), sys.B(), sys.C()} {
		if uint64(len(m.Vars)) > math.MaxUint32 {
			return fmt.Errorf("%w: matrix %c has %d terms", ErrR1CSLayout, "ABC"[k], len(m.Vars))
		}
	}
	return nil
}

// convertChunks converts sys's matrices into the device layout chunk
// terms at a time, each chunk on all cores, and calls put with matrix k
// (A, B, C), the chunk's first term and its columns and coefficient
// indices, matrix after matrix in term order; the slices are reused after
// put returns. It returns put's first error.
func convertChunks(sys *r1cs.System, chunk int, put func(k, lo int, cols []uint32, coef []uint16) error) error {
	const piece = 1 << 16 // terms a goroutine converts at once
	mats := []*r1cs.Matrix{sys.A(), sys.B(), sys.C()}
	longest := 0
	for _, m := range mats {
		longest = max(longest, len(m.Vars))
	}
	cols, coef := make([]uint32, min(chunk, longest)), make([]uint16, min(chunk, longest))
	for k, m := range mats {
		for lo := 0; lo < len(m.Vars); lo += len(cols) {
			n := min(len(cols), len(m.Vars)-lo)
			_ = parallel.Each(context.Background(), (n+piece-1)/piece, func(p int) {
				a, b := p*piece, min(n, (p+1)*piece)
				convertTerms(m, sys.NumInputs(), lo+a, cols[a:b], coef[a:b])
			})
			if err := put(k, lo, cols[:n], coef[:n]); err != nil {
				return err
			}
		}
	}
	return nil
}

// convertTerms writes m's terms lo, lo+1, … in the device layout into cols
// and coef (as many as cols holds): columns over w = inputs ‖ aux with nin
// inputs, coefficient indices as uint16 (checkLayout bounds them).
func convertTerms(m *r1cs.Matrix, nin, lo int, cols []uint32, coef []uint16) {
	for j, v := range m.Vars[lo : lo+len(cols)] {
		if v.IsAux() {
			cols[j] = uint32(nin + v.Index())
		} else {
			cols[j] = uint32(v.Index())
		}
		coef[j] = uint16(m.CoeffIdx[lo+j])
	}
}

// coeffKinds classifies sys's coefficient table.
func coeffKinds(coeffs []fr.Element) []uint8 {
	one := fr.One()
	var minusOne fr.Element
	minusOne.Neg(&one)
	kinds := make([]uint8, len(coeffs))
	for i := range coeffs {
		switch coeffs[i] {
		case one:
			kinds[i] = coeffOne
		case minusOne:
			kinds[i] = coeffMinusOne
		}
	}
	return kinds
}

func layoutBytes(constraints, terms, coeffs int) int64 {
	return 3*4*int64(constraints+1) + 6*int64(terms) + 33*int64(coeffs)
}

// layoutBytesOf is Bytes of sys's conversion, without converting.
func layoutBytesOf(sys *r1cs.System) int64 {
	return layoutBytes(sys.NumConstraints(), len(sys.A().Vars)+len(sys.B().Vars)+len(sys.C().Vars), len(sys.Coeffs()))
}
