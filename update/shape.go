// Package update synthesizes the Filecoin SnapDeals circuit
// (storage-proofs-update's EmptySectorUpdateCircuit, rust-fil-proofs 19.x)
// constraint for constraint as rust-fil-proofs and bellperson do: the same
// variables in the same order, the same constraints with the same
// coefficients, hence the same R1CS, witness, public inputs and Groth16
// parameters.
//
// A SnapDeals proof shows that a sector's new replica (root tree R_new,
// commitment comm_r_new) is the old replica (tree R_old, comm_r_old, the
// "sector key") with the new data (tree D_new, comm_d_new) encoded into it:
// label_r_new = label_r_old + label_d_new · rho, where rho depends on the
// high bits of the node index. The sector's nodes are split into
// partitions, one Groth16 proof each; partition k proves the nodes
// challenged inside its own chunk, with its challenges derived in the
// circuit from comm_r_new.
//
//	s, _ := ShapeByName("StackedDrg32GiBV1")
//	v, err := DecodeVanilla(b)                       // one vanilla partition proof
//	p, err := s.FromVanilla(v, "")                   // its circuit assignment
//	pub := PublicInputs{CommROld: …, CommDNew: …, CommRNew: …, H: s.HDefault()}
//	err = s.Check(pub, p, k)                         // native checks
//	err = Synthesize(sys, s, pub, p, k)              // record, count or keep the witness
package update

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/bits"

	"github.com/sealc2/c2/porep"
)

// HCount is the number of allowed h values a shape hard-codes (the length of
// storage-proofs-update's hs()); the circuit selects one with a one-hot
// h_select of this many bits.
const HCount = 6

// Shape fixes an EmptySectorUpdateCircuit: the sector size in nodes, the
// tree R arities above its octal base trees, and storage-proofs-update's
// PublicParams (challenges per partition, partitions, apex leaves per
// partition) and allowed h values.
type Shape struct {
	// Name is the RegisteredUpdateProof variant, e.g. "StackedDrg32GiBV1".
	Name string
	// SectorSize is in bytes (32 per node).
	SectorSize uint64
	// Challenges is the number of challenges one partition proves.
	Challenges int
	// Partitions is the number of partitions of a proof (a power of two).
	Partitions int
	// ApexLeaves is the number of tree D nodes each partition's apex tree
	// starts from (a power of two).
	ApexLeaves int
	// Hs are the allowed numbers of high challenge bits rho depends on.
	Hs [HCount]int
	// SubArity and TopArity are the arities of trees R_old and R_new above
	// their octal base trees (0 when absent).
	SubArity, TopArity int
}

// Sector sizes in nodes at which storage-proofs-update changes parameters.
const (
	nodes8KiB  = 1 << 8
	nodes32KiB = 1 << 10
	nodes16MiB = 1 << 19
)

// ShapeForSize returns the registered shape of sector size size (bytes),
// with storage-proofs-update's constants for it (partition_count,
// challenge_count, apex_leaf_count, hs) and the tree R shape of the PoRep
// sector of that size.
func ShapeForSize(size uint64) (Shape, bool) {
	for _, ps := range porep.Shapes {
		if ps.SectorSize != size {
			continue
		}
		n := size / porep.NodeSize
		s := Shape{Name: ps.Name, SectorSize: size, SubArity: ps.SubArity, TopArity: ps.TopArity}
		switch {
		case n <= nodes8KiB:
			s.Partitions = 1
		case n <= nodes32KiB:
			s.Partitions = 2
		case n <= nodes16MiB:
			s.Partitions = 4
		default:
			s.Partitions = 16
		}
		s.Challenges = 86
		if n <= nodes16MiB {
			s.Challenges = 10
		}
		s.ApexLeaves = 128
		if n <= nodes8KiB {
			s.ApexLeaves = 8
		}
		if n <= nodes32KiB {
			s.Hs = [HCount]int{1, 1, 1, 1, 1, 1}
		} else {
			s.Hs = [HCount]int{7, 8, 9, 10, 11, 12}
		}
		return s, true
	}
	return Shape{}, false
}

// Shapes lists the registered update proofs: 2 KiB, 8 MiB, 512 MiB,
// 32 GiB and 64 GiB.
var Shapes = func() []Shape {
	var out []Shape
	for _, ps := range porep.Shapes {
		s, _ := ShapeForSize(ps.SectorSize)
		out = append(out, s)
	}
	return out
}()

// ShapeByName returns the registered shape named name (a
// RegisteredUpdateProof variant such as "StackedDrg2KiBV1"): that of the
// sector size of the PoRep shape of the same name.
func ShapeByName(name string) (Shape, bool) {
	ps, ok := porep.ShapeByName(name)
	if !ok {
		return Shape{}, false
	}
	return ShapeForSize(ps.SectorSize)
}

// Nodes returns the number of 32-byte nodes of the sector.
func (s Shape) Nodes() uint64 { return s.SectorSize / porep.NodeSize }

