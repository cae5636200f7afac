package graph

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20"

	"github.com/sealc2/c2/internal/refgen"
)

func porepIDByte(b byte) [32]byte {
	var id [32]byte
	id[0] = b
	return id
}

// Published ChaCha test vectors (draft-strombergson-chacha-test-vectors, TC1:
// all-zero 256-bit key and 64-bit IV): the first two 64-byte blocks at 8 and
// 20 rounds.
func TestChaChaKnownAnswers(t *testing.T) {
	cases := []struct {
		doubleRounds int
		want         string
	}{
		{4, "3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e" +
			"984ce172b9216f419f445367456d5619314a42a3da86b001387bfdb80e0cfe42" +
			"d2aefa0deaa5c151bf0adb6c01f2a5adc0fd581259f9a2aadcf20f8fd566a26b" +
			"5032ec38bbc5da98ee0c6f568b872a65a08abf251deb21bb4b56e5d8821e68aa"},
		{10, "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7" +
			"da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"},
	}
	for _, c := range cases {
		want, err := hex.DecodeString(c.want)
		require.NoError(t, err)
		var key [32]byte
		s := newChaCha(&key, c.doubleRounds)
		got := make([]byte, 0, len(want))
		for len(got) < len(want) {
			got = append(got, byte(0), 0, 0, 0)
			w := s.next32()
			got[len(got)-4], got[len(got)-3], got[len(got)-2], got[len(got)-1] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
		}
		assert.Equal(t, want, got, "double rounds %d", c.doubleRounds)
	}
}

// With a zero nonce and fewer than 2^32 blocks the RFC 8439 layout (32-bit
// counter, 96-bit nonce) equals the original one, so x/crypto's ChaCha20 must
// produce our 20-round stream, read as little-endian u64s, across blocks.
func TestChaCha20MatchesXCrypto(t *testing.T) {
	var key [32]byte
	_, err := rand.Read(key[:])
	require.NoError(t, err)
	c, err := chacha20.NewUnauthenticatedCipher(key[:], make([]byte, chacha20.NonceSize))
	require.NoError(t, err)
	ref := make([]byte, 64*5)
	c.XORKeyStream(ref, ref)
	s := newChaCha(&key, 10)
	for i := 0; i < len(ref); i += 8 {
		var w uint64
		for j := 7; j >= 0; j-- {
			w = w<<8 | uint64(ref[i+j])
		}
		require.Equal(t, w, s.next64(), "word %d", i/8)
	}
}

// Properties the reference's own feistel.rs tests assert: powers of four are
// bijections without cycle walking, and cycle-walked permute is inverted by
// invert on awkward sizes.
func TestFeistelPermutation(t *testing.T) {
	keys := [4]uint64{1, 2, 3, 4}
	for _, c := range []struct {
		sizes             []uint64
		forward, backward func(f *feistel, x uint64) uint64
	}{
		{[]uint64{4, 16, 64, 256}, (*feistel).encode, (*feistel).decode},
		{[]uint64{5, 6, 8, 12, 17, 1 << 13}, (*feistel).permute, (*feistel).invert},
	} {
		for _, n := range c.sizes {
			f := newFeistel(n, keys)
			seen := make(map[uint64]bool)
			for i := range n {
				p := c.forward(&f, i)
				require.Less(t, p, n)
				require.Equal(t, i, c.backward(&f, p))
				seen[p] = true
			}
			require.Len(t, seen, int(n))
		}
	}
}

func TestBaseParentsStructure(t *testing.T) {
	for _, v := range []APIVersion{V1_0_0, V1_1_0, V1_2_0} {
		for _, n := range []uint64{4, 16, 256, 2048} {
			g, err := New(n, porepIDByte(byte(v)*5), v)
			require.NoError(t, err)
			var p [BaseDegree]uint32
			for node := range n {
				require.NoError(t, g.baseParentsChecked(node, p[:]))
				if node < 2 {
					require.Equal(t, [BaseDegree]uint32{}, p)
					continue
				}
				for _, q := range p {
					require.Less(t, uint64(q), node, "parents precede the node")
				}
				pred := 0
				if v == V1_0_0 {
					pred = BaseDegree - 1
				}
				require.Equal(t, uint32(node-1), p[pred])
			}
		}
	}
}

