package porep

import (
	"fmt"
	"math/bits"

	"github.com/sealc2/c2/porep/graph"
	"github.com/sealc2/c2/porep/inputs"
)

// Shape fixes everything about a StackedDRG PoRep circuit that does not
// depend on the sector's data: the sector size, the number of SDR layers,
// the partition and challenge counts, and the arities of trees C and R_last
// (storage-proofs-porep's StackedCircuit generics plus filecoin-proofs'
// constants). Two partitions of the same Shape have identical R1CS.
type Shape struct {
	// Name is the vanilla-proof key in the C1 JSON, e.g. "StackedDrg32GiBV1".
	Name string
	// SectorSize is the sector size in bytes (a power of two, ≥ 2 KiB).
	SectorSize uint64
	// Layers is the number of SDR layers (columns have this many rows).
	Layers int
	// Partitions is the number of circuits (Groth16 proofs) per sector.
	Partitions int
	// Challenges is the number of challenges proved in one partition.
	Challenges int
	// SubArity and TopArity are the arities of the levels above the octal
	// base trees of C and R_last; 0 when the level is absent.
	SubArity, TopArity int
	// ParamsID is the SHA-256 (hex) of rust-fil-proofs' identifier of the
	// circuit's public parameters, which names the official parameter files.
	ParamsID string
}

// Parameters of the stacked graph that every shape shares.
const (
	// BaseArity is the arity of the base levels of trees C and R_last.
	BaseArity = 8
	// DRGParents and ExpParents are the base and expander degrees.
	DRGParents = graph.BaseDegree
	ExpParents = graph.ExpansionDegree
	// NodeSize is the size of a node in bytes.
	NodeSize = 32
)

// The shapes of the production sector sizes: the sizes, layers, partitions,
// challenges and arities of package inputs' table (filecoin-proofs
// constants.rs), named as the V1 proofs and with their parameter ids.
var (
	Shape2KiB   = shapeOf(inputs.StackedDrg2KiBV1, "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f")
	Shape8MiB   = shapeOf(inputs.StackedDrg8MiBV1, "ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb")
	Shape512MiB = shapeOf(inputs.StackedDrg512MiBV1, "6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472")
	Shape32GiB  = shapeOf(inputs.StackedDrg32GiBV1, "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820")
	Shape64GiB  = shapeOf(inputs.StackedDrg64GiBV1, "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2")
)

// shapeOf returns the shape of the interactive proof p.
func shapeOf(p inputs.Proof, paramsID string) Shape {
	is, err := p.Shape()
	if err != nil {
		panic(err) // p is one of the V1 proofs above
	}
	return Shape{Name: p.String(), SectorSize: is.SectorSize, Layers: is.Layers, Partitions: is.Partitions,
		Challenges: is.ChallengesPerPartition, SubArity: is.SubArity, TopArity: is.TopArity, ParamsID: paramsID}
}

// inputs returns what the public inputs of s depend on, in package inputs'
// terms.
func (s Shape) inputs() inputs.Shape {
	return inputs.Shape{SectorSize: s.SectorSize, Nodes: s.Nodes(), Layers: s.Layers, Partitions: s.Partitions,
		ChallengesPerPartition: s.Challenges, BaseArity: BaseArity, SubArity: s.SubArity, TopArity: s.TopArity}
}

// Shapes lists the production shapes, smallest first.
var Shapes = []Shape{Shape2KiB, Shape8MiB, Shape512MiB, Shape32GiB, Shape64GiB}

// ShapeByName returns the production shape whose Name (the C1 vanilla-proof
// key) is name.
func ShapeByName(name string) (Shape, bool) {
	for _, s := range Shapes {
		if s.Name == name {
			return s, true
		}
	}
	return Shape{}, false
}

// ShapeBySize returns the production shape for a sector size in bytes.
func ShapeBySize(size uint64) (Shape, bool) {
	for _, s := range Shapes {
		if s.SectorSize == size {
			return s, true
		}
	}
	return Shape{}, false
}

// ParamsName returns the base name (without ".params" or ".vk") of the
// official Groth16 parameter files of the shape, as filecoin-proofs names
// them in its parameter cache.
func (s Shape) ParamsName() string {
	return fmt.Sprintf("v28-stacked-proof-of-replication-merkletree-poseidon_hasher-%d-%d-%d-sha256_hasher-%s",
		BaseArity, s.SubArity, s.TopArity, s.ParamsID)
}

// Nodes returns the number of 32-byte nodes in the sector.
func (s Shape) Nodes() uint64 { return s.SectorSize / NodeSize }

// DataPathLen returns the number of levels of a tree-D (binary) path.
func (s Shape) DataPathLen() int { return bits.Len64(s.Nodes()) - 1 }

// TreeArities returns the arity of each level of a tree C or R_last path,
// from the leaf up: the octal base levels, then the sub and top levels.
func (s Shape) TreeArities() []int {
	n := s.Nodes()
	if s.SubArity > 0 {
		n /= uint64(s.SubArity)
	}
	if s.TopArity > 0 {
		n /= uint64(s.TopArity)
	}
	var a []int
	for ; n > 1; n /= BaseArity {
		a = append(a, BaseArity)
	}
	if s.SubArity > 0 {
		a = append(a, s.SubArity)
	}
	if s.TopArity > 0 {
		a = append(a, s.TopArity)
	}
	return a
}

// NumInputs returns the number of public inputs of a partition, including
// the constant ONE (package inputs counts them without it).
func (s Shape) NumInputs() int { return 1 + s.inputs().NumInputs() }

// Validate checks that s describes a circuit this package can synthesize.
func (s Shape) Validate() error {
	pow2 := func(x uint64) bool { return x != 0 && x&(x-1) == 0 }
	switch {
	case s.SectorSize < BaseArity*NodeSize || !pow2(s.SectorSize):
		return &ShapeError{s.Name, fmt.Sprintf("sector size %d is not a power of two ≥ %d", s.SectorSize, BaseArity*NodeSize)}
	case s.Layers < 1 || s.Layers > 16:
		return &ShapeError{s.Name, fmt.Sprintf("%d layers", s.Layers)}
	case s.Partitions < 1 || s.Challenges < 1:
		return &ShapeError{s.Name, fmt.Sprintf("%d partitions of %d challenges", s.Partitions, s.Challenges)}
	case s.SubArity != 0 && !pow2(uint64(s.SubArity)), s.TopArity != 0 && !pow2(uint64(s.TopArity)),
		s.TopArity != 0 && s.SubArity == 0:
		return &ShapeError{s.Name, fmt.Sprintf("tree arities %d-%d-%d", BaseArity, s.SubArity, s.TopArity)}
	}
	base := s.Nodes() / uint64(max(s.SubArity, 1)) / uint64(max(s.TopArity, 1))
	if base < BaseArity || bits.TrailingZeros64(base)%3 != 0 {
		return &ShapeError{s.Name, fmt.Sprintf("%d nodes per base tree is not a power of 8", base)}
	}
	return nil
}

func (s Shape) String() string {
	return fmt.Sprintf("%s (%d bytes, %d layers, %d×%d challenges, tree %d-%d-%d)",
		s.Name, s.SectorSize, s.Layers, s.Partitions, s.Challenges, BaseArity, s.SubArity, s.TopArity)
}

// ShapeError reports a Shape this package cannot synthesize.
type ShapeError struct {
	Name string
	Msg  string
}

func (e *ShapeError) Error() string { return fmt.Sprintf("porep: shape %q: %s", e.Name, e.Msg) }
