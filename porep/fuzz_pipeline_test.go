package porep

import (
	"errors"
	"testing"

	"github.com/sealc2/c2/porep/inputs"
)

// FuzzC1Pipeline runs a C1 output through everything c2 does natively
// before any parameter is read: decode, partitions, the consistency checks,
// native verification of the vanilla proofs and the public inputs derived
// from the commitments and seed. Nothing panics, and every refusal is one
// of the package's error types.
func FuzzC1Pipeline(f *testing.F) {
	raw, _ := readC1Vector(f, "porep-2k")
	f.Add(raw)
	f.Add([]byte(`{"Phase1Out":"e30=","SectorSize":2048}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<18 {
			t.Skip()
		}
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
