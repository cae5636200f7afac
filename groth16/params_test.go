package groth16

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/specialfile"
	"github.com/sealc2/c2/internal/synth"
)

// keyShape gives the number of points in each vector of a test key.
type keyShape struct{ ic, h, l, a, b int }

func randG1s(r *rand.Rand, n int) []bls.G1Affine {
	if n == 0 {
		return []bls.G1Affine{}
	}
	_, _, g1, _ := bls.Generators()
	return bls.BatchScalarMultiplicationG1(&g1, synth.RandScalars(r, n))
}

func randG2s(r *rand.Rand, n int) []bls.G2Affine {
	if n == 0 {
		return []bls.G2Affine{}
	}
	_, _, _, g2 := bls.Generators()
	return bls.BatchScalarMultiplicationG2(&g2, synth.RandScalars(r, n))
}

// randomKey builds a key of random subgroup points (not a key for any
// circuit). If withInfinity, H and L each hold one point at infinity.
func randomKey(seed uint64, s keyShape, withInfinity bool) *ProvingKey {
	r := rand.New(rand.NewPCG(seed, 1))
	g1 := randG1s(r, 3)
	g2 := randG2s(r, 3)
	pk := &ProvingKey{
		VK: VerifyingKey{
			AlphaG1: g1[0], BetaG1: g1[1], BetaG2: g2[0], GammaG2: g2[1], DeltaG1: g1[2], DeltaG2: g2[2],
			IC: randG1s(r, s.ic),
		},
		H:   randG1s(r, s.h),
		L:   randG1s(r, s.l),
		A:   randG1s(r, s.a),
		BG1: randG1s(r, s.b),
		BG2: randG2s(r, s.b),
	}
	if withInfinity {
		pk.H[len(pk.H)/2] = bls.G1Affine{}
		pk.L[0] = bls.G1Affine{}
	}
	return pk
}

// item is one count word or point of a file, as the format description
// lays it out (independently of params.go).
type item struct {
	section string
	off     int64
	size    int64
}

func fileItems(s keyShape, params bool) []item {
	var items []item
	off := int64(0)
	add := func(sec string, size int64) {
		items = append(items, item{sec, off, size})
		off += size
	}
	for _, size := range []int64{96, 96, 192, 192, 96, 192} {
		add("vk", size)
	}
	vec := func(sec string, n int, size int64) {
		add(sec, 4)
		for range n {
			add(sec, size)
		}
	}
	vec("vk", s.ic, 96)
	if params {
		vec("h", s.h, 96)
		vec("l", s.l, 96)
		vec("a", s.a, 96)
		vec("b_g1", s.b, 96)
		vec("b_g2", s.b, 192)
	}
	return items
}

// encode returns what k.WriteTo writes, checking the count it returns.
func encode(t testing.TB, k io.WriterTo) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := k.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	return buf.Bytes()
}

func requireFormatError(t *testing.T, err error, section string, off int64, target error) *FormatError {
	t.Helper()
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, section, fe.Section, "%v", err)
	require.Equal(t, off, fe.Offset, "%v", err)
	require.ErrorIs(t, err, target)
	return fe
}

var smallShape = keyShape{ic: 3, h: 7, l: 5, a: 4, b: 3}

