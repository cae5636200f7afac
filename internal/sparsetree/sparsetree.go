// Package sparsetree builds Merkle trees over a whole sector of which only
// a few leaves are explicit: every other leaf holds one default value, so an
// untouched subtree of a level hashes to that level's default node. A tree
// stores the explicit leaves and the nodes above them, nothing per sector
// node, and is the very tree a sector whose other leaves all equal the
// default would have. Synthetic C1 outputs (porep/c1gen) and PoSt vanilla
// proofs (post/postgen) draw their trees C, R_last and D from it.
package sparsetree

import (
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/gadget"
)

// Tree is a sparse Merkle tree (see the package doc).
type Tree struct {
	hash     gadget.TreeHash
	arities  []int                   // per level, from the leaves up
	defaults []fr.Element            // per level 0..len(arities): the default node
	levels   []map[uint64]fr.Element // per level: explicit (level 0) or computed nodes
}

// New builds the tree of the given arities (leaves first) over leaves,
// whose positions must lie in the tree, every other leaf being defaultLeaf.
// Levels are hashed on up to workers (≥ 1) goroutines. New keeps leaves.
func New(h gadget.TreeHash, arities []int, leaves map[uint64]fr.Element, defaultLeaf fr.Element, workers int) *Tree {
	t := &Tree{
		hash:     h,
		arities:  arities,
		defaults: make([]fr.Element, len(arities)+1),
		levels:   make([]map[uint64]fr.Element, len(arities)+1),
	}
	t.defaults[0] = defaultLeaf
	t.levels[0] = leaves
	for l, a := range arities {
		children := make([]fr.Element, a)
		for j := range children {
			children[j] = t.defaults[l]
		}
		t.defaults[l+1] = gadget.NodeHash(h, children)

		// The parents of this level's nodes, in a fixed order; each is
		// hashed once, the work spread over the workers.
		seen := make(map[uint64]bool, len(t.levels[l]))
		parents := make([]uint64, 0, len(t.levels[l]))
		for idx := range t.levels[l] {
			if p := idx / uint64(a); !seen[p] {
				seen[p] = true
				parents = append(parents, p)
			}
		}
		slices.Sort(parents)
		values := make([]fr.Element, len(parents))
		var g errgroup.Group
		g.SetLimit(max(workers, 1))
		for i, p := range parents {
			g.Go(func() error {
				ch := make([]fr.Element, a)
				for j := range ch {
					ch[j] = t.Node(l, p*uint64(a)+uint64(j))
				}
				values[i] = gadget.NodeHash(h, ch)
				return nil
			})
		}
		_ = g.Wait() // the hashes return no error
		next := make(map[uint64]fr.Element, len(parents))
		for i, p := range parents {
			next[p] = values[i]
		}
		t.levels[l+1] = next
	}
	return t
}

// Node returns the node at index idx of level l (0: the leaves).
func (t *Tree) Node(l int, idx uint64) fr.Element {
	if v, ok := t.levels[l][idx]; ok {
		return v
	}
	return t.defaults[l]
}

// Root returns the tree's root.
func (t *Tree) Root() fr.Element { return t.Node(len(t.arities), 0) }

// Leaf returns the leaf at pos.
func (t *Tree) Leaf(pos uint64) fr.Element { return t.Node(0, pos) }

// Path returns the inclusion path of the leaf at pos, from the leaf up.
func (t *Tree) Path(pos uint64) []gadget.PathLevel {
	out := make([]gadget.PathLevel, len(t.arities))
	for l, a := range t.arities {
		a := uint64(a)
		out[l].Index = int(pos % a)
		out[l].Siblings = make([]fr.Element, 0, a-1)
		first := pos - pos%a
		for j := range a {
			if first+j != pos {
				out[l].Siblings = append(out[l].Siblings, t.Node(l, first+j))
			}
		}
		pos /= a
	}
	return out
}

// MerkleProof returns the inclusion proof of the leaf at pos in the
// serialized form of storage-proofs-core: the base levels, then one sub and
// one top level when the tree has them (sub, top: their arities, 0 when
// absent; they are the last levels of the tree's arities).
func (t *Tree) MerkleProof(pos uint64, sub, top int) porep.MerkleProof {
	path := t.Path(pos)
	els := make([]porep.PathElement, len(path))
	for i, l := range path {
		hs := make([]porep.Domain, len(l.Siblings))
		for j := range l.Siblings {
			hs[j] = Domain(l.Siblings[j])
		}
		els[i] = porep.PathElement{Hashes: hs, Index: uint64(l.Index)}
	}
	m := porep.MerkleProof{Kind: porep.MerkleSingle, Root: Domain(t.Root()), Leaf: Domain(t.Leaf(pos))}
	n := len(els)
	switch {
	case top > 0:
		m.Kind, m.Base, m.Sub, m.Top = porep.MerkleTop, els[:n-2], els[n-2:n-1], els[n-1:]
	case sub > 0:
		m.Kind, m.Base, m.Sub = porep.MerkleSub, els[:n-1], els[n-1:]
	default:
		m.Base = els
	}
	return m
}

// Domain returns e as a 32-byte little-endian vanilla-proof value.
func Domain(e fr.Element) porep.Domain {
	var b [32]byte
	fr.LittleEndian.PutElement(&b, e)
	return b
}
