package porep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/specialfile"
	"github.com/sealc2/c2/porep/inputs"
)

// worstC1 is a C1 output of shape s as large as its JSON can be: every
// path, column and labeling proof at its full length, every hash byte
// written with three digits, every node at the top of its range.
func worstC1(s Shape) *C1Output {
	var d Domain
	for i := range d {
		d[i] = 255
	}
	doms := func(n int) []Domain { return slices.Repeat([]Domain{d}, n) }
	level := func(arity int) PathElement { return PathElement{Hashes: doms(arity - 1), Index: uint64(arity - 1)} }
	merkle := func() MerkleProof {
		m := MerkleProof{Kind: MerkleSingle, Root: d, Leaf: d}
		base := len(s.TreeArities())
		if s.TopArity > 0 {
			m.Kind, base = MerkleTop, base-2
			m.Top = []PathElement{level(s.TopArity)}
		}
		if s.SubArity > 0 {
			if m.Kind == MerkleSingle {
				m.Kind, base = MerkleSub, base-1
			}
			m.Sub = []PathElement{level(s.SubArity)}
		}
		m.Base = slices.Repeat([]PathElement{level(BaseArity)}, base)
		return m
	}
	column := func() ColumnProof {
		return ColumnProof{Column: C1Column{Index: uint32(s.Nodes() - 1), Rows: doms(s.Layers)}, InclusionProof: merkle()}
	}
	const labelParents = 37 // replica id, node, 6 base and 8 expander parents' labels, repeated (storage-proofs-porep)
	label := LabelingProof{Parents: doms(labelParents), LayerIndex: uint32(s.Layers), Node: s.Nodes() - 1}
	vp := VanillaProof{
		CommDProofs:    MerkleProof{Kind: MerkleSingle, Root: d, Leaf: d, Base: slices.Repeat([]PathElement{level(2)}, s.DataPathLen())},
		CommRLastProof: merkle(),
		ReplicaColumnProofs: ReplicaColumnProofs{
			CX:         column(),
			DRGParents: slices.Repeat([]ColumnProof{column()}, DRGParents),
			ExpParents: slices.Repeat([]ColumnProof{column()}, ExpParents),
		},
		LabelingProofs: slices.Repeat([]LabelingProof{label}, s.Layers),
		EncodingProof:  EncodingProof(label),
	}
	c := &C1Output{RegisteredProof: "StackedDrg64GiBV1_1_Feat_SyntheticPoRep", CommR: d, CommD: d, ReplicaID: d, Seed: d, Ticket: d}
	c.VanillaProofs = VanillaProofs{Shape: s.Name, Partitions: slices.Repeat([][]VanillaProof{slices.Repeat([]VanillaProof{vp}, s.Challenges)}, s.Partitions)}
	return c
}

// TestMaxC1Size measures the largest C1 output of each registered seal
// proof, plain and wrapped in a Commit2In (base64), and checks that
// MaxC1Size holds the largest with a quarter to spare. A C1's size is
// linear in its partitions: each size is measured with one and two
// partitions and extrapolated (NI-PoRep's 126 partitions of 64 GiB would be
// 0.7 GB to marshal).
func TestMaxC1Size(t *testing.T) {
	measure := func(c *C1Output, s Shape) (plain, wrapped int) {
		raw, err := json.Marshal(c)
		require.NoError(t, err)
		w, err := json.Marshal(Commit2In{SectorNum: 1<<64 - 1, Phase1Out: raw, SectorSize: s.SectorSize})
		require.NoError(t, err)
		return len(raw), len(w)
	}
	var largest int
	for p := inputs.Proof(0); ; p++ {
		is, err := p.Shape()
		if err != nil {
			require.ErrorIs(t, err, inputs.ErrUnknownProof)
			break
		}
		s, ok := ShapeBySize(is.SectorSize)
		require.True(t, ok, p)
		if testing.Short() && s.SectorSize > 1<<30 {
			continue
		}
		c := worstC1(s)
		c.RegisteredProof = p.String()
		c.VanillaProofs.Partitions = c.VanillaProofs.Partitions[:1]
		p1, w1 := measure(c, s)
		c.VanillaProofs.Partitions = append(c.VanillaProofs.Partitions, c.VanillaProofs.Partitions[0])
		p2, w2 := measure(c, s)
		n := is.Partitions
		plain, wrapped := p1+(n-1)*(p2-p1), w1+(n-1)*(w2-w1)+4 // base64 rounds up to 4 bytes
		t.Logf("%v: %d partitions, worst-case C1 %d bytes, as Commit2In %d bytes", p, n, plain, wrapped)
		largest = max(largest, wrapped)
	}
	require.LessOrEqual(t, largest+largest/4, MaxC1Size)
}

// TestDecodeC1Cap: inputs over MaxC1Size are refused before parsing, and
// ReadC1 reads at most MaxC1Size+1 bytes whatever the file holds.
func TestDecodeC1Cap(t *testing.T) {
	_, err := DecodeC1(make([]byte, MaxC1Size+1))
	var ce *C1Error
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrTooLarge)

	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxC1Size+1)) // sparse
	require.NoError(t, f.Close())
	_, err = ReadC1(big)
	require.ErrorIs(t, err, ErrTooLarge)
}

// TestReadC1SpecialFiles: only regular files are read; a FIFO is refused
// at once instead of blocking for a writer, and /proc files are read for
// what they hold (size 0 on stat).
func TestReadC1SpecialFiles(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadC1(dir)
	require.ErrorContains(t, err, "a directory")

	if runtime.GOOS == "linux" {
		fifo := filepath.Join(dir, "fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		specialfile.RequireRefused(t, "ReadC1 FIFO", "a FIFO", func() error { _, err := ReadC1(fifo); return err })
		_, err = ReadC1("/dev/zero")
		require.ErrorContains(t, err, "not a regular file")
		b, err := ReadC1("/proc/self/status")
		require.NoError(t, err)
		require.NotEmpty(t, b)
	}
	raw, err := ReadC1(c1VectorPath("porep-2k", "c1.json"))
	require.NoError(t, err)
	_, err = DecodeC1(raw)
	require.NoError(t, err)
}
