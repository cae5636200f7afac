package r1cs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func compactFixture(t testing.TB) *System {
	s := NewSystem()
	for i := int64(0); i < 200; i++ {
		square(s, i+2, i&1)
	}
	s.Finalize()
	return s
}

func TestCompactRoundTrip(t *testing.T) {
	s := compactFixture(t)
	var buf bytes.Buffer
	require.NoError(t, s.WriteCompact(&buf))
	back, err := ReadCompact(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)

	d1, err := s.CanonicalDigest()
	require.NoError(t, err)
	d2, err := back.CanonicalDigest()
	require.NoError(t, err)
	require.Equal(t, d1, d2, "same constraints")
	require.Equal(t, s.Counts(), back.Counts())

	nnz := len(s.A().Vars) + len(s.B().Vars) + len(s.C().Vars)
	require.Less(t, buf.Len()-8-32-32*len(s.Coeffs()), 4*nnz, "a few bytes per non-zero")

	// It has no values of its own; a witness plugged into it satisfies it.
	require.False(t, back.Assigned())
	require.Error(t, back.IsSatisfied())
	require.NoError(t, back.SetAssignment(s.Inputs(), s.Aux()))
	require.True(t, back.Assigned())
	require.NoError(t, back.IsSatisfied())
	bad := append(s.Aux()[:0:0], s.Aux()...)
	bad[0].SetUint64(5) // x = 5 but y = 4
	require.NoError(t, back.SetAssignment(s.Inputs(), bad))
	require.Error(t, back.IsSatisfied())
	require.Error(t, back.SetAssignment(s.Inputs()[:1], s.Aux()))
}

func TestCompactRejectsCorruption(t *testing.T) {
	s := compactFixture(t)
	var buf bytes.Buffer
	require.NoError(t, s.WriteCompact(&buf))
	enc := buf.Bytes()
	for _, cut := range []int{0, 5, 8, 12, len(enc) / 2, len(enc) - 1} {
		_, err := ReadCompact(bytes.NewReader(enc[:cut]))
		var ce *CompactError
		require.True(t, errors.As(err, &ce), "cut %d: %v", cut, err)
	}
	for i := 8; i < len(enc); i += 97 {
		b := bytes.Clone(enc)
		b[i] ^= 0x10
		_, err := ReadCompact(bytes.NewReader(b))
		require.Error(t, err, "flip at %d", i)
	}
	_, err := ReadCompact(bytes.NewReader(append(bytes.Clone(enc), 0)))
	require.Error(t, err, "trailing byte")
}

func FuzzReadCompact(f *testing.F) {
	s := NewSystem()
	square(s, 3, 1)
	s.Finalize()
	var buf bytes.Buffer
	if err := s.WriteCompact(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		sys, err := ReadCompact(bytes.NewReader(b))
		if err == nil {
			// Whatever decodes must be a well-formed system.
			var out bytes.Buffer
			if err := sys.WriteCompact(&out); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestWithAssignmentSharesConstraints(t *testing.T) {
	s := compactFixture(t)
	w := NewWitness(0, 0)
	for i := int64(0); i < 200; i++ {
		square(w, i+7, (i+1)&1) // same shape, other values
	}
	c, err := s.WithAssignment(w.Inputs, w.Aux)
	require.NoError(t, err)
	require.NoError(t, c.IsSatisfied())
	require.True(t, &s.A().Vars[0] == &c.A().Vars[0], "matrices are shared")
	require.NotEqual(t, s.Aux()[0], c.Aux()[0])
	_, err = s.WithAssignment(w.Inputs[:1], w.Aux)
	require.Error(t, err)
}

// compactHeader is a stream's magic and header counts, nothing more.
func compactHeader(counts ...uint64) []byte {
	b := append([]byte(nil), compactMagic[:]...)
	for _, c := range counts {
		b = binary.AppendUvarint(b, c)
	}
	return b
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Header counts alone do not size buffers: a few bytes claiming millions
// of constraints and aux variables used to allocate for all of them before
// reading any (a 25-byte input asked for 18 GiB).
func TestReadCompactAllocatesAsDataArrives(t *testing.T) {
	const nc, na = 1 << 22, 1 << 28 // the old reader: 3 × 32 MiB of row starts, 2 × 32 MiB of densities
	hdr := compactHeader(1, na, nc, nc-1, 0)
	for name, r := range map[string]io.Reader{
		"sized":   bytes.NewReader(hdr),                 // Len is known: refused from the header
		"unsized": io.MultiReader(bytes.NewReader(hdr)), // read until the data runs out
	} {
		var err error
		n := allocated(func() { _, err = ReadCompact(r) })
		var ce *CompactError
		require.ErrorAs(t, err, &ce, name)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, name)
		require.Less(t, n, uint64(4<<20), "%s: %d bytes allocated for a %d-byte input", name, n, len(hdr))
	}

	// An intact stream (checksum and all) declaring far more aux variables
	// than its constraints use would make the reader allocate its
	// assignment: 32 bytes per declared variable.
	b := compactHeader(1, 1<<24, 1, 0, 0) // the old reader: 512 MiB of assignment
	b = append(b, 0, 0, 0)                // one empty row in each of A, B, C
	sum := sha256.Sum256(b)
	b = append(b, sum[:]...)
	var err error
	n := allocated(func() { _, err = ReadCompact(bytes.NewReader(b)) })
	require.ErrorContains(t, err, "aux variables")
	require.Less(t, n, uint64(4<<20), "%d bytes allocated", n)
}
