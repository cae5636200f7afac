package porep

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep/gadget"
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

// refgenVector is one refgen sector: its meta.json and its partitions, read
// from c1.json by a minimal test-only JSON reading of the C1 format.
type refgenVector struct {
	dir   string
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
	var c1 testC1
	require.NoError(t, json.Unmarshal(cb, &c1))
	require.Len(t, c1.VanillaProofs, 1)
	for name, parts := range c1.VanillaProofs {
		s, ok := ShapeByName(name)
		require.True(t, ok, name)
		v.shape = s
		for _, vps := range parts {
			v.parts = append(v.parts, c1.partition(t, vps))
		}
	}
	return v
}

type testDomain [32]byte

func (d testDomain) fr(t testing.TB) fr.Element {
	b := [32]byte(d)
	e, err := fr.LittleEndian.Element(&b)
	require.NoError(t, err)
	return e
}

type testPath struct {
	Path []struct {
		Hashes []testDomain `json:"hashes"`
		Index  int          `json:"index"`
	} `json:"path"`
}

type testProofData struct {
	Root      testDomain `json:"root"`
	Leaf      testDomain `json:"leaf"`
	Path      *testPath  `json:"path"`
	BaseProof *testPath  `json:"base_proof"`
	SubProof  *testPath  `json:"sub_proof"`
	TopProof  *testPath  `json:"top_proof"`
}

type testMerkle struct {
	Data map[string]testProofData `json:"data"`
}

func (m *testMerkle) get(t testing.TB) (leaf, root fr.Element, path []gadget.PathLevel) {
	require.Len(t, m.Data, 1)
	for _, d := range m.Data {
		for _, p := range []*testPath{d.Path, d.BaseProof, d.SubProof, d.TopProof} {
			if p == nil {
				continue
			}
			for _, l := range p.Path {
				pl := gadget.PathLevel{Index: l.Index}
				for _, h := range l.Hashes {
					pl.Siblings = append(pl.Siblings, h.fr(t))
				}
				path = append(path, pl)
			}
		}
		return d.Leaf.fr(t), d.Root.fr(t), path
	}
	return
}

type testColumnProof struct {
	Column struct {
		Rows []testDomain `json:"rows"`
	} `json:"column"`
	InclusionProof testMerkle `json:"inclusion_proof"`
}

type testVanilla struct {
	CommDProofs    testMerkle `json:"comm_d_proofs"`
	CommRLastProof testMerkle `json:"comm_r_last_proof"`
	ReplicaColumns struct {
		Cx         testColumnProof   `json:"c_x"`
		DrgParents []testColumnProof `json:"drg_parents"`
		ExpParents []testColumnProof `json:"exp_parents"`
	} `json:"replica_column_proofs"`
	LabelingProofs []struct {
		Node uint64 `json:"node"`
	} `json:"labeling_proofs"`
}

type testC1 struct {
	VanillaProofs map[string][][]testVanilla `json:"vanilla_proofs"`
	CommR         testDomain                 `json:"comm_r"`
	CommD         testDomain                 `json:"comm_d"`
	ReplicaID     testDomain                 `json:"replica_id"`
}

func (c1 *testC1) partition(t testing.TB, vps []testVanilla) *Partition {
	p := &Partition{ReplicaID: c1.ReplicaID.fr(t), CommD: c1.CommD.fr(t), CommR: c1.CommR.fr(t)}
	for i, vp := range vps {
		var c Challenge
		c.Node = vp.LabelingProofs[0].Node
		c.DataLeaf, _, c.DataPath = vp.CommDProofs.get(t)
		var rRoot, cRoot fr.Element
		_, rRoot, c.ReplicaPath = vp.CommRLastProof.get(t)
		_, cRoot, c.ColumnPath = vp.ReplicaColumns.Cx.InclusionProof.get(t)
		if i == 0 {
			p.CommRLast, p.CommC = rRoot, cRoot
		}
		for _, cp := range append(append([]testColumnProof(nil), vp.ReplicaColumns.DrgParents...), vp.ReplicaColumns.ExpParents...) {
			var col Column
			for _, r := range cp.Column.Rows {
				col.Rows = append(col.Rows, r.fr(t))
			}
			_, _, col.Path = cp.InclusionProof.get(t)
			c.Parents = append(c.Parents, col)
		}
		p.Challenges = append(p.Challenges, c)
	}
	return p
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
	dig, err := sys.CanonicalDigest()
	require.NoError(t, err)
	require.Equal(t, want.R1CSSHA256, hex.EncodeToString(dig[:]), "canonical R1CS digest")
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