// TestParamsLayout checks the writer against the layout of bellperson's
// Parameters::write, reading the bytes with gnark-crypto's own decoder.
func TestParamsLayout(t *testing.T) {
	pk := randomKey(1, smallShape, true)
	b := encode(t, pk)
	items := fileItems(smallShape, true)
	last := items[len(items)-1]
	require.Equal(t, last.off+last.size, int64(len(b)))
	require.Equal(t, 868+96*3+5*4+96*(7+5+4+3)+192*3, len(b))

	// Count words hold the vector lengths, big-endian.
	counts := map[string]uint32{"vk": 3, "h": 7, "l": 5, "a": 4, "b_g1": 3, "b_g2": 3}
	g1s := map[string][]bls.G1Affine{"vk": pk.VK.IC, "h": pk.H, "l": pk.L, "a": pk.A, "b_g1": pk.BG1}
	idx := map[string]int{}
	for i, it := range items {
		switch {
		case it.size == 4:
			assert.Equal(t, counts[it.section], binary.BigEndian.Uint32(b[it.off:]), "count of %s", it.section)
		case i < 6:
			// vk fixed points, checked below
		case it.section == "b_g2":
			var p bls.G2Affine
			_, err := p.SetBytes(b[it.off : it.off+it.size])
			require.NoError(t, err)
			assert.True(t, p.Equal(&pk.BG2[idx["b_g2"]]))
			idx["b_g2"]++
		default:
			want := g1s[it.section][idx[it.section]]
			idx[it.section]++
			if want.IsInfinity() {
				inf := make([]byte, 96)
				inf[0] = 0x40
				assert.Equal(t, inf, b[it.off:it.off+it.size], "infinity encoding")
				continue
			}
			var p bls.G1Affine
			_, err := p.SetBytes(b[it.off : it.off+it.size])
			require.NoError(t, err)
			assert.True(t, p.Equal(&want))
		}
	}
	var a, bb, d bls.G1Affine
	var beta, gamma, delta bls.G2Affine
	for _, x := range []struct {
		off int
		dst interface{ SetBytes([]byte) (int, error) }
	}{{0, &a}, {96, &bb}, {192, &beta}, {384, &gamma}, {576, &d}, {672, &delta}} {
		_, err := x.dst.SetBytes(b[x.off:])
		require.NoError(t, err)
	}
	assert.True(t, a.Equal(&pk.VK.AlphaG1))
	assert.True(t, bb.Equal(&pk.VK.BetaG1))
	assert.True(t, beta.Equal(&pk.VK.BetaG2))
	assert.True(t, gamma.Equal(&pk.VK.GammaG2))
	assert.True(t, d.Equal(&pk.VK.DeltaG1))
	assert.True(t, delta.Equal(&pk.VK.DeltaG2))

	// ScanParams reports the same offsets.
	lay, err := ScanParams(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	assert.Equal(t, Section{Offset: 868, Len: 3, PointSize: 96}, lay.IC)
	assert.Equal(t, Section{Offset: lay.IC.End() + 4, Len: 7, PointSize: 96}, lay.H)
	assert.Equal(t, Section{Offset: lay.H.End() + 4, Len: 5, PointSize: 96}, lay.L)
	assert.Equal(t, Section{Offset: lay.L.End() + 4, Len: 4, PointSize: 96}, lay.A)
	assert.Equal(t, Section{Offset: lay.A.End() + 4, Len: 3, PointSize: 96}, lay.BG1)
	assert.Equal(t, Section{Offset: lay.BG1.End() + 4, Len: 3, PointSize: 192}, lay.BG2)
	assert.Equal(t, int64(len(b)), lay.Size)
}

func TestParamsRoundTrip(t *testing.T) {
	for _, inf := range []bool{false, true} {
		pk := randomKey(2, smallShape, inf)
		b := encode(t, pk)
		for _, opts := range [][]ReadOption{nil, {TrustedFile()}} {
			got, err := decodeParamsOpts(b, opts...)
			require.NoError(t, err)
			require.Equal(t, pk, got)
			require.Equal(t, b, encode(t, got))
		}
		path := filepath.Join(t.TempDir(), "k.params")
		require.NoError(t, os.WriteFile(path, b, 0o600))
		got, err := ReadParams(path)
		require.NoError(t, err)
		require.Equal(t, pk, got)
		require.Equal(t, b, encode(t, got))
	}
}

func TestParamsEmptyVectors(t *testing.T) {
	pk := randomKey(3, keyShape{}, false)
	b := encode(t, pk)
	require.Len(t, b, 868+5*4)
	got, err := decodeParamsOpts(b)
	require.NoError(t, err)
	require.Equal(t, pk, got)
}

func TestVerifyingKeyRoundTrip(t *testing.T) {
	vk := randomKey(4, smallShape, false).VK
	b := encode(t, &vk)
	require.Len(t, b, 868+96*3)
	got, err := DecodeVerifyingKey(b)
	require.NoError(t, err)
	require.Equal(t, &vk, got)
	require.Equal(t, b, encode(t, got))

	// A .params file starts with its .vk.
	pk := randomKey(4, smallShape, false)
	require.Equal(t, b, encode(t, pk)[:len(b)])

	path := filepath.Join(t.TempDir(), "k.vk")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	got, err = ReadVerifyingKey(path)
	require.NoError(t, err)
	require.Equal(t, &vk, got)
}

// TestParamsTruncated cuts a file at every byte and expects the first
// item that no longer fits to be reported.
func TestParamsTruncated(t *testing.T) {
	for _, params := range []bool{true, false} {
		pk := randomKey(5, smallShape, false)
		var b []byte
		if params {
			b = encode(t, pk)
		} else {
			b = encode(t, &pk.VK)
		}
		items := fileItems(smallShape, params)
		for n := range len(b) {
			var want item
			for _, it := range items {
				if it.off+it.size > int64(n) {
					want = it
					break
				}
			}
			var err error
			if params {
				_, err = decodeParamsOpts(b[:n])
			} else {
				_, err = DecodeVerifyingKey(b[:n])
			}
			requireFormatError(t, err, want.section, want.off, ErrTruncated)
		}
	}
}

func TestParamsTrailingData(t *testing.T) {
	pk := randomKey(6, smallShape, false)
	for _, extra := range []int{1, 4, 96, 192} {
		b := encode(t, pk)
		n := int64(len(b))
		b = append(b, make([]byte, extra)...)
		_, err := decodeParamsOpts(b)
		requireFormatError(t, err, "trailer", n, ErrTrailingData)

		v := encode(t, &pk.VK)
		n = int64(len(v))
		v = append(v, make([]byte, extra)...)
		_, err = DecodeVerifyingKey(v)
		requireFormatError(t, err, "trailer", n, ErrTrailingData)
	}
}

// TestParamsHugeCount: a count that claims more points than the file
// holds is rejected before anything is allocated for the points.
func TestParamsHugeCount(t *testing.T) {
	pk := randomKey(7, smallShape, false)
	good := encode(t, pk)
	items := fileItems(smallShape, true)
	for _, it := range items {
		if it.size != 4 {
			continue
		}
		for _, count := range []uint32{0xffffffff, 0x7fffffff, 1 << 24} {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[it.off:], count)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := decodeParamsOpts(b)
			runtime.ReadMemStats(&after)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, it.section, fe.Section)
			require.ErrorIs(t, err, ErrTruncated)
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "allocated for a bogus count")
		}
	}
}

