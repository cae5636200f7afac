package groth16

import (
	"errors"
	"fmt"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// ProofSize is the size of an encoded proof: A (compressed G1, 48 bytes) ‖
// B (compressed G2, 96 bytes) ‖ C (compressed G1, 48 bytes), in the
// zcash/IETF encoding bellperson uses.
const ProofSize = 2*bls.SizeOfG1AffineCompressed + bls.SizeOfG2AffineCompressed

// Proof is a Groth16 proof. Points are never at infinity in a valid proof.
type Proof struct {
	A bls.G1Affine
	B bls.G2Affine
	C bls.G1Affine
}

// ProofError reports an encoded proof that cannot be decoded.
type ProofError struct {
	Index  int    // proof index within a concatenation (partition), 0 for one proof
	Field  string // "A", "B", "C", or "" for a length error
	Offset int    // byte offset of the field within the whole input
	Err    error
}

func (e *ProofError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("groth16: proof: %v", e.Err)
	}
	return fmt.Sprintf("groth16: proof %d: field %s at byte %d: %v", e.Index, e.Field, e.Offset, e.Err)
}

func (e *ProofError) Unwrap() error { return e.Err }

// ErrInfinity is returned for proof points at infinity, which bellperson
// rejects as well.
var ErrInfinity = errors.New("point at infinity")

// Bytes returns the 192-byte encoding of p.
func (p *Proof) Bytes() [ProofSize]byte {
	var out [ProofSize]byte
	a, b, c := p.A.Bytes(), p.B.Bytes(), p.C.Bytes()
	n := copy(out[:], a[:])
	n += copy(out[n:], b[:])
	copy(out[n:], c[:])
	return out
}

// MarshalBinary implements encoding.BinaryMarshaler.
func (p *Proof) MarshalBinary() ([]byte, error) {
	b := p.Bytes()
	return b[:], nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. It accepts exactly
// ProofSize bytes and rejects points that are not canonical, not on the curve,
// not in the prime-order subgroup, or at infinity.
func (p *Proof) UnmarshalBinary(b []byte) error {
	if len(b) != ProofSize {
		return &ProofError{Err: fmt.Errorf("length %d, want %d", len(b), ProofSize)}
	}
	return p.decode(b, 0, 0)
}

func (p *Proof) decode(b []byte, index, offset int) error {
	const g1, g2 = bls.SizeOfG1AffineCompressed, bls.SizeOfG2AffineCompressed
	fields := []struct {
		name string
		at   int
		set  func([]byte) (bool, error)
	}{
		{"A", 0, func(x []byte) (bool, error) { _, err := p.A.SetBytes(x[:g1]); return p.A.IsInfinity(), err }},
		{"B", g1, func(x []byte) (bool, error) { _, err := p.B.SetBytes(x[:g2]); return p.B.IsInfinity(), err }},
		{"C", g1 + g2, func(x []byte) (bool, error) { _, err := p.C.SetBytes(x[:g1]); return p.C.IsInfinity(), err }},
	}
	for _, f := range fields {
		// SetBytes would also take an uncompressed encoding: insist on the
		// compressed flag so that every byte string has one meaning.
		if b[f.at]&0x80 == 0 {
			return &ProofError{Index: index, Field: f.name, Offset: offset + f.at, Err: errors.New("not a compressed point")}
		}
		inf, err := f.set(b[f.at:])
		if err == nil && inf {
			err = ErrInfinity
		}
		if err != nil {
			return &ProofError{Index: index, Field: f.name, Offset: offset + f.at, Err: err}
		}
	}
	return nil
}

// ReadProof decodes one 192-byte proof.
func ReadProof(b []byte) (*Proof, error) {
	var p Proof
	if err := p.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return &p, nil
}

// ReadProofs decodes a concatenation of proofs in partition order, as
// bellperson's MultiProof writes it. b must be a non-empty multiple of
// ProofSize.
func ReadProofs(b []byte) ([]Proof, error) {
	if len(b) == 0 || len(b)%ProofSize != 0 {
		return nil, &ProofError{Err: fmt.Errorf("length %d is not a positive multiple of %d", len(b), ProofSize)}
	}
	ps := make([]Proof, len(b)/ProofSize)
	for i := range ps {
		if err := ps[i].decode(b[i*ProofSize:(i+1)*ProofSize], i, i*ProofSize); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// MarshalProofs concatenates the encodings of ps in order.
func MarshalProofs(ps []Proof) []byte {
	out := make([]byte, 0, len(ps)*ProofSize)
	for i := range ps {
		b := ps[i].Bytes()
		out = append(out, b[:]...)
	}
	return out
}
