package porep

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/r1cs"
)

// refgenDir is where testdata/refgen (the Rust reference, issue 3) writes
// its vectors.
var refgenDir = filepath.Join("..", "testdata", "refgen", "out")

// refgenMeta is the part of a refgen meta.json these tests compare with.
type refgenMeta struct {
	Partitions     int    `json:"partitions"`
	OfficialParams string `json:"official_params_file"`
	Partition0     struct {
		Counts struct {
			AAux        int `json:"a_aux_density"`
			Aux         int `json:"aux"`
			BAux        int `json:"b_aux_density"`
			BInputs     int `json:"b_input_density"`
			Constraints int `json:"constraints"`
			Inputs      int `json:"inputs"`
		} `json:"counts"`
		R1CSSHA256    string `json:"r1cs_sha256"`
		WitnessSHA256 string `json:"witness_sha256"`
	} `json:"partition0"`
	PublicInputsFiles []string `json:"public_inputs_files"`
}

// refgenVector is one refgen sector: its meta.json, its C1 output and the
// partitions read from it.
type refgenVector struct {
	dir   string
	c1    *C1Output
	meta  refgenMeta
	shape Shape
	parts []*Partition
}

func loadRefgen(t testing.TB, name string) *refgenVector {
	dir := filepath.Join(refgenDir, name)
	mb, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if os.IsNotExist(err) {
		t.Skipf("%s not present (written by testdata/refgen)", dir)
	}
	require.NoError(t, err)
	v := &refgenVector{dir: dir}
	require.NoError(t, json.Unmarshal(mb, &v.meta))
	cb, err := os.ReadFile(filepath.Join(dir, "c1.json"))
	require.NoError(t, err)
	v.c1, err = DecodeC1(cb)
	require.NoError(t, err)
	v.shape, v.parts, err = Partitions(v.c1)
	require.NoError(t, err)
	return v
}

// checkRefgen compares partition 0 of a refgen vector with the Rust
// reference: counts, public inputs of every partition, the witness digest
// (sequential and concurrent witness-only synthesis) and, when record is
// set, the canonical R1CS digest.
func checkRefgen(t *testing.T, name string, record bool) {
	v := loadRefgen(t, name)
	want := v.meta.Partition0
	require.Len(t, v.parts, v.meta.Partitions)
	require.Equal(t, v.shape.Partitions, v.meta.Partitions)
	require.Equal(t, v.meta.OfficialParams, v.shape.ParamsName()+".params")

	cnt := r1cs.NewCounter()
	require.NoError(t, Synthesize(cnt, v.shape, v.parts[0]))
	cnt.Finalize()
	got := cnt.Counts()
	require.Equal(t, r1cs.Counts{
		Constraints: want.Counts.Constraints, Inputs: want.Counts.Inputs, Aux: want.Counts.Aux,
		AAux: want.Counts.AAux, BInputs: want.Counts.BInputs, BAux: want.Counts.BAux,
	}, got)
	require.Equal(t, v.shape.NumInputs(), got.Inputs)

	w := r1cs.NewWitness(got.Inputs, got.Aux)
	require.NoError(t, Synthesize(w, v.shape, v.parts[0]))
	d := r1cs.WitnessDigest(w.Inputs, w.Aux)
	require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "witness digest")
	for k := 0; k < 2; k++ { // the second run writes in place
		pw, err := Witness(v.shape, v.parts[0], 0)
		require.NoError(t, err)
		d = r1cs.WitnessDigest(pw.Inputs, pw.Aux)
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "concurrent witness digest")
	}

	// The public inputs a verifier derives from the commitments and the seed
	// alone (package inputs: challenges, DRG and expander parents) equal the
	// ones the circuit allocates from the vanilla proofs.
	proof, err := inputs.ParseProof(v.c1.RegisteredProof)
	require.NoError(t, err)
	is, err := proof.Shape()
	require.NoError(t, err)
	for k, p := range v.parts {
		want, err := inputs.Partition(is, v.c1.ReplicaID, v.c1.CommD, v.c1.CommR, v.c1.Seed, proof.PoRepID(), k)
		require.NoError(t, err)
		pw, err := Witness(v.shape, p, 0)
		require.NoError(t, err)
		require.Equal(t, want, pw.Inputs[1:], "partition %d", k)
	}

	for k, f := range v.meta.PublicInputsFiles {
		b, err := os.ReadFile(filepath.Join(v.dir, f))
		require.NoError(t, err)
		pw, err := Witness(v.shape, v.parts[k], 0)
		require.NoError(t, err)
		require.Len(t, b, 32*(len(pw.Inputs)-1))
		for i, in := range pw.Inputs[1:] {
			var e [32]byte
			fr.LittleEndian.PutElement(&e, in)
			require.Equal(t, b[32*i:32*i+32], e[:], "partition %d public input %d", k, i+1)
		}
	}

	if !record {
		return
	}
	sys := r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, v.shape, v.parts[0]))
	sys.Finalize()
	require.Equal(t, got, sys.Counts())
	require.NoError(t, sys.IsSatisfied())
	v.requireR1CSDigest(t, sys)
}

// synthetic returns a synthetic partition of v's shape, from which the
// tests record the shape's R1CS.
func (v *refgenVector) synthetic(t *testing.T) *Partition {
	t.Helper()
	p, err := SyntheticPartition(v.shape, 5)
	require.NoError(t, err)
	return p
}

// requireR1CSDigest requires the canonical digest of sys to be the one
// refgen recorded for partition 0 of v.
func (v *refgenVector) requireR1CSDigest(t *testing.T, sys *r1cs.System) {
	t.Helper()
	dig, err := sys.CanonicalDigest()
	require.NoError(t, err)
	require.Equal(t, v.meta.Partition0.R1CSSHA256, hex.EncodeToString(dig[:]), "canonical R1CS digest")
}

func TestRefgen2KiB(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7 M constraints")
	}
	checkRefgen(t, "porep-2k", true)
}

func TestRefgen8MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("3.8 M constraints")
	}
	checkRefgen(t, "porep-8m", true)
}

// TestRecordOnceWitnessPerPartition is the proving path for large sectors:
// the R1CS depends only on the shape, so it is recorded once from a
// synthetic partition, and each real partition contributes only its witness.
// The system recorded from synthetic values has refgen's digest, is not
// satisfied by the synthetic witness, and is by the real one.
func TestRecordOnceWitnessPerPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7 M constraints")
	}
	v := loadRefgen(t, "porep-2k")
	sys := r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, v.shape, v.synthetic(t)))
	sys.Finalize()
	v.requireR1CSDigest(t, sys)
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, sys.IsSatisfied(), &ue, "a synthetic partition proves nothing")

	w, err := Witness(v.shape, v.parts[0], 0)
	require.NoError(t, err)
	require.NoError(t, sys.SetAssignment(w.Inputs, w.Aux))
	require.NoError(t, sys.IsSatisfied())
}
