package c1gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/sealc2/c2/internal/sparsetree"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/graph"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/r1cs"
)

var testSeed = [32]byte{1, 2, 3}

// generated is a generated C1 output and what a prover reads from it.
type generated struct {
	raw   []byte
	c1    *porep.C1Output
	shape porep.Shape
	parts []*porep.Partition
}

// generate returns the generated C1 JSON of proof, decoded and converted
// into partitions as C2 does.
func generate(t testing.TB, proof inputs.Proof, seed [32]byte) generated {
	t0 := time.Now()
	sec, err := Generate(proof, seed, nil)
	require.NoError(t, err)
	raw, err := sec.JSON()
	require.NoError(t, err)
	t.Logf("%s: generated %d bytes in %v", proof, len(raw), time.Since(t0).Round(time.Millisecond))
	return decode(t, raw)
}

func decode(t testing.TB, raw []byte) generated {
	c1, err := porep.DecodeC1(raw)
	require.NoError(t, err)
	shape, parts, err := porep.Partitions(c1)
	require.NoError(t, err)
	return generated{raw, c1, shape, parts}
}

// derived returns the public inputs (without ONE) of partition k that a
// verifier derives from the C1's proof type, replica id, commitments and
// seed.
func derived(t testing.TB, c1 *porep.C1Output, k int) []fr.Element {
	proof, err := inputs.ParseProof(c1.RegisteredProof)
	require.NoError(t, err)
	is, err := proof.Shape()
	require.NoError(t, err)
	in, err := inputs.Partition(is, c1.ReplicaID, c1.CommD, c1.CommR, c1.Seed, proof.PoRepID(), k)
	require.NoError(t, err)
	return in
}

// pathInputs returns the public inputs (without ONE) the circuit of p
// allocates, read from the partition: replica id, comm_d, comm_r, then per
// challenge the leaf positions its paths spell (tree D, the 14 parents in
// tree C), the challenge, and its tree-R and tree-C positions. Cheap for
// every partition; the circuit tests compare the synthesized inputs too.
func pathInputs(t testing.TB, s porep.Shape, p *porep.Partition) []fr.Element {
	pos := func(path []porep.PathLevel) fr.Element {
		n, mul := uint64(0), uint64(1)
		for _, l := range path {
			n += uint64(l.Index) * mul
			mul *= uint64(l.Arity())
		}
		var e fr.Element
		return *e.SetUint64(n)
	}
	out := []fr.Element{p.ReplicaID, p.CommD, p.CommR}
	for _, c := range p.Challenges {
		out = append(out, pos(c.DataPath))
		for _, col := range c.Parents {
			out = append(out, pos(col.Path))
		}
		var n fr.Element
		n.SetUint64(c.Node)
		out = append(out, n, pos(c.ReplicaPath), pos(c.ColumnPath))
	}
	require.Len(t, out, s.NumInputs()-1)
	return out
}

// rustLabel is storage-proofs-porep's LabelingProof::create_label, written
// out independently of gadget.LabelNative: SHA-256 of replica_id, layer
// (u32 big-endian), node (u64 big-endian), 20 zero bytes and the parents
// as listed, with the top two bits cleared.
func rustLabel(replicaID porep.Domain, layer uint32, node uint64, parents []porep.Domain) porep.Domain {
	h := sha256.New()
	var head [64]byte
	copy(head[:], replicaID[:])
	binary.BigEndian.PutUint32(head[32:], layer)
	binary.BigEndian.PutUint64(head[36:], node)
	h.Write(head[:])
	for _, p := range parents {
		h.Write(p[:])
	}
	var out porep.Domain
	h.Sum(out[:0])
	out[31] &= 0x3f
	return out
}