// ChallengeBits is log2(Nodes): the bits of a challenge, the height of tree D.
func (s Shape) ChallengeBits() int { return bits.TrailingZeros64(s.Nodes()) }

// PartitionBits is log2(Partitions).
func (s Shape) PartitionBits() int { return bits.TrailingZeros(uint(s.Partitions)) }

// ApexBits is log2(ApexLeaves), the height of a partition's apex tree.
func (s Shape) ApexBits() int { return bits.TrailingZeros(uint(s.ApexLeaves)) }

// RandomBits is the number of bits drawn per challenge: the challenge bits
// below the partition index.
func (s Shape) RandomBits() int { return s.ChallengeBits() - s.PartitionBits() }

// ChallengesPerDigest is how many challenges one Poseidon digest yields
// (Fr::CAPACITY / RandomBits).
func (s Shape) ChallengesPerDigest() int { return 254 / s.RandomBits() }

// DigestsPerPartition is the number of digests a partition's challenges
// take (rounded up).
func (s Shape) DigestsPerPartition() int {
	per := s.ChallengesPerDigest()
	return (s.Challenges + per - 1) / per
}

// HDefault is the h filecoin-proofs uses (hs[3]: 10 for production sizes).
func (s Shape) HDefault() int { return s.Hs[3] }

// HSelect returns the one-hot h_select for h (bit i set for the first
// i with Hs[i] = h); ok is false when h is not allowed.
func (s Shape) HSelect(h int) (uint64, bool) {
	for i, x := range s.Hs {
		if x == h {
			return 1 << i, true
		}
	}
	return 0, false
}

// TreeArities returns the arity of each level of a tree R path, leaf first.
func (s Shape) TreeArities() []int {
	return porep.Shape{SectorSize: s.SectorSize, SubArity: s.SubArity, TopArity: s.TopArity}.TreeArities()
}

// NumInputs is the number of public inputs of a partition, ONE included:
// k_and_h_select, comm_r_old, comm_d_new, comm_r_new.
func (s Shape) NumInputs() int { return 5 }

// Validate reports whether s describes a circuit this package synthesizes.
func (s Shape) Validate() error {
	bad := func(f string, a ...any) error {
		return &porep.ShapeError{Name: s.Name, Msg: fmt.Sprintf(f, a...)}
	}
	ps := porep.Shape{Name: s.Name, SectorSize: s.SectorSize, Layers: 1, Partitions: 1, Challenges: 1,
		SubArity: s.SubArity, TopArity: s.TopArity}
	if err := ps.Validate(); err != nil {
		return err
	}
	pow2 := func(x int) bool { return x > 0 && x&(x-1) == 0 }
	switch {
	case s.Challenges < 1:
		return bad("%d challenges", s.Challenges)
	case !pow2(s.Partitions) || s.Partitions > 16:
		return bad("%d partitions: not a power of two up to 16", s.Partitions)
	case !pow2(s.ApexLeaves) || s.ApexLeaves < 2:
		return bad("%d apex leaves: not a power of two ≥ 2", s.ApexLeaves)
	case s.PartitionBits()+s.ApexBits() >= s.ChallengeBits():
		return bad("%d partition and %d apex bits leave no path below the apex tree of %d-bit challenges",
			s.PartitionBits(), s.ApexBits(), s.ChallengeBits())
	case s.RandomBits() > 32:
		return bad("%d random bits per challenge", s.RandomBits())
	}
	for i, h := range s.Hs {
		if h < 1 || h > s.ChallengeBits() {
			return bad("hs[%d] = %d outside 1..%d", i, h, s.ChallengeBits())
		}
	}
	return nil
}

func (s Shape) String() string {
	return fmt.Sprintf("%s (SnapDeals, %d bytes, %d partitions × %d challenges, %d apex leaves, tree %d-%d-%d)",
		s.Name, s.SectorSize, s.Partitions, s.Challenges, s.ApexLeaves, porep.BaseArity, s.SubArity, s.TopArity)
}

// ParamsVersion is the parameter-cache version filecoin-proofs puts in
// front of every parameter file name (storage-proofs-core VERSION).
const ParamsVersion = 28

// CircuitIdentifier returns the identifier filecoin-proofs caches the
// shape's parameters under: "empty-sector-update-merkletree-poseidon_hasher-
// 8-<sub>-<top>-" and the hex SHA-256 of the PublicParams identifier,
// which names only the sector's node count.
func (s Shape) CircuitIdentifier() string {
	id := fmt.Sprintf("empty_sector_update::PublicParams{ sector_nodes: %d }", s.Nodes())
	h := sha256.Sum256([]byte(id))
	return fmt.Sprintf("empty-sector-update-merkletree-poseidon_hasher-%d-%d-%d-%s",
		porep.BaseArity, s.SubArity, s.TopArity, hex.EncodeToString(h[:]))
}

// ParamsName returns the base name (without ".params" or ".vk") of the
// official parameter files: "v28-" and the circuit identifier.
func (s Shape) ParamsName() string {
	return fmt.Sprintf("v%d-%s", ParamsVersion, s.CircuitIdentifier())
}