func TestErrors(t *testing.T) {
	_, err := New(1, [32]byte{}, V1_1_0)
	require.ErrorIs(t, err, ErrNodes)
	_, err = New(1<<32, [32]byte{}, V1_1_0)
	require.ErrorIs(t, err, ErrNodes)
	_, err = New(64, [32]byte{}, APIVersion(7))
	require.ErrorIs(t, err, ErrAPIVersion)
	g, err := New(64, [32]byte{}, V1_1_0)
	require.NoError(t, err)
	var ne *NodeError
	require.ErrorAs(t, g.Parents(64, make([]uint32, Degree)), &ne)
	var de *DstError
	require.ErrorAs(t, g.Parents(3, make([]uint32, Degree-1)), &de)
	require.ErrorAs(t, g.baseParentsChecked(3, make([]uint32, BaseDegree-1)), &de)
	require.ErrorAs(t, g.expanderParentsChecked(3, make([]uint32, ExpansionDegree-1)), &de)
}

// The reference's test_high_parent_bits: with 2^31 nodes (64 GiB), expander
// parents must reach 2^29 and above within the first three nodes, which a
// 32-bit truncation of node*8+i images would make impossible.
func TestExpanderHighParentBits(t *testing.T) {
	g, err := New(1<<31, porepIDByte(5), V1_2_0)
	require.NoError(t, err)
	var p [ExpansionDegree]uint32
	for node := range uint64(3) {
		require.NoError(t, g.expanderParentsChecked(node, p[:]))
		for _, q := range p {
			if q >= 1<<29 {
				return
			}
		}
	}
	t.Fatal("no expander parent >= 2^29 in the first 3 nodes")
}

// The reference's test_graph_distribution_pathology: V1_0_0 graphs never have
// expander parents in the upper half of a 32/64 GiB layer; V1_1_0 ones do.
func TestExpanderPathology(t *testing.T) {
	cases := []struct {
		id    byte
		nodes uint64
		v     APIVersion
	}{
		{3, 1 << 30, V1_0_0}, {4, 1 << 31, V1_0_0},
		{8, 1 << 30, V1_1_0}, {9, 1 << 31, V1_1_0},
		{8, 1 << 30, V1_2_0}, {9, 1 << 31, V1_2_0},
	}
	for _, c := range cases {
		g, err := New(c.nodes, porepIDByte(c.id), c.v)
		require.NoError(t, err)
		found := false
		var p [ExpansionDegree]uint32
		for node := uint64(0); node < 1000 && !found; node++ {
			require.NoError(t, g.expanderParentsChecked(node, p[:]))
			for _, q := range p {
				found = found || uint64(q) >= c.nodes/2
			}
		}
		assert.Equal(t, c.v != V1_0_0, found, "porep id %d, nodes %d, %v", c.id, c.nodes, c.v)
	}
}

// ---- refgen vectors: parents carried by real C1 vanilla proofs ----

type pathElem struct {
	Hashes [][32]byte `json:"hashes"`
	Index  uint64     `json:"index"`
}

type pathJSON struct {
	Path []pathElem `json:"path"`
}

type merkleJSON struct {
	Data struct {
		Single *struct {
			Path pathJSON `json:"path"`
		} `json:"Single"`
		Sub *struct {
			Base pathJSON `json:"base_proof"`
			Sub  pathJSON `json:"sub_proof"`
		} `json:"Sub"`
		Top *struct {
			Base pathJSON `json:"base_proof"`
			Sub  pathJSON `json:"sub_proof"`
			Top  pathJSON `json:"top_proof"`
		} `json:"Top"`
	} `json:"data"`
}

// leafIndex reads the path indices from the leaf upward as digits in the
// arity of each level.
func (m *merkleJSON) leafIndex(t *testing.T) uint64 {
	var levels []pathElem
	switch d := m.Data; {
	case d.Single != nil:
		levels = d.Single.Path.Path
	case d.Sub != nil:
		levels = append(append(levels, d.Sub.Base.Path...), d.Sub.Sub.Path...)
	case d.Top != nil:
		levels = append(append(append(levels, d.Top.Base.Path...), d.Top.Sub.Path...), d.Top.Top.Path...)
	default:
		t.Fatal("merkle proof with no data")
	}
	idx, scale := uint64(0), uint64(1)
	for _, l := range levels {
		arity := uint64(len(l.Hashes) + 1)
		require.Less(t, l.Index, arity)
		idx += l.Index * scale
		scale *= arity
	}
	return idx
}