// checkRustFields checks what rust-fil-proofs' vanilla verifier reads and
// C2 does not: every labeling proof (37 parents) recomputes its row of the
// challenged column, the encoding proof's label plus the data leaf is the
// replica leaf, the layer indices and nodes are the challenge's, column
// indices are the positions the graph gives, and Merkle proofs have the
// variant of the shape's trees.
func checkRustFields(t testing.TB, c1 *porep.C1Output, shape porep.Shape) {
	proof, err := inputs.ParseProof(c1.RegisteredProof)
	require.NoError(t, err)
	is, err := proof.Shape()
	require.NoError(t, err)
	g, err := graph.New(is.Nodes, proof.PoRepID(), is.APIVersion)
	require.NoError(t, err)
	kind := porep.MerkleSingle
	switch {
	case shape.TopArity > 0:
		kind = porep.MerkleTop
	case shape.SubArity > 0:
		kind = porep.MerkleSub
	}
	var ps [graph.Degree]uint32
	for k, part := range c1.VanillaProofs.Partitions {
		challenges, err := inputs.Challenges(is, c1.ReplicaID, c1.CommR, c1.Seed, k)
		require.NoError(t, err)
		for i, vp := range part {
			c := challenges[i]
			require.NoError(t, g.Parents(c, ps[:]))
			rc := &vp.ReplicaColumnProofs
			require.Equal(t, uint32(c), rc.CX.Column.Index)
			for j, p := range ps {
				cp := rc.ExpParents
				if j < graph.BaseDegree {
					cp = rc.DRGParents
				} else {
					j -= graph.BaseDegree
				}
				require.Equal(t, p, cp[j].Column.Index, "partition %d challenge %d parent %d", k, i, j)
				require.Equal(t, kind, cp[j].InclusionProof.Kind)
			}
			require.Equal(t, porep.MerkleSingle, vp.CommDProofs.Kind)
			require.Equal(t, kind, vp.CommRLastProof.Kind)
			require.Equal(t, kind, rc.CX.InclusionProof.Kind)
			require.Len(t, vp.LabelingProofs, shape.Layers)
			for l, lp := range vp.LabelingProofs {
				require.Equal(t, uint32(l+1), lp.LayerIndex)
				require.Equal(t, c, lp.Node)
				require.Len(t, lp.Parents, gadget.TotalParents)
				require.Equal(t, rc.CX.Column.Rows[l], rustLabel(c1.ReplicaID, lp.LayerIndex, lp.Node, lp.Parents),
					"partition %d challenge %d layer %d: labeling proof", k, i, l+1)
			}
			ep := porep.LabelingProof(vp.EncodingProof)
			require.Equal(t, vp.LabelingProofs[shape.Layers-1], ep)
			key, err := rustLabel(c1.ReplicaID, ep.LayerIndex, ep.Node, ep.Parents).Element()
			require.NoError(t, err)
			data, err := vp.CommDProofs.Leaf.Element()
			require.NoError(t, err)
			var enc fr.Element
			enc.Add(&key, &data)
			require.Equal(t, vp.CommRLastProof.Leaf, sparsetree.Domain(enc), "partition %d challenge %d: encoding proof", k, i)
		}
	}
}

// TestGenerateVerifies checks every interactive registered proof: the C1
// decodes, converts into the shape's partitions, every partition passes
// Shape.Verify, its public inputs are the ones a verifier derives, the
// fields only the Rust verifier reads hold, and encoding a decoded copy
// gives the same bytes (serde's form). Of the 32 and 64 GiB proofs (5-10 s
// each on 2 cores) it runs one of each size unless C2_TEST_32GIB=1, none
// with -short.
func TestGenerateVerifies(t *testing.T) {
	for p := inputs.StackedDrg2KiBV1; p <= inputs.StackedDrg64GiBV1_1; p++ {
		t.Run(p.String(), func(t *testing.T) {
			switch {
			case p%5 < 3:
			case testing.Short():
				t.Skip("32/64 GiB: 180 challenges")
			case os.Getenv("C2_TEST_32GIB") != "1" && (p == inputs.StackedDrg32GiBV1 || p == inputs.StackedDrg64GiBV1_1):
				t.Skip("set C2_TEST_32GIB=1 for every 32/64 GiB proof")
			}
			g := generate(t, p, testSeed)
			require.Equal(t, p.String(), g.c1.RegisteredProof)
			for k, part := range g.parts {
				require.NoError(t, g.shape.Verify(part, k), "partition %d", k)
				require.Equal(t, derived(t, g.c1, k), pathInputs(t, g.shape, part), "partition %d: public inputs", k)
			}
			checkRustFields(t, g.c1, g.shape)
			again, err := json.Marshal(g.c1)
			require.NoError(t, err)
			require.True(t, bytes.Equal(g.raw, again), "re-encoding changes the bytes")
		})
	}
}

