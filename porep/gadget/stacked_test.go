package gadget

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

// This file composes the whole StackedDRG circuit from the gadgets, test-only,
// following storage-proofs-porep's StackedCircuit::synthesize and
// Proof::synthesize, and compares its witness and canonical R1CS digests with
// the ones the Rust reference (testdata/refgen, issue 3) recorded for the
// 2 KiB sector. Equal digests mean every gadget allocates, orders and
// weights exactly as bellperson does.

// synthStacked synthesizes partition part of the C1 output into cs.
func synthStacked(t *testing.T, cs *CS, c1 *jsonC1, part int) {
	proofs := c1.VanillaProofs["StackedDrg2KiBV1"][part]
	rid := cs.AllocNum(c1.ReplicaID.fr(t))
	cs.Inputize(rid)
	ridBits := ReverseBitNumbering(nil, cs.ToBitsLE(nil, rid))
	commD := cs.AllocNum(c1.CommD.fr(t))
	cs.Inputize(commD)
	commR := cs.AllocNum(c1.CommR.fr(t))
	cs.Inputize(commR)
	_, rRoot, _ := proofs[0].CommRLastProof.levels(t)
	_, cRoot, _ := proofs[0].ReplicaColumns.Cx.InclusionProof.levels(t)
	commRLast := cs.AllocNum(rRoot)
	commC := cs.AllocNum(cRoot)
	h := cs.Poseidon(poseidon.MustGet(2), []Num{commC, commRLast})
	cs.Equal(commR, h)

	for _, vp := range proofs {
		dLeaf, _, dPath := vp.CommDProofs.levels(t)
		dataLeaf := cs.AllocNum(dLeaf)
		require.NoError(t, cs.PoR(TreeSHA254, dataLeaf, dPath, commD))

		var cols [][]Num
		for _, cp := range append(append([]jsonColumnProof(nil), vp.ReplicaColumns.DrgParents...), vp.ReplicaColumns.ExpParents...) {
			var rows []Num
			for _, r := range cp.Column.Rows {
				rows = append(rows, cs.AllocNum(r.fr(t)))
			}
			hc := cs.Poseidon(poseidon.MustGet(len(rows)), rows)
			_, _, path := cp.InclusionProof.levels(t)
			require.NoError(t, cs.PoR(TreePoseidon, hc, path, commC))
			cols = append(cols, rows)
		}
		drg, exp := cols[:len(vp.ReplicaColumns.DrgParents)], cols[len(vp.ReplicaColumns.DrgParents):]
		layers := len(drg[0])

		challenge := cs.AllocUInt64(vp.LabelingProofs[0].Node)
		cs.PackUInt64IntoInput(&challenge)

		var labels []Num
		for layer := 1; layer <= layers; layer++ {
			var parents [][]Bit
			for _, col := range drg {
				parents = append(parents, ReverseBitNumbering(nil, cs.ToBitsLE(nil, col[layer-1])))
			}
			if layer > 1 {
				for _, col := range exp {
					parents = append(parents, ReverseBitNumbering(nil, cs.ToBitsLE(nil, col[layer-2])))
				}
			}
			labels = append(labels, cs.Label(ridBits, uint32(layer), &challenge, parents))
		}
		enc := cs.Add(labels[len(labels)-1], dataLeaf)
		_, _, rPath := vp.CommRLastProof.levels(t)
		require.NoError(t, cs.PoR(TreePoseidon, enc, rPath, commRLast))
		ch := cs.Poseidon(poseidon.MustGet(len(labels)), labels)
		_, _, cPath := vp.ReplicaColumns.Cx.InclusionProof.levels(t)
		require.NoError(t, cs.PoR(TreePoseidon, ch, cPath, commC))
	}
}

type refgenMeta struct {
	Partition0 struct {
		Counts struct {
			AAux        int `json:"a_aux_density"`
			Aux         int `json:"aux"`
			BAux        int `json:"b_aux_density"`
			BInputs     int `json:"b_input_density"`
			Constraints int `json:"constraints"`
			Inputs      int `json:"inputs"`
		} `json:"counts"`
		R1CSBytes     int64  `json:"r1cs_bytes"`
		R1CSSHA256    string `json:"r1cs_sha256"`
		WitnessSHA256 string `json:"witness_sha256"`
	} `json:"partition0"`
}

// digestBuilder streams the canonical R1CS of testdata/refgen (README
// "Canonical R1CS"): header (inputs, aux, constraints as u64 LE), then per
// constraint A, B, C, each as a u32 term count and (u32 variable, 32-byte LE
// coefficient) terms sorted by unified variable (inputs, then aux offset by
// the input count), merged, zero coefficients dropped; then one row
// A = {input i: 1}, B = C = {} per input.
type digestBuilder struct {
	h           hash.Hash
	n           int64
	inputs, aux int
	finalInputs int
	buf         []byte
	terms       []struct {
		v uint32
		c fr.Element
	}
}

