package c1gen

import (
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/gadget"
)

// defaultTree is a Merkle tree over a whole sector of which only a few
// leaves are explicit: every other leaf holds the same default value, so an
// untouched subtree of a level hashes to that level's default node. The
// tree stores the explicit leaves and the nodes above them, nothing per
// sector node, and is the very tree a sector whose other leaves all equal
// the default would have.
type defaultTree struct {
	hash     gadget.TreeHash
	arities  []int                   // per level, from the leaves up
	defaults []fr.Element            // per level 0..len(arities): the default node
	levels   []map[uint64]fr.Element // per level: explicit (level 0) or computed nodes
}

// newDefaultTree builds the tree over leaves, whose positions must lie in
// the tree. Levels are hashed on up to workers (≥ 1) goroutines.
func newDefaultTree(h gadget.TreeHash, arities []int, leaves map[uint64]fr.Element, defaultLeaf fr.Element, workers int) *defaultTree {
	t := &defaultTree{
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
		var parents []uint64
		seen := map[uint64]bool{}
		for idx := range t.levels[l] {
			if p := idx / uint64(a); !seen[p] {
				seen[p] = true
				parents = append(parents, p)
			}
		}
		slices.Sort(parents)
		values := make([]fr.Element, len(parents))
		parallel(len(parents), workers, func(i int) {
			ch := make([]fr.Element, a)
			for j := range ch {
				ch[j] = t.node(l, parents[i]*uint64(a)+uint64(j))
			}
			values[i] = gadget.NodeHash(h, ch)
		})
		next := make(map[uint64]fr.Element, len(parents))
		for i, p := range parents {
			next[p] = values[i]
		}
		t.levels[l+1] = next
	}
	return t
}

// node returns the node at index idx of level l.
func (t *defaultTree) node(l int, idx uint64) fr.Element {
	if v, ok := t.levels[l][idx]; ok {
		return v
	}
	return t.defaults[l]
}

// root returns the tree's root.
func (t *defaultTree) root() fr.Element { return t.node(len(t.arities), 0) }

// leaf returns the leaf at pos.
func (t *defaultTree) leaf(pos uint64) fr.Element { return t.node(0, pos) }

// path returns the inclusion path of the leaf at pos, from the leaf up.
func (t *defaultTree) path(pos uint64) []gadget.PathLevel {
	out := make([]gadget.PathLevel, len(t.arities))
	for l, a := range t.arities {
		a := uint64(a)
		out[l].Index = int(pos % a)
		out[l].Siblings = make([]fr.Element, 0, a-1)
		first := pos - pos%a
		for j := range a {
			if first+j != pos {
				out[l].Siblings = append(out[l].Siblings, t.node(l, first+j))
			}
		}
		pos /= a
	}
	return out
}