// TestGenerateWhole generates Synthetic PoRep and NI-PoRep C1 outputs, whose
// challenges follow from comm_r, from wholly labeled sectors: every
// partition verifies natively, its challenges are those comm_r derives
// (porep.CheckC1), its path inputs are the derived inputs, and at 2 KiB the
// circuits hold constraint by constraint.
func TestGenerateWhole(t *testing.T) {
	for _, p := range []inputs.Proof{inputs.StackedDrg2KiBV1_1_Feat_SyntheticPoRep, inputs.StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
		inputs.StackedDrg8MiBV1_2_Feat_NonInteractivePoRep} {
		t.Run(p.String(), func(t *testing.T) {
			if testing.Short() && p%5 != 0 {
				t.Skip("8 MiB: 2^19 labels, 2^18 columns")
			}
			t0 := time.Now()
			g := generate(t, p, testSeed)
			t.Logf("generated in %v", time.Since(t0).Round(time.Millisecond))
			is, err := p.Shape()
			require.NoError(t, err)
			require.Len(t, g.parts, is.Partitions)
			require.NoError(t, porep.CheckC1(g.c1, g.shape, g.parts))
			for k, part := range g.parts {
				require.NoError(t, g.shape.Verify(part, k), "partition %d", k)
				require.Equal(t, derived(t, g.c1, k), pathInputs(t, g.shape, part), "partition %d: public inputs", k)
			}
			if g.shape.SectorSize == 2<<10 {
				checkCircuit(t, g, 0)
				checkCircuit(t, g, len(g.parts)-1)
			}
		})
	}
}

// checkCircuit checks partition k's circuit constraint by constraint and
// that the inputs it allocates are the derived ones.
func checkCircuit(t *testing.T, g generated, k int) {
	t0 := time.Now()
	in, err := CheckCircuit(g.shape, g.parts[k])
	require.NoError(t, err, "partition %d", k)
	require.Equal(t, fr.One(), in[0])
	require.Equal(t, derived(t, g.c1, k), in[1:], "partition %d: public inputs", k)
	t.Logf("%s partition %d: circuit checked in %v", g.c1.RegisteredProof, k, time.Since(t0).Round(time.Millisecond))
}

// TestCircuitRecorded2KiB records the 2 KiB circuit of a generated C1 and
// checks that the recorded system is satisfied and that its public inputs
// are the derived ones; CheckCircuit agrees.
func TestCircuitRecorded2KiB(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7 M constraints")
	}
	g := generate(t, inputs.StackedDrg2KiBV1_1, testSeed)
	sys := r1cs.NewSystem()
	require.NoError(t, porep.Synthesize(sys, g.shape, g.parts[0]))
	sys.Finalize()
	require.NoError(t, sys.IsSatisfied())
	require.Equal(t, derived(t, g.c1, 0), sys.Inputs()[1:])
	in, err := CheckCircuit(g.shape, g.parts[0])
	require.NoError(t, err)
	require.Equal(t, sys.Inputs(), in)
}

// TestCircuitChecked checks the circuits of generated 2 KiB, 8 MiB and
// 512 MiB C1 outputs, V1 and V1_1, constraint by constraint.
func TestCircuitChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("2.7-3.9 M constraints each")
	}
	for _, p := range []inputs.Proof{inputs.StackedDrg2KiBV1, inputs.StackedDrg8MiBV1, inputs.StackedDrg8MiBV1_1,
		inputs.StackedDrg512MiBV1, inputs.StackedDrg512MiBV1_1} {
		t.Run(p.String(), func(t *testing.T) { checkCircuit(t, generate(t, p, testSeed), 0) })
	}
}