// curveField is fp.Element or bls.E2, as notInSubgroup needs it.
type curveField[F any] interface {
	*F
	Square(x *F) *F
	Mul(x, y *F) *F
	Add(x, y *F) *F
	Legendre() int
	Sqrt(x *F) *F
}

// notInSubgroup returns a point on the curve y² = x³ + b outside the
// prime-order subgroup: a random x (setX) lifted to the curve without
// clearing the cofactor.
func notInSubgroup[P, F any, PP interface {
	*P
	IsOnCurve() bool
	IsInSubGroup() bool
}, PF curveField[F]](xy func(*P) (x, y *F), b *F, setX func(*F)) P {
	for {
		var p P
		x, y := xy(&p)
		setX(x)
		var y2 F
		PF(&y2).Square(x)
		PF(&y2).Mul(&y2, x)
		PF(&y2).Add(&y2, b)
		if PF(&y2).Legendre() != 1 {
			continue
		}
		PF(y).Sqrt(&y2)
		if PP(&p).IsOnCurve() && !PP(&p).IsInSubGroup() {
			return p
		}
	}
}

func notInSubgroupG1(r *rand.Rand) bls.G1Affine {
	var b fp.Element
	b.SetUint64(4)
	return notInSubgroup[bls.G1Affine, fp.Element](func(p *bls.G1Affine) (x, y *fp.Element) { return &p.X, &p.Y },
		&b, func(x *fp.Element) { x.SetUint64(r.Uint64()) })
}

func notInSubgroupG2(r *rand.Rand) bls.G2Affine {
	var b bls.E2
	b.A0.SetUint64(4)
	b.A1.SetUint64(4)
	return notInSubgroup[bls.G2Affine, bls.E2](func(p *bls.G2Affine) (x, y *bls.E2) { return &p.X, &p.Y },
		&b, func(x *bls.E2) { x.A0.SetUint64(r.Uint64()); x.A1.SetUint64(r.Uint64()) })
}

