package cuda

import (
	"math"
	"math/bits"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// CSR is one matrix of a resident R1CS: row j's terms are
// Col[RowStart[j]:RowStart[j+1]] with coefficients Coeffs[Coeff[...]] of
// the owning [R1CS]; columns index w = inputs ‖ aux. The buffers hold
// uint32, uint32 and uint16 values.
type CSR struct {
	RowStart, Col, Coeff *Buffer
}

// R1CS is a recorded constraint system in device memory, evaluated by
// [Device.EvalR1CS]. Kinds holds one byte per coefficient: 1 for one, 2 for
// minus one, 0 otherwise. The caller owns the buffers.
type R1CS struct {
	Mats                     [3]CSR
	Coeffs, Kinds            *Buffer
	Constraints, Inputs, Aux int
}

// Free releases every buffer of r.
func (r *R1CS) Free() error {
	var first error
	for _, b := range r.buffers() {
		if err := b.Free(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (r *R1CS) buffers() []*Buffer {
	var out []*Buffer
	for _, m := range r.Mats {
		out = append(out, m.RowStart, m.Col, m.Coeff)
	}
	out = append(out, r.Coeffs, r.Kinds)
	var live []*Buffer
	for _, b := range out {
		if b != nil {
			live = append(live, b)
		}
	}
	return live
}

func (r *R1CS) check(op string) error {
	if r == nil {
		return argError(op, "no R1CS")
	}
	if r.Constraints < 0 || r.Inputs < 0 || r.Aux < 0 || uint64(r.Inputs)+uint64(r.Aux) > math.MaxUint32 {
		return argError(op, "R1CS of %d constraints, %d inputs, %d aux", r.Constraints, r.Inputs, r.Aux)
	}
	for i, m := range r.Mats {
		if err := m.RowStart.check(op, 4*uint64(r.Constraints+1)); err != nil {
			return err
		}
		if m.Col == nil || m.Coeff == nil {
			return argError(op, "matrix %d has no terms buffer", i)
		}
	}
	if r.Coeffs == nil || r.Kinds == nil {
		return argError(op, "R1CS has no coefficient table")
	}
	return nil
}

// CopyTo copies src into b at byte offset off. It synchronizes with the
// copy: src may be reused once it returns.
func CopyTo[T any](b *Buffer, off uint64, src []T) error {
	if len(src) == 0 {
		return nil
	}
	bytes := uint64(len(src)) * uint64(unsafe.Sizeof(src[0]))
	return b.d.copyIn("CopyTo", b, off, unsafe.Pointer(unsafe.SliceData(src)), bytes)
}

// CopyFrom copies len(dst) values from b at byte offset off into dst.
func CopyFrom[T any](dst []T, b *Buffer, off uint64) error {
	if len(dst) == 0 {
		return nil
	}
	bytes := uint64(len(dst)) * uint64(unsafe.Sizeof(dst[0]))
	return b.d.copyOut("CopyFrom", unsafe.Pointer(unsafe.SliceData(dst)), b, off, bytes)
}

// Select gathers into dst the Fr values of src[:n] whose bits bitmap sets
// (bit i of word i/64 selects value i; no bit at or past n), in order, on
// the device, and returns their number. dst must hold that many values and
// not overlap src.
func (d *Device) Select(dst, src *Buffer, n int, bitmap []uint64) (int, error) {
	const op = "Select"
	if n < 0 || n > math.MaxUint32 || len(bitmap) != (n+63)/64 {
		return 0, argError(op, "bitmap of %d words for %d values", len(bitmap), n)
	}
	count := 0
	for _, w := range bitmap {
		count += bits.OnesCount64(w)
	}
	if n%64 != 0 && bitmap[len(bitmap)-1]>>(n%64) != 0 {
		return 0, argError(op, "bits set past the %d values", n)
	}
	if err := src.check(op, frBytes*uint64(n)); err != nil {
		return 0, err
	}
	if err := dst.check(op, frBytes*uint64(count)); err != nil {
		return 0, err
	}
	s, err := d.acquire(op)
	if err != nil {
		return 0, err
	}
	defer d.release(s)
	return count, rawSelect(s, dst.p, src.p, uint64(n), bitmap, uint64(count))
}

// Slice returns a view of bytes [off, off+n) of b. The view shares b's
// memory: it is valid while b is, and freeing it does nothing.
func (b *Buffer) Slice(off, n uint64) (*Buffer, error) {
	if err := b.check("Slice", off+n); err != nil {
		return nil, err
	}
	return &Buffer{d: b.d, p: unsafe.Add(b.p, off), bytes: n, view: true}, nil
}

// EvalR1CS expands a witness into w and evaluates r on it into abc, on the
// device: the witness is inputs, the bitmap ones over the aux values equal
// to 1 (bit i of word i/64) and the aux values tail at the increasing
// indices tailIdx (every other aux value is 0); or, dense, ones and tailIdx
// nil and tail every aux value in order. w must hold r.Inputs+r.Aux
// elements and abc 3·2^logN (a, b, c in turn, zero past r.Constraints).
// It returns the first constraint with a·b ≠ c, or -1 when all hold.
func (d *Device) EvalR1CS(r *R1CS, w, abc *Buffer, logN int, inputs []fr.Element, ones []uint64,
	tailIdx []uint32, tail []fr.Element) (int64, error) {
	const op = "EvalR1CS"
	if err := r.check(op); err != nil {
		return 0, err
	}
	switch {
	case logN < 0 || logN > MaxLogN || r.Constraints > 1<<logN:
		return 0, argError(op, "%d constraints in a domain of 2^%d", r.Constraints, logN)
	case len(inputs) != r.Inputs:
		return 0, argError(op, "%d inputs, the R1CS has %d", len(inputs), r.Inputs)
	}
	dense := ones == nil && tailIdx == nil && r.Aux > 0
	switch {
	case dense && len(tail) != r.Aux:
		return 0, argError(op, "dense witness of %d aux values, the R1CS has %d", len(tail), r.Aux)
	case dense:
	case len(ones) != (r.Aux+63)/64:
		return 0, argError(op, "bitmap of %d words for %d aux values", len(ones), r.Aux)
	case len(tailIdx) != len(tail):
		return 0, argError(op, "%d tail indices for %d values", len(tailIdx), len(tail))
	}
	for j, i := range tailIdx {
		if int(i) >= r.Aux || (j > 0 && i <= tailIdx[j-1]) {
			return 0, argError(op, "tail index %d (position %d) out of range or not increasing", i, j)
		}
	}
	if err := w.check(op, frBytes*uint64(r.Inputs+r.Aux)); err != nil {
		return 0, err
	}
	if err := abc.check(op, 3*frBytes<<logN); err != nil {
		return 0, err
	}
	s, err := d.acquire(op)
	if err != nil {
		return 0, err
	}
	defer d.release(s)
	bad, err := rawR1CSEval(s, r, w.p, abc.p, unsafe.Pointer(unsafe.SliceData(inputs)),
		unsafe.Pointer(unsafe.SliceData(ones)), unsafe.Pointer(unsafe.SliceData(tailIdx)),
		unsafe.Pointer(unsafe.SliceData(tail)), uint64(len(tail)), logN)
	if err != nil {
		return 0, err
	}
	if bad == math.MaxUint64 {
		return -1, nil
	}
	return int64(bad), nil
}
