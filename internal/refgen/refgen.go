// Package refgen reads, for tests, the reference vectors testdata/refgen
// writes with rust-fil-proofs (testdata/refgen/README.md describes them).
package refgen

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/r1cs"
)

// Dir is the folder holding the vectors, testdata/refgen/out of this module.
var Dir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "refgen", "out")
}()

// Counts is a refgen "counts" object (README "Counts").
type Counts map[string]int

// R1CS returns c as r1cs counts.
func (c Counts) R1CS() r1cs.Counts {
	return r1cs.Counts{Constraints: c["constraints"], Inputs: c["inputs"], Aux: c["aux"],
		AAux: c["a_aux_density"], BInputs: c["b_input_density"], BAux: c["b_aux_density"]}
}

// ReadFile returns the contents of the file at path, failing t on a read
// error.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ReadJSON unmarshals the JSON file at Dir/elem... into v, failing t on
// any error.
func ReadJSON(t testing.TB, v any, elem ...string) {
	t.Helper()
	b := ReadFile(t, filepath.Join(append([]string{Dir}, elem...)...))
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// HexElement returns the field element whose 32 little-endian bytes s
// spells in hex, failing t on a malformed or non-canonical one.
func HexElement(t testing.TB, s string) fr.Element {
	t.Helper()
	var b [32]byte
	if _, err := hex.Decode(b[:], []byte(s)); err != nil {
		t.Fatal(err)
	}
	e, err := fr.LittleEndian.Element(&b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// ReadScalars returns the consecutive 32-byte little-endian canonical
// scalars of the file at path, failing t on a read error, a length not a
// multiple of 32 or a non-canonical scalar.
func ReadScalars(t testing.TB, path string) []fr.Element {
	t.Helper()
	b := ReadFile(t, path)
	if len(b)%32 != 0 {
		t.Fatalf("%s: %d bytes, not a multiple of 32", path, len(b))
	}
	out := make([]fr.Element, len(b)/32)
	for i := range out {
		var err error
		if out[i], err = fr.LittleEndian.Element((*[32]byte)(b[32*i:])); err != nil {
			t.Fatalf("%s: scalar %d: %v", path, i, err)
		}
	}
	return out
}

// KeyAndProofs returns the verifying key in the file vkPath and the proofs
// concatenated in partition order in the file proofPath, both in
// bellperson's encoding, failing t on any read or decode error.
func KeyAndProofs(t testing.TB, vkPath, proofPath string) (*groth16.VerifyingKey, []groth16.Proof) {
	t.Helper()
	return KeyAndProofBytes(t, vkPath, ReadFile(t, proofPath), proofPath)
}

// KeyAndProofBytes is KeyAndProofs for proofs already in memory; name
// names them in errors.
func KeyAndProofBytes(t testing.TB, vkPath string, proof []byte, name string) (*groth16.VerifyingKey, []groth16.Proof) {
	t.Helper()
	vk, err := groth16.ReadVerifyingKey(vkPath)
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := groth16.ReadProofs(proof)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return vk, proofs
}
