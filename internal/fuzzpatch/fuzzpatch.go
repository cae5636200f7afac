// Package fuzzpatch edits a valid input by a short edit list, so that fuzz
// targets fuzz a few bytes of edits rather than whole inputs (Go's minimizer
// takes time quadratic in an input's length).
package fuzzpatch

import "slices"

// Record is the length of one edit of Apply.
const Record = 4

// Max bounds the edits of one fuzz input.
const Max = 256 * Record

// Apply returns a copy of base edited by patch: a list of 4-byte records
// (op, offset high byte, offset low byte, v), a trailing partial record
// ignored. The offset is taken modulo the current length + 1. op mod 5
// selects: 0 b[off] ^= v; 1 b[off] = v; 2 truncate to off bytes; 3 insert
// byte v at off (off = length appends); 4 zero v+1 bytes from off (clipped
// to the end). Edits past the end of the data do nothing.
func Apply(base, patch []byte) []byte {
	b := slices.Clone(base)
	for ; len(patch) >= Record; patch = patch[Record:] {
		op, v := patch[0]%5, patch[3]
		off := (int(patch[1])<<8 | int(patch[2])) % (len(b) + 1)
		switch {
		case op == 2:
			b = b[:off]
		case op == 3:
			b = slices.Insert(b, off, v)
		case off == len(b):
		case op == 0:
			b[off] ^= v
		case op == 1:
			b[off] = v
		case op == 4:
			clear(b[off:min(len(b), off+int(v)+1)])
		}
	}
	return b
}
