package r1cs

import (
	"bytes"
	"errors"
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

	// A witness plugged into the read system satisfies it.
	require.NoError(t, back.SetAssignment(s.Inputs(), s.Aux()))
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