// corruption rewrites the point at b[off:off+size].
type corruption struct {
	name    string
	apply   func(r *rand.Rand, p []byte)
	err     error
	trusted bool // also rejected by TrustedFile
}

var corruptions = []corruption{
	{"compressed flag", func(_ *rand.Rand, p []byte) { p[0] |= 0x80 }, ErrInvalidEncoding, true},
	{"sort flag", func(_ *rand.Rand, p []byte) { p[0] |= 0x20 }, ErrInvalidEncoding, true},
	{"all flags", func(_ *rand.Rand, p []byte) { p[0] |= 0xe0 }, ErrInvalidEncoding, true},
	{"infinity flag with data", func(_ *rand.Rand, p []byte) { p[0] = 0x40 | p[0]&0x1f; p[47] |= 1 }, ErrInvalidEncoding, true},
	{"infinity flag, last byte set", func(_ *rand.Rand, p []byte) { clear(p); p[0] = 0x40; p[len(p)-1] = 1 }, ErrInvalidEncoding, true},
	{"zero without flag", func(_ *rand.Rand, p []byte) { clear(p) }, ErrInvalidEncoding, true},
	{"x not canonical", func(_ *rand.Rand, p []byte) { p[0] = 0x1f }, ErrInvalidEncoding, true},
	{"y equals p", func(_ *rand.Rand, p []byte) {
		m := fp.Modulus().FillBytes(make([]byte, 48))
		copy(p[len(p)-48:], m)
	}, ErrInvalidEncoding, true},
	{"off curve", func(_ *rand.Rand, p []byte) { p[len(p)-1] ^= 1 }, ErrNotOnCurve, true},
	{"not in subgroup", func(r *rand.Rand, p []byte) {
		if len(p) == 96 {
			q := notInSubgroupG1(r)
			b := q.RawBytes()
			copy(p, b[:])
		} else {
			q := notInSubgroupG2(r)
			b := q.RawBytes()
			copy(p, b[:])
		}
	}, ErrNotInSubgroup, false},
}

func TestParamsCorruptPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	pk := randomKey(8, smallShape, false)
	good := encode(t, pk)
	goodVK := encode(t, &pk.VK)
	items := fileItems(smallShape, true)
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			for _, it := range items {
				if it.size == 4 {
					continue
				}
				b := bytes.Clone(good)
				c.apply(r, b[it.off:it.off+it.size])
				_, err := decodeParamsOpts(b)
				requireFormatError(t, err, it.section, it.off, c.err)
				_, err = decodeParamsOpts(b, TrustedFile())
				if c.trusted || it.section == "vk" { // the vk is checked in full in both modes
					requireFormatError(t, err, it.section, it.off, c.err)
				} else {
					require.NoError(t, err)
				}
				if it.off+it.size <= int64(len(goodVK)) {
					v := bytes.Clone(goodVK)
					c.apply(r, v[it.off:it.off+it.size])
					_, err := DecodeVerifyingKey(v)
					requireFormatError(t, err, it.section, it.off, c.err)
				}
			}
		})
	}
}

// TestParamsSubgroupLocated: in sections large enough for gnark's
// probabilistic batch check, the bad point is still located.
func TestParamsSubgroupLocated(t *testing.T) {
	shape := keyShape{ic: 2, h: 150, l: 2, a: 2, b: 170}
	r := rand.New(rand.NewPCG(9, 9))
	pk := randomKey(9, shape, false)
	good := encode(t, pk)
	lay, err := ScanParams(bytes.NewReader(good), int64(len(good)))
	require.NoError(t, err)
	for _, tc := range []struct {
		section string
		sec     Section
		i       int
	}{{"h", lay.H, 0}, {"h", lay.H, 97}, {"h", lay.H, 149}, {"b_g1", lay.BG1, 123}, {"b_g2", lay.BG2, 0}, {"b_g2", lay.BG2, 161}} {
		b := bytes.Clone(good)
		off := tc.sec.Offset + int64(tc.i*tc.sec.PointSize)
		corruptions[len(corruptions)-1].apply(r, b[off:off+int64(tc.sec.PointSize)])
		_, err := decodeParamsOpts(b)
		requireFormatError(t, err, tc.section, off, ErrNotInSubgroup)
		_, err = decodeParamsOpts(b, TrustedFile())
		require.NoError(t, err)
	}
}

func TestReadParamsErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadParams(filepath.Join(dir, "missing.params"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = ReadVerifyingKey(filepath.Join(dir, "missing.vk"))
	require.ErrorIs(t, err, fs.ErrNotExist)

	empty := filepath.Join(dir, "empty.params")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	_, err = ReadParams(empty)
	fe := requireFormatError(t, err, "vk", 0, ErrTruncated)
	require.Equal(t, empty, fe.File)
	require.Contains(t, err.Error(), empty)

	pk := randomKey(10, smallShape, false)
	b := encode(t, pk)
	lay, err := ScanParams(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	b[lay.L.Offset+96] |= 0x80
	bad := filepath.Join(dir, "bad.params")
	require.NoError(t, os.WriteFile(bad, b, 0o600))
	_, err = ReadParams(bad, TrustedFile())
	fe = requireFormatError(t, err, "l", lay.L.Offset+96, ErrInvalidEncoding)
	require.Equal(t, bad, fe.File)
	require.Contains(t, err.Error(), "section l at offset")
}

type failWriter struct{ n, limit int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		k := w.limit - w.n
		w.n = w.limit
		return k, errors.New("disk full")
	}
	w.n += len(p)
	return len(p), nil
}

func TestWriteToError(t *testing.T) {
	pk := randomKey(11, smallShape, false)
	n, err := pk.WriteTo(&failWriter{limit: 100})
	require.EqualError(t, err, "disk full")
	require.Equal(t, int64(100), n)
	n, err = pk.VK.WriteTo(&failWriter{limit: 7})
	require.EqualError(t, err, "disk full")
	require.Equal(t, int64(7), n)
}

// TestParamsBellperson reads the parameter and verifying-key files that
// bellperson wrote (testdata/refgen, issue 3) and writes them back.
func TestParamsBellperson(t *testing.T) {
	var files []string
	root := filepath.Join("..", "testdata", "refgen")
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "target" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".params") || strings.HasSuffix(path, ".vk") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skip("no bellperson .params/.vk files under testdata/refgen yet")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			var buf bytes.Buffer
			if strings.HasSuffix(path, ".params") {
				pk, err := ReadParams(path)
				require.NoError(t, err)
				_, err = pk.WriteTo(&buf)
				require.NoError(t, err)
			} else {
				vk, err := ReadVerifyingKey(path)
				require.NoError(t, err)
				_, err = vk.WriteTo(&buf)
				require.NoError(t, err)
			}
			require.Equal(t, want, buf.Bytes())
		})
	}
}

// benchKey returns the benchmarks' key of 2^16 points a section and its
// encoding.
func benchKey(b *testing.B) (*ProvingKey, []byte) {
	const n = 1 << 16
	pk := randomKey(12, keyShape{ic: 8, h: n, l: n, a: n, b: n}, false)
	return pk, encode(b, pk)
}