func newDigestBuilder(inputs, aux, constraints int) *digestBuilder {
	d := &digestBuilder{h: sha256.New(), finalInputs: inputs, inputs: 1}
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(inputs))
	binary.LittleEndian.PutUint64(b[8:], uint64(aux))
	binary.LittleEndian.PutUint64(b[16:], uint64(constraints))
	d.put(b[:])
	return d
}

func (d *digestBuilder) put(b []byte) { d.h.Write(b); d.n += int64(len(b)) }

func (d *digestBuilder) Alloc(fr.Element) r1cs.Variable {
	d.aux++
	return r1cs.AuxVariable(d.aux - 1)
}

func (d *digestBuilder) AllocInput(fr.Element) r1cs.Variable {
	d.inputs++
	return r1cs.InputVariable(d.inputs - 1)
}

func (d *digestBuilder) Value(r1cs.Variable) fr.Element { return fr.Element{} }

func (d *digestBuilder) emit(lc r1cs.LC) {
	d.terms = d.terms[:0]
	for _, t := range lc {
		v := uint32(t.Var.Index())
		if t.Var.IsAux() {
			v += uint32(d.finalInputs)
		}
		d.terms = append(d.terms, struct {
			v uint32
			c fr.Element
		}{v, t.Coeff})
	}
	sort.SliceStable(d.terms, func(i, j int) bool { return d.terms[i].v < d.terms[j].v })
	merged := d.terms[:0]
	for _, t := range d.terms {
		if len(merged) > 0 && merged[len(merged)-1].v == t.v {
			merged[len(merged)-1].c.Add(&merged[len(merged)-1].c, &t.c)
			continue
		}
		merged = append(merged, t)
	}
	out := merged[:0]
	for _, t := range merged {
		if !t.c.IsZero() {
			out = append(out, t)
		}
	}
	d.buf = binary.LittleEndian.AppendUint32(d.buf[:0], uint32(len(out)))
	for _, t := range out {
		d.buf = binary.LittleEndian.AppendUint32(d.buf, t.v)
		var c [32]byte
		fr.LittleEndian.PutElement(&c, t.c)
		d.buf = append(d.buf, c[:]...)
	}
	d.put(d.buf)
}

func (d *digestBuilder) Enforce(a, b, c r1cs.LC) { d.emit(a); d.emit(b); d.emit(c) }

func (d *digestBuilder) finish() (string, int64) {
	for i := 0; i < d.inputs; i++ {
		d.emit(r1cs.LC{{Var: r1cs.InputVariable(i), Coeff: feOne}})
		d.emit(nil)
		d.emit(nil)
	}
	return hex.EncodeToString(d.h.Sum(nil)), d.n
}

func TestStackedCircuitMatchesRefgen(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7 M constraints")
	}
	c1 := loadC1(t)
	mb, err := os.ReadFile(filepath.Join("..", "..", "testdata", "refgen", "out", "porep-2k", "meta.json"))
	require.NoError(t, err)
	var meta refgenMeta
	require.NoError(t, json.Unmarshal(mb, &meta))
	want := meta.Partition0

	// Shape.
	cnt := r1cs.NewCounter()
	synthStacked(t, New(cnt), c1, 0)
	cnt.Finalize()
	got := cnt.Counts()
	require.Equal(t, want.Counts.Constraints, got.Constraints)
	require.Equal(t, want.Counts.Inputs, got.Inputs)
	require.Equal(t, want.Counts.Aux, got.Aux)
	require.Equal(t, want.Counts.AAux, got.AAux)
	require.Equal(t, want.Counts.BAux, got.BAux)
	require.Equal(t, want.Counts.BInputs, got.BInputs)

	// Witness digest: inputs then aux, 32-byte little-endian each.
	w := r1cs.NewWitness(got.Inputs, got.Aux)
	synthStacked(t, New(w), c1, 0)
	h := sha256.New()
	for _, v := range append(append([]fr.Element(nil), w.Inputs...), w.Aux...) {
		var b [32]byte
		fr.LittleEndian.PutElement(&b, v)
		h.Write(b[:])
	}
	require.Equal(t, want.WitnessSHA256, hex.EncodeToString(h.Sum(nil)), "witness digest")

	// Canonical R1CS digest.
	d := newDigestBuilder(got.Inputs, got.Aux, got.Constraints)
	synthStacked(t, New(d), c1, 0)
	digest, n := d.finish()
	require.Equal(t, want.R1CSBytes, n, "canonical R1CS length")
	require.Equal(t, want.R1CSSHA256, digest, "canonical R1CS digest")
}
