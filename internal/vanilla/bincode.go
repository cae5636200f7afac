package vanilla

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sealc2/c2/porep"
)

// ErrTruncated is wrapped by a *FieldError for bincode input that ends
// inside a value.
var ErrTruncated = errors.New("unexpected end of input")

// Bincode runs read over b, bincode 1 input of at most max bytes (bincode
// 1 defaults: little-endian fixed-width integers, u64 lengths, u32 enum
// tags, 32-byte domains inline), and returns the first error: the input's
// size, a value read, or bytes left after read.
func Bincode(b []byte, max int, read func(r *Reader)) error {
	if len(b) > max {
		return Errorf("", "%d bytes, more than %d", len(b), max)
	}
	r := &Reader{b: b}
	read(r)
	if r.err == nil && r.off != len(b) {
		r.err = Errorf("", "%d trailing bytes", len(b)-r.off)
	}
	return r.err
}

// Reader reads bincode values, keeping the first error; after an error
// its reads return zero values.
type Reader struct {
	b   []byte
	off int
	err error
}

func (r *Reader) take(n int, field string) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b)-r.off < n {
		r.err = &FieldError{field, ErrTruncated}
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

// U64 reads a u64.
func (r *Reader) U64(field string) uint64 {
	if s := r.take(8, field); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

// Length reads a sequence length whose elements take at least minSize
// bytes each, refusing one the remaining input cannot hold.
func (r *Reader) Length(field string, minSize int) int {
	n := r.U64(field)
	if r.err == nil && n > uint64(len(r.b)-r.off)/uint64(minSize) {
		r.err = Errorf(field, "length %d exceeds the input", n)
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

// Domain reads a 32-byte domain into d.
func (r *Reader) Domain(d *porep.Domain, field string) {
	if s := r.take(32, field); s != nil {
		copy(d[:], s)
	}
}

// Merkle reads storage-proofs-core's MerkleProof: the ProofData variant
// tag (0 Single, 1 Sub, 2 Top), then the variant's fields in declaration
// order (Single: root, leaf, path; Sub and Top: the paths of each tree
// level, then root and leaf).
func (r *Reader) Merkle(m *porep.MerkleProof, at string) {
	tag := uint32(0)
	if s := r.take(4, at); s != nil {
		tag = binary.LittleEndian.Uint32(s)
	}
	if r.err != nil {
		return
	}
	kinds := []porep.MerkleKind{porep.MerkleSingle, porep.MerkleSub, porep.MerkleTop}
	if tag >= uint32(len(kinds)) {
		r.err = Errorf(at, "unknown Merkle proof variant %d", tag)
		return
	}
	m.Kind = kinds[tag]
	at += "." + string(m.Kind)
	if m.Kind == porep.MerkleSingle {
		r.Domain(&m.Root, at+".root")
		r.Domain(&m.Leaf, at+".leaf")
		m.Base = r.path(at + ".path.path")
		return
	}
	segs := []*[]porep.PathElement{&m.Base, &m.Sub, &m.Top}[:tag+1]
	names := []string{"base_proof", "sub_proof", "top_proof"}
	for i, seg := range segs {
		*seg = r.path(at + "." + names[i] + ".path")
	}
	r.Domain(&m.Root, at+".root")
	r.Domain(&m.Leaf, at+".leaf")
}

// path reads an InclusionPath: a sequence of (hashes, index).
func (r *Reader) path(at string) []porep.PathElement {
	out := make([]porep.PathElement, r.Length(at, 16))
	for i := range out {
		f := fmt.Sprintf("%s[%d]", at, i)
		out[i].Hashes = make([]porep.Domain, r.Length(f+".hashes", 32))
		for j := range out[i].Hashes {
			r.Domain(&out[i].Hashes[j], fmt.Sprintf("%s.hashes[%d]", f, j))
		}
		out[i].Index = r.U64(f + ".index")
	}
	return out
}
