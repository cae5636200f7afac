package r1cs

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// The canonical R1CS serialization, shared with testdata/refgen (whose
// README defines it) so that Go and Rust systems can be compared by digest:
//
//	header: inputs, aux, constraints as u64 little-endian
//	per constraint, in recording order (per-input constraints last), for each
//	of A, B, C: u32 LE term count, then per term the u32 LE variable in the
//	unified numbering (inputs 0..n−1, aux n..) and the 32-byte little-endian
//	canonical coefficient; terms merged, zeros dropped, sorted by variable.
//
// A finalized System holds its rows in exactly that form.

// WriteCanonical writes the canonical serialization of the finalized
// system to w.
func (s *System) WriteCanonical(w io.Writer) error {
	if !s.finalized {
		return errors.New("r1cs: WriteCanonical needs a finalized system")
	}
	if s.noMatrices {
		return ErrNoMatrices
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var u64 [8]byte
	for _, v := range []int{s.NumInputs(), s.NumAux(), s.NumConstraints()} {
		binary.LittleEndian.PutUint64(u64[:], uint64(v))
		bw.Write(u64[:])
	}
	// Coefficients in canonical little-endian form, once per table entry.
	le := make([][32]byte, len(s.coeffs))
	for i := range s.coeffs {
		fr.LittleEndian.PutElement(&le[i], s.coeffs[i])
	}
	ni := uint32(s.NumInputs())
	var u32 [4]byte
	for j := 0; j < s.NumConstraints(); j++ {
		for k := range s.m {
			m := &s.m[k]
			lo, hi := m.RowStart[j], m.RowStart[j+1]
			binary.LittleEndian.PutUint32(u32[:], uint32(hi-lo))
			bw.Write(u32[:])
			for t := lo; t < hi; t++ {
				v := m.Vars[t]
				col := uint32(v.Index())
				if v.IsAux() {
					col += ni
				}
				binary.LittleEndian.PutUint32(u32[:], col)
				bw.Write(u32[:])
				bw.Write(le[m.CoeffIdx[t]][:])
			}
		}
	}
	return bw.Flush()
}

// CanonicalDigest returns the SHA-256 of the canonical serialization.
func (s *System) CanonicalDigest() ([32]byte, error) {
	h := sha256.New()
	if err := s.WriteCanonical(h); err != nil {
		return [32]byte{}, err
	}
	var d [32]byte
	h.Sum(d[:0])
	return d, nil
}

// WitnessDigest returns the SHA-256 of the assignment: inputs then aux, each
// as 32-byte little-endian canonical bytes (refgen's witness digest).
func WitnessDigest(inputs, aux []fr.Element) [32]byte {
	h := sha256.New()
	var b [32]byte
	for _, vs := range [][]fr.Element{inputs, aux} {
		for i := range vs {
			fr.LittleEndian.PutElement(&b, vs[i])
			h.Write(b[:])
		}
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}
