// Package ffi offers filecoin-ffi's PoRep C2 and SnapDeals proving entry
// points with filecoin-ffi's signatures, over c2, for node software that
// calls ffi directly: SealCommitPhase2 and
// SectorUpdate.GenerateUpdateProofWithVanilla prove through one
// process-wide Prover; VerifySeal and SectorUpdate.VerifyUpdateProof check
// a proof against inputs derived from the chain's view of the sector. Parameters are found where filecoin-ffi looks for them:
// $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters; the
// environment is read once, at the first call.
package ffi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
)

// DefaultParamDir is where parameters are read from when
// FIL_PROOFS_PARAMETER_CACHE is not set, as in filecoin-ffi.
const DefaultParamDir = "/var/tmp/filecoin-proof-parameters"

// ParamDir returns the parameter directory: $FIL_PROOFS_PARAMETER_CACHE, else
// DefaultParamDir.
func ParamDir() string {
	if d := os.Getenv("FIL_PROOFS_PARAMETER_CACHE"); d != "" {
		return d
	}
	return DefaultParamDir
}

var process struct {
	once   sync.Once
	dir    string
	prover *c2.Prover
	err    error

	vkMu sync.Mutex
	vks  map[string]*groth16.VerifyingKey
}

// setup creates the process-wide Prover (every CUDA device, else the CPU;
// parameters trusted as Filecoin trusts its published files) on first use.
func setup() (*c2.Prover, string, error) {
	process.once.Do(func() {
		process.dir = ParamDir()
		process.prover, process.err = c2.New(c2.Config{Params: process.dir, TrustParams: true})
	})
	return process.prover, process.dir, process.err
}

// ProverID is the prover id filecoin-ffi derives from a miner actor id: the
// payload of the miner's ID address (the id as an unsigned varint), zero
// padded to 32 bytes.
func ProverID(miner abi.ActorID) [32]byte {
	var id [32]byte
	binary.PutUvarint(id[:], uint64(miner))
	return id
}

// ReplicaMismatchError reports a C1 output sealed for another miner or
// sector than the caller names: its replica id is not the one derived from
// them.
type ReplicaMismatchError struct {
	Miner  abi.ActorID
	Sector abi.SectorNumber
}

func (e *ReplicaMismatchError) Error() string {
	return fmt.Sprintf("ffi: the C1 output's replica id is not that of miner %d, sector %d", e.Miner, e.Sector)
}

// ErrAggregated reports an NI-PoRep seal proof: filecoin-ffi's seal proof
// for it is a SnarkPack aggregate of the partition proofs, which c2 does
// not make or check. c2.Prover.Prove makes the partition proofs
// (filecoin-proofs' seal_commit_phase2_circuit_proofs).
var ErrAggregated = errors.New("ffi: NI-PoRep seal proofs are SnarkPack aggregates, which c2 does not make or verify")

// interactiveSeal returns ErrAggregated (wrapped) for an NI-PoRep proof.
func interactiveSeal(rp inputs.Proof) error {
	if is, err := rp.Shape(); err == nil && is.Derivation == inputs.NonInteractive {
		return fmt.Errorf("%w: %v", ErrAggregated, rp)
	}
	return nil
}

// SealCommitPhase2 proves a commit-phase-1 output (the JSON SealCommitPhase1
// returns) and returns the proof bytes (192 per partition), as filecoin-ffi's
// function of the same name does, for interactive and Synthetic PoRep
// (ErrAggregated for NI-PoRep). The C1's replica id must be the one of
// sectorNum and minerID (else *ReplicaMismatchError), and the proof is
// verified against inputs derived from the C1 before it is returned. Errors
// are those of c2.Prover.Prove otherwise.
func SealCommitPhase2(phase1Output []byte, sectorNum abi.SectorNumber, minerID abi.ActorID) ([]byte, error) {
	out, err := porep.DecodeC1(phase1Output)
	if err != nil {
		return nil, err
	}
	rp, err := inputs.ParseProof(out.RegisteredProof)
	if err != nil {
		return nil, err
	}
	if err := interactiveSeal(rp); err != nil {
		return nil, err
	}
	if inputs.ReplicaID(ProverID(minerID), uint64(sectorNum), out.Ticket, out.CommD, rp.PoRepID()) != [32]byte(out.ReplicaID) {
		return nil, &ReplicaMismatchError{Miner: minerID, Sector: sectorNum}
	}
	p, _, err := setup()
	if err != nil {
		return nil, err
	}
	return p.Prove(context.Background(), phase1Output)
}

// Multicodec and multihash codes of Filecoin's piece and replica commitment
// CIDs (go-fil-commcid).
const (
	codecUnsealedV1 = 0xf101 // fil-commitment-unsealed
	codecSealedV1   = 0xf102 // fil-commitment-sealed
	mhSHA256Trunc   = 0x1012 // sha2-256-trunc254-padded
	mhPoseidonFC1   = 0xb401 // poseidon-bls12_381-a2-fc1
)

