package fuzzpatch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestApply pins each format's edit semantics; the saved corpora of
// groth16/testdata/fuzz are Binary edit lists.
func TestApply(t *testing.T) {
	base := []byte{1, 2, 3, 4, 5}
	for _, c := range []struct {
		f           Format
		patch, want []byte
	}{
		{Binary, nil, base},
		{Binary, []byte{0, 0, 1, 0xf0}, []byte{1, 0xf2, 3, 4, 5}},
		{Binary, []byte{1, 0, 4, 9}, []byte{1, 2, 3, 4, 9}},
		{Binary, []byte{2, 0, 2, 0}, []byte{1, 2}},
		{Binary, []byte{3, 0, 5, 7}, []byte{1, 2, 3, 4, 5, 7}},
		{Binary, []byte{4, 0, 1, 1}, []byte{1, 0, 0, 4, 5}},
		{Binary, []byte{4, 0, 3, 200}, []byte{1, 2, 3, 0, 0}},
		{Binary, []byte{1, 0, 5, 9}, base},                     // past the end
		{Binary, []byte{1, 0, 6, 9}, []byte{9, 2, 3, 4, 5}},    // offset modulo 6
		{Binary, []byte{2, 0, 0, 0, 3, 0, 0, 8, 1}, []byte{8}}, // truncate, insert, partial record

		{JSON, nil, base},
		{JSON, []byte{0, 0, 0, 1, 0xf0}, []byte{1, 0xf2, 3, 4, 5}},
		{JSON, []byte{1, 0, 0, 4, 9}, []byte{1, 2, 3, 4, 9}},
		{JSON, []byte{2, 0, 0, 2, 0}, []byte{1, 2}},
		{JSON, []byte{3, 0, 0, 5, 7}, []byte{1, 2, 3, 4, 5, 7}},
		{JSON, []byte{4, 0, 0, 1, 13}, []byte{1, '3', 3, 4, 5}},
		{JSON, []byte{5, 0, 0, 1, 9}, []byte{1, 4, 5}},
		{JSON, []byte{5, 0, 0, 3, 7}, []byte{1, 2, 3}},
		{JSON, []byte{10, 0, 0, 1, 9}, []byte{1, '9', 3, 4, 5}},    // op modulo 6
		{JSON, []byte{1, 0, 0, 5, 9}, base},                        // past the end
		{JSON, []byte{1, 1, 0, 0, 9}, []byte{1, 2, 3, 4, 9}},       // 3-byte offset, modulo 6
		{JSON, []byte{2, 0, 0, 0, 0, 3, 0, 0, 0, 8, 1}, []byte{8}}, // truncate, insert, partial record
	} {
		require.Equal(t, c.want, c.f.Apply(base, c.patch), "%x", c.patch)
	}
	require.Equal(t, 4, Binary.Record())
	require.Equal(t, 5, JSON.Record())
	require.Equal(t, 256*5, JSON.Max())
}
