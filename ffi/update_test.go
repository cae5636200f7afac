package ffi

import (
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/devparams"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/update"
)

// useParamDir points the process-wide Prover and verifying keys at dir for
// the rest of the test: the process state is reset now and at its end.
func useParamDir(t *testing.T, dir string) {
	t.Setenv("FIL_PROOFS_PARAMETER_CACHE", dir)
	resetProcess()
	t.Cleanup(resetProcess)
}

func resetProcess() {
	if process.prover != nil {
		_ = process.prover.Close()
	}
	process.once = sync.Once{}
	process.dir, process.prover, process.err, process.vks = "", nil, nil, nil
}

// useDevParams skips t in -short mode (why: what the test proves), else
// points the process-wide Prover at the development parameters dir
// provides and returns their directory.
func useDevParams(t *testing.T, why string, dir func() (string, error)) string {
	if testing.Short() {
		t.Skip(why)
	}
	d, err := dir()
	require.NoError(t, err)
	useParamDir(t, d)
	return d
}

// snapVector is refgen's 2 KiB SnapDeals vector (out/update-2k) as
// filecoin-ffi's callers hold it: CIDs of the three commitments and the
// vanilla partition proofs GenerateUpdateVanillaProofs returned.
type snapVector struct {
	refgen.Vanilla
	oldSealed, newSealed, unsealed cid.Cid
}

func loadSnap(t *testing.T) snapVector {
	u := refgen.ReadVanilla(t, "update-2k")
	require.Equal(t, "StackedDrg2KiBV1", u.Proof)
	return snapVector{Vanilla: u,
		oldSealed: commCID(t, codecSealedV1, mhPoseidonFC1, u.CommROld),
		newSealed: commCID(t, codecSealedV1, mhPoseidonFC1, u.CommRNew),
		unsealed:  commCID(t, codecUnsealedV1, mhSHA256Trunc, u.CommDNew),
	}
}

// TestGenerateUpdateProofWithVanilla proves refgen's 2 KiB SnapDeals
// vanilla proof (rust-fil-proofs' generate_partition_proofs) through the
// process-wide Prover, from the CIDs of its commitments, checks the proof
// under the public inputs rust-fil-proofs computed, and has
// VerifyUpdateProof accept it and reject it with a bit flipped or another
// new replica.
func TestGenerateUpdateProofWithVanilla(t *testing.T) {
	dir := useDevParams(t, "proves a 1.7 M-constraint circuit", devparams.UpdateDir)
	v := loadSnap(t)
	pt := abi.RegisteredUpdateProof_StackedDrg2KiBV1

	// Commitments of another update: the vanilla proof does not prove
	// them, and the call says so before proving.
	_, err := SectorUpdate.GenerateUpdateProofWithVanilla(pt, v.newSealed, v.oldSealed, v.unsealed, v.Bincode)
	var ie *update.InputError
	var ve *update.VanillaError
	require.True(t, assert.ErrorAs(t, err, &ie) || assert.ErrorAs(t, err, &ve), "%v", err)

	prf, err := SectorUpdate.GenerateUpdateProofWithVanilla(pt, v.oldSealed, v.newSealed, v.unsealed, v.Bincode)
	require.NoError(t, err)
	require.Len(t, prf, len(v.Bincode)*groth16.ProofSize)

	// Under rust-fil-proofs' inputs and the verifying key of the parameters.
	shape, err := updateShape(pt)
	require.NoError(t, err)
	_, vkPath := devparams.UpdatePaths(dir)
	vk, ps := refgen.KeyAndProofBytes(t, vkPath, prf, "GenerateUpdateProofWithVanilla's proof")
	for k := range ps {
		require.NoError(t, groth16.Verify(vk, &ps[k], v.Inputs[k]), "%s partition %d", shape.Name, k)
	}

	info := proof.ReplicaUpdateInfo{UpdateProofType: pt, OldSealedSectorCID: v.oldSealed, NewSealedSectorCID: v.newSealed,
		NewUnsealedSectorCID: v.unsealed, Proof: prf}
	requireVerifies(t, prf, func(p []byte) (bool, error) {
		i := info
		i.Proof = p
		return SectorUpdate.VerifyUpdateProof(i)
	})
	other := info
	other.NewSealedSectorCID = v.oldSealed
	ok, err := SectorUpdate.VerifyUpdateProof(other)
	require.NoError(t, err)
	assert.False(t, ok, "another update's inputs")
}

// TestUpdateRejectsMalformed: an unregistered proof type, a CID of the
// wrong kind and a proof of the wrong length are errors, found before any
// parameters are looked for.
func TestUpdateRejectsMalformed(t *testing.T) {
	useParamDir(t, t.TempDir())
	v := loadSnap(t)
	base := proof.ReplicaUpdateInfo{UpdateProofType: abi.RegisteredUpdateProof_StackedDrg2KiBV1, OldSealedSectorCID: v.oldSealed,
		NewSealedSectorCID: v.newSealed, NewUnsealedSectorCID: v.unsealed, Proof: make([]byte, groth16.ProofSize)}
	for name, mod := range map[string]func(*proof.ReplicaUpdateInfo){
		"unregistered proof type":      func(i *proof.ReplicaUpdateInfo) { i.UpdateProofType = 5 },
		"old sealed CID is unsealed":   func(i *proof.ReplicaUpdateInfo) { i.OldSealedSectorCID = v.unsealed },
		"new sealed CID undefined":     func(i *proof.ReplicaUpdateInfo) { i.NewSealedSectorCID = cid.Undef },
		"unsealed CID is sealed":       func(i *proof.ReplicaUpdateInfo) { i.NewUnsealedSectorCID = v.newSealed },
		"proof of two partitions":      func(i *proof.ReplicaUpdateInfo) { i.Proof = make([]byte, 2*groth16.ProofSize) },
		"no parameters for the update": func(*proof.ReplicaUpdateInfo) {},
	} {
		info := base
		mod(&info)
		ok, err := SectorUpdate.VerifyUpdateProof(info)
		assert.Error(t, err, name)
		assert.False(t, ok, name)
		if name == "proof of two partitions" || name == "no parameters for the update" {
			continue
		}
		_, err = SectorUpdate.GenerateUpdateProofWithVanilla(info.UpdateProofType, info.OldSealedSectorCID, info.NewSealedSectorCID,
			info.NewUnsealedSectorCID, v.Bincode)
		assert.Error(t, err, name)
	}
}
