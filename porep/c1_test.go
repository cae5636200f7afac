package porep

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/r1cs"
)

// c1Vectors are the C1 outputs testdata/refgen made with filecoin-proofs-api.
var c1Vectors = []string{"porep-2k", "porep-8m", "porep-2k-synth", "porep-2k-ni"}

func c1VectorPath(name, file string) string {
	return filepath.Join("..", "testdata", "refgen", "out", name, file)
}

// c1Meta is the part of refgen's meta.json the C1 tests compare with.
type c1Meta struct {
	RegisteredProof string     `json:"registered_proof"`
	SectorSize      uint64     `json:"sector_size"`
	CommR           string     `json:"comm_r"`
	CommD           string     `json:"comm_d"`
	ReplicaID       string     `json:"replica_id"`
	Seed            string     `json:"seed"`
	Ticket          string     `json:"ticket"`
	Partitions      int        `json:"partitions"`
	Challenges      int        `json:"challenges_per_partition"`
	PublicInputs    [][]string `json:"public_inputs"`
}

func readC1Vector(t testing.TB, name string) ([]byte, *c1Meta) {
	t.Helper()
	b, err := os.ReadFile(c1VectorPath(name, "c1.json"))
	require.NoError(t, err, "refgen vectors are committed; regenerate with testdata/refgen/gen.sh")
	mb, err := os.ReadFile(c1VectorPath(name, "meta.json"))
	require.NoError(t, err)
	var m c1Meta
	require.NoError(t, json.Unmarshal(mb, &m))
	return b, &m
}

func genericJSON(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func TestDecodeC1Refgen(t *testing.T) {
	for _, name := range c1Vectors {
		t.Run(name, func(t *testing.T) {
			raw, meta := readC1Vector(t, name)
			c1, err := DecodeC1(raw)
			require.NoError(t, err)

			assert.Equal(t, meta.RegisteredProof, c1.RegisteredProof)
			assert.Equal(t, meta.CommR, hex.EncodeToString(c1.CommR[:]))
			assert.Equal(t, meta.CommD, hex.EncodeToString(c1.CommD[:]))
			assert.Equal(t, meta.ReplicaID, hex.EncodeToString(c1.ReplicaID[:]))
			assert.Equal(t, meta.Seed, hex.EncodeToString(c1.Seed[:]))
			assert.Equal(t, meta.Ticket, hex.EncodeToString(c1.Ticket[:]))
			_, err = c1.ReplicaID.Element()
			assert.NoError(t, err)

			// The enum tag names the shape; partitions × challenges as refgen reports.
			s, ok := ShapeBySize(meta.SectorSize)
			require.True(t, ok)
			assert.Equal(t, s.Name, c1.VanillaProofs.Shape)
			require.Len(t, c1.VanillaProofs.Partitions, meta.Partitions)
			dataLevels := bits.Len64(meta.SectorSize/32) - 1
			for k, part := range c1.VanillaProofs.Partitions {
				require.Len(t, part, meta.Challenges)
				for i, p := range part {
					assert.Equal(t, MerkleSingle, p.CommDProofs.Kind)
					assert.Len(t, p.CommDProofs.Base, dataLevels)
					for _, l := range p.CommDProofs.Base {
						assert.Len(t, l.Hashes, 1)
					}
					assert.Equal(t, p.CommDProofs.Root, c1.CommD, "tree D root is comm_d")
					assert.Len(t, p.ReplicaColumnProofs.DRGParents, DRGParents)
					assert.Len(t, p.ReplicaColumnProofs.ExpParents, ExpParents)
					assert.Len(t, p.LabelingProofs, s.Layers)
					for _, cp := range p.ReplicaColumnProofs.DRGParents {
						assert.Len(t, cp.Column.Rows, s.Layers)
						assert.Equal(t, MerkleSingle, cp.InclusionProof.Kind)
					}
					// labeling_proofs[0].node is the challenge, which is
					// also the challenge's first public input (the
					// tree-D path index) in rust-fil-proofs' input order.
					node := p.LabelingProofs[0].Node
					assert.Equal(t, uint64(p.ReplicaColumnProofs.CX.Column.Index), node)
					in := meta.PublicInputs[k][3+i*(4+DRGParents+ExpParents)]
					b, err := hex.DecodeString(in)
					require.NoError(t, err)
					var want [32]byte
					want[0], want[1], want[2], want[3] = byte(node), byte(node>>8), byte(node>>16), byte(node>>24)
					assert.Equal(t, want[:], b, "partition %d challenge %d", k, i)
				}
			}

			// Re-encoding gives semantically equal JSON, and in fact serde's bytes.
			again, err := json.Marshal(c1)
			require.NoError(t, err)
			assert.Equal(t, genericJSON(t, raw), genericJSON(t, again))
			assert.Equal(t, string(raw), string(again))
		})
	}
}

func TestDecodeC1Wrapped(t *testing.T) {
	raw, _ := readC1Vector(t, "porep-2k")
	want, err := DecodeC1(raw)
	require.NoError(t, err)
	w, err := json.Marshal(Commit2In{SectorNum: 4242, Phase1Out: raw, SectorSize: 2048})
	require.NoError(t, err)
	require.Contains(t, string(w), `"Phase1Out":"eyJ`) // base64 of `{"`
	got, err := DecodeC1(w)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// An error inside the wrapped C1 names the wrapper field too.
	broken := []byte(`{"SectorNum":1,"SectorSize":2048,"Phase1Out":"` + "e30=" + `"}`) // base64("{}")
	_, err = DecodeC1(broken)
	var ce *C1Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "Phase1Out.registered_proof", ce.Field)
	assert.ErrorIs(t, err, ErrMissingField)
}

