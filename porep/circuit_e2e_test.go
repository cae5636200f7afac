package porep

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/r1cs"
)

// TestEndToEnd2KiB makes development parameters for the 2 KiB circuit,
// proves refgen's 2 KiB sector with them, verifies the proof in Go and, when
// the Rust reference is built (testdata/refgen/target/release/refgen), with
// bellperson; a changed public input is rejected by both. Setup takes
// minutes, so it runs only with C2_E2E=1.
func TestEndToEnd2KiB(t *testing.T) {
	if os.Getenv("C2_E2E") == "" {
		t.Skip("set C2_E2E=1 (dev setup of a 2.7 M-constraint circuit takes minutes)")
	}
	v := loadRefgen(t, "porep-2k")
	sys := r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, v.shape, v.parts[0]))
	sys.Finalize()
	pk, err := groth16.Setup(sys, rand.Reader)
	require.NoError(t, err)
	proof, err := groth16.Prove(pk, sys)
	require.NoError(t, err)
	pub := sys.Inputs()[1:]
	require.NoError(t, groth16.Verify(&pk.VK, proof, pub))
	bad := append([]fr.Element(nil), pub...)
	bad[5].SetUint64(7)
	require.ErrorIs(t, groth16.Verify(&pk.VK, proof, bad), groth16.ErrInvalidProof)

	refgen, err := filepath.Abs(filepath.Join("..", "testdata", "refgen", "target", "release", "refgen"))
	require.NoError(t, err)
	if _, err := os.Stat(refgen); err != nil {
		t.Skipf("bellperson check skipped: %s not built", refgen)
	}
	dir := t.TempDir()
	var vk bytes.Buffer
	_, err = pk.VK.WriteTo(&vk)
	require.NoError(t, err)
	b := proof.Bytes()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	enc := func(in []fr.Element) []byte {
		var out []byte
		for _, e := range in {
			le := [32]byte{}
			fr.LittleEndian.PutElement(&le, e)
			out = append(out, le[:]...)
		}
		return out
	}
	vkPath, proofPath := write("dev.vk", vk.Bytes()), write("proof.bin", b[:])
	out, err := exec.Command(refgen, "verify", "--vk", vkPath, "--proof", proofPath, "--inputs", write("inputs.bin", enc(pub))).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "valid")
	out, err = exec.Command(refgen, "verify", "--vk", vkPath, "--proof", proofPath, "--inputs", write("bad.bin", enc(bad))).CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "invalid")
}
