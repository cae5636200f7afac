package c1gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/r1cs"
)

var testSeed = [32]byte{1, 2, 3}

// generate returns the generated C1 JSON of proof and what a prover reads
// from it: the decoded output, its shape and partitions.
func generate(t testing.TB, proof inputs.Proof, seed [32]byte) ([]byte, *porep.C1Output, porep.Shape, []*porep.Partition) {
	t0 := time.Now()
	sec, err := Generate(proof, seed, nil)
	require.NoError(t, err)
	raw, err := sec.JSON()
	require.NoError(t, err)
	t.Logf("%s: generated %d bytes in %v", proof, len(raw), time.Since(t0).Round(time.Millisecond))
	c1, err := porep.DecodeC1(raw)
	require.NoError(t, err)
	shape, parts, err := porep.Partitions(c1)
	require.NoError(t, err)
	return raw, c1, shape, parts
}

// verifyAll checks every partition natively and checks that the public
// inputs a verifier derives from the C1's replica id, commitments and seed
// are those the circuit allocates from the vanilla proofs.
func verifyAll(t testing.TB, c1 *porep.C1Output, shape porep.Shape, parts []*porep.Partition) {
	proof, err := inputs.ParseProof(c1.RegisteredProof)
	require.NoError(t, err)
	is, err := proof.Shape()
	require.NoError(t, err)
	require.Len(t, parts, is.Partitions)
	for k, p := range parts {
		require.NoError(t, shape.Verify(p, k), "partition %d", k)
		want, err := inputs.Partition(is, c1.ReplicaID, c1.CommD, c1.CommR, c1.Seed, proof.PoRepID(), k)
		require.NoError(t, err)
		got := publicInputs(t, shape, p)
		require.Equal(t, want, got, "partition %d: public inputs", k)
	}
}

// publicInputs returns the public inputs (without ONE) the circuit of p
// allocates: replica id, comm_d, comm_r, then per challenge the tree-D
// path, the parents' tree-C paths, the challenge, the tree-R and tree-C
// paths, each packed from its leaf position. Read from the partition
// rather than synthesized, so that it is cheap for every partition; the
// circuit's own inputs are compared with it in the circuit tests.
func publicInputs(t testing.TB, s porep.Shape, p *porep.Partition) []fr.Element {
	pos := func(path []porep.PathLevel) fr.Element {
		n, mul := uint64(0), uint64(1)
		for _, l := range path {
			n += uint64(l.Index) * mul
			mul *= uint64(l.Arity())
		}
		var e fr.Element
		return *e.SetUint64(n)
	}
	out := []fr.Element{p.ReplicaID, p.CommD, p.CommR}
	for _, c := range p.Challenges {
		out = append(out, pos(c.DataPath))
		for _, col := range c.Parents {
			out = append(out, pos(col.Path))
		}
		var n fr.Element
		n.SetUint64(c.Node)
		out = append(out, n, pos(c.ReplicaPath), pos(c.ColumnPath))
	}
	require.Len(t, out, s.NumInputs()-1)
	return out
}

// TestGenerateVerifies checks every registered interactive proof: the C1
// decodes, converts into the shape's partitions, every partition passes
// Shape.Verify, and its public inputs are the derived ones.
func TestGenerateVerifies(t *testing.T) {
	for p := inputs.StackedDrg2KiBV1; p <= inputs.StackedDrg64GiBV1_1; p++ {
		t.Run(p.String(), func(t *testing.T) {
			if testing.Short() && p%5 >= 3 {
				t.Skip("32/64 GiB: 180 challenges")
			}
			_, c1, shape, parts := generate(t, p, testSeed)
			require.Equal(t, p.String(), c1.RegisteredProof)
			verifyAll(t, c1, shape, parts)
		})
	}
}

func TestCheckCircuitSmoke(t *testing.T) {
	_, _, shape, parts := generate(t, inputs.StackedDrg2KiBV1_1, testSeed)
	t0 := time.Now()
	in, err := CheckCircuit(shape, parts[0])
	require.NoError(t, err)
	t.Logf("check %v, %d inputs", time.Since(t0), len(in))
	_ = r1cs.NewSystem
	_ = bytes.Equal
	_ = json.Marshal
	_ = errors.Is
	_ = os.Getenv
}