// TestDecodeC1Errors mutates the 2 KiB vector and checks each error names
// the offending field.
func TestDecodeC1Errors(t *testing.T) {
	raw, _ := readC1Vector(t, "porep-2k")
	const first = "vanilla_proofs.StackedDrg2KiBV1[0][0]"
	proof := func(v map[string]any) map[string]any {
		return v["vanilla_proofs"].(map[string]any)["StackedDrg2KiBV1"].([]any)[0].([]any)[0].(map[string]any)
	}
	single := func(v map[string]any, key string) map[string]any {
		return proof(v)[key].(map[string]any)["data"].(map[string]any)["Single"].(map[string]any)
	}
	cases := []struct {
		name   string
		mutate func(v map[string]any)
		field  string
		is     error
	}{
		{"missing comm_r", func(v map[string]any) { delete(v, "comm_r") }, "comm_r", ErrMissingField},
		{"unknown top-level field", func(v map[string]any) { v["extra"] = 1 }, "extra", ErrUnknownField},
		{"short comm_d", func(v map[string]any) { v["comm_d"] = v["comm_d"].([]any)[:31] }, "comm_d", nil},
		{"byte out of range", func(v map[string]any) { v["seed"].([]any)[5] = 256 }, "seed[5]", nil},
		{"negative byte", func(v map[string]any) { v["ticket"].([]any)[0] = -1 }, "ticket[0]", nil},
		{"fractional byte", func(v map[string]any) { v["ticket"].([]any)[31] = 1.5 }, "ticket[31]", nil},
		{"null replica_id", func(v map[string]any) { v["replica_id"] = nil }, "replica_id", nil},
		{"empty registered_proof", func(v map[string]any) { v["registered_proof"] = "" }, "registered_proof", nil},
		{"two shapes", func(v map[string]any) {
			vp := v["vanilla_proofs"].(map[string]any)
			vp["StackedDrg8MiBV1"] = vp["StackedDrg2KiBV1"]
		}, "vanilla_proofs.StackedDrg8MiBV1", nil},
		{"sibling hash", func(v map[string]any) {
			lvl := single(v, "comm_d_proofs")["path"].(map[string]any)["path"].([]any)[3].(map[string]any)
			lvl["hashes"].([]any)[0] = "abc"
		}, first + ".comm_d_proofs.data.Single.path.path[3].hashes[0]", nil},
		{"unknown Merkle kind", func(v map[string]any) {
			d := proof(v)["comm_r_last_proof"].(map[string]any)["data"].(map[string]any)
			d["Middle"] = d["Single"]
			delete(d, "Single")
		}, first + ".comm_r_last_proof.data.Middle", nil},
		{"Single with base_proof", func(v map[string]any) {
			s := single(v, "comm_d_proofs")
			s["base_proof"] = s["path"]
			delete(s, "path")
		}, first + ".comm_d_proofs.data.Single.base_proof", ErrUnknownField},
		{"Single without path", func(v map[string]any) {
			delete(single(v, "comm_d_proofs"), "path")
		}, first + ".comm_d_proofs.data.Single.path", ErrMissingField},
		{"duplicate field", nil, "comm_r", nil},
		{"negative path index", func(v map[string]any) {
			lvl := single(v, "comm_d_proofs")["path"].(map[string]any)["path"].([]any)[0].(map[string]any)
			lvl["index"] = -1
		}, first + ".comm_d_proofs.data.Single.path.path[0].index", nil},
		{"column _h not null", func(v map[string]any) {
			rc := proof(v)["replica_column_proofs"].(map[string]any)
			rc["exp_parents"].([]any)[7].(map[string]any)["column"].(map[string]any)["_h"] = 0
		}, first + ".replica_column_proofs.exp_parents[7].column._h", nil},
		{"node too large", func(v map[string]any) {
			proof(v)["labeling_proofs"].([]any)[1].(map[string]any)["node"] = 1e20
		}, first + ".labeling_proofs[1].node", nil},
		{"layer_index missing", func(v map[string]any) {
			delete(proof(v)["encoding_proof"].(map[string]any), "layer_index")
		}, first + ".encoding_proof.layer_index", ErrMissingField},
		{"labeling_proofs null", func(v map[string]any) { proof(v)["labeling_proofs"] = nil }, first + ".labeling_proofs", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b []byte
			if c.mutate == nil { // duplicate comm_r: only expressible in raw JSON
				i := bytes.Index(raw, []byte(`"comm_r":`))
				b = append(append(append([]byte{}, raw[:i]...), `"comm_r":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],`...), raw[i:]...)
			} else {
				var v map[string]any
				require.NoError(t, json.Unmarshal(raw, &v))
				c.mutate(v)
				var err error
				b, err = json.Marshal(v)
				require.NoError(t, err)
			}
			_, err := DecodeC1(b)
			var ce *C1Error
			require.True(t, errors.As(err, &ce), "got %v", err)
			assert.Equal(t, c.field, ce.Field, "%v", err)
			if c.mutate == nil {
				assert.Contains(t, err.Error(), "duplicate")
			}
			if c.is != nil {
				assert.ErrorIs(t, err, c.is)
			}
		})
	}

	for _, bad := range []string{"", "null", "[]", `{"registered_proof":`, "42"} {
		_, err := DecodeC1([]byte(bad))
		var ce *C1Error
		assert.True(t, errors.As(err, &ce), "%q: %v", bad, err)
	}
}

