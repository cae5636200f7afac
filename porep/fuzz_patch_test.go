package porep

import "slices"

// The C1 fuzz targets fuzz short edit lists applied to a valid C1 instead
// of whole inputs: the fuzzer minimizes every new interesting input, in
// time quadratic in its length, so with the 100 kB 2 KiB C1 as an input it
// spent its time minimizing (1,968 execs in 30 s, all in the first 3 s, on
// 2 busy cores) and its byte mutations mostly broke the JSON's syntax.

// patchRecord is the length of one edit of applyPatch.
const patchRecord = 5

// maxPatch bounds the edits of one fuzz input.
const maxPatch = 256 * patchRecord

// applyPatch returns a copy of base edited by patch: a list of 5-byte
// records (op, a 3-byte big-endian offset, v), a trailing partial record
// ignored. The offset is taken modulo the current length + 1. op mod 6
// selects: 0 b[off] ^= v; 1 b[off] = v; 2 truncate to off bytes; 3 insert
// byte v at off (off = length appends); 4 b[off] = '0' + v%10 (a digit,
// which keeps the JSON's numbers numbers); 5 delete v%8+1 bytes from off
// (clipped to the end). Edits past the end of the data do nothing.
func applyPatch(base, patch []byte) []byte {
	b := slices.Clone(base)
	for ; len(patch) >= patchRecord; patch = patch[patchRecord:] {
		op, v := patch[0]%6, patch[4]
		off := (int(patch[1])<<16 | int(patch[2])<<8 | int(patch[3])) % (len(b) + 1)
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
			b[off] = '0' + v%10
		case op == 5:
			b = slices.Delete(b, off, min(len(b), off+int(v%8)+1))
		}
	}
	return b
}
