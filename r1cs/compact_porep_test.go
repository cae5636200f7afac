package r1cs_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// BenchmarkCompactPoRep2KiB writes the recorded R1CS of the refgen 2 KiB
// partition in compact form and reports its size per non-zero; the 32 GiB
// circuit (~722 M non-zeros) scales from it.
func BenchmarkCompactPoRep2KiB(b *testing.B) {
	raw, err := os.ReadFile("../testdata/refgen/out/porep-2k/c1.json")
	require.NoError(b, err)
	c1, err := porep.DecodeC1(raw)
	require.NoError(b, err)
	shape, parts, err := porep.Partitions(c1)
	require.NoError(b, err)
	sys := r1cs.NewSystem()
	require.NoError(b, porep.Synthesize(sys, shape, parts[0]))
	sys.Finalize()
	nnz := len(sys.A().Vars) + len(sys.B().Vars) + len(sys.C().Vars)
	var buf bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf.Reset()
		require.NoError(b, sys.WriteCompact(&buf))
	}
	b.StopTimer()
	back, err := r1cs.ReadCompact(bytes.NewReader(buf.Bytes()))
	require.NoError(b, err)
	d1, _ := sys.CanonicalDigest()
	d2, _ := back.CanonicalDigest()
	require.Equal(b, d1, d2)
	b.ReportMetric(float64(buf.Len()), "bytes")
	b.ReportMetric(float64(buf.Len())/float64(nnz), "B/nnz")
	b.ReportMetric(float64(nnz), "nnz")
}
