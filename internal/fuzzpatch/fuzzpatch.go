// Package fuzzpatch edits a valid input by a short edit list, so that fuzz
// targets fuzz a few bytes of edits rather than whole inputs (Go's minimizer
// takes time quadratic in an input's length).
//
// An edit list is a list of records (op, offset, v): an op byte, a
// big-endian offset and a value byte; a trailing partial record is ignored.
// The offset is taken modulo the current length + 1, and the op byte modulo
// the number of ops of the list's Format. Edits other than truncate and
// insert do nothing at offset = length. Saved fuzz corpora are written in
// these formats, so a format's layout and ops keep their meaning.
package fuzzpatch

import "slices"

// op is one kind of edit; v is the record's value byte.
type op uint8

const (
	opXor      op = iota // b[off] ^= v
	opSet                // b[off] = v
	opTruncate           // truncate to off bytes
	opInsert             // insert byte v at off (off = length appends)
	opZero               // zero v+1 bytes from off, clipped to the end
	opDigit              // b[off] = '0' + v%10
	opDelete             // delete v%8+1 bytes from off, clipped to the end
)

// Format is the record layout of an edit list and the ops its op byte
// selects.
type Format struct {
	offsetLen int  // bytes of a record's offset
	ops       []op // op byte mod len(ops) selects ops[i]
}

var (
	// Binary has 4-byte records (op, 2-byte offset, v); op mod 5 selects
	// 0 xor, 1 set, 2 truncate, 3 insert, 4 zero v+1 bytes.
	Binary = Format{offsetLen: 2, ops: []op{opXor, opSet, opTruncate, opInsert, opZero}}

	// JSON has 5-byte records (op, 3-byte offset, v); op mod 6 selects
	// 0 xor, 1 set, 2 truncate, 3 insert, 4 set a digit '0'+v%10 (which
	// keeps JSON numbers numbers), 5 delete v%8+1 bytes.
	JSON = Format{offsetLen: 3, ops: []op{opXor, opSet, opTruncate, opInsert, opDigit, opDelete}}
)

// Record is the length of one edit.
func (f Format) Record() int { return f.offsetLen + 2 }

// Max bounds the edit list of one fuzz input: 256 records.
func (f Format) Max() int { return 256 * f.Record() }

// Apply returns a copy of base edited by patch, an edit list in format f.
func (f Format) Apply(base, patch []byte) []byte {
	b := slices.Clone(base)
	n := f.Record()
	for ; len(patch) >= n; patch = patch[n:] {
		o, v := f.ops[int(patch[0])%len(f.ops)], patch[n-1]
		off := 0
		for _, c := range patch[1 : n-1] {
			off = off<<8 | int(c)
		}
		off %= len(b) + 1
		switch {
		case o == opTruncate:
			b = b[:off]
		case o == opInsert:
			b = slices.Insert(b, off, v)
		case off == len(b):
		case o == opXor:
			b[off] ^= v
		case o == opSet:
			b[off] = v
		case o == opZero:
			clear(b[off:min(len(b), off+int(v)+1)])
		case o == opDigit:
			b[off] = '0' + v%10
		case o == opDelete:
			b = slices.Delete(b, off, min(len(b), off+int(v%8)+1))
		}
	}
	return b
}
