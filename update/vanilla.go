package update

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep"
)

// PartitionProof is storage-proofs-update's vanilla PartitionProof, what
// filecoin-proofs-api's generate_partition_proofs returns per partition
// (filecoin-ffi hands each over bincode-encoded, [DecodePartitionProof];
// [DecodePartitionProofsJSON] reads the serde JSON form).
type PartitionProof struct {
	CommC           porep.Domain
	ApexLeafs       []porep.Domain
	ChallengeProofs []ChallengeProof
}

// ChallengeProof holds the three inclusion proofs of one challenged node:
// in the old replica's tree R, in the new data's tree D and in the new
// replica's tree R.
type ChallengeProof struct {
	ProofROld, ProofDNew, ProofRNew porep.MerkleProof
}

// VanillaError reports a vanilla proof that cannot be decoded or does not
// fit the shape. Field is the serde JSON path of the offending value, e.g.
// "[0].challenge_proofs[3].proof_d_new.data.Single.leaf".
type VanillaError struct {
	Field string
	Err   error
}

func (e *VanillaError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("update: vanilla proof: %v", e.Err)
	}
	return fmt.Sprintf("update: vanilla proof: %s: %v", e.Field, e.Err)
}

func (e *VanillaError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) *VanillaError {
	return &VanillaError{field, fmt.Errorf(format, args...)}
}

// joinField appends a JSON path step to prefix: an index ("[3]") directly,
// a field name after a dot.
func joinField(prefix, rest string) string {
	if prefix != "" && rest != "" && !strings.HasPrefix(rest, "[") {
		prefix += "."
	}
	return prefix + rest
}

// decodeStrict unmarshals exactly one JSON value from b into v, refusing
// unknown object fields and anything after the value.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data")
	}
	return err
}

type jsonPartitionProof struct {
	CommC           *porep.Domain    `json:"comm_c"`
	ApexLeafs       *[]porep.Domain  `json:"apex_leafs"`
	ChallengeProofs *[]jsonChallenge `json:"challenge_proofs"`
}

type jsonChallenge struct {
	ProofROld *json.RawMessage `json:"proof_r_old"`
	ProofDNew *json.RawMessage `json:"proof_d_new"`
	ProofRNew *json.RawMessage `json:"proof_r_new"`
}

// DecodePartitionProofsJSON decodes a JSON array of PartitionProof
// (serde_json of Vec<PartitionProof>, one per partition in order), or a
// single PartitionProof object, which it returns as a one-element slice.
// Decoding is strict: every field must be present and unknown fields are
// rejected. Errors are *VanillaError values naming the JSON path
// ("[k]…" inside an array).
func DecodePartitionProofsJSON(b []byte) ([]PartitionProof, error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		one, err := DecodePartitionProofJSON(b)
		if err != nil {
			return nil, err
		}
		return []PartitionProof{*one}, nil
	}
	var items []json.RawMessage
	if err := decodeStrict(b, &items); err != nil {
		return nil, &VanillaError{"", err}
	}
	proofs := make([]PartitionProof, 0, len(items))
	for k := range items {
		var p PartitionProof
		if err := p.decodeJSON(items[k], "["+strconv.Itoa(k)+"]"); err != nil {
			return nil, err
		}
		proofs = append(proofs, p)
	}
	return proofs, nil
}

// DecodePartitionProofJSON decodes one PartitionProof in serde JSON.
func DecodePartitionProofJSON(b []byte) (*PartitionProof, error) {
	var p PartitionProof
	err := p.decodeJSON(b, "")
	if err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *PartitionProof) decodeJSON(b []byte, at string) error {
	var j jsonPartitionProof
	if err := decodeStrict(b, &j); err != nil {
		var c *porep.C1Error
		if errors.As(err, &c) {
			err = c.Err
		}
		return &VanillaError{at, err}
	}
	missing := func(f string) error { return &VanillaError{joinField(at, f), porep.ErrMissingField} }
	switch {
	case j.CommC == nil:
		return missing("comm_c")
	case j.ApexLeafs == nil:
		return missing("apex_leafs")
	case j.ChallengeProofs == nil:
		return missing("challenge_proofs")
	}
	p.CommC, p.ApexLeafs = *j.CommC, *j.ApexLeafs
	p.ChallengeProofs = make([]ChallengeProof, len(*j.ChallengeProofs))
	for i, c := range *j.ChallengeProofs {
		f := fmt.Sprintf("challenge_proofs[%d]", i)
		cp := &p.ChallengeProofs[i]
		for _, m := range []struct {
			name string
			raw  *json.RawMessage
			dst  *porep.MerkleProof
		}{{"proof_r_old", c.ProofROld, &cp.ProofROld}, {"proof_d_new", c.ProofDNew, &cp.ProofDNew}, {"proof_r_new", c.ProofRNew, &cp.ProofRNew}} {
			g := joinField(at, f+"."+m.name)
			if m.raw == nil {
				return &VanillaError{g, porep.ErrMissingField}
			}
			if err := m.dst.UnmarshalJSON(*m.raw); err != nil {
				var ce *porep.C1Error
				if errors.As(err, &ce) {
					return &VanillaError{joinField(g, ce.Field), ce.Err}
				}
				return &VanillaError{g, err}
			}
		}
	}
	return nil
}

// MaxPartitionProofSize bounds the bincode vanilla proof
// [DecodePartitionProof] accepts: a 64 GiB partition proof (86 challenges
// of three proofs, about 1,500 bytes each, and 128 apex leaves) is about
// 0.4 MB.
const MaxPartitionProofSize = 16 << 20

