// Package c1gen makes C1 outputs (seal commit phase 1, the JSON
// filecoin-ffi hands to C2) for any interactive registered PoRep proof,
// 2 KiB to 64 GiB, V1 and V1_1, and for Synthetic PoRep and NI-PoRep proofs
// up to MaxWholeNodes, without sealing a sector.
//
// A generated C1 output is valid: its vanilla proofs answer the challenges
// rust-fil-proofs derives from its replica id and interactive seed (or
// comm_r, per the proof's inputs.Derivation), with
// the DRG and expander parents of the proof's graph, so [porep.Shape.Verify]
// accepts every partition, every partition's circuit is satisfied, and the
// public inputs a verifier derives (package inputs) are the ones the
// circuit allocates. It is deterministic: the same proof, seed and options
// give the same bytes.
//
// The sector it proves is a committed-capacity sector (all-zero data), so
// comm_d is the zero-data commitment and every encoded node equals its
// last-layer label. Only the nodes a proof opens have explicit labels: each
// challenged node's labels are computed with the SDR labeling function from
// its parents' labels, layer by layer and in node order, so a challenged
// node that is also another challenge's parent is consistent everywhere;
// the other opened nodes (parents) get labels derived from the seed; every
// node no proof opens holds one default label, derived from the seed, in
// every layer. Trees C and R_last are the trees of that labeling (untouched
// subtrees hash to per-level default nodes), tree D is the all-zero tree,
// and comm_r = Poseidon(comm_c, comm_r_last). Work and memory grow with the
// number of challenges, not with the sector: a 32 GiB C1 output (180
// challenges, 2,700 opened nodes) takes about 3 CPU-seconds, mostly
// Poseidon hashing of trees C and R_last, and 1.5 s more to encode its
// 39 MB of JSON. Where the challenges follow from comm_r (Synthetic PoRep,
// NI-PoRep) they are known only after the trees are: every node but node 0
// is then labeled with the SDR labeling function, layer by layer, and the
// trees are full (8 MiB: about 24 s).
//
// The labels of unopened nodes do not follow the SDR graph, which no
// vanilla proof or circuit can observe; such a C1 output proves nothing on
// chain and serves benchmarks and tests of C2.
package c1gen

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/sparsetree"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/graph"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/porep/poseidon"
)

// Options overrides the public data of the generated sector. A nil field
// is derived from the generator seed. The zero Options is valid.
type Options struct {
	ProverID *[32]byte
	SectorID *uint64
	// Ticket is the sealing randomness hashed into the replica id.
	Ticket *[32]byte
	// InteractiveSeed is the C1 output's "seed": the randomness interactive
	// and Synthetic PoRep challenges derive from (NI-PoRep ignores it).
	InteractiveSeed *[32]byte
	// Workers bounds the goroutines that hash; ≤ 0 means GOMAXPROCS.
	Workers int
}

// Sector is a generated C1 output and the public data of its sector.
type Sector struct {
	Proof    inputs.Proof
	ProverID [32]byte
	SectorID uint64
	C1       *porep.C1Output
}

// JSON returns the C1 output as filecoin-ffi serializes it.
func (s *Sector) JSON() ([]byte, error) { return json.Marshal(s.C1) }

// Commit2In returns the C1 output wrapped in the Commit2In object
// lotus-bench writes (the C1 JSON base64-encoded in Phase1Out), with the
// sector's id and size.
func (s *Sector) Commit2In() ([]byte, error) {
	raw, err := s.JSON()
	if err != nil {
		return nil, err
	}
	is, err := s.Proof.Shape()
	if err != nil {
		return nil, err
	}
	return json.Marshal(porep.Commit2In{SectorNum: s.SectorID, Phase1Out: raw, SectorSize: is.SectorSize})
}

// GraphError reports a challenged node whose label would need the label of
// a challenged node not yet computed, which the SDR graph never asks for.
type GraphError struct {
	Node, Parent uint64
	Layer        int
}

func (e *GraphError) Error() string {
	return fmt.Sprintf("c1gen: node %d at layer %d depends on challenged node %d of the same layer, which follows it", e.Node, e.Layer, e.Parent)
}

