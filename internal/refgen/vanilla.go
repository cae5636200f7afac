package refgen

import (
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Vanilla is a PoSt or SnapDeals update vector (README "Window and Winning
// PoSt", "SnapDeals update"): the registered proof, its public values, the
// vanilla proofs as filecoin-ffi hands them over (bincode, and the same
// proofs as serde JSON objects), and the public inputs Rust computed, per
// partition.
type Vanilla struct {
	Proof string // registered_proof
	// Randomness is a PoSt's randomness (32 bytes); nil in an update vector.
	Randomness []byte
	// CommROld, CommRNew and CommDNew are an update's commitments; zero in
	// a PoSt vector.
	CommROld, CommRNew, CommDNew [32]byte
	Files                        []string // vanilla_bincode: the bincode files' names, in the vector's order
	Bincode                      [][]byte // the contents of Files, in the same order
	JSON                         [][]byte // vanilla.json: one serde JSON object per proof
	Inputs                       [][]fr.Element
}

// ReadVanilla reads the PoSt or update vector in the folder Dir/elem...
// (meta.json, the bincode files it names, vanilla.json and each
// partition's public_inputs_file), failing t on any error.
func ReadVanilla(t testing.TB, elem ...string) Vanilla {
	t.Helper()
	dir := filepath.Join(append([]string{Dir}, elem...)...)
	var m struct {
		RegisteredProof string   `json:"registered_proof"`
		Randomness      string   `json:"randomness"`
		CommROld        string   `json:"comm_r_old"`
		CommRNew        string   `json:"comm_r_new"`
		CommDNew        string   `json:"comm_d_new"`
		VanillaBincode  []string `json:"vanilla_bincode"`
		Partitions      []struct {
			PublicInputsFile string `json:"public_inputs_file"`
		} `json:"partitions"`
	}
	ReadJSON(t, &m, append(slices.Clip(elem), "meta.json")...)
	v := Vanilla{Proof: m.RegisteredProof, Files: m.VanillaBincode}
	if m.Randomness != "" {
		r := hex32(t, m.Randomness)
		v.Randomness = r[:]
	}
	for _, c := range []struct {
		s   string
		dst *[32]byte
	}{{m.CommROld, &v.CommROld}, {m.CommRNew, &v.CommRNew}, {m.CommDNew, &v.CommDNew}} {
		if c.s != "" {
			*c.dst = hex32(t, c.s)
		}
	}
	for _, f := range m.VanillaBincode {
		v.Bincode = append(v.Bincode, ReadFile(t, filepath.Join(dir, f)))
	}
	var objs []json.RawMessage
	ReadJSON(t, &objs, append(slices.Clip(elem), "vanilla.json")...)
	for _, o := range objs {
		v.JSON = append(v.JSON, o)
	}
	for _, p := range m.Partitions {
		v.Inputs = append(v.Inputs, ReadScalars(t, filepath.Join(dir, p.PublicInputsFile)))
	}
	return v
}

// hex32 returns the 32 bytes s spells in hex, failing t on another length
// or a malformed digit.
func hex32(t testing.TB, s string) [32]byte {
	t.Helper()
	var b [32]byte
	if len(s) != 64 {
		t.Fatalf("%q: not 64 hex digits", s)
	}
	if _, err := hex.Decode(b[:], []byte(s)); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return b
}
