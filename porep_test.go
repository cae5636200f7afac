package c2_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/r1cs"
)

const c1Path2KiB = "testdata/refgen/out/porep-2k/c1.json"

// devParams2KiB returns a directory holding development parameters for the
// 2 KiB shape: $C2_TEST_PARAMS when set (to reuse a `c2 setup` output),
// otherwise freshly generated into a temporary directory (minutes on two
// cores; the file is about 1 GiB).
func devParams2KiB(t *testing.T, c1 *porep.C1Output) string {
	if dir := os.Getenv("C2_TEST_PARAMS"); dir != "" {
		return dir
	}
	shape, parts, err := porep.Partitions(c1)
	require.NoError(t, err)
	sys := r1cs.NewSystem()
	require.NoError(t, porep.Synthesize(sys, shape, parts[0]))
	sys.Finalize()
	pk, err := groth16.Setup(sys, rand.Reader)
	require.NoError(t, err)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, c2.DevParamsPrefix+shape.ParamsName()+".params"))
	require.NoError(t, err)
	_, err = pk.WriteTo(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return dir
}

func TestProveC1(t *testing.T) {
	if testing.Short() {
		t.Skip("proves a 2^22-constraint circuit")
	}
	raw, err := os.ReadFile(c1Path2KiB)
	require.NoError(t, err)
	c1, err := porep.DecodeC1(raw)
	require.NoError(t, err)
	dir := devParams2KiB(t, c1)

	// The prover starts before the parameters are installed: the first call
	// fails, and the failure is not remembered once they are there.
	params := t.TempDir()
	p, err := c2.New(c2.Config{Backend: c2.BackendCPU, Params: params, TrustParams: true})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.Prove(context.Background(), raw)
	require.ErrorIs(t, err, c2.ErrNoParams)
	files, err := filepath.Glob(filepath.Join(dir, c2.DevParamsPrefix+"*.params"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		abs, err := filepath.Abs(f)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(abs, filepath.Join(params, filepath.Base(f))))
	}

	proof, err := p.Prove(context.Background(), raw)
	require.NoError(t, err)
	require.Len(t, proof, groth16.ProofSize)

	// Independently: the proof verifies under the key's vk with the inputs
	// refgen recorded from rust-fil-proofs.
	vkDir := dir
	shape, _, err := porep.Partitions(c1)
	require.NoError(t, err)
	pk, err := groth16.ReadParams(filepath.Join(vkDir, c2.DevParamsPrefix+shape.ParamsName()+".params"), groth16.TrustedFile())
	require.NoError(t, err)
	pub := readScalarsLE(t, "testdata/refgen/out/porep-2k/inputs-p0.bin")
	ps, err := groth16.ReadProofs(proof)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(&pk.VK, &ps[0], pub))

	// A C1 whose seed was changed derives other challenges: its vanilla
	// proofs no longer match and Prove refuses it before proving.
	c1.Seed[0] ^= 1
	bad, err := json.Marshal(c1)
	require.NoError(t, err)
	_, err = p.Prove(context.Background(), bad)
	var im *c2.InputMismatchError
	require.True(t, errors.As(err, &im), "got %v", err)
}

func readScalarsLE(t *testing.T, path string) []fr.Element {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Zero(t, len(b)%32)
	out := make([]fr.Element, len(b)/32)
	for i := range out {
		out[i], err = fr.LittleEndian.Element((*[32]byte)(b[32*i:]))
		require.NoError(t, err)
	}
	return out
}

// TestBellpersonC2ProofVerifies checks bellperson's own C2 proof of the
// committed 2 KiB C1 (made by `refgen porep-params` with bellperson random
// parameters; only its 4,708-byte vk and the 192-byte proof are committed)
// against the public inputs c2 derives from the C1, and that a changed input
// fails.
func TestBellpersonC2ProofVerifies(t *testing.T) {
	const dir = "testdata/refgen/out/porep-2k/"
	vk, err := groth16.ReadVerifyingKey(dir + "bellperson-porep-2k.vk")
	require.NoError(t, err)
	raw, err := os.ReadFile(dir + "bellperson-c2.proof")
	require.NoError(t, err)
	proofs, err := groth16.ReadProofs(raw)
	require.NoError(t, err)
	require.Len(t, proofs, 1)

	c1raw, err := os.ReadFile(c1Path2KiB)
	require.NoError(t, err)
	c1, err := porep.DecodeC1(c1raw)
	require.NoError(t, err)
	proof, err := inputs.ParseProof(c1.RegisteredProof)
	require.NoError(t, err)
	shape, err := proof.Shape()
	require.NoError(t, err)
	pub, err := inputs.Partition(shape, c1.ReplicaID, c1.CommD, c1.CommR, c1.Seed, proof.PoRepID(), 0)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(vk, &proofs[0], pub))

	pub[len(pub)-1].SetUint64(1)
	require.ErrorIs(t, groth16.Verify(vk, &proofs[0], pub), groth16.ErrInvalidProof)
}
