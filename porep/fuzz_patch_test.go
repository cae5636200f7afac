package porep

import "github.com/sealc2/c2/internal/fuzzpatch"

// The C1 fuzz targets fuzz short edit lists applied to a valid C1 instead
// of whole inputs: the fuzzer minimizes every new interesting input, in
// time quadratic in its length, so with the 100 kB 2 KiB C1 as an input it
// spent its time minimizing (1,968 execs in 30 s, all in the first 3 s, on
// 2 busy cores) and its byte mutations mostly broke the JSON's syntax.

// maxPatch bounds the edit list of one fuzz input.
var maxPatch = fuzzpatch.JSON.Max()

// applyPatch edits a C1 by a fuzz input's edit list (fuzzpatch.JSON, whose
// digit edit keeps the JSON's numbers numbers).
func applyPatch(base, patch []byte) []byte { return fuzzpatch.JSON.Apply(base, patch) }
