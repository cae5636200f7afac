package post

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/r1cs"
)

// paramsStem is the name refgen post-params gives the 2 KiB parameters of
// kind k (Window V1 and V1_2 share one set: their circuits are the same).
func paramsStem(k Kind) string { return "post-" + strings.ToLower(k.String()) + "-2k" }

// committedVK is the path of the committed verifying key of those
// parameters.
func committedVK(k Kind) string {
	return filepath.Join(refgen.Dir, "post-2k", "bellperson-"+strings.ToLower(k.String())+"-2k.vk")
}

// TestBellpersonPoStProofsVerify: bellperson's proofs of every partition of
// the 2 KiB Window (V1_2 and V1) and Winning vectors, made with bellperson
// random parameters (refgen post-params; the verifying keys and proofs are
// committed, the parameters are not), verify in Go against the public
// inputs derived here from the randomness and the vanilla proofs. Each
// fails with one challenge index changed, and a Window proof fails under
// the inputs of the other API version (whose challenges differ).
func TestBellpersonPoStProofsVerify(t *testing.T) {
	var one fr.Element
	one.SetOne()
	for _, name := range vectors {
		t.Run(name, func(t *testing.T) {
			v := loadVector(t, name)
			vk, proofs := refgen.KeyAndProofs(t, committedVK(v.shape.Kind), filepath.Join(v.dir, "bellperson.proof"))
			require.Equal(t, v.shape.NumInputs(), vk.NumInputs())
			require.Len(t, proofs, len(v.parts))
			for k := range proofs {
				in, err := publicInputs(v.shape, v.rnd, v.pub, k)
				require.NoError(t, err)
				require.NoError(t, groth16.Verify(vk, &proofs[k], in), "partition %d", k)
				if v.shape.Kind == Window {
					other := v.shape
					other.Version ^= 1
					oin, err := publicInputs(other, v.rnd, v.pub, k)
					require.NoError(t, err)
					require.NotEqual(t, in, oin)
					require.ErrorIs(t, groth16.Verify(vk, &proofs[k], oin), groth16.ErrInvalidProof,
						"partition %d under %s inputs", k, other.Version)
				}
				in[1].Add(&in[1], &one) // the first sector's first challenged leaf
				require.ErrorIs(t, groth16.Verify(vk, &proofs[k], in), groth16.ErrInvalidProof, "partition %d, challenge changed", k)
			}
		})
	}
}

// TestPoStProveWithBellpersonParams (REFGEN_CACHE holding the output of
// refgen post-params): per 2 KiB vector, bellperson's public inputs are
// the ones derived here, bellperson's proofs verify in Go and are the
// committed ones, and so is the verifying key; Go proves every partition
// with bellperson's parameters (groth16.ReadParams), verifies its proofs
// and writes them in partition order as go-post-<vector>.proof for
// `refgen verify` to judge (verify-go-proofs.sh).
func TestPoStProveWithBellpersonParams(t *testing.T) {
	for _, name := range vectors {
		t.Run(name, func(t *testing.T) {
			v := loadVector(t, name)
			stem := paramsStem(v.shape.Kind)
			cache, paramsPath := refgen.Cached(t, stem+".params", "post-params")
			vkPath, proofPath := filepath.Join(cache, stem+".vk"), filepath.Join(cache, "post-"+name+".proof")
			vk, bproofs := refgen.KeyAndProofs(t, vkPath, proofPath)
			require.True(t, bytes.Equal(refgen.ReadFile(t, vkPath), refgen.ReadFile(t, committedVK(v.shape.Kind))),
				"%s differs from the committed key", vkPath)
			require.True(t, bytes.Equal(refgen.ReadFile(t, proofPath), refgen.ReadFile(t, filepath.Join(v.dir, "bellperson.proof"))),
				"%s differs from the committed proofs", proofPath)
			inputs := refgen.ReadScalars(t, filepath.Join(cache, "post-"+name+"-inputs.bin"))
			n := v.shape.NumInputs() - 1
			require.Len(t, inputs, n*len(v.parts))
			require.Len(t, bproofs, len(v.parts))
			pk, err := groth16.ReadParams(paramsPath)
			require.NoError(t, err)

			proofs := make([]groth16.Proof, len(v.parts))
			for k, p := range v.parts {
				in, err := publicInputs(v.shape, v.rnd, v.pub, k)
				require.NoError(t, err)
				require.Equal(t, in, inputs[n*k:n*(k+1)], "partition %d: Go public inputs differ from bellperson's", k)
				require.NoError(t, groth16.Verify(vk, &bproofs[k], in), "bellperson's proof of partition %d in Go", k)
				sys := r1cs.NewSystem()
				require.NoError(t, Synthesize(sys, v.shape, p))
				sys.Finalize()
				require.NoError(t, sys.IsSatisfied())
				proof, err := groth16.Prove(pk, sys)
				require.NoError(t, err)
				require.NoError(t, groth16.Verify(vk, proof, in), "Go proof of partition %d with bellperson's parameters", k)
				proofs[k] = *proof
			}
			require.NoError(t, os.WriteFile(filepath.Join(cache, "go-post-"+name+".proof"), groth16.MarshalProofs(proofs), 0o644))
		})
	}
}
