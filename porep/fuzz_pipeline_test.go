package porep

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sealc2/c2/porep/inputs"
)

// FuzzC1Pipeline runs a C1 output through everything c2 does natively
// before any parameter is read: decode, partitions, the consistency checks,
// native verification of the vanilla proofs and the public inputs derived
// from the commitments and seed. Nothing panics, and every refusal is one
// of the package's error types. The inputs are edit lists (applyPatch) of
// the 2 KiB C1, plain or wrapped in a Commit2In.
func FuzzC1Pipeline(f *testing.F) {
	raw, _ := readC1Vector(f, "porep-2k")
	wrapped, err := json.Marshal(Commit2In{Phase1Out: raw, SectorSize: 2048})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(false, []byte{})
	f.Add(true, []byte{})
	if i := bytes.Index(raw, []byte(`"seed":[`)); i >= 0 { // the seed's first digit
		off := i + len(`"seed":[`)
		f.Add(false, []byte{4, byte(off >> 16), byte(off >> 8), byte(off), 7})
	}
	f.Fuzz(func(t *testing.T, wrap bool, patch []byte) {
		if len(patch) > maxPatch {
			t.Skip()
		}
		base := raw
		if wrap {
			base = wrapped
		}
		b := applyPatch(base, patch)
		c1, err := DecodeC1(b)
		if err != nil {
			var ce *C1Error
			if !errors.As(err, &ce) {
				t.Fatalf("DecodeC1: %T %v", err, err)
			}
			return
		}
		s, parts, err := Partitions(c1)
		if err != nil {
			var ie *InputError
			var se *ShapeError
			if !errors.As(err, &ie) && !errors.As(err, &se) {
				t.Fatalf("Partitions: %T %v", err, err)
			}
			return
		}
		if err := CheckC1(c1, s, parts); err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("CheckC1: %T %v", err, err)
			}
			return
		}
		for k, p := range parts {
			if err := s.Verify(p, k); err != nil {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("Verify: %T %v", err, err)
				}
				return
			}
		}
		proof, err := inputs.ParseProof(c1.RegisteredProof)
		if err != nil {
			t.Fatalf("CheckC1 accepted registered_proof %q: %v", c1.RegisteredProof, err)
		}
		is, err := proof.Shape()
		if err != nil {
			t.Fatal(err)
		}
		for k := range parts {
			in, err := inputs.Partition(is, c1.ReplicaID, c1.CommD, c1.CommR, c1.Seed, proof.PoRepID(), k)
			if err != nil {
				t.Fatalf("inputs of a consistent C1: %v", err)
			}
			if len(in)+1 != s.NumInputs() {
				t.Fatalf("%d inputs, the shape %d", len(in)+1, s.NumInputs())
			}
		}
	})
}