func TestMerkleProofKindsRoundTrip(t *testing.T) {
	var d1, d2, d3 Domain
	d1[0], d2[31], d3[7] = 1, 2, 3
	lvl := func(n int, idx uint64) []PathElement {
		return []PathElement{{Hashes: make([]Domain, n), Index: idx}}
	}
	for _, m := range []MerkleProof{
		{Kind: MerkleSub, Root: d1, Leaf: d2, Base: lvl(7, 3), Sub: lvl(7, 6)},
		{Kind: MerkleTop, Root: d3, Leaf: d1, Base: lvl(7, 1), Sub: lvl(7, 0), Top: lvl(1, 1)},
	} {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		var back MerkleProof
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, m, back)
		again, err := json.Marshal(back)
		require.NoError(t, err)
		assert.JSONEq(t, string(b), string(again))
	}
	// serde's field order for Sub and Top.
	b, err := json.Marshal(MerkleProof{Kind: MerkleSub})
	require.NoError(t, err)
	assert.Regexp(t, `^\{"data":\{"Sub":\{"base_proof":\{"path":\[\]\},"sub_proof":\{"path":\[\]\},"root":\[0(,0){31}\],"leaf":\[0(,0){31}\]\}\}\}$`, string(b))
}

// FuzzDecodeC1: decoding never panics, fails only with a *C1Error, and
// what it accepts re-encodes to the same value. The inputs are edit lists
// (applyPatch) of the 2 KiB C1 and of two small objects.
func FuzzDecodeC1(f *testing.F) {
	raw, _ := readC1Vector(f, "porep-2k")
	bases := [][]byte{raw, []byte(`{"Phase1Out":"e30="}`), []byte(`{"data":{"Top":{}}}`)}
	for i := range bases {
		f.Add(uint8(i), []byte{})
	}
	f.Fuzz(func(t *testing.T, base uint8, patch []byte) {
		if len(patch) > maxPatch {
			t.Skip()
		}
		b := applyPatch(bases[int(base)%len(bases)], patch)
		c, err := DecodeC1(b)
		if err != nil {
			var ce *C1Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is not a *C1Error: %v", err)
			}
			return
		}
		// Whatever decodes re-encodes and decodes to the same value.
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := DecodeC1(again)
		if err != nil {
			t.Fatalf("re-encoded output does not decode: %v", err)
		}
		if !assert.ObjectsAreEqual(c, c2) {
			t.Fatal("decode(encode(c)) != c")
		}
	})
}

