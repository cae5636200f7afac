// Package vanilla reads the vanilla proofs filecoin-proofs hands to its
// SNARK circuits (PoSt sector proofs, SnapDeals partition proofs): strict
// serde JSON, bincode 1 input and the conversion of Merkle proofs into
// circuit path levels. Every error it returns for a bad value is a
// *FieldError naming the value by its serde JSON path; callers turn it into
// their own error type with [Place].
package vanilla

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/gadget"
)

// FieldError is a value that cannot be decoded or does not fit, at the
// serde JSON path Field ("" for the input as a whole).
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string {
	msg := e.Err.Error()
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	return msg
}

func (e *FieldError) Unwrap() error { return e.Err }

// Errorf returns a *FieldError at field with a formatted cause.
func Errorf(field, format string, args ...any) *FieldError {
	return &FieldError{field, fmt.Errorf(format, args...)}
}

// Place returns err with a *FieldError replaced by mk(field, cause); any
// other error, and nil, it returns as is.
func Place(err error, mk func(field string, err error) error) error {
	if fe, ok := err.(*FieldError); ok {
		return mk(fe.Field, fe.Err)
	}
	return err
}

// Join appends a JSON path step to prefix: an index ("[3]") directly, a
// field name after a dot.
func Join(prefix, rest string) string {
	if prefix != "" && rest != "" && rest[0] != '[' {
		prefix += "."
	}
	return prefix + rest
}

// Strict unmarshals exactly one JSON value from b into v, refusing unknown
// object fields and anything after the value. A *porep.C1Error from a
// nested value is reduced to its cause; the error is a *FieldError at at.
func Strict(b []byte, v any, at string) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil && d.More() {
		err = errors.New("trailing data")
	}
	if err == nil {
		return nil
	}
	var c *porep.C1Error
	if errors.As(err, &c) {
		err = c.Err
	}
	return &FieldError{at, err}
}

// Missing reports the absent field f below at.
func Missing(at, f string) *FieldError {
	return &FieldError{Join(at, f), porep.ErrMissingField}
}

// One decodes one JSON value with decode at the path "".
func One[T any](b []byte, decode func(p *T, b []byte, at string) error) (*T, error) {
	var p T
	if err := decode(&p, b, ""); err != nil {
		return nil, err
	}
	return &p, nil
}

// Array decodes a JSON array, each element with decode at the path "[i]";
// it returns nil with the first error.
func Array[T any](b []byte, decode func(p *T, b []byte, at string) error) ([]T, error) {
	var raw []json.RawMessage
	if err := Strict(b, &raw, ""); err != nil {
		return nil, err
	}
	out := make([]T, len(raw))
	for i, r := range raw {
		if err := decode(&out[i], r, fmt.Sprintf("[%d]", i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BincodeOrJSON decodes one vanilla proof given either as its bincode
// bytes or as a serde JSON object: with fromBincode first and, when that
// fails and b reads as a JSON object ([IsJSONObject]), with fromJSON, whose
// error it then returns. Bincode bytes may start with '{' too.
func BincodeOrJSON[T any](b []byte, fromBincode, fromJSON func([]byte) (*T, error)) (*T, error) {
	p, err := fromBincode(b)
	if err != nil && IsJSONObject(b) {
		return fromJSON(b)
	}
	return p, err
}

// IsJSONObject reports whether b starts, after JSON white space, with '{'.
func IsJSONObject(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// MerkleJSON decodes the serde JSON Merkle proof raw at path at into m.
func MerkleJSON(m *porep.MerkleProof, raw []byte, at string) error {
	err := m.UnmarshalJSON(raw)
	if err == nil {
		return nil
	}
	var ce *porep.C1Error
	if errors.As(err, &ce) {
		return &FieldError{Join(at, ce.Field), ce.Err}
	}
	return &FieldError{at, err}
}

// Element converts a domain to a field element, refusing a non-canonical
// one with a *FieldError at field.
func Element(d porep.Domain, field string) (fr.Element, error) {
	e, err := d.Element()
	if err != nil {
		return e, Errorf(field, "not a canonical field element")
	}
	return e, nil
}

// Levels returns the levels of m's path (base, sub, top; leaf level first),
// each sibling checked to be a canonical field element and each index to
// be below its level's arity.
func Levels(m *porep.MerkleProof, at string) ([]gadget.PathLevel, error) {
	var levels []gadget.PathLevel
	for si, seg := range [][]porep.PathElement{m.Base, m.Sub, m.Top} {
		for li := range seg {
			el := &seg[li]
			f := fmt.Sprintf("%s.%s[%d]", at, [...]string{"base", "sub", "top"}[si], li)
			if el.Index > uint64(len(el.Hashes)) {
				return nil, Errorf(f+".index", "%d out of range for arity %d", el.Index, len(el.Hashes)+1)
			}
			lv := gadget.PathLevel{Index: int(el.Index), Siblings: make([]fr.Element, len(el.Hashes))}
			for h := range el.Hashes {
				var err error
				if lv.Siblings[h], err = Element(el.Hashes[h], fmt.Sprintf("%s.hashes[%d]", f, h)); err != nil {
					return nil, err
				}
			}
			levels = append(levels, lv)
		}
	}
	return levels, nil
}

// Position returns the leaf index a path's level indices spell, leaf level
// least significant.
func Position(path []gadget.PathLevel) uint64 {
	var pos, scale uint64 = 0, 1
	for _, l := range path {
		pos += uint64(l.Index) * scale
		scale *= uint64(l.Arity())
	}
	return pos
}