type columnJSON struct {
	Column struct {
		Index uint64 `json:"index"`
	} `json:"column"`
	InclusionProof merkleJSON `json:"inclusion_proof"`
}

type c1JSON struct {
	RegisteredProof string                     `json:"registered_proof"`
	VanillaProofs   map[string][][]vanillaJSON `json:"vanilla_proofs"`
}

type vanillaJSON struct {
	CommDProofs merkleJSON `json:"comm_d_proofs"`
	Columns     struct {
		CX  columnJSON   `json:"c_x"`
		DRG []columnJSON `json:"drg_parents"`
		Exp []columnJSON `json:"exp_parents"`
	} `json:"replica_column_proofs"`
	Labeling []struct {
		Node uint64 `json:"node"`
	} `json:"labeling_proofs"`
}

func TestParentsMatchRefgenC1(t *testing.T) {
	for _, c := range []struct {
		dir   string
		nodes uint64
		id    byte
	}{{"porep-2k", 1 << 6, 5}, {"porep-8m", 1 << 18, 6}} {
		t.Run(c.dir, func(t *testing.T) {
			var c1 c1JSON
			refgen.ReadJSONIfPresent(t, &c1, c.dir, "c1.json")
			require.Len(t, c1.VanillaProofs, 1)
			g, err := New(c.nodes, porepIDByte(c.id), V1_1_0)
			require.NoError(t, err)
			checked := 0
			for _, part := range c1.VanillaProofs {
				for _, proofs := range part {
					for _, v := range proofs {
						require.NotEmpty(t, v.Labeling)
						ch := v.Labeling[0].Node
						require.Equal(t, ch, v.Columns.CX.Column.Index)
						require.Equal(t, ch, v.Columns.CX.InclusionProof.leafIndex(t))
						require.Equal(t, ch, v.CommDProofs.leafIndex(t))
						require.Len(t, v.Columns.DRG, BaseDegree)
						require.Len(t, v.Columns.Exp, ExpansionDegree)
						var want [Degree]uint32
						for i, col := range append(v.Columns.DRG, v.Columns.Exp...) {
							require.Equal(t, col.Column.Index, col.InclusionProof.leafIndex(t))
							want[i] = uint32(col.Column.Index)
						}
						var got [Degree]uint32
						require.NoError(t, g.Parents(ch, got[:]))
						require.Equal(t, want, got, "challenge %d", ch)
						checked++
					}
				}
			}
			require.Positive(t, checked)
		})
	}
}

func BenchmarkParents32GiB(b *testing.B) {
	g, err := New(1<<30, porepIDByte(8), V1_1_0)
	require.NoError(b, err)
	var p [Degree]uint32
	node := uint64(12345)
	for b.Loop() {
		_ = g.Parents(node, p[:])
		node = (node*2654435761 + 1) % (1 << 30)
	}
}

func newChaCha(key *[32]byte, doubleRounds int) *chachaStream {
	s := &chachaStream{doubleRounds: doubleRounds, pos: 16}
	for i := range s.key {
		s.key[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	return s
}

// decode inverts encode.
func (f *feistel) decode(v uint64) uint64 {
	left := (v >> f.halfBits) & f.rightMask
	right := v & f.rightMask
	for i := feistelRounds - 1; i >= 0; i-- {
		left, right = right^f.round(left, f.keys[i]), left
	}
	return left<<f.halfBits | right
}

// invert is the inverse of permute.
func (f *feistel) invert(v uint64) uint64 { return f.walk(v, f.decode) }

// baseParentsChecked writes the BaseDegree bucket-graph parents of node into
// dst[:BaseDegree]. Nodes 0 and 1 have all parents 0. Otherwise the immediate
// predecessor node-1 is parent 0 (V1_1_0, V1_2_0) or parent 5 (V1_0_0).
func (g *Graph) baseParentsChecked(node uint64, dst []uint32) error {
	if err := g.check(node, dst, BaseDegree); err != nil {
		return err
	}
	g.baseParents(uint32(node), dst[:BaseDegree])
	return nil
}

// expanderParentsChecked writes the ExpansionDegree expander parents of
// node into dst[:ExpansionDegree].
func (g *Graph) expanderParentsChecked(node uint64, dst []uint32) error {
	if err := g.check(node, dst, ExpansionDegree); err != nil {
		return err
	}
	g.expanderParents(node, dst[:ExpansionDegree])
	return nil
}