func BenchmarkDecodeC18MiB(b *testing.B) {
	raw, _ := readC1Vector(b, "porep-8m")
	b.SetBytes(int64(len(raw)))
	for i := 0; i < b.N; i++ {
		if _, err := DecodeC1(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLabelingProofIntegerBounds(t *testing.T) {
	var l LabelingProof
	require.NoError(t, json.Unmarshal([]byte(`{"parents":[],"layer_index":4294967295,"node":18446744073709551615}`), &l))
	assert.Equal(t, uint32(1<<32-1), l.LayerIndex)
	assert.Equal(t, uint64(1<<64-1), l.Node)
	require.NoError(t, json.Unmarshal([]byte(`{"parents":[],"layer_index":0,"node":9999999999999999999}`), &l))
	assert.Equal(t, uint64(9999999999999999999), l.Node)
	for _, bad := range []string{
		`{"parents":[],"layer_index":4294967296,"node":0}`,
		`{"parents":[],"layer_index":99999999999,"node":0}`,
		`{"parents":[],"layer_index":0,"node":18446744073709551616}`,
		`{"parents":[],"layer_index":0,"node":99999999999999999999}`,
		`{"parents":[],"layer_index":0,"node":100000000000000000000}`,
		`{"parents":[],"layer_index":01,"node":0}`,
		`{"parents":[],"layer_index":1e3,"node":0}`,
		`{"parents":[],"layer_index":"1","node":0}`,
		`{"parents":[[1]],"layer_index":1,"node":0}`,
	} {
		err := parseAll([]byte(bad), l.parse) // json.Unmarshal would report syntax errors itself
		var ce *C1Error
		assert.True(t, errors.As(err, &ce), "%s: %v", bad, err)
	}
}

// TestC1ProveWithBellpersonParams is the end-to-end exactness check against
// bellperson for a real C1: it runs only when REFGEN_CACHE holds the output
// of `refgen porep-params` (bellperson random parameters for the 2 KiB
// circuit, ~1 GiB, and bellperson's proof of the committed 2 KiB C1). Go
// verifies bellperson's proof, synthesizes partition 0 of the committed C1,
// proves it with bellperson's parameters and verifies the proof; the proof is
// written to $REFGEN_CACHE/go-porep-2k-c1.proof for `refgen verify`
// (testdata/refgen/verify-go-proofs.sh does both).
func TestC1ProveWithBellpersonParams(t *testing.T) {
	cache, paramsPath := refgen.Cached(t, "porep-2k.params", "porep-params")
	raw, _ := readC1Vector(t, "porep-2k")
	c1, err := DecodeC1(raw)
	require.NoError(t, err)
	shape, parts, err := Partitions(c1)
	require.NoError(t, err)

	vk, bproofs := refgen.KeyAndProofs(t, filepath.Join(cache, "porep-2k.vk"), filepath.Join(cache, "porep-2k-c1.proof"))
	require.Len(t, bproofs, 1)
	inputs := refgen.ReadScalars(t, filepath.Join(cache, "porep-2k-inputs-p0.bin"))
	require.Len(t, inputs, shape.NumInputs()-1)
	require.NoError(t, groth16.Verify(vk, &bproofs[0], inputs), "bellperson's proof of the C1 in Go")

	sys := r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, shape, parts[0]))
	sys.Finalize()
	require.NoError(t, sys.IsSatisfied())
	require.Equal(t, inputs, sys.Inputs()[1:], "Go public inputs differ from bellperson's")

	refgen.ProveForRefgen(t, paramsPath, sys, vk, inputs, "go-porep-2k-c1.proof")
}

// TestVanillaPartitionsSideBySide reads a C1 with several partitions (the
// 2 KiB vector's partition repeated, the copies told apart) through the
// side-by-side path and checks it equals the plain reading, element by
// element; an error inside a later partition names that partition.
func TestVanillaPartitionsSideBySide(t *testing.T) {
	raw, _ := readC1Vector(t, "porep-2k")
	c1, err := DecodeC1(raw)
	require.NoError(t, err)
	v := c1.VanillaProofs
	for k := 1; k < 5; k++ {
		part := slices.Clone(v.Partitions[0])
		part[0].EncodingProof.Node = uint64(777000 + k)
		v.Partitions = append(v.Partitions, part)
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)

	var got VanillaProofs
	require.NoError(t, json.Unmarshal(b, &got))
	plain := VanillaProofs{Shape: v.Shape, Partitions: [][]VanillaProof{}}
	p := &parser{b: b}
	require.NoError(t, p.variant(nil, func(string) error {
		return p.array(func(int) error {
			plain.Partitions = append(plain.Partitions, nil)
			return parseList(p, &plain.Partitions[len(plain.Partitions)-1])
		})
	}))
	require.Len(t, got.Partitions, 5)
	assert.Equal(t, plain, got)
	assert.Equal(t, uint64(777003), got.Partitions[3][0].EncodingProof.Node)

	// 2^40 where a byte belongs, in partition 3: the plain reading's error.
	i := bytes.Index(b, []byte(`"node":777003`))
	require.Positive(t, i)
	j := bytes.LastIndex(b[:i], []byte(`"parents":[[`)) + len(`"parents":[[`)
	bad := slices.Concat(b[:j], []byte("1099511627776"), b[j+bytes.IndexByte(b[j:], ','):])
	err = json.Unmarshal(bad, &got)
	var ce *C1Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "StackedDrg2KiBV1[3][0].encoding_proof.parents[0][0]", ce.Field)
}

