package post

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sealc2/c2/porep"
)

// MaxSectorProofSize bounds the bincode vanilla proof [DecodeSectorProof]
// accepts: a 64 GiB Winning proof (66 inclusion proofs of 12 levels) is
// about 0.2 MB, so 16 MiB leaves room without letting lengths run away.
const MaxSectorProofSize = 16 << 20

// ErrTruncated is wrapped by a *VanillaError for bincode input that ends
// inside a value.
var ErrTruncated = errors.New("unexpected end of input")

// DecodeSectorProof decodes one vanilla proof in the bincode form
// filecoin-proofs-api's generate_single_vanilla_proof returns and
// filecoin-ffi hands over (bincode 1 defaults: little-endian fixed-width
// integers, u64 lengths, u32 enum tags, 32-byte domains inline). Trailing
// bytes are refused. Errors are *VanillaError values naming the field by
// its serde JSON path.
func DecodeSectorProof(b []byte) (*SectorProof, error) {
	if len(b) > MaxSectorProofSize {
		return nil, &VanillaError{"", fmt.Errorf("%d bytes, more than %d", len(b), MaxSectorProofSize)}
	}
	r := &binReader{b: b}
	var p SectorProof
	p.SectorID = r.u64("sector_id")
	r.domain(&p.CommR, "comm_r")
	n := r.length("vanilla_proof.sectors", 8+2*32)
	p.Sectors = make([]VanillaSector, n)
	for i := range p.Sectors {
		at := fmt.Sprintf("vanilla_proof.sectors[%d]", i)
		v := &p.Sectors[i]
		m := r.length(at+".inclusion_proofs", 4+2*32+8)
		v.InclusionProofs = make([]porep.MerkleProof, m)
		for c := range v.InclusionProofs {
			r.merkle(&v.InclusionProofs[c], fmt.Sprintf("%s.inclusion_proofs[%d].data", at, c))
		}
		r.domain(&v.CommC, at+".comm_c")
		r.domain(&v.CommRLast, at+".comm_r_last")
	}
	if r.err == nil && r.off != len(b) {
		r.err = &VanillaError{"", fmt.Errorf("%d trailing bytes", len(b)-r.off)}
	}
	if r.err != nil {
		return nil, r.err
	}
	return &p, nil
}

// binReader reads bincode values, keeping the first error.
type binReader struct {
	b   []byte
	off int
	err error
}

func (r *binReader) take(n int, field string) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b)-r.off < n {
		r.err = &VanillaError{field, ErrTruncated}
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *binReader) u64(field string) uint64 {
	if s := r.take(8, field); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

// length reads a sequence length whose elements take at least minSize
// bytes each, refusing one the remaining input cannot hold.
func (r *binReader) length(field string, minSize int) int {
	n := r.u64(field)
	if r.err == nil && n > uint64(len(r.b)-r.off)/uint64(minSize) {
		r.err = &VanillaError{field, fmt.Errorf("length %d exceeds the input", n)}
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

func (r *binReader) domain(d *porep.Domain, field string) {
	if s := r.take(32, field); s != nil {
		copy(d[:], s)
	}
}

// merkle reads storage-proofs-core's MerkleProof: the ProofData tag
// (0 Single, 1 Sub, 2 Top), then the variant's fields in declaration order.
func (r *binReader) merkle(m *porep.MerkleProof, at string) {
	tag := uint32(0)
	if s := r.take(4, at); s != nil {
		tag = binary.LittleEndian.Uint32(s)
	}
	if r.err != nil {
		return
	}
	switch tag {
	case 0:
		m.Kind = porep.MerkleSingle
		at += ".Single"
		r.domain(&m.Root, at+".root")
		r.domain(&m.Leaf, at+".leaf")
		m.Base = r.path(at + ".path.path")
		return
	case 1:
		m.Kind = porep.MerkleSub
		at += ".Sub"
	case 2:
		m.Kind = porep.MerkleTop
		at += ".Top"
	default:
		r.err = &VanillaError{at, fmt.Errorf("unknown Merkle proof variant %d", tag)}
		return
	}
	m.Base = r.path(at + ".base_proof.path")
	m.Sub = r.path(at + ".sub_proof.path")
	if m.Kind == porep.MerkleTop {
		m.Top = r.path(at + ".top_proof.path")
	}
	r.domain(&m.Root, at+".root")
	r.domain(&m.Leaf, at+".leaf")
}

// path reads an InclusionPath: a sequence of (hashes, index).
func (r *binReader) path(at string) []porep.PathElement {
	n := r.length(at, 16)
	out := make([]porep.PathElement, n)
	for i := range out {
		f := fmt.Sprintf("%s[%d]", at, i)
		h := r.length(f+".hashes", 32)
		out[i].Hashes = make([]porep.Domain, h)
		for j := range out[i].Hashes {
			r.domain(&out[i].Hashes[j], fmt.Sprintf("%s.hashes[%d]", f, j))
		}
		out[i].Index = r.u64(f + ".index")
	}
	return out
}
