package porep

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/fielderr"
	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/internal/regfile"
)

// This file holds the Go form of C1's output (seal commit phase 1), the input
// of C2: filecoin-proofs-api's SealCommitPhase1Output as filecoin-ffi
// serializes it with serde_json. Field order follows the Rust structs, so
// encoding a decoded value reproduces serde's bytes.
//
// Decoding is strict: every field the Rust structs serialize must be present
// (Column's PhantomData "_h" may be absent), unknown fields are rejected, and
// every hash value must be exactly 32 integers in 0..255. Errors are
// *C1Error values naming the JSON path of the offending value.

// C1Error reports a C1 output that cannot be decoded. Field is the JSON path
// of the offending value, e.g.
// "vanilla_proofs.StackedDrg2KiBV1[0][1].comm_d_proofs.data.Single.leaf";
// the message reads "porep: C1 output: field: cause".
type C1Error = fielderr.Error[c1Output]

// c1Output is the kind of input a C1Error speaks of.
type c1Output struct{}

func (c1Output) Subject() string { return "porep: C1 output" }

// Errors wrapped by C1Error.
var (
	ErrMissingField = errors.New("missing field")
	ErrUnknownField = errors.New("unknown field")
)

// Domain is a 32-byte hash value (Sha256Domain or PoseidonDomain). In JSON it
// is an array of 32 integers. Both domains read as a field element in
// little-endian order.
type Domain [32]byte

// Element returns d as a field element, rejecting values ≥ r.
func (d Domain) Element() (fr.Element, error) {
	b := [32]byte(d)
	return fr.LittleEndian.Element(&b)
}