// ErrTruncated is wrapped by a *VanillaError for bincode input that ends
// inside a value.
var ErrTruncated = errors.New("unexpected end of input")

// DecodePartitionProof decodes one partition proof in the bincode form
// filecoin-proofs-api's generate_partition_proofs returns
// (PartitionProofBytes; bincode 1 defaults: little-endian fixed-width
// integers, u64 lengths, u32 enum tags, 32-byte domains inline). Trailing
// bytes are refused. Errors are *VanillaError values naming the field by
// its serde JSON path.
func DecodePartitionProof(b []byte) (*PartitionProof, error) {
	if len(b) > MaxPartitionProofSize {
		return nil, &VanillaError{"", fmt.Errorf("%d bytes, more than %d", len(b), MaxPartitionProofSize)}
	}
	var p PartitionProof
	d := &cursor{rest: b}
	err := d.run(func() {
		d.dom(&p.CommC, "comm_c")
		p.ApexLeafs = make([]porep.Domain, d.count("apex_leafs", 32))
		for i := range p.ApexLeafs {
			d.dom(&p.ApexLeafs[i], fmt.Sprintf("apex_leafs[%d]", i))
		}
		// A Merkle proof takes at least a tag, two domains and a length.
		p.ChallengeProofs = make([]ChallengeProof, d.count("challenge_proofs", 3*(4+64+8)))
		for i := range p.ChallengeProofs {
			c := &p.ChallengeProofs[i]
			for j, m := range []*porep.MerkleProof{&c.ProofROld, &c.ProofDNew, &c.ProofRNew} {
				d.merkleProof(m, fmt.Sprintf("challenge_proofs[%d].%s.data", i, [...]string{"proof_r_old", "proof_d_new", "proof_r_new"}[j]))
			}
		}
		if len(d.rest) > 0 {
			panic(&VanillaError{"", fmt.Errorf("%d trailing bytes", len(d.rest))})
		}
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// DecodeVanilla decodes one partition proof given either as its bincode
// bytes or as a serde JSON object (told apart by a leading '{').
func DecodeVanilla(b []byte) (*PartitionProof, error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return DecodePartitionProofJSON(b)
	}
	return DecodePartitionProof(b)
}

// cursor walks bincode input; a malformed value panics with a
// *VanillaError that run turns into the returned error.
type cursor struct{ rest []byte }

func (d *cursor) run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			ve, ok := r.(*VanillaError)
			if !ok {
				panic(r)
			}
			err = ve
		}
	}()
	f()
	return nil
}

func (d *cursor) bytes(n int, field string) []byte {
	if len(d.rest) < n {
		panic(&VanillaError{field, ErrTruncated})
	}
	out := d.rest[:n]
	d.rest = d.rest[n:]
	return out
}

func (d *cursor) word(field string) uint64 { return binary.LittleEndian.Uint64(d.bytes(8, field)) }

func (d *cursor) dom(dst *porep.Domain, field string) { copy(dst[:], d.bytes(32, field)) }

// count reads a sequence length and refuses one whose elements, each at
// least each bytes long, the rest of the input cannot hold.
func (d *cursor) count(field string, each int) int {
	n := d.word(field)
	if n > uint64(len(d.rest)/each) {
		panic(&VanillaError{field, fmt.Errorf("length %d exceeds the input", n)})
	}
	return int(n)
}

// merkleProof reads storage-proofs-core's MerkleProof: the ProofData
// variant tag (0 Single, 1 Sub, 2 Top) then the variant's fields in
// declaration order (Single: root, leaf, path; Sub and Top: the paths of
// each tree level, then root and leaf).
func (d *cursor) merkleProof(m *porep.MerkleProof, at string) {
	tag := binary.LittleEndian.Uint32(d.bytes(4, at))
	kinds := []porep.MerkleKind{porep.MerkleSingle, porep.MerkleSub, porep.MerkleTop}
	if tag >= uint32(len(kinds)) {
		panic(&VanillaError{at, fmt.Errorf("unknown Merkle proof variant %d", tag)})
	}
	m.Kind = kinds[tag]
	at += "." + string(m.Kind)
	if tag == 0 {
		d.dom(&m.Root, at+".root")
		d.dom(&m.Leaf, at+".leaf")
		m.Base = d.inclusion(at + ".path.path")
		return
	}
	segs := []*[]porep.PathElement{&m.Base, &m.Sub, &m.Top}[:tag+1]
	names := []string{"base_proof", "sub_proof", "top_proof"}
	for i, seg := range segs {
		*seg = d.inclusion(at + "." + names[i] + ".path")
	}
	d.dom(&m.Root, at+".root")
	d.dom(&m.Leaf, at+".leaf")
}

// inclusion reads an InclusionPath: a sequence of (hashes, index).
func (d *cursor) inclusion(at string) []porep.PathElement {
	levels := make([]porep.PathElement, d.count(at, 16))
	for i := range levels {
		f := fmt.Sprintf("%s[%d]", at, i)
		levels[i].Hashes = make([]porep.Domain, d.count(f+".hashes", 32))
		for j := range levels[i].Hashes {
			d.dom(&levels[i].Hashes[j], fmt.Sprintf("%s.hashes[%d]", f, j))
		}
		levels[i].Index = d.word(f + ".index")
	}
	return levels
}

// element converts a domain to a field element, naming field on failure.
func element(d porep.Domain, field string) (fr.Element, error) {
	e, err := d.Element()
	if err != nil {
		return e, fieldErr(field, "not a canonical field element")
	}
	return e, nil
}
