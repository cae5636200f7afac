package r1cs

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Compact on-disk form of a finalized system's constraints (no assignment),
// so that a sector shape's R1CS is recorded once and reused:
//
//	magic "c2r1cs\x00\x01"
//	uvarint inputs, aux, constraints, synthesized constraints, coefficients
//	coefficient table: 32-byte little-endian canonical values, most used first
//	for each matrix A, B, C, for each row:
//	  uvarint term count
//	  first variable: zigzag varint delta from the previous row's first
//	  variable in this matrix (unified numbering), later ones: uvarint delta
//	  from the previous term (≥ 1); each followed by the uvarint index of its
//	  coefficient in the table
//	trailer: SHA-256 of everything before it
//
// Rows reference nearby variables and few distinct coefficients, so a term
// takes 2–4 bytes instead of the 36 of a CSR entry with a full coefficient.

var compactMagic = [8]byte{'c', '2', 'r', '1', 'c', 's', 0, 1}

// CompactError reports a compact R1CS stream that cannot be decoded.
type CompactError struct {
	Offset int64 // byte offset where decoding failed
	Field  string
	Err    error
}

func (e *CompactError) Error() string {
	return fmt.Sprintf("r1cs: compact R1CS: %s at byte %d: %v", e.Field, e.Offset, e.Err)
}

func (e *CompactError) Unwrap() error { return e.Err }