// MarshalJSON writes d as an array of 32 integers.
func (d Domain) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 4*32+2)
	b = append(b, '[')
	for i, x := range d {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads exactly 32 integers in 0..255.
func (d *Domain) UnmarshalJSON(b []byte) error { return parseAll(b, d.parse) }

func (d *Domain) parse(p *parser) error {
	if d.parseCompact(p) {
		return nil
	}
	n := 0
	err := p.array(func(i int) error {
		if i == 32 {
			return p.fail(errors.New("more than 32 elements"))
		}
		v, err := p.uint(8)
		d[i] = byte(v)
		n++
		return err
	})
	if err == nil && n != 32 {
		return p.fail(fmt.Errorf("%d elements, want 32", n))
	}
	return err
}

// parseCompact reads the common form of a Domain, 32 integers below 256
// separated by commas alone, and reports whether it was there; when not, it
// leaves p.i where it was (parse then reads the value with its checks and
// errors).
func (d *Domain) parseCompact(p *parser) bool {
	if p.peek() != '[' {
		return false
	}
	b, i := p.b, p.i+1
	for k := 0; k < 32; k++ {
		v, n := 0, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && n < 4; i, n = i+1, n+1 {
			v = 10*v + int(b[i]-'0')
		}
		if n == 0 || v > 255 || n > 1 && b[i-n] == '0' || i == len(b) {
			return false
		}
		d[k] = byte(v)
		want := byte(',')
		if k == 31 {
			want = ']'
		}
		if b[i] != want {
			return false
		}
		i++
	}
	p.i = i
	return true
}

// C1Output is filecoin-proofs-api's SealCommitPhase1Output.
type C1Output struct {
	// RegisteredProof is the proof type's variant name, e.g. "StackedDrg32GiBV1_1".
	RegisteredProof string        `json:"registered_proof"`
	VanillaProofs   VanillaProofs `json:"vanilla_proofs"`
	CommR           Domain        `json:"comm_r"`
	CommD           Domain        `json:"comm_d"`
	ReplicaID       Domain        `json:"replica_id"`
	Seed            Domain        `json:"seed"`
	Ticket          Domain        `json:"ticket"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *C1Output) UnmarshalJSON(b []byte) error { return parseAll(b, c.parse) }

func (c *C1Output) parse(p *parser) error {
	return p.fields([]fieldSpec{
		{"registered_proof", func() error {
			s, err := p.str()
			if err == nil && s == "" {
				err = p.fail(errors.New("empty"))
			}
			c.RegisteredProof = s
			return err
		}, false},
		{"vanilla_proofs", func() error { return c.VanillaProofs.parse(p) }, false},
		{"comm_r", func() error { return c.CommR.parse(p) }, false},
		{"comm_d", func() error { return c.CommD.parse(p) }, false},
		{"replica_id", func() error { return c.ReplicaID.parse(p) }, false},
		{"seed", func() error { return c.Seed.parse(p) }, false},
		{"ticket", func() error { return c.Ticket.parse(p) }, false},
	})
}

// VanillaProofs is the API's VanillaSealProof enum, externally tagged by
// sector shape: {"StackedDrg32GiBV1": [[proof…]…]}, partitions × challenges.
type VanillaProofs struct {
	// Shape is the enum tag: StackedDrg{2KiB,8MiB,512MiB,32GiB,64GiB}V1
	// whatever the API version.
	Shape      string
	Partitions [][]VanillaProof
}

// MarshalJSON implements json.Marshaler.
func (v VanillaProofs) MarshalJSON() ([]byte, error) {
	parts := nonNil(v.Partitions)
	for i := range parts {
		parts[i] = nonNil(parts[i])
	}
	return marshalTagged(v.Shape, parts)
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *VanillaProofs) UnmarshalJSON(b []byte) error { return parseAll(b, v.parse) }

func (v *VanillaProofs) parse(p *parser) error {
	return p.variant(nil, func(tag string) error {
		v.Shape = tag
		// Partitions are read side by side (a 32 GiB C1 holds 38 MB of
		// them); on any error they are read again in order, so that the
		// error and the partial result are those of the plain reading.
		start := p.i
		if p.arrayParallel(func(n int) { v.Partitions = make([][]VanillaProof, n) },
			func(q *parser, i int) error { return parseList(q, &v.Partitions[i]) }) {
			return nil
		}
		p.i = start
		v.Partitions = [][]VanillaProof{}
		return p.array(func(int) error {
			v.Partitions = append(v.Partitions, nil)
			return parseList(p, &v.Partitions[len(v.Partitions)-1])
		})
	})
}

// VanillaProof is storage-proofs-porep's stacked Proof for one challenge.
type VanillaProof struct {
	CommDProofs         MerkleProof         `json:"comm_d_proofs"`
	CommRLastProof      MerkleProof         `json:"comm_r_last_proof"`
	ReplicaColumnProofs ReplicaColumnProofs `json:"replica_column_proofs"`
	LabelingProofs      []LabelingProof     `json:"labeling_proofs"`
	EncodingProof       EncodingProof       `json:"encoding_proof"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *VanillaProof) UnmarshalJSON(b []byte) error { return parseAll(b, v.parse) }

func (v *VanillaProof) parse(p *parser) error {
	return p.fields([]fieldSpec{
		{"comm_d_proofs", func() error { return v.CommDProofs.parse(p) }, false},
		{"comm_r_last_proof", func() error { return v.CommRLastProof.parse(p) }, false},
		{"replica_column_proofs", func() error { return v.ReplicaColumnProofs.parse(p) }, false},
		{"labeling_proofs", func() error { return parseList(p, &v.LabelingProofs) }, false},
		{"encoding_proof", func() error { return (*LabelingProof)(&v.EncodingProof).parse(p) }, false},
	})
}

// ReplicaColumnProofs holds the challenged node's column proof and those of
// its DRG and expander parents.
type ReplicaColumnProofs struct {
	CX         ColumnProof   `json:"c_x"`
	DRGParents []ColumnProof `json:"drg_parents"`
	ExpParents []ColumnProof `json:"exp_parents"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *ReplicaColumnProofs) UnmarshalJSON(b []byte) error { return parseAll(b, r.parse) }

func (r *ReplicaColumnProofs) parse(p *parser) error {
	return p.fields([]fieldSpec{
		{"c_x", func() error { return r.CX.parse(p) }, false},
		{"drg_parents", func() error { return parseList(p, &r.DRGParents) }, false},
		{"exp_parents", func() error { return parseList(p, &r.ExpParents) }, false},
	})
}

// ColumnProof is a column of labels and its tree-C inclusion proof.
type ColumnProof struct {
	Column         C1Column    `json:"column"`
	InclusionProof MerkleProof `json:"inclusion_proof"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *ColumnProof) UnmarshalJSON(b []byte) error { return parseAll(b, c.parse) }

func (c *ColumnProof) parse(p *parser) error {
	return p.fields([]fieldSpec{
		{"column", func() error { return c.Column.parse(p) }, false},
		{"inclusion_proof", func() error { return c.InclusionProof.parse(p) }, false},
	})
}

// C1Column is storage-proofs-porep's Column: a node index and its label in
// each layer. serde writes its PhantomData as "_h": null; decoding also
// accepts the field's absence.
type C1Column struct {
	Index uint32
	Rows  []Domain
}

// MarshalJSON implements json.Marshaler.
func (c C1Column) MarshalJSON() ([]byte, error) {
	rows, err := json.Marshal(nonNil(c.Rows))
	if err != nil {
		return nil, err
	}
	return []byte(`{"index":` + strconv.FormatUint(uint64(c.Index), 10) + `,"rows":` + string(rows) + `,"_h":null}`), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *C1Column) UnmarshalJSON(b []byte) error { return parseAll(b, c.parse) }

func (c *C1Column) parse(p *parser) error {
	return p.fields([]fieldSpec{
		{"index", func() error {
			v, err := p.uint(32)
			c.Index = uint32(v)
			return err
		}, false},
		{"rows", func() error { return parseList(p, &c.Rows) }, false},
		{"_h", p.null, true},
	})
}

// LabelingProof is the labeling proof of one layer. C2 reads only Node (of
// the first layer), which is the challenged node.
type LabelingProof struct {
	Parents    []Domain `json:"parents"`
	LayerIndex uint32   `json:"layer_index"`
	Node       uint64   `json:"node"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (l *LabelingProof) UnmarshalJSON(b []byte) error { return parseAll(b, l.parse) }

func (l *LabelingProof) parse(p *parser) error {
	return p.fields([]fieldSpec{
		{"parents", func() error { return parseList(p, &l.Parents) }, false},
		{"layer_index", func() error {
			v, err := p.uint(32)
			l.LayerIndex = uint32(v)
			return err
		}, false},
		{"node", func() error {
			v, err := p.uint(64)
			l.Node = v
			return err
		}, false},
	})
}

// EncodingProof has the layout of LabelingProof; C2 does not read it.
type EncodingProof LabelingProof

// MarshalJSON implements json.Marshaler.
func (e EncodingProof) MarshalJSON() ([]byte, error) {
	l := LabelingProof(e)
	l.Parents = nonNil(l.Parents)
	return json.Marshal(l)
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *EncodingProof) UnmarshalJSON(b []byte) error {
	return parseAll(b, (*LabelingProof)(e).parse)
}

// MerkleKind is the variant of a Merkle proof: how many tree levels it spans.
type MerkleKind string

// The three Merkle proof variants (storage-proofs-core ProofData).
const (
	MerkleSingle MerkleKind = "Single" // base tree only
	MerkleSub    MerkleKind = "Sub"    // base tree and sub tree
	MerkleTop    MerkleKind = "Top"    // base, sub and top trees
)

// MerkleProof is storage-proofs-core's MerkleProof: {"data": {Kind: {...}}}.
// Base is the base tree's path (Single's "path"); Sub and Top are empty
// unless Kind needs them.
type MerkleProof struct {
	Kind       MerkleKind
	Root, Leaf Domain
	Base       []PathElement
	Sub        []PathElement
	Top        []PathElement
}

// PathElement is one level of an inclusion path, from the leaf up: the
// arity−1 siblings and the position (0..arity−1) of the path's node.
type PathElement struct {
	Hashes []Domain `json:"hashes"`
	Index  uint64   `json:"index"`
}

// inclusionPath is InclusionPath: {"path": [PathElement…]}.
type inclusionPath struct {
	Path []PathElement `json:"path"`
}

func (ip *inclusionPath) parse(p *parser) error {
	return p.fields([]fieldSpec{{"path", func() error { return parseList(p, &ip.Path) }, false}})
}

func (e *PathElement) parse(p *parser) error {
	return p.fields([]fieldSpec{
		{"hashes", func() error { return parseList(p, &e.Hashes) }, false},
		{"index", func() error {
			v, err := p.uint(64)
			e.Index = v
			return err
		}, false},
	})
}

// MarshalJSON implements json.Marshaler.
func (m MerkleProof) MarshalJSON() ([]byte, error) {
	path := func(p []PathElement) inclusionPath {
		out := inclusionPath{Path: nonNil(p)}
		for i := range out.Path {
			out.Path[i].Hashes = nonNil(out.Path[i].Hashes)
		}
		return out
	}
	var body any
	switch m.Kind {
	case MerkleSingle:
		body = struct {
			Root Domain        `json:"root"`
			Leaf Domain        `json:"leaf"`
			Path inclusionPath `json:"path"`
		}{m.Root, m.Leaf, path(m.Base)}
	case MerkleSub:
		body = struct {
			Base inclusionPath `json:"base_proof"`
			Sub  inclusionPath `json:"sub_proof"`
			Root Domain        `json:"root"`
			Leaf Domain        `json:"leaf"`
		}{path(m.Base), path(m.Sub), m.Root, m.Leaf}
	case MerkleTop:
		body = struct {
			Base inclusionPath `json:"base_proof"`
			Sub  inclusionPath `json:"sub_proof"`
			Top  inclusionPath `json:"top_proof"`
			Root Domain        `json:"root"`
			Leaf Domain        `json:"leaf"`
		}{path(m.Base), path(m.Sub), path(m.Top), m.Root, m.Leaf}
	default:
		return nil, fmt.Errorf("porep: Merkle proof kind %q", m.Kind)
	}
	inner, err := marshalTagged(string(m.Kind), body)
	if err != nil {
		return nil, err
	}
	return []byte(`{"data":` + string(inner) + `}`), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *MerkleProof) UnmarshalJSON(b []byte) error { return parseAll(b, m.parse) }

var merkleKinds = []string{string(MerkleSingle), string(MerkleSub), string(MerkleTop)}

func (m *MerkleProof) parse(p *parser) error {
	return p.fields([]fieldSpec{{"data", func() error {
		return p.variant(merkleKinds, func(tag string) error {
			m.Kind = MerkleKind(tag)
			var base, sub, top inclusionPath
			fs := []fieldSpec{
				{"root", func() error { return m.Root.parse(p) }, false},
				{"leaf", func() error { return m.Leaf.parse(p) }, false},
			}
			switch m.Kind {
			case MerkleSingle:
				fs = append(fs, fieldSpec{"path", func() error { return base.parse(p) }, false})
			case MerkleSub:
				fs = append(fs, fieldSpec{"base_proof", func() error { return base.parse(p) }, false},
					fieldSpec{"sub_proof", func() error { return sub.parse(p) }, false})
			case MerkleTop:
				fs = append(fs, fieldSpec{"base_proof", func() error { return base.parse(p) }, false},
					fieldSpec{"sub_proof", func() error { return sub.parse(p) }, false},
					fieldSpec{"top_proof", func() error { return top.parse(p) }, false})
			}
			err := p.fields(fs)
			m.Base, m.Sub, m.Top = base.Path, sub.Path, top.Path
			return err
		})
	}, false}})
}

// Commit2In is the wrapper lotus-bench and proof markets put around C1's
// bytes: Phase1Out is the C1 JSON, base64 in this JSON.
type Commit2In struct {
	SectorNum  uint64
	Phase1Out  []byte
	SectorSize uint64
}

// DecodeC1 decodes a C1 output given either as the JSON filecoin-ffi
// produces or wrapped in a Commit2In object, of at most MaxC1Size bytes. A
// Commit2In's SectorSize, when present, must be the size of the shape the
// C1's vanilla proofs are tagged with. Errors are *C1Error.
func DecodeC1(b []byte) (*C1Output, error) {
	if len(b) > MaxC1Size {
		return nil, &C1Error{Err: fmt.Errorf("%d bytes: %w", len(b), ErrTooLarge)}
	}
	if isCommit2In(b) {
		var w struct {
			Phase1Out  []byte
			SectorSize *uint64
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, &C1Error{Field: "Phase1Out", Err: err}
		}
		c, err := DecodeC1(w.Phase1Out)
		if err != nil {
			var ce *C1Error
			errors.As(err, &ce)
			return nil, &C1Error{Field: joinPath("Phase1Out", ce.Field), Err: ce.Err}
		}
		// The wrapper's sector size, when given, is that of the C1.
		if s, ok := ShapeByName(c.VanillaProofs.Shape); ok && w.SectorSize != nil && *w.SectorSize != s.SectorSize {
			return nil, &C1Error{Field: "SectorSize", Err: fmt.Errorf("%d bytes, but Phase1Out's vanilla proofs are %s (%d bytes)",
				*w.SectorSize, s.Name, s.SectorSize)}
		}
		return c, nil
	}
	var c C1Output
	if err := parseAll(b, c.parse); err != nil {
		return nil, err
	}
	return &c, nil
}

// isCommit2In reports whether b is a JSON object whose first member is one of
// Commit2In's (C1's own members are all snake_case).
func isCommit2In(b []byte) bool {
	p := &parser{b: b}
	if p.peek() != '{' {
		return false
	}
	p.i++
	if p.peek() != '"' {
		return false
	}
	key, err := p.str()
	return err == nil && (key == "SectorNum" || key == "Phase1Out" || key == "SectorSize")
}

func marshalTagged(tag string, v any) ([]byte, error) {
	k, err := json.Marshal(tag)
	if err != nil {
		return nil, err
	}
	inner, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return []byte("{" + string(k) + ":" + string(inner) + "}"), nil
}

// nonNil returns s, or an empty slice if s is nil, so that it encodes as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// parser is a single-pass JSON reader for the C1 schema. It keeps the path
// of the value being read so that errors can name it.
type parser struct {
	b    []byte
	i    int
	path []pathSeg
}

// pathSeg is a member name, or an array index when key is "".
type pathSeg struct {
	key string
	idx int
}

// parseAll parses b completely with f.
func parseAll(b []byte, f func(*parser) error) error {
	p := &parser{b: b}
	if err := f(p); err != nil {
		return err
	}
	p.ws()
	if p.i != len(p.b) {
		return p.fail(errors.New("trailing data after the JSON value"))
	}
	return nil
}

// fieldSpec is one member of a JSON object: parse reads its value.
type fieldSpec struct {
	name     string
	parse    func() error
	optional bool
}

func joinPath(prefix, rest string) string {
	switch {
	case rest == "":
		return prefix
	case prefix == "":
		return rest
	case strings.HasPrefix(rest, "["):
		return prefix + rest
	}
	return prefix + "." + rest
}

func (p *parser) pathString() string {
	s := ""
	for _, seg := range p.path {
		if seg.key == "" {
			s += "[" + strconv.Itoa(seg.idx) + "]"
		} else {
			s = joinPath(s, seg.key)
		}
	}
	return s
}

func (p *parser) fail(err error) error {
	return &C1Error{Field: p.pathString(), Err: err}
}

func (p *parser) failAt(seg string, err error) error {
	return &C1Error{Field: joinPath(p.pathString(), seg), Err: err}
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte (0 at the end).
func (p *parser) peek() byte {
	p.ws()
	if p.i == len(p.b) {
		return 0
	}
	return p.b[p.i]
}

func (p *parser) describe() string {
	if p.i >= len(p.b) {
		return "end of input"
	}
	end := p.i + 12
	if end > len(p.b) {
		end = len(p.b)
	}
	return fmt.Sprintf("%q at byte %d", p.b[p.i:end], p.i)
}

// members reads a container delimited by opening and closing, what naming
// it ("an object") in the error for a wrong opening: it calls member(i) for
// the i-th member, which must consume it, then wants ',' or closing. A
// wrong separator is reported at the container's path followed by sep(i).
func (p *parser) members(opening, closing byte, what string, sep func(i int) string, member func(i int) error) error {
	if p.peek() != opening {
		return p.fail(fmt.Errorf("want %s, found %s", what, p.describe()))
	}
	p.i++
	if p.peek() == closing {
		p.i++
		return nil
	}
	for i := 0; ; i++ {
		if err := member(i); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.i++
		case closing:
			p.i++
			return nil
		default:
			return p.failAt(sep(i), fmt.Errorf("want ',' or '%c', found %s", closing, p.describe()))
		}
	}
}

// within calls f with seg on the path.
func (p *parser) within(seg pathSeg, f func() error) error {
	p.path = append(p.path, seg)
	err := f()
	p.path = p.path[:len(p.path)-1]
	return err
}

// object reads an object, calling f for each key with the parser positioned
// at the key's value, which f must consume. The key is on the path during f.
func (p *parser) object(f func(key string) error) error {
	return p.members('{', '}', "an object", func(int) string { return "" }, func(int) error {
		if p.peek() != '"' {
			return p.fail(fmt.Errorf("want a member name, found %s", p.describe()))
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		if p.peek() != ':' {
			return p.failAt(key, fmt.Errorf("want ':', found %s", p.describe()))
		}
		p.i++
		return p.within(pathSeg{key: key}, func() error { return f(key) })
	})
}

// fields reads an object whose members are fs: each at most once, the
// non-optional ones required, no others.
func (p *parser) fields(fs []fieldSpec) error {
	var seen uint64
	err := p.object(func(key string) error {
		for j := range fs {
			if fs[j].name == key {
				if seen&(1<<j) != 0 {
					return p.fail(errors.New("duplicate field"))
				}
				seen |= 1 << j
				return fs[j].parse()
			}
		}
		return p.fail(ErrUnknownField)
	})
	if err != nil {
		return err
	}
	for j := range fs {
		if seen&(1<<j) == 0 && !fs[j].optional {
			return p.failAt(fs[j].name, ErrMissingField)
		}
	}
	return nil
}

// variant reads an externally tagged enum value {tag: value}; f reads the
// value. If allowed is non-nil the tag must be one of it.
func (p *parser) variant(allowed []string, f func(tag string) error) error {
	n := 0
	err := p.object(func(tag string) error {
		n++
		if n > 1 {
			return p.fail(errors.New("second variant; want exactly one"))
		}
		if tag == "" || (allowed != nil && !slices.Contains(allowed, tag)) {
			return p.fail(errors.New("unknown variant"))
		}
		return f(tag)
	})
	if err == nil && n == 0 {
		return p.fail(errors.New("no variant"))
	}
	return err
}

// array reads an array, calling f for each element with the parser
// positioned at it; the index is on the path during f.
func (p *parser) array(f func(i int) error) error {
	return p.members('[', ']', "an array", func(i int) string { return "[" + strconv.Itoa(i) + "]" }, func(i int) error {
		return p.within(pathSeg{idx: i}, func() error { return f(i) })
	})
}

// arrayParallel reads an array whose elements parse independently: it
// finds each element's extent by skipValue, calls alloc(n) with their
// number, then parses element i with f on a parser of its own over that
// extent (the same bytes and offsets, the path continued), the elements
// side by side on all cores. It reports whether the whole array was read;
// on false p.i is anywhere inside it and the caller reads the array again
// plainly for the error.
func (p *parser) arrayParallel(alloc func(n int), f func(q *parser, i int) error) bool {
	if p.peek() != '[' {
		return false
	}
	p.i++
	var ext [][2]int
	if p.peek() != ']' {
		for {
			p.ws()
			start := p.i
			if !p.skipValue() || p.i == start {
				return false
			}
			ext = append(ext, [2]int{start, p.i})
			c := p.peek()
			if c == ']' {
				break
			}
			if c != ',' {
				return false
			}
			p.i++
		}
	}
	p.i++
	alloc(len(ext))
	return parallel.FirstError(len(ext), func(i int) error {
		e := ext[i]
		q := &parser{b: p.b[:e[1]], i: e[0], path: append(slices.Clone(p.path), pathSeg{idx: i})}
		if err := f(q, i); err != nil {
			return err
		}
		if q.ws(); q.i != e[1] {
			return errors.New("element not read to its end")
		}
		return nil
	}) == nil
}

// skipValue moves p.i past the JSON value there, checking no more than the
// nesting of brackets and the extent of strings; false when the input ends
// inside it.
func (p *parser) skipValue() bool {
	b, i, depth := p.b, p.i, 0
	defer func() { p.i = i }()
	if i < len(b) && skipClass[b[i]] == 0 { // a number or literal: up to a delimiter
		for i < len(b) && !strings.ContainsRune(", \t\n\r]}", rune(b[i])) {
			i++
		}
		return true
	}
	for i < len(b) {
		for i < len(b) && skipClass[b[i]] == 0 {
			if i+8 <= len(b) && !anyBracketOrQuote(binary.LittleEndian.Uint64(b[i:])) {
				i += 8
			} else {
				i++
			}
		}
		if i == len(b) {
			break
		}
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
		default: // ']', '}'
			depth--
		}
		if i >= len(b) {
			break
		}
		i++
		if depth <= 0 {
			return depth == 0
		}
	}
	return false
}

// anyBracketOrQuote reports whether one of the 8 bytes of w is [ ] { } or ".
// Clearing bit 5 maps { and } onto [ and ] and no other byte onto them.
func anyBracketOrQuote(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) bool { return (v-ones)&^v&highs != 0 } // some byte of v is 0
	u := w &^ (0x20 * ones)
	return zero(u^('['*ones)) || zero(u^(']'*ones)) || zero(w^('"'*ones))
}

// skipClass marks the bytes that skipValue stops at inside a value.
var skipClass = [256]byte{'"': 1, '[': 1, ']': 1, '{': 1, '}': 1}

// parseList reads an array of T into *dst, a non-nil slice even when the
// array is empty; on an error *dst ends with the element being read.
func parseList[T any, PT interface {
	*T
	parse(*parser) error
}](p *parser, dst *[]T) error {
	*dst = []T{}
	return p.array(func(int) error {
		var zero T
		*dst = append(*dst, zero)
		return PT(&(*dst)[len(*dst)-1]).parse(p)
	})
}

// uint reads a JSON integer in [0, 2^bits).
func (p *parser) uint(bits int) (uint64, error) {
	p.ws()
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') || p.i == start ||
		(p.b[start] == '0' && p.i-start > 1) {
		p.i = start
		return 0, p.fail(fmt.Errorf("want an integer in [0, 2^%d), found %s", bits, p.describe()))
	}
	digits := p.b[start:p.i]
	var v uint64
	ok := true
	if len(digits) <= 19 { // below 10^19 < 2^64: no step overflows
		for _, c := range digits {
			v = 10*v + uint64(c-'0')
		}
	} else {
		for _, c := range digits {
			d := uint64(c - '0')
			if v > (math.MaxUint64-d)/10 {
				ok = false
				break
			}
			v = 10*v + d
		}
	}
	if !ok || bits < 64 && v>>bits != 0 {
		return 0, p.fail(fmt.Errorf("want an integer in [0, 2^%d): %s is out of range", bits, digits))
	}
	return v, nil
}

// str reads a JSON string.
func (p *parser) str() (string, error) {
	if p.peek() != '"' {
		return "", p.fail(fmt.Errorf("want a string, found %s", p.describe()))
	}
	start := p.i
	p.i++
	escaped := false
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '\\':
			escaped = true
			p.i += 2
			continue
		case c == '"':
			p.i++
			raw := p.b[start:p.i]
			if !escaped {
				if !utf8.Valid(raw) {
					return "", p.fail(errors.New("string is not UTF-8"))
				}
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", p.fail(err)
			}
			return s, nil
		case c < 0x20:
			return "", p.fail(errors.New("control character in string"))
		}
		p.i++
	}
	return "", p.fail(errors.New("unterminated string"))
}

func (p *parser) null() error {
	p.ws()
	if !bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		return p.fail(fmt.Errorf("want null, found %s", p.describe()))
	}
	p.i += 4
	return nil
}

// MaxC1Size is the largest C1 output, in bytes, that [DecodeC1] and
// [ReadC1] accept: 1 GiB. The largest a registered seal proof can produce,
// every hash byte written with three digits, is 552 MB (64 GiB NI-PoRep, 126
// partitions), 736 MB wrapped in a Commit2In; the interactive and Synthetic
// 64 GiB proofs' (10 partitions) are 43.8 and 58.4 MB (TestMaxC1Size
// measures them).
const MaxC1Size = 1 << 30

// ErrTooLarge is wrapped by the *C1Error of an input over MaxC1Size.
var ErrTooLarge = fmt.Errorf("larger than %d bytes (MaxC1Size)", MaxC1Size)

// ReadC1 reads the C1 output file at path: a regular file of at most
// MaxC1Size bytes. A FIFO or a device is refused without blocking, a file
// the file system reports larger is refused unread, and otherwise the size
// is judged by what reading returns (/proc files report 0); see
// regfile.Read. Errors wrap ErrTooLarge for a larger file.
func ReadC1(path string) ([]byte, error) {
	b, err := regfile.Read(path, MaxC1Size)
	if tl := (*regfile.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("porep: C1 output %s: %w", path, ErrTooLarge)
	}
	if err != nil {
		return nil, fmt.Errorf("porep: C1 output: %w", err)
	}
	return b, nil
}
