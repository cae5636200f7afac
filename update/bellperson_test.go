package update

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/r1cs"
)

// TestBellpersonUpdateProofVerifies: bellperson's proof of partition 0 of
// the 2 KiB vector, under bellperson random parameters (refgen
// update-params; the 1.3 kB verifying key and the proof are committed,
// the parameters are not), verifies in Go against the public inputs
// derived here from the commitments, and fails under another partition
// index or h.
func TestBellpersonUpdateProofVerifies(t *testing.T) {
	_, dir, s, pub, _ := refgenVector(t)
	proofPath := filepath.Join(dir, "bellperson-update-2k.proof")
	if _, err := os.Stat(proofPath); err != nil {
		t.Skip("no bellperson proof recorded (refgen update-params)")
	}
	vk, proofs := refgen.KeyAndProofs(t, filepath.Join(dir, "bellperson-update-2k.vk"), proofPath)
	require.Equal(t, s.NumInputs(), vk.NumInputs())
	require.Len(t, proofs, 1)
	proof := &proofs[0]
	in, err := s.Inputs(pub, 0)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(vk, proof, in))
	in[0].SetUint64(2) // h_select of hs[1] (same h at 2 KiB, another input)
	require.ErrorIs(t, groth16.Verify(vk, proof, in), groth16.ErrInvalidProof)
}

// TestUpdateProveWithBellpersonParams (REFGEN_CACHE holding the output of
// refgen update-params): Go verifies bellperson's proof, proves partition
// 0 of the 2 KiB vector with bellperson's parameters, verifies its own
// proof and writes it as go-update-2k.proof for `refgen verify` to judge.
func TestUpdateProveWithBellpersonParams(t *testing.T) {
	cache, paramsPath := refgen.Cached(t, "update-2k.params", "update-params")
	_, _, s, pub, proofs := refgenVector(t)
	vk, bproofs := refgen.KeyAndProofs(t, filepath.Join(cache, "update-2k.vk"), filepath.Join(cache, "update-2k.proof"))
	inputs := refgen.ReadScalars(t, filepath.Join(cache, "update-2k-inputs-p0.bin"))
	native, err := s.Inputs(pub, 0)
	require.NoError(t, err)
	require.Equal(t, native, inputs, "Go public inputs differ from bellperson's")
	require.Len(t, bproofs, 1)
	require.NoError(t, groth16.Verify(vk, &bproofs[0], inputs), "bellperson's proof in Go")

	part, err := s.FromVanilla(&proofs[0], "")
	require.NoError(t, err)
	sys := r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, s, pub, part, 0))
	sys.Finalize()
	require.NoError(t, sys.IsSatisfied())
	refgen.ProveForRefgen(t, paramsPath, sys, vk, inputs, "go-update-2k.proof")
}
