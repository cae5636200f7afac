// Package inputs derives the public inputs of a Filecoin PoRep (StackedDrg)
// partition, of any registered seal proof (interactive, Synthetic PoRep,
// NI-PoRep), from public data only: replica id, comm_d, comm_r, the
// interactive seed and the PoRep id. Challenges and parent indices are
// recomputed here, never read from a prover's vanilla proofs, so a proof
// verified against these inputs proves what the chain asked for.
//
// The layout follows rust-fil-proofs 19.x StackedCompound::generate_public_inputs.
package inputs

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sealc2/c2/porep/graph"
)

// Proof is a registered seal proof, numbered as filecoin-proofs-api's
// REGISTERED_PROOF_IDS (the number is the first 8 bytes of the PoRep id).
type Proof uint64

// Registered seal proofs. All have the per-partition circuit of their sector
// size; they differ in how challenges are derived (Derivation) and, for
// NI-PoRep, in the number of partitions.
const (
	StackedDrg2KiBV1 Proof = iota
	StackedDrg8MiBV1
	StackedDrg512MiBV1
	StackedDrg32GiBV1
	StackedDrg64GiBV1
	StackedDrg2KiBV1_1
	StackedDrg8MiBV1_1
	StackedDrg512MiBV1_1
	StackedDrg32GiBV1_1
	StackedDrg64GiBV1_1
	StackedDrg2KiBV1_1_Feat_SyntheticPoRep
	StackedDrg8MiBV1_1_Feat_SyntheticPoRep
	StackedDrg512MiBV1_1_Feat_SyntheticPoRep
	StackedDrg32GiBV1_1_Feat_SyntheticPoRep
	StackedDrg64GiBV1_1_Feat_SyntheticPoRep
	StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
	StackedDrg8MiBV1_2_Feat_NonInteractivePoRep
	StackedDrg512MiBV1_2_Feat_NonInteractivePoRep
	StackedDrg32GiBV1_2_Feat_NonInteractivePoRep
	StackedDrg64GiBV1_2_Feat_NonInteractivePoRep
	numProofs
)

var sizeNames = [5]string{"2KiB", "8MiB", "512MiB", "32GiB", "64GiB"}

var variantSuffix = [4]string{"V1", "V1_1", "V1_1_Feat_SyntheticPoRep", "V1_2_Feat_NonInteractivePoRep"}

// String returns the name filecoin-proofs-api serializes, e.g. "StackedDrg2KiBV1_1".
func (p Proof) String() string {
	if p >= numProofs {
		return fmt.Sprintf("Proof(%d)", uint64(p))
	}
	return "StackedDrg" + sizeNames[p%5] + variantSuffix[p/5]
}

// ErrUnknownProof reports a registered proof name or number not listed above.
var ErrUnknownProof = errors.New("inputs: unknown registered seal proof")

// ParseProof returns the registered proof with the given name, as it appears
// in the C1 JSON's "registered_proof".
func ParseProof(name string) (Proof, error) {
	for p := range numProofs {
		if p.String() == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownProof, name)
}

// PoRepID is the proof's PoRep id: its number as 8 little-endian bytes, a zero
// 8-byte nonce, then 16 zero bytes.
func (p Proof) PoRepID() [32]byte {
	var id [32]byte
	binary.LittleEndian.PutUint64(id[:8], uint64(p))
	return id
}

// apiVersion returns the proofs API version of p.
func (p Proof) apiVersion() graph.APIVersion {
	switch {
	case p < StackedDrg2KiBV1_1:
		return graph.V1_0_0
	case p < StackedDrg2KiBV1_1_Feat_SyntheticPoRep:
		return graph.V1_1_0
	}
	return graph.V1_2_0
}

// Derivation is how a registered proof's challenges follow from public data
// (storage-proofs-porep challenges.rs).
type Derivation int

const (
	// Interactive: from the replica id and the interactive seed (V1, V1_1).
	Interactive Derivation = iota
	// Synthetic: the seed selects among 2^18 synthetic challenges that the
	// replica id and comm_r fix (V1_1_Feat_SyntheticPoRep).
	Synthetic
	// NonInteractive: from the replica id and comm_r; the seed is not used
	// (V1_2_Feat_NonInteractivePoRep).
	NonInteractive
)

func (d Derivation) String() string {
	switch d {
	case Interactive:
		return "interactive"
	case Synthetic:
		return "synthetic"
	case NonInteractive:
		return "non-interactive"
	}
	return fmt.Sprintf("Derivation(%d)", int(d))
}

// Shape is what the public inputs of one registered proof depend on
// (filecoin-proofs constants.rs and parameters.rs setup_params).
type Shape struct {
	SectorSize             uint64 // bytes
	Nodes                  uint64 // 32-byte nodes, SectorSize/32
	Layers                 int
	Partitions             int
	ChallengesPerPartition int // ceil(minimum challenges / Partitions)
	Derivation             Derivation
	// Tree C and R_last arities of the base, sub and top levels (0: absent).
	// Tree D is binary.
	BaseArity, SubArity, TopArity int
	APIVersion                    graph.APIVersion
}

var shapes = [5]Shape{
	{SectorSize: 2 << 10, Nodes: 1 << 6, Layers: 2, Partitions: 1, ChallengesPerPartition: 2, BaseArity: 8},
	{SectorSize: 8 << 20, Nodes: 1 << 18, Layers: 2, Partitions: 1, ChallengesPerPartition: 2, BaseArity: 8},
	{SectorSize: 512 << 20, Nodes: 1 << 24, Layers: 2, Partitions: 1, ChallengesPerPartition: 2, BaseArity: 8},
	{SectorSize: 32 << 30, Nodes: 1 << 30, Layers: 11, Partitions: 10, ChallengesPerPartition: 18, BaseArity: 8, SubArity: 8},
	{SectorSize: 64 << 30, Nodes: 1 << 31, Layers: 11, Partitions: 10, ChallengesPerPartition: 18, BaseArity: 8, SubArity: 8, TopArity: 2},
}

// niPartitions is the partition count of NI-PoRep (filecoin-proofs
// get_porep_non_interactive_partitions) by size index: 26 challenges in 13
// partitions for the test sizes, 2253 in 126 for 32 and 64 GiB; the
// challenges per partition (2 and 18) are the interactive ones, so that
// NI-PoRep proves with the same parameters.
var niPartitions = [5]int{13, 13, 13, 126, 126}

// Shape returns the shape of a registered proof.
func (p Proof) Shape() (Shape, error) {
	if p >= numProofs {
		return Shape{}, fmt.Errorf("%w: %d", ErrUnknownProof, uint64(p))
	}
	s := shapes[p%5]
	s.APIVersion = p.apiVersion()
	switch {
	case p >= StackedDrg2KiBV1_2_Feat_NonInteractivePoRep:
		s.Derivation = NonInteractive
		s.Partitions = niPartitions[p%5]
	case p >= StackedDrg2KiBV1_1_Feat_SyntheticPoRep:
		s.Derivation = Synthetic
	}
	return s, nil
}

// NumInputs is the number of public inputs of one partition, not counting
// the constant ONE: replica_id, comm_d, comm_r, then 18 per challenge.
func (s Shape) NumInputs() int {
	return 3 + perChallenge*s.ChallengesPerPartition
}