// TestCircuit32GiB checks every partition of a generated 32 GiB C1 output
// constraint by constraint: 130 M constraints each, about 80 s and 10 GiB
// of memory per partition, as many at a time as there are cores and
// 12 GiB blocks of available memory. C2_TEST_32GIB=1 runs it (on 16 cores
// and 128 GiB: 93 s, 103 GB peak RSS).
func TestCircuit32GiB(t *testing.T) {
	if os.Getenv("C2_TEST_32GIB") != "1" {
		t.Skip("set C2_TEST_32GIB=1 (10 partitions of 130 M constraints)")
	}
	g := generate(t, inputs.StackedDrg32GiBV1_1, testSeed)
	var eg errgroup.Group
	eg.SetLimit(max(1, min(runtime.GOMAXPROCS(0), int(availableMemory()>>30)/12)))
	ins := make([][]fr.Element, len(g.parts))
	for k := range g.parts {
		eg.Go(func() (err error) {
			t0 := time.Now()
			ins[k], err = CheckCircuit(g.shape, g.parts[k])
			t.Logf("partition %d: circuit checked in %v", k, time.Since(t0).Round(time.Millisecond))
			return err
		})
	}
	require.NoError(t, eg.Wait())
	for k, in := range ins {
		require.Equal(t, derived(t, g.c1, k), in[1:], "partition %d: public inputs", k)
	}
}

// availableMemory returns MemAvailable from /proc/meminfo in bytes, or
// 12 GiB where it cannot be read.
func availableMemory() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			var kb uint64
			if _, err := fmt.Sscanf(line, "MemAvailable: %d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 12 << 30
}

// TestTamperedC1Fails shows that the checks above can fail: a changed
// parent label breaks Shape.Verify and the circuit, a changed interactive
// seed breaks the public inputs, and a changed labeling proof breaks what
// the Rust verifier reads.
func TestTamperedC1Fails(t *testing.T) {
	g := generate(t, inputs.StackedDrg2KiBV1_1, testSeed)

	bad := decode(t, g.raw)
	row := &bad.c1.VanillaProofs.Partitions[0][1].ReplicaColumnProofs.ExpParents[3].Column.Rows[0]
	row[0] ^= 1
	_, parts, err := porep.Partitions(bad.c1)
	require.NoError(t, err)
	var ie *porep.InputError
	require.ErrorAs(t, g.shape.Verify(parts[0], 0), &ie)
	require.Equal(t, 1, ie.Challenge)
	if !testing.Short() {
		_, err = CheckCircuit(g.shape, parts[0])
		var ue *r1cs.UnsatisfiedError
		require.ErrorAs(t, err, &ue)
	}

	bad = decode(t, g.raw)
	bad.c1.Seed[0] ^= 1
	require.NotEqual(t, derived(t, bad.c1, 0), pathInputs(t, bad.shape, bad.parts[0]))

	bad = decode(t, g.raw)
	bad.c1.VanillaProofs.Partitions[0][0].LabelingProofs[1].Parents[36][0] ^= 1
	ft := &fakeT{}
	func() {
		defer func() { recover() }() // fakeT.FailNow panics to end the helper
		checkRustFields(ft, bad.c1, bad.shape)
	}()
	require.True(t, ft.failed, "a changed labeling proof passes")
}

// fakeT records a failure instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true; panic("FailNow") }
func (f *fakeT) Helper()               {}
func (f *fakeT) Name() string          { return "fakeT" }

// TestDeterministic checks that the output is a function of the proof,
// the seed and the options.
func TestDeterministic(t *testing.T) {
	for _, p := range []inputs.Proof{inputs.StackedDrg2KiBV1, inputs.StackedDrg8MiBV1_1} {
		a, b := generate(t, p, testSeed), generate(t, p, testSeed)
		require.True(t, bytes.Equal(a.raw, b.raw), "%s: same seed, different bytes", p)
		other := testSeed
		other[31] ^= 0x80
		c := generate(t, p, other)
		require.False(t, bytes.Equal(a.raw, c.raw), "%s: another seed, same bytes", p)
		require.NotEqual(t, a.c1.ReplicaID, c.c1.ReplicaID)
		require.NotEqual(t, a.c1.CommR, c.c1.CommR)
		require.Equal(t, a.c1.CommD, c.c1.CommD, "CC sectors share comm_d")
	}

	// Options replace the derived sector data; the replica id follows them.
	prover, ticket, iseed, sid := [32]byte{9}, [32]byte{8}, [32]byte{7}, uint64(1234)
	sec, err := Generate(inputs.StackedDrg2KiBV1_1, testSeed, &Options{ProverID: &prover, SectorID: &sid, Ticket: &ticket, InteractiveSeed: &iseed, Workers: 1})
	require.NoError(t, err)
	require.Equal(t, prover, sec.ProverID)
	require.Equal(t, sid, sec.SectorID)
	require.Equal(t, porep.Domain(ticket), sec.C1.Ticket)
	require.Equal(t, porep.Domain(iseed), sec.C1.Seed)
	require.Equal(t, porep.Domain(inputs.ReplicaID(prover, sid, ticket, sec.C1.CommD, inputs.StackedDrg2KiBV1_1.PoRepID())), sec.C1.ReplicaID)
	one, err := sec.JSON()
	require.NoError(t, err)
	sec, err = Generate(inputs.StackedDrg2KiBV1_1, testSeed, &Options{ProverID: &prover, SectorID: &sid, Ticket: &ticket, InteractiveSeed: &iseed})
	require.NoError(t, err)
	all, err := sec.JSON()
	require.NoError(t, err)
	require.True(t, bytes.Equal(one, all), "the worker count changes the bytes")
	g := decode(t, all)
	require.NoError(t, g.shape.Verify(g.parts[0], 0))
}

