package ffi

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/update"
)

// FunctionsSectorUpdate holds the SnapDeals (empty-sector update) entry
// points, called through SectorUpdate as filecoin-ffi's are
// (ffi.SectorUpdate.GenerateUpdateProofWithVanilla).
type FunctionsSectorUpdate struct{}

// SectorUpdate is the value the SnapDeals entry points are called on.
var SectorUpdate FunctionsSectorUpdate

// updateShape returns the SnapDeals shape of a registered update proof,
// found by the sector size go-state-types registers for it.
func updateShape(pt abi.RegisteredUpdateProof) (update.Shape, error) {
	for _, info := range abi.SealProofInfos {
		if info.UpdateProof != pt {
			continue
		}
		if s, ok := update.ShapeForSize(uint64(info.SectorSize)); ok {
			return s, nil
		}
	}
	return update.Shape{}, fmt.Errorf("ffi: update proof type %d is not registered", pt)
}

// updateCommitments reads the three commitments of a SnapDeals proof from
// their CIDs: the sector key's and the new replica's sealed CIDs, and the
// new data's unsealed CID.
func updateCommitments(oldSealed, newSealed, unsealed cid.Cid) (c2.UpdateCommitments, error) {
	var c c2.UpdateCommitments
	var err error
	if c.CommROld, err = commitment(oldSealed, codecSealedV1, mhPoseidonFC1, "old sealed"); err != nil {
		return c, err
	}
	if c.CommRNew, err = commitment(newSealed, codecSealedV1, mhPoseidonFC1, "new sealed"); err != nil {
		return c, err
	}
	if c.CommDNew, err = commitment(unsealed, codecUnsealedV1, mhSHA256Trunc, "unsealed"); err != nil {
		return c, err
	}
	return c, nil
}

// GenerateUpdateProofWithVanilla proves a SnapDeals update from its
// vanilla partition proofs and returns the proof bytes (192 per partition,
// in partition order), as filecoin-ffi's method of the same name does:
// oldSealedCID is the sector key's sealed CID, newSealedCID the updated
// replica's, unsealedCID the new data's, and vanillaProofs holds one entry
// per partition as GenerateUpdateVanillaProofs returns them. The proof is
// verified against inputs derived from the three commitments before it is
// returned. Errors name a CID that is not a commitment of its kind or an
// unregistered proof type, and are otherwise those of c2.Prover.ProveUpdate.
func (FunctionsSectorUpdate) GenerateUpdateProofWithVanilla(proofType abi.RegisteredUpdateProof, oldSealedCID, newSealedCID, unsealedCID cid.Cid,
	vanillaProofs [][]byte) ([]byte, error) {
	shape, err := updateShape(proofType)
	if err != nil {
		return nil, err
	}
	comms, err := updateCommitments(oldSealedCID, newSealedCID, unsealedCID)
	if err != nil {
		return nil, err
	}
	p, _, err := setup()
	if err != nil {
		return nil, err
	}
	return p.ProveUpdate(context.Background(), shape.Name, comms, vanillaProofs)
}

// VerifyUpdateProof reports whether info.Proof is a valid SnapDeals proof
// of the update info describes, as filecoin-ffi's method of the same name
// does: every partition's public inputs are derived from the three
// commitments and its proof is checked under the proof type's verifying
// key (the .vk file in the parameter directory). A proof that does not
// verify, or whose bytes are not valid points, gives (false, nil);
// malformed CIDs, unregistered proof types, a proof of the wrong length and
// missing keys give an error.
func (FunctionsSectorUpdate) VerifyUpdateProof(info proof.ReplicaUpdateInfo) (bool, error) {
	shape, err := updateShape(info.UpdateProofType)
	if err != nil {
		return false, err
	}
	comms, err := updateCommitments(info.OldSealedSectorCID, info.NewSealedSectorCID, info.NewUnsealedSectorCID)
	if err != nil {
		return false, err
	}
	pub, err := comms.PublicInputs(shape)
	if err != nil {
		return false, err
	}
	if n := shape.Partitions * groth16.ProofSize; len(info.Proof) != n {
		return false, fmt.Errorf("ffi: proof has %d bytes, %s needs %d (%d partitions)", len(info.Proof), shape.Name, n, shape.Partitions)
	}
	in := make([][]fr.Element, shape.Partitions)
	for k := range in {
		if in[k], err = shape.Inputs(pub, k); err != nil {
			return false, err
		}
	}
	vk, err := cachedVK("update/"+shape.ParamsName(), func(dir string) (string, error) {
		f, _, err := c2.FindUpdateParams(dir, shape, ".vk")
		return f, err
	})
	if err != nil {
		return false, err
	}
	proofs, err := groth16.ReadProofs(info.Proof)
	if err != nil {
		return false, nil
	}
	return groth16.VerifyBatch(vk, proofs, in) == nil, nil
}