func BenchmarkReadParams(b *testing.B) {
	_, enc := benchKey(b)
	buf := bytes.NewBuffer(enc)
	path := filepath.Join(b.TempDir(), "bench.params")
	require.NoError(b, os.WriteFile(path, buf.Bytes(), 0o600))
	for _, bc := range []struct {
		name string
		opts []ReadOption
	}{{"checked", nil}, {"trusted", []ReadOption{TrustedFile()}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				if _, err := ReadParams(path, bc.opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWriteParams(b *testing.B) {
	pk, enc := benchKey(b)
	var buf bytes.Buffer
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		buf.Reset()
		if _, err := pk.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScanParamsFile: the layout can be read from an open file without
// decoding, for loaders that stream sections.
func TestScanParamsFile(t *testing.T) {
	pk := randomKey(13, smallShape, false)
	b := encode(t, pk)
	path := filepath.Join(t.TempDir(), "k.params")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	want, err := ScanParams(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	got, err := ScanParams(f, int64(len(b)))
	require.NoError(t, err)
	require.Equal(t, want, got)
	// The H section's bytes decode to pk.H.
	for i := range pk.H {
		var p bls.G1Affine
		_, err := p.SetBytes(b[got.H.Offset+int64(i*got.H.PointSize):])
		require.NoError(t, err)
		require.True(t, p.Equal(&pk.H[i]))
	}

	// A size larger than the file: the reader runs out first.
	items := fileItems(smallShape, true)
	_, err = ScanParams(io.NewSectionReader(f, 0, 900), int64(len(b)))
	requireFormatError(t, err, "h", items[6+1+3].off, ErrTruncated)
}

// TestReadParamsFileShrinks: a mapped file that shrinks under the reader
// gives an error, not a crash (SIGBUS is turned into a panic we recover),
// both while scanning the layout and in the decoding workers.
func TestReadParamsFileShrinks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on Linux raising SIGBUS past the end of a mapped file")
	}
	pk := randomKey(14, keyShape{ic: 2, h: 200, l: 200, a: 2, b: 2}, false)
	b := encode(t, pk)
	lay, err := ScanParams(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "k.params")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	m, err := mapFile(path)
	require.NoError(t, err)
	defer m.close()
	require.NoError(t, os.Truncate(path, 4096))

	_, err = decodeParams(m.data, readConfig{})
	require.ErrorIs(t, err, errFaultAccess)

	dst := make([]bls.G1Affine, lay.L.Len)
	err = runTasks(context.Background(), m.data, []decodeTask{{name: "l", sec: lay.L, lo: 0, hi: lay.L.Len, dst: g1.of(dst)}})
	requireFormatError(t, err, "l", lay.L.Offset, errFaultAccess)
}

// seqG1s returns the points k·G for k = 1…n: cheap, distinct points for
// tests that need many.
func seqG1s(n int) []bls.G1Affine {
	g, _, _, _ := bls.Generators()
	jac := make([]bls.G1Jac, n)
	acc := g
	for i := range jac {
		jac[i] = acc
		acc.AddAssign(&g)
	}
	return bls.BatchJacobianToAffineG1(jac)
}

// TestWriteParamsLarge covers the parallel encoder across several buffers
// against a plain point-by-point encoding.
func TestWriteParamsLarge(t *testing.T) {
	pk := randomKey(15, keyShape{ic: 1, l: 1, a: 1, b: 1}, false)
	pk.H = seqG1s(100_003) // > 2 buffers of 4 MiB, not a multiple of anything
	pk.H[77_777] = bls.G1Affine{}
	b := encode(t, pk)
	lay, err := ScanParams(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	require.Equal(t, len(pk.H), lay.H.Len)
	for i := range pk.H {
		want := pk.H[i].RawBytes()
		off := lay.H.Offset + int64(i)*96
		require.Equal(t, want[:], b[off:off+96], "point %d", i)
	}
	got, err := decodeParamsOpts(b, TrustedFile())
	require.NoError(t, err)
	require.Equal(t, pk, got)
}

// TestParamsFirstErrorWins: with bad points in several chunks, a point
// that does not decode (off the curve) is reported before any subgroup
// failure, at once rather than after every subgroup check (the old reader
// reported the subgroup failure of lower offset, after checking every chunk
// before the bad point); among errors of one kind, the lowest offset wins.
func TestParamsFirstErrorWins(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 16))
	pk := randomKey(16, keyShape{ic: 1, l: 1, a: 1, b: 1}, false)
	pk.H = seqG1s(3*chunkPoints - 5)
	good := encode(t, pk)
	lay, err := ScanParams(bytes.NewReader(good), int64(len(good)))
	require.NoError(t, err)
	b := bytes.Clone(good)
	sub := lay.H.Offset + int64(chunkPoints+1000)*96 // chunk 1: found only by the slow subgroup check
	off := lay.H.Offset + int64(2*chunkPoints+7)*96  // chunk 2: found at once by decoding
	corruptions[len(corruptions)-1].apply(r, b[sub:sub+96])
	_, err = decodeParamsOpts(b)
	requireFormatError(t, err, "h", sub, ErrNotInSubgroup)
	sub2 := lay.H.Offset + int64(2*chunkPoints+100)*96 // a later subgroup failure
	c := bytes.Clone(b)
	corruptions[len(corruptions)-1].apply(r, c[sub2:sub2+96])
	_, err = decodeParamsOpts(c)
	requireFormatError(t, err, "h", sub, ErrNotInSubgroup)

	b[off+95] ^= 1
	_, err = decodeParamsOpts(b)
	requireFormatError(t, err, "h", off, ErrNotOnCurve)
	_, err = decodeParamsOpts(b, TrustedFile())
	requireFormatError(t, err, "h", off, ErrNotOnCurve)
}

// TestReadParamsContext: a cancelled read stops between chunks and
// returns the context's error.
func TestReadParamsContext(t *testing.T) {
	pk := randomKey(17, keyShape{ic: 1, l: 1, a: 1, b: 1}, false)
	pk.H = seqG1s(20 * subgroupChunk)
	path := filepath.Join(t.TempDir(), "k.params")
	require.NoError(t, os.WriteFile(path, encode(t, pk), 0o600))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ReadParamsContext(ctx, path)
	require.ErrorIs(t, err, context.Canceled)

	t0 := time.Now()
	_, err = ReadParams(path)
	require.NoError(t, err)
	full := time.Since(t0)

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(full/4, cancel)
	t0 = time.Now()
	_, err = ReadParamsContext(ctx, path)
	stopped := time.Since(t0)
	require.ErrorIs(t, err, context.Canceled)
	t.Logf("checked read of %d points: %v; cancelled after %v, returned %v later", len(pk.H), full, full/4, stopped-full/4)
	require.Less(t, stopped, full, "the cancelled read stopped early")
}

// TestParamsOffCurveFast: in checked mode a point off the curve at the end
// of the file is reported after the decoding pass, long before the
// subgroup checks would end (the old reader checked every subgroup before
// it; 50 s against 3 s at 2 KiB).
func TestParamsOffCurveFast(t *testing.T) {
	pk := randomKey(18, keyShape{ic: 1, l: 1, a: 1, b: 1}, false)
	pk.H = seqG1s(20 * subgroupChunk)
	b := encode(t, pk)
	t0 := time.Now()
	_, err := decodeParamsOpts(b)
	require.NoError(t, err)
	full := time.Since(t0)

	lay, err := ScanParams(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	b[lay.BG2.End()-1] ^= 1 // the last point of the file
	t0 = time.Now()
	_, err = decodeParamsOpts(b)
	bad := time.Since(t0)
	requireFormatError(t, err, "b_g2", lay.BG2.Offset, ErrNotOnCurve)
	t.Logf("checked decode of %d points: %v; with the last point off the curve: %v", len(pk.H), full, bad)
	require.Less(t, bad, full/3, "the bad point is found by decoding, before the subgroup checks")
}

// TestReadSpecialFiles: parameter and key files must be regular files: a
// FIFO is refused at once (it blocked for a writer), a directory is named
// as one (it was "mmap: no such device"), and a /proc file is judged by its
// content, not by its reported size of 0.
func TestReadSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	for _, read := range []func(string) error{
		func(p string) error { _, err := ReadParams(p); return err },
		func(p string) error { _, err := ReadVerifyingKey(p); return err },
		func(p string) error { _, err := ReadParamsVerifyingKey(p); return err },
	} {
		require.ErrorContains(t, read(dir), "is a directory, not a regular file")
		if runtime.GOOS != "linux" {
			continue
		}
		fifo := filepath.Join(dir, "fifo")
		os.Remove(fifo)
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		specialfile.RequireRefused(t, "FIFO", "a FIFO", func() error { return read(fifo) })
		require.ErrorContains(t, read("/dev/zero"), "not a regular file")
		err := read("/proc/self/status")
		var fe *FormatError
		require.ErrorAs(t, err, &fe, "judged by its content")
		require.NotContains(t, err.Error(), "input has 0")
	}

	// ReadParamsVerifyingKey reads the key at the head of a .params file.
	pk := randomKey(19, smallShape, false)
	path := filepath.Join(dir, "k.params")
	require.NoError(t, os.WriteFile(path, encode(t, pk), 0o600))
	vk, err := ReadParamsVerifyingKey(path)
	require.NoError(t, err)
	require.Equal(t, pk.VK, *vk)
	short := filepath.Join(dir, "short.params")
	require.NoError(t, os.WriteFile(short, encode(t, pk)[:900], 0o600))
	_, err = ReadParamsVerifyingKey(short)
	requireFormatError(t, err, "vk", 864+4, ErrTruncated)
}