func TestSkipValue(t *testing.T) {
	for _, c := range []struct {
		in  string
		end int // -1: skipValue reports false
	}{
		{`123,`, 3},
		{`123]`, 3},
		{`true }`, 4},
		{`"a]\"b" ,`, 7},
		{`[1,[2,{"k":"]}"}],3] ,`, 20},
		{`{"a":[1,2]}]`, 11},
		{`[1,2`, -1},
		{`"abc`, -1},
		{`[1,"x\`, -1},
	} {
		p := &parser{b: []byte(c.in)}
		ok := p.skipValue()
		if c.end < 0 {
			assert.False(t, ok, c.in)
			continue
		}
		if assert.True(t, ok, c.in) {
			assert.Equal(t, c.end, p.i, c.in)
		}
	}
}

func TestAnyBracketOrQuote(t *testing.T) {
	for k := range 8 {
		for c := range 256 {
			w := []byte("01234567")
			w[k] = byte(c)
			want := bytes.ContainsAny(w, `[]{}"`)
			if got := anyBracketOrQuote(binary.LittleEndian.Uint64(w)); got != want {
				t.Fatalf("%q: %v, want %v", w, got, want)
			}
		}
	}
	// two specials, and bytes above them
	for _, w := range []string{"[]000000", "0000000\"", "\"\xff\xff\xff\xff\xff\xff\xff", "\x00\x01[\x80\x7f\xdb\xfb{"} {
		if !anyBracketOrQuote(binary.LittleEndian.Uint64([]byte(w))) {
			t.Fatalf("%q: false", w)
		}
	}
}