// ErrDerivation reports a registered proof whose challenges follow from
// comm_r (Synthetic PoRep, NI-PoRep) for a sector larger than
// MaxWholeNodes. For interactive proofs Generate labels only the challenged
// nodes and their parents; where the challenges follow from comm_r it must
// label every node first, as sealing does.
var ErrDerivation = errors.New("c1gen: challenges derived from comm_r need the whole sector labeled")

// MaxWholeNodes is the largest sector, in nodes, that Generate labels whole:
// 8 MiB (2^18 nodes, two layers, a few seconds).
const MaxWholeNodes = 1 << 18

// Generate returns the C1 output of a synthetic CC sector for proof: any
// interactive proof, and Synthetic and NI-PoRep proofs up to MaxWholeNodes
// (larger ones give an error wrapping ErrDerivation; an unknown proof
// inputs.ErrUnknownProof), deterministic in seed and opts (nil means the
// zero Options).
func Generate(proof inputs.Proof, seed [32]byte, opts *Options) (*Sector, error) {
	is, err := proof.Shape()
	if err != nil {
		return nil, err
	}
	// Challenges that follow from comm_r are known only once every node
	// comm_r commits to is: such sectors are labeled whole (a CC sector
	// sealed natively), which only small sizes afford.
	whole := is.Derivation != inputs.Interactive
	if whole && is.Nodes > MaxWholeNodes {
		return nil, fmt.Errorf("%w: %s derives its challenges from comm_r (%v); %d nodes, more than the %d labeled whole",
			ErrDerivation, proof, is.Derivation, is.Nodes, MaxWholeNodes)
	}
	shape, ok := porep.ShapeBySize(is.SectorSize)
	if !ok || shape.Layers != is.Layers || shape.Challenges != is.ChallengesPerPartition {
		return nil, fmt.Errorf("c1gen: no circuit shape matches %s", proof)
	}
	if opts == nil {
		opts = &Options{}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sid := derive(seed, "sector id")
	sec := &Sector{Proof: proof, ProverID: derive(seed, "prover id"), SectorID: binary.LittleEndian.Uint64(sid[:]) >> 33}
	if opts.ProverID != nil {
		sec.ProverID = *opts.ProverID
	}
	if opts.SectorID != nil {
		sec.SectorID = *opts.SectorID
	}
	ticket, iseed := derive(seed, "ticket"), derive(seed, "interactive seed")
	if opts.Ticket != nil {
		ticket = *opts.Ticket
	}
	if opts.InteractiveSeed != nil {
		iseed = *opts.InteractiveSeed
	}

	// Tree D of all-zero data: every node of a level is that level's default.
	dataArities := make([]int, shape.DataPathLen())
	for i := range dataArities {
		dataArities[i] = 2
	}
	treeD := sparsetree.New(gadget.TreeSHA254, dataArities, nil, fr.Element{}, 1)
	commD := sparsetree.Domain(treeD.Root())
	porepID := proof.PoRepID()
	replicaID := inputs.ReplicaID(sec.ProverID, sec.SectorID, ticket, commD, porepID)
	rid, err := fr.LittleEndian.Element(&replicaID)
	if err != nil {
		return nil, err // ReplicaID clears the top bits: never happens
	}

	// Challenges and their parents, as a verifier derives them.
	g, err := graph.New(is.Nodes, porepID, is.APIVersion)
	if err != nil {
		return nil, err
	}
	challenges := make([][]uint64, is.Partitions)
	parents := map[uint64]*[graph.Degree]uint32{}
	withParents := func(c uint64) error {
		if parents[c] == nil {
			parents[c] = new([graph.Degree]uint32)
			return g.Parents(c, parents[c][:])
		}
		return nil
	}
	if whole {
		// Every node but node 0, which no challenge names and whose label
		// no labeling proof checks.
		for c := uint64(1); c < is.Nodes; c++ {
			if err := withParents(c); err != nil {
				return nil, err
			}
		}
	} else {
		for k := range challenges {
			if challenges[k], err = inputs.Challenges(is, replicaID, [32]byte{}, iseed, k); err != nil {
				return nil, err
			}
			for _, c := range challenges[k] {
				if err := withParents(c); err != nil {
					return nil, err
				}
			}
		}
	}
	challenged := make([]uint64, 0, len(parents))
	for c := range parents {
		challenged = append(challenged, c)
	}
	slices.Sort(challenged)

	cols, err := label(shape.Layers, rid, seed, challenged, parents)
	if err != nil {
		return nil, err
	}

	// Trees C and R_last over the opened nodes; every other node has the
	// default column, whose last label is its encoded node.
	defaultCol := make([]fr.Element, shape.Layers)
	for i := range defaultCol {
		defaultCol[i] = deriveElement(seed, "default label")
	}
	opened := make([]uint64, 0, len(cols))
	for n := range cols {
		opened = append(opened, n)
	}
	slices.Sort(opened)
	colHashes := make([]fr.Element, len(opened))
	colHash := poseidon.MustGet(shape.Layers)
	parallel(len(opened), workers, func(i int) {
		colHashes[i], _ = colHash.Hash(cols[opened[i]]) // arity is the column length
	})
	cLeaves := make(map[uint64]fr.Element, len(opened))
	rLeaves := make(map[uint64]fr.Element, len(opened))
	for i, n := range opened {
		cLeaves[n] = colHashes[i]
		rLeaves[n] = cols[n][shape.Layers-1]
	}
	defaultColHash, _ := colHash.Hash(defaultCol)
	arities := shape.TreeArities()
	treeC := sparsetree.New(gadget.TreePoseidon, arities, cLeaves, defaultColHash, workers)
	treeR := sparsetree.New(gadget.TreePoseidon, arities, rLeaves, defaultCol[shape.Layers-1], workers)
	commC, commRLast := treeC.Root(), treeR.Root()
	commR, err := poseidon.MustGet(2).Hash([]fr.Element{commC, commRLast})
	if err != nil {
		return nil, err
	}
	if whole {
		for k := range challenges {
			if challenges[k], err = inputs.Challenges(is, replicaID, sparsetree.Domain(commR), iseed, k); err != nil {
				return nil, err
			}
		}
	}

	b := &builder{shape: shape, treeC: treeC, treeR: treeR, treeD: treeD, cols: cols, parents: parents, colProofs: map[uint64]porep.ColumnProof{}}
	parts := make([][]porep.VanillaProof, is.Partitions)
	for k, cs := range challenges {
		parts[k] = make([]porep.VanillaProof, len(cs))
		for i, c := range cs {
			parts[k][i] = b.vanilla(c)
		}
	}
	sec.C1 = &porep.C1Output{
		RegisteredProof: proof.String(),
		VanillaProofs:   porep.VanillaProofs{Shape: shape.Name, Partitions: parts},
		CommR:           sparsetree.Domain(commR),
		CommD:           commD,
		ReplicaID:       replicaID,
		Seed:            iseed,
		Ticket:          ticket,
	}
	return sec, nil
}

// label returns the column (the label of each layer) of every challenged
// node and every parent of one. Parents that are not challenged get labels
// derived from seed; challenged nodes are labeled layer by layer, in node
// order, from their parents' columns: base parents of the same layer,
// expander parents of the layer below.
func label(layers int, rid fr.Element, seed [32]byte, challenged []uint64, parents map[uint64]*[graph.Degree]uint32) (map[uint64][]fr.Element, error) {
	cols := make(map[uint64][]fr.Element, len(challenged)*(graph.Degree+1))
	for _, c := range challenged {
		cols[c] = make([]fr.Element, layers)
	}
	for _, c := range challenged {
		for _, p := range parents[c] {
			if cols[uint64(p)] == nil {
				col := make([]fr.Element, layers)
				for l := range col {
					col[l] = deriveElement(seed, "label", uint64(p), uint64(l+1))
				}
				cols[uint64(p)] = col
			}
		}
	}
	done := make(map[uint64]int, len(challenged)) // layers labeled so far
	ps := make([]fr.Element, 0, graph.Degree)
	for layer := 1; layer <= layers; layer++ {
		for _, c := range challenged {
			ps = ps[:0]
			for j, p := range parents[c] {
				l := layer // base parents: this layer
				if j >= graph.BaseDegree {
					if layer == 1 {
						break
					}
					l = layer - 1 // expander parents: the layer below
				}
				if _, isChallenged := parents[uint64(p)]; isChallenged && done[uint64(p)] < l {
					return nil, &GraphError{Node: c, Parent: uint64(p), Layer: layer}
				}
				ps = append(ps, cols[uint64(p)][l-1])
			}
			v, err := gadget.LabelNative(rid, uint32(layer), c, ps)
			if err != nil {
				return nil, err
			}
			cols[c][layer-1] = v
			done[c] = layer
		}
	}
	return cols, nil
}

// builder assembles vanilla proofs from the trees and columns.
type builder struct {
	shape               porep.Shape
	treeC, treeR, treeD *sparsetree.Tree
	cols                map[uint64][]fr.Element
	parents             map[uint64]*[graph.Degree]uint32
	colProofs           map[uint64]porep.ColumnProof // memo: one per opened node
}

// vanilla returns the vanilla proof of challenge c, laid out as
// storage-proofs-porep's prover writes it.
func (b *builder) vanilla(c uint64) porep.VanillaProof {
	ps := b.parents[c]
	vp := porep.VanillaProof{
		CommDProofs:    b.treeD.MerkleProof(c, 0, 0),
		CommRLastProof: b.treeR.MerkleProof(c, b.shape.SubArity, b.shape.TopArity),
		ReplicaColumnProofs: porep.ReplicaColumnProofs{
			CX:         b.columnProof(c),
			DRGParents: make([]porep.ColumnProof, graph.BaseDegree),
			ExpParents: make([]porep.ColumnProof, graph.ExpansionDegree),
		},
		LabelingProofs: make([]porep.LabelingProof, b.shape.Layers),
	}
	for j, p := range ps {
		if j < graph.BaseDegree {
			vp.ReplicaColumnProofs.DRGParents[j] = b.columnProof(uint64(p))
		} else {
			vp.ReplicaColumnProofs.ExpParents[j-graph.BaseDegree] = b.columnProof(uint64(p))
		}
	}
	// Each layer's labeling proof lists the parents' labels (base parents
	// of the layer, then after layer 1 expander parents of the layer
	// below) repeated cyclically to the labeling function's 37 inputs.
	for layer := 1; layer <= b.shape.Layers; layer++ {
		n := graph.BaseDegree
		if layer > 1 {
			n = graph.Degree
		}
		labels := make([]porep.Domain, gadget.TotalParents)
		for i := range labels {
			j := i % n
			l := layer
			if j >= graph.BaseDegree {
				l = layer - 1
			}
			labels[i] = sparsetree.Domain(b.cols[uint64(ps[j])][l-1])
		}
		vp.LabelingProofs[layer-1] = porep.LabelingProof{Parents: labels, LayerIndex: uint32(layer), Node: c}
	}
	vp.EncodingProof = porep.EncodingProof(vp.LabelingProofs[b.shape.Layers-1])
	return vp
}

// columnProof returns node n's column and its tree-C inclusion proof.
func (b *builder) columnProof(n uint64) porep.ColumnProof {
	if cp, ok := b.colProofs[n]; ok {
		return cp
	}
	col := b.cols[n]
	rows := make([]porep.Domain, len(col))
	for i := range col {
		rows[i] = sparsetree.Domain(col[i])
	}
	cp := porep.ColumnProof{
		Column:         porep.C1Column{Index: uint32(n), Rows: rows},
		InclusionProof: b.treeC.MerkleProof(n, b.shape.SubArity, b.shape.TopArity),
	}
	b.colProofs[n] = cp
	return cp
}

// derive returns SHA-256 of a tag, the generator seed and xs (8 bytes
// little-endian each): the generator's only source of arbitrary values.
func derive(seed [32]byte, tag string, xs ...uint64) [32]byte {
	h := sha256.New()
	h.Write([]byte("c1gen:" + tag + "\x00"))
	h.Write(seed[:])
	for _, x := range xs {
		h.Write(binary.LittleEndian.AppendUint64(nil, x))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// deriveElement is derive with the top two bits cleared, read as a
// little-endian field element (distributed like a SHA-254 label).
func deriveElement(seed [32]byte, tag string, xs ...uint64) fr.Element {
	b := derive(seed, tag, xs...)
	b[31] &= 0x3f
	e, _ := fr.LittleEndian.Element(&b) // below 2^254 < r
	return e
}

// parallel runs f(0..n-1) on up to workers goroutines.
func parallel(n, workers int, f func(i int)) {
	var wg sync.WaitGroup
	chunk := max(1, (n+workers-1)/max(workers, 1))
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				f(i)
			}
		})
	}
	wg.Wait()
}