// commitment returns the 32-byte commitment a CID carries, checking its
// codec and hash function.
func commitment(c cid.Cid, codec, mh uint64, what string) ([32]byte, error) {
	var out [32]byte
	if !c.Defined() {
		return out, fmt.Errorf("ffi: %s CID is undefined", what)
	}
	pre := c.Prefix()
	if pre.Codec != codec || pre.MhType != mh {
		return out, fmt.Errorf("ffi: %s CID %s: codec %#x, hash %#x; want %#x, %#x", what, c, pre.Codec, pre.MhType, codec, mh)
	}
	d, err := multihash.Decode(c.Hash())
	if err != nil {
		return out, fmt.Errorf("ffi: %s CID %s: %w", what, c, err)
	}
	if len(d.Digest) != 32 {
		return out, fmt.Errorf("ffi: %s CID %s: %d-byte digest", what, c, len(d.Digest))
	}
	copy(out[:], d.Digest)
	return out, nil
}

func bytes32(b []byte, what string) ([32]byte, error) {
	var out [32]byte
	if len(b) != 32 {
		return out, fmt.Errorf("ffi: %s has %d bytes, want 32", what, len(b))
	}
	copy(out[:], b)
	return out, nil
}

// VerifySeal reports whether info.Proof is a valid seal proof of the sector
// info describes, as filecoin-ffi's function of the same name does: the
// public inputs are derived from the miner, sector number, ticket, seed and
// the two commitments, and every partition's proof is checked under the
// proof type's verifying key (the .vk file in the parameter directory). A
// proof that does not verify, or whose bytes are not valid points, gives
// (false, nil); malformed inputs, unsupported proof types and missing keys
// give an error.
func VerifySeal(info proof.SealVerifyInfo) (bool, error) {
	if info.SealProof < 0 {
		return false, fmt.Errorf("ffi: seal proof type %d", info.SealProof)
	}
	rp := inputs.Proof(info.SealProof)
	is, err := rp.Shape()
	if err != nil {
		return false, err
	}
	if err := interactiveSeal(rp); err != nil {
		return false, err
	}
	commR, err := commitment(info.SealedCID, codecSealedV1, mhPoseidonFC1, "sealed")
	if err != nil {
		return false, err
	}
	commD, err := commitment(info.UnsealedCID, codecUnsealedV1, mhSHA256Trunc, "unsealed")
	if err != nil {
		return false, err
	}
	ticket, err := bytes32(info.Randomness, "ticket (Randomness)")
	if err != nil {
		return false, err
	}
	seed, err := bytes32(info.InteractiveRandomness, "seed (InteractiveRandomness)")
	if err != nil {
		return false, err
	}
	if len(info.Proof) != is.Partitions*groth16.ProofSize {
		return false, fmt.Errorf("ffi: proof has %d bytes, %v needs %d (%d partitions)", len(info.Proof), rp, is.Partitions*groth16.ProofSize, is.Partitions)
	}
	replica := inputs.ReplicaID(ProverID(info.Miner), uint64(info.Number), ticket, commD, rp.PoRepID())
	pub := make([][]fr.Element, is.Partitions)
	for k := range pub {
		if pub[k], err = inputs.Partition(is, replica, commD, commR, seed, rp.PoRepID(), k); err != nil {
			return false, err
		}
	}
	vk, err := verifyingKey(is.SectorSize)
	if err != nil {
		return false, err
	}
	proofs, err := groth16.ReadProofs(info.Proof)
	if err != nil {
		return false, nil
	}
	if err := groth16.VerifyBatch(vk, proofs, pub); err != nil {
		return false, nil
	}
	return true, nil
}

// verifyingKey reads (once per process) the verifying key of a PoRep
// sector size from its .vk file in the parameter directory.
func verifyingKey(sectorSize uint64) (*groth16.VerifyingKey, error) {
	shape, ok := porep.ShapeBySize(sectorSize)
	if !ok {
		return nil, fmt.Errorf("ffi: no PoRep shape for %d-byte sectors", sectorSize)
	}
	return cachedVK("porep/"+shape.Name, func(dir string) (string, error) {
		f, _, err := c2.FindParams(dir, shape, ".vk")
		return f, err
	})
}

// cachedVK returns the verifying key kept under name, reading it first
// (once per process) from the .vk file find resolves in the parameter
// directory.
func cachedVK(name string, find func(dir string) (string, error)) (*groth16.VerifyingKey, error) {
	process.vkMu.Lock()
	defer process.vkMu.Unlock()
	if vk, ok := process.vks[name]; ok {
		return vk, nil
	}
	dir := ParamDir()
	if process.dir != "" {
		dir = process.dir
	}
	f, err := find(dir)
	if err != nil {
		return nil, err
	}
	vk, err := groth16.ReadVerifyingKey(f)
	if err != nil {
		return nil, err
	}
	if process.vks == nil {
		process.vks = make(map[string]*groth16.VerifyingKey)
	}
	process.vks[name] = vk
	return vk, nil
}