// TestCommit2In checks the wrapped form: base64 C1 JSON with the sector's
// number and size, decoding to the same C1 output.
func TestCommit2In(t *testing.T) {
	sec, err := Generate(inputs.StackedDrg8MiBV1_1, testSeed, nil)
	require.NoError(t, err)
	plain, err := sec.JSON()
	require.NoError(t, err)
	wrapped, err := sec.Commit2In()
	require.NoError(t, err)
	var w porep.Commit2In
	require.NoError(t, json.Unmarshal(wrapped, &w))
	require.Equal(t, porep.Commit2In{SectorNum: sec.SectorID, Phase1Out: plain, SectorSize: 8 << 20}, w)
	a, err := porep.DecodeC1(plain)
	require.NoError(t, err)
	b, err := porep.DecodeC1(wrapped)
	require.NoError(t, err)
	require.Equal(t, a, b)
}

// TestZeroCommD checks comm_d against the zero-piece commitments of the
// Filecoin implementations (e.g. lotus' zerocomm table): the root of a
// sector of zeros, for every sector size.
func TestZeroCommD(t *testing.T) {
	want := map[inputs.Proof]string{
		inputs.StackedDrg2KiBV1:   "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833",
		inputs.StackedDrg8MiBV1:   "65f29e5d98d246c38b388cfc06db1f6b021303c5a289000bdce832a9c3ec421c",
		inputs.StackedDrg512MiBV1: "39560e7b13a93b07a243fd2720ffa7cb3e1d2e505ab3629e79f46313512cda06",
		inputs.StackedDrg32GiBV1:  "077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e",
		inputs.StackedDrg64GiBV1:  "e64005a6bfe3777953b8ad6ef93f0fca1049b2041654f2a411f7702799cece02",
	}
	for p, w := range want {
		is, err := p.Shape()
		require.NoError(t, err)
		levels := make([]int, 0, 32)
		for n := is.Nodes; n > 1; n /= 2 {
			levels = append(levels, 2)
		}
		root := sparsetree.Domain(sparsetree.New(gadget.TreeSHA254, levels, nil, fr.Element{}, 1).Root())
		require.Equal(t, w, hex.EncodeToString(root[:]), "%s", p)
	}
	g := generate(t, inputs.StackedDrg2KiBV1_1, testSeed)
	require.Equal(t, want[inputs.StackedDrg2KiBV1], hex.EncodeToString(g.c1.CommD[:]))
}

func TestGenerateRefusesOtherProofs(t *testing.T) {
	_, err := Generate(inputs.StackedDrg32GiBV1_1_Feat_SyntheticPoRep, testSeed, nil)
	require.ErrorIs(t, err, ErrDerivation)
	_, err = Generate(inputs.StackedDrg512MiBV1_2_Feat_NonInteractivePoRep, testSeed, nil)
	require.ErrorIs(t, err, ErrDerivation)
	_, err = Generate(inputs.Proof(999), testSeed, nil)
	require.ErrorIs(t, err, inputs.ErrUnknownProof)
}