// WriteCompact writes the finalized system's constraints in compact form.
// Values are not written.
func (s *System) WriteCompact(w io.Writer) error {
	if !s.finalized {
		return errors.New("r1cs: WriteCompact needs a finalized system")
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<20)
	bw.Write(compactMagic[:])
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v uint64) { bw.Write(tmp[:binary.PutUvarint(tmp[:], v)]) }
	sv := func(v int64) { bw.Write(tmp[:binary.PutVarint(tmp[:], v)]) }

	// Order the table by use so that common coefficients get 1-byte indices.
	uses := make([]int, len(s.coeffs))
	for k := range s.m {
		for _, c := range s.m[k].CoeffIdx {
			uses[c]++
		}
	}
	order := make([]int, len(s.coeffs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return uses[order[i]] > uses[order[j]] })
	rank := make([]uint64, len(s.coeffs))
	for r, i := range order {
		rank[i] = uint64(r)
	}

	for _, v := range []int{s.NumInputs(), s.NumAux(), s.NumConstraints(), s.synthesized, len(s.coeffs)} {
		uv(uint64(v))
	}
	var le [32]byte
	for _, i := range order {
		fr.LittleEndian.PutElement(&le, s.coeffs[i])
		bw.Write(le[:])
	}
	ni := uint64(s.NumInputs())
	col := func(v Variable) uint64 {
		if v.IsAux() {
			return ni + uint64(v.Index())
		}
		return uint64(v.Index())
	}
	for k := range s.m {
		m := &s.m[k]
		var prevFirst uint64
		for j := 0; j < s.NumConstraints(); j++ {
			lo, hi := m.RowStart[j], m.RowStart[j+1]
			uv(uint64(hi - lo))
			var prev uint64
			for t := lo; t < hi; t++ {
				c := col(m.Vars[t])
				if t == lo {
					sv(int64(c) - int64(prevFirst))
					prevFirst = c
				} else {
					uv(c - prev)
				}
				prev = c
				uv(rank[m.CoeffIdx[t]])
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(h.Sum(nil))
	return err
}

// countingReader tracks the offset for errors and feeds the checksum.
type countingReader struct {
	r   *bufio.Reader
	off int64
	h   io.Writer
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.off++
		c.h.Write([]byte{b})
	}
	return b, err
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := io.ReadFull(c.r, p)
	c.off += int64(n)
	c.h.Write(p[:n])
	return n, err
}

// unusedAuxSlack is how many more aux variables than terms a compact
// stream may declare (variables that appear in no constraint).
const unusedAuxSlack = 1 << 16

// ReadCompact reads a system written by WriteCompact. The result is
// finalized and has no assignment (see Unassigned): pair it with a witness
// by WithAssignment or SetAssignment. A corrupt stream fails with a
// *CompactError naming the field and byte offset.
//
// Memory follows the data, not the header's counts: matrices and the
// coefficient table grow as their bytes arrive; the densities are
// allocated only after the checksum matched, and only if
// the aux count is at most the number of terms read plus 2^16 (an aux
// variable appears in some constraint, but for a few). When r reports how
// many bytes remain (a Len method, as bytes.Reader has), counts that need
// more bytes than remain are refused before anything is read past the
// header.
func ReadCompact(r io.Reader) (*System, error) {
	h := sha256.New()
	cr := &countingReader{r: bufio.NewReaderSize(r, 1<<20), h: h}
	fail := func(field string, err error) error {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return &CompactError{Offset: cr.off, Field: field, Err: err}
	}
	var magic [8]byte
	if _, err := cr.Read(magic[:]); err != nil {
		return nil, fail("magic", err)
	}
	if magic != compactMagic {
		return nil, fail("magic", errors.New("not a c2 compact R1CS (or another version)"))
	}
	var hdr [5]uint64
	names := [5]string{"inputs", "aux", "constraints", "synthesized", "coefficients"}
	var hdrOff [5]int64
	for i := range hdr {
		hdrOff[i] = cr.off
		v, err := binary.ReadUvarint(cr)
		if err != nil {
			return nil, fail(names[i], err)
		}
		if v > uint64(MaxVariables) {
			return nil, fail(names[i], fmt.Errorf("%d is too large", v))
		}
		hdr[i] = v
	}
	ni, na, nc, nsyn, ncoef := int(hdr[0]), int(hdr[1]), int(hdr[2]), int(hdr[3]), int(hdr[4])
	if ni < 1 || nsyn+ni != nc {
		return nil, fail("header", fmt.Errorf("inconsistent counts: %d inputs, %d constraints, %d synthesized", ni, nc, nsyn))
	}
	if l, ok := r.(interface{ Len() int }); ok {
		// Each coefficient takes 32 bytes, each row of A, B and C at least
		// one, the checksum 32; the bufio.Reader may have taken some ahead.
		need := 32*uint64(ncoef) + 3*uint64(nc) + sha256.Size
		if have := uint64(l.Len() + cr.r.Buffered()); need > have {
			return nil, fail("header", fmt.Errorf("%w: %d coefficients and %d constraints need at least %d more bytes, %d remain",
				io.ErrUnexpectedEOF, ncoef, nc, need, have))
		}
	}
	s := &System{
		coeffTable:  newCoeffTable(min(ncoef, 1<<10)),
		synthesized: nsyn,
		finalized:   true,
	}
	var le [32]byte
	for i := 0; i < ncoef; i++ {
		if _, err := cr.Read(le[:]); err != nil {
			return nil, fail("coefficient table", err)
		}
		c, err := fr.LittleEndian.Element(&le)
		if err != nil {
			return nil, fail("coefficient table", err)
		}
		if _, dup := s.coeffIndex[c]; dup {
			return nil, fail("coefficient table", errors.New("duplicate coefficient"))
		}
		s.coeffIndex[c] = uint32(len(s.coeffs))
		s.coeffs = append(s.coeffs, c)
	}
	total := uint64(ni + na)
	for k := range s.m {
		field := [3]string{"A", "B", "C"}[k]
		m := &s.m[k]
		m.RowStart = make([]uint32, 1, min(nc+1, 1<<16))
		var prevFirst uint64
		for j := 0; j < nc; j++ {
			cnt, err := binary.ReadUvarint(cr)
			if err != nil {
				return nil, fail(field, err)
			}
			if cnt > total {
				return nil, fail(field, fmt.Errorf("row %d has %d terms for %d variables", j, cnt, total))
			}
			var prev uint64
			for t := uint64(0); t < cnt; t++ {
				var c uint64
				if t == 0 {
					d, err := binary.ReadVarint(cr)
					if err != nil {
						return nil, fail(field, err)
					}
					c = uint64(int64(prevFirst) + d)
					prevFirst = c
				} else {
					d, err := binary.ReadUvarint(cr)
					if err != nil {
						return nil, fail(field, err)
					}
					if d == 0 {
						return nil, fail(field, fmt.Errorf("row %d repeats a variable", j))
					}
					c = prev + d
				}
				if c >= total || (t > 0 && c <= prev) {
					return nil, fail(field, fmt.Errorf("row %d: variable %d out of range", j, c))
				}
				prev = c
				ci, err := binary.ReadUvarint(cr)
				if err != nil {
					return nil, fail(field, err)
				}
				if ci >= uint64(len(s.coeffs)) {
					return nil, fail(field, fmt.Errorf("row %d: coefficient %d not in the table", j, ci))
				}
				var v Variable
				if c < uint64(ni) {
					v = InputVariable(int(c))
				} else {
					v = AuxVariable(int(c) - ni)
				}
				m.Vars = append(m.Vars, v)
				m.CoeffIdx = append(m.CoeffIdx, uint32(ci))
			}
			if uint64(len(m.Vars)) > math.MaxUint32 {
				return nil, fail(field, fmt.Errorf("row %d: more than 2^32-1 terms in the matrix", j))
			}
			m.RowStart = append(m.RowStart, uint32(len(m.Vars)))
		}
	}
	want := h.Sum(nil)
	got := make([]byte, sha256.Size)
	if _, err := io.ReadFull(cr.r, got); err != nil {
		return nil, fail("checksum", err)
	}
	if string(got) != string(want) {
		return nil, fail("checksum", errors.New("mismatch: the file is corrupt"))
	}
	if _, err := cr.r.ReadByte(); err != io.EOF {
		return nil, &CompactError{Offset: cr.off + sha256.Size, Field: "trailer", Err: errors.New("trailing bytes")}
	}
	terms := len(s.m[0].Vars) + len(s.m[1].Vars) + len(s.m[2].Vars)
	if na > terms+unusedAuxSlack {
		return nil, &CompactError{Offset: hdrOff[1], Field: "aux", Err: fmt.Errorf("%d aux variables for %d terms", na, terms)}
	}
	// Allocate the densities only once the stream is known to be intact.
	s.aAux = Density{bits: make([]uint64, (na+63)/64), n: na}
	s.bAux = Density{bits: make([]uint64, (na+63)/64), n: na}
	s.bInputs = Density{bits: make([]uint64, (ni+63)/64), n: ni}
	for _, v := range s.m[0].Vars {
		if v.IsAux() {
			s.aAux.set(v.Index())
		}
	}
	for _, v := range s.m[1].Vars {
		if v.IsAux() {
			s.bAux.set(v.Index())
		} else {
			s.bInputs.set(v.Index())
		}
	}
	s.unassigned, s.nInputs, s.nAux = true, ni, na
	return s, nil
}

// SetAssignment replaces the system's assignment, for example with a
// [Witness] synthesized for this shape. Lengths must match and inputs[0]
// must be 1. The slices are shared, not copied.
func (s *System) SetAssignment(inputs, aux []fr.Element) error {
	if len(inputs) != s.NumInputs() || len(aux) != s.NumAux() {
		return fmt.Errorf("r1cs: assignment has %d inputs and %d aux, the system %d and %d",
			len(inputs), len(aux), s.NumInputs(), s.NumAux())
	}
	if inputs[0] != oneElement {
		return errors.New("r1cs: input 0 (ONE) is not 1")
	}
	s.inputs, s.aux = inputs, aux
	s.unassigned, s.nInputs, s.nAux = false, 0, 0
	return nil
}

// WithAssignment returns a system sharing s's constraints (which must not be
// modified afterwards) with another assignment, so that one recorded R1CS
// serves the witnesses of many partitions of the same shape. The rules of
// SetAssignment apply.
func (s *System) WithAssignment(inputs, aux []fr.Element) (*System, error) {
	c := *s
	c.scratch = nil
	if err := c.SetAssignment(inputs, aux); err != nil {
		return nil, err
	}
	return &c, nil
}
