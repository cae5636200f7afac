// Package graph computes the parents of a node in the stacked DRG used by
// Filecoin's interactive PoRep (rust-fil-proofs StackedBucketGraph): six base
// parents from the bucket-sampling DRG, seeded per node with ChaCha8 from the
// PoRep id, and eight expander parents from a Feistel permutation keyed by the
// PoRep id. Parents are computed on demand in O(1) per node; no graph is
// stored, so 2^31-node graphs cost nothing to construct.
package graph

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Degrees of the stacked graph (storage-proofs-core drgraph.rs BASE_DEGREE,
// storage-proofs-porep stacked/vanilla/graph.rs EXP_DEGREE).
const (
	BaseDegree      = 6
	ExpansionDegree = 8
	Degree          = BaseDegree + ExpansionDegree
)

// APIVersion is the proofs API version of a registered seal proof. It changes
// where the immediate predecessor sits among the base parents and whether the
// expander parent index is truncated to 32 bits before division.
type APIVersion int

const (
	V1_0_0 APIVersion = iota // StackedDrg*V1
	V1_1_0                   // StackedDrg*V1_1
	V1_2_0                   // Synthetic and NI-PoRep; same graph as V1_1_0
)

func (v APIVersion) String() string {
	switch v {
	case V1_0_0:
		return "1.0.0"
	case V1_1_0:
		return "1.1.0"
	case V1_2_0:
		return "1.2.0"
	}
	return fmt.Sprintf("APIVersion(%d)", int(v))
}

// Domain separation tags hashed with the PoRep id (storage-proofs-core crypto).
const (
	drgDST     = "Filecoin_DRSample"
	feistelDST = "Filecoin_Feistel"
)

// MaxNodes is the largest supported node count (the reference requires node
// indices to fit in a u32).
const MaxNodes = 1<<32 - 1

// ErrNodes reports a node count outside [2, MaxNodes].
var ErrNodes = errors.New("graph: node count out of range")

// ErrAPIVersion reports an unknown API version.
var ErrAPIVersion = errors.New("graph: unknown API version")

// NodeError reports a node index not below the graph size.
type NodeError struct {
	Node, Nodes uint64
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("graph: node %d out of range [0, %d)", e.Node, e.Nodes)
}

// DstError reports a destination slice shorter than the parents it must hold.
type DstError struct {
	Len, Need int
}

func (e *DstError) Error() string {
	return fmt.Sprintf("graph: destination holds %d parents, need %d", e.Len, e.Need)
}

// Graph is an immutable stacked DRG; it is safe for concurrent use.
type Graph struct {
	nodes   uint64
	version APIVersion
	drgSeed [28]byte
	exp     feistel
}

// New returns the stacked graph over nodes nodes for the given PoRep id and
// API version.
func New(nodes uint64, porepID [32]byte, version APIVersion) (*Graph, error) {
	if nodes < 2 || nodes > MaxNodes {
		return nil, fmt.Errorf("%w: %d", ErrNodes, nodes)
	}
	if version < V1_0_0 || version > V1_2_0 {
		return nil, fmt.Errorf("%w: %d", ErrAPIVersion, int(version))
	}
	g := &Graph{nodes: nodes, version: version}
	seed := DRGSeed(porepID)
	g.drgSeed = seed
	g.exp = newFeistel(nodes*ExpansionDegree, FeistelKeys(porepID))
	return g, nil
}

func domainSeed(tag string, porepID [32]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(tag))
	h.Write(porepID[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// DRGSeed is the 28-byte bucket-graph seed: the first 28 bytes of
// SHA-256("Filecoin_DRSample" || porepID).
func DRGSeed(porepID [32]byte) [28]byte {
	s := domainSeed(drgDST, porepID)
	var out [28]byte
	copy(out[:], s[:28])
	return out
}

// FeistelKeys are the four expander keys: SHA-256("Filecoin_Feistel" ||
// porepID) read as four little-endian uint64s.
func FeistelKeys(porepID [32]byte) [4]uint64 {
	s := domainSeed(feistelDST, porepID)
	var k [4]uint64
	for i := range k {
		k[i] = binary.LittleEndian.Uint64(s[8*i:])
	}
	return k
}

func (g *Graph) check(node uint64, dst []uint32, need int) error {
	if node >= g.nodes {
		return &NodeError{Node: node, Nodes: g.nodes}
	}
	if len(dst) < need {
		return &DstError{Len: len(dst), Need: need}
	}
	return nil
}

// Parents writes the Degree parents of node into dst[:Degree]: the BaseDegree
// base parents followed by the ExpansionDegree expander parents, in the order
// the reference's StackedGraph::parents returns them.
func (g *Graph) Parents(node uint64, dst []uint32) error {
	if err := g.check(node, dst, Degree); err != nil {
		return err
	}
	g.baseParents(uint32(node), dst[:BaseDegree])
	g.expanderParents(node, dst[BaseDegree:Degree])
	return nil
}

// baseParents is drgraph.rs BucketGraph::parents: the node's metagraph index
// node*(BaseDegree-1) picks each of the BaseDegree-1 random parents by drawing
// a bucket b uniformly in [1, ceil(log2(metagraph node))] and then a distance
// uniformly in [max(2, min(m, 2^b)/2), min(m, 2^b)], both as u64 % range from
// a ChaCha8 stream keyed by drgSeed || node (u32 LE).
func (g *Graph) baseParents(node uint32, dst []uint32) {
	if node < 2 {
		clear(dst)
		return
	}
	var key [32]byte
	copy(key[:28], g.drgSeed[:])
	binary.LittleEndian.PutUint32(key[28:], node)
	var rng chachaStream
	rng.doubleRounds = 4
	rng.reset(&key)

	const mPrime = BaseDegree - 1
	meta := uint64(node) * mPrime
	// ceil(log2(meta)) for meta >= 2; the reference computes it in f64, which
	// is exact here because meta < 2^35 is never within 2^-30 of a power of two
	// without being one.
	nBuckets := uint64(bits.Len64(meta - 1))

	random, pred := dst[1:], 0
	if g.version == V1_0_0 {
		random, pred = dst[:mPrime], mPrime
	}
	for i := range random {
		bucket := rng.next64()%nBuckets + 1
		largest := min(meta, uint64(1)<<bucket)
		smallest := max(2, largest>>1)
		distance := smallest + rng.next64()%(largest-smallest+1)
		p := uint32((meta - distance) / mPrime)
		if p == node {
			p = node - 1
		}
		random[i] = p
	}
	dst[pred] = node - 1
}

// expanderParents is graph.rs StackedGraph::correspondent for i = 0..7: the
// Feistel image of node*8+i over [0, nodes*8), divided by 8.
func (g *Graph) expanderParents(node uint64, dst []uint32) {
	for i := range dst {
		t := g.exp.permute(node*ExpansionDegree + uint64(i))
		if g.version == V1_0_0 {
			dst[i] = uint32(t) / ExpansionDegree // the reference truncates first
		} else {
			dst[i] = uint32(t / ExpansionDegree)
		}
	}
}
