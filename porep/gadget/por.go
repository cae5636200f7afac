package gadget

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/poseidon"
)

// TreeHash names the node hash of a Merkle tree.
type TreeHash uint8

const (
	// TreeSHA254 is tree D: binary, SHA-256 with the top two bits cleared.
	TreeSHA254 TreeHash = iota
	// TreePoseidon is trees C and R: Poseidon of the level's arity.
	TreePoseidon
)

// PathLevel is one level of a Merkle inclusion path, from the leaf upwards:
// the position (0..arity−1) of the current node among its siblings, and the
// arity − 1 siblings in order.
type PathLevel struct {
	Index    int
	Siblings []fr.Element
}

// Arity returns the level's arity.
func (l *PathLevel) Arity() int { return len(l.Siblings) + 1 }

// PathError reports a path level that cannot be proved.
type PathError struct {
	Level int
	Msg   string
}

func (e *PathError) Error() string { return fmt.Sprintf("gadget: path level %d: %s", e.Level, e.Msg) }

// CheckPath validates the shape of a path for the given tree hash: arities
// are powers of two (2 for SHA-254; 2, 4, 8 or 16 and so on for Poseidon up to
// poseidon.MaxArity) and each index is below its arity.
func CheckPath(h TreeHash, path []PathLevel) error {
	for i := range path {
		a := path[i].Arity()
		switch {
		case a < 2 || a&(a-1) != 0:
			return &PathError{i, fmt.Sprintf("arity %d is not a power of two ≥ 2", a)}
		case h == TreeSHA254 && a != 2:
			return &PathError{i, fmt.Sprintf("SHA-254 trees are binary, got arity %d", a)}
		case h == TreePoseidon && a > poseidon.MaxArity:
			return &PathError{i, fmt.Sprintf("arity %d exceeds %d", a, poseidon.MaxArity)}
		case path[i].Index < 0 || path[i].Index >= a:
			return &PathError{i, fmt.Sprintf("index %d out of range for arity %d", path[i].Index, a)}
		}
	}
	return nil
}

// NodeHash computes a tree node natively from its children.
func NodeHash(h TreeHash, children []fr.Element) fr.Element {
	if h == TreeSHA254 {
		return SHA254Node(children...)
	}
	out, err := poseidon.MustGet(len(children)).Hash(children)
	if err != nil {
		panic(err) // arity equals len(children)
	}
	return out
}

// PathRoot computes natively the root a path leads to from leaf.
func PathRoot(h TreeHash, leaf fr.Element, path []PathLevel) (fr.Element, error) {
	if err := CheckPath(h, path); err != nil {
		return fr.Element{}, err
	}
	cur := leaf
	for i := range path {
		l := &path[i]
		ch := make([]fr.Element, 0, l.Arity())
		ch = append(ch, l.Siblings[:l.Index]...)
		ch = append(ch, cur)
		ch = append(ch, l.Siblings[l.Index:]...)
		cur = NodeHash(h, ch)
	}
	return cur, nil
}

// PoR proves that leaf lies under root along path, as storage-proofs-core's
// PoRCircuit with a private root given as a variable: for each level (base,
// then sub, then top) it allocates the log2(arity) index bits, then the
// siblings, inserts the current node ([CS.Insert]) and hashes the level;
// then it packs all index bits into public inputs ([CS.PackIntoInputs]) and
// enforces computed·1 = root. The path must satisfy [CheckPath].
func (cs *CS) PoR(h TreeHash, leaf Num, path []PathLevel, root Num) error {
	if err := CheckPath(h, path); err != nil {
		return err
	}
	var idx []Bit
	cur := leaf
	var sib, ins [poseidon.MaxArity]Num
	for i := range path {
		l := &path[i]
		a := l.Arity()
		nb := bits.TrailingZeros(uint(a))
		start := len(idx)
		for j := 0; j < nb; j++ {
			idx = append(idx, cs.AllocBit(l.Index>>j&1 == 1))
		}
		for j, s := range l.Siblings {
			sib[j] = cs.AllocNum(s)
		}
		in := cs.Insert(ins[:0], cur, idx[start:], sib[:a-1])
		if h == TreeSHA254 {
			cur = cs.SHA254NodeCircuit(in...)
		} else {
			cur = cs.Poseidon(poseidon.MustGet(a), in)
		}
	}
	cs.PackIntoInputs(idx)
	cs.Equal(cur, root)
	return nil
}
