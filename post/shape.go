package post

import (
	"fmt"

	"github.com/sealc2/c2/porep"
)

// Kind is the PoSt flavour of a registered proof.
type Kind uint8

const (
	// Window is Window PoSt: many sectors per partition, 10 challenges each.
	Window Kind = iota
	// Winning is Winning PoSt: one sector, 66 challenges, one partition.
	Winning
)

func (k Kind) String() string { return [...]string{"Window", "Winning"}[k&1] }

// APIVersion is the rust-fil-proofs API version of a registered PoSt proof.
// It changes only how challenge indices are derived, never the circuit.
type APIVersion uint8

const (
	// V1_0_0 derives challenge n of the sector at position i (over all
	// partitions) from index i·challenges + n.
	V1_0_0 APIVersion = iota
	// V1_2_0 derives challenge n of every sector from index n.
	V1_2_0
)

func (v APIVersion) String() string { return [...]string{"V1_0_0", "V1_2_0"}[v&1] }

// Shape fixes a FallbackPoSt circuit as filecoin-proofs registers it: the
// sector size and tree arities, and the circuit's sector and per-sector
// challenge counts (after winning_post_setup_params, which turns Winning's
// one sector of 66 challenges into 66 circuit sectors of one challenge).
// Two partitions of the same Shape have identical R1CS whatever the
// APIVersion.
type Shape struct {
	// Name is the RegisteredPoStProof variant, e.g. "StackedDrgWindow32GiBV1_2".
	Name       string
	Kind       Kind
	Version    APIVersion
	SectorSize uint64
	// Sectors is the number of sectors one partition's circuit proves.
	Sectors int
	// Challenges is the number of challenges per circuit sector.
	Challenges int
	// SubArity and TopArity are the arities of tree R_last above its octal
	// base trees (0 when absent), as for the PoRep shape of the same size.
	SubArity, TopArity int
}

// Counts registered by filecoin-proofs (constants.rs).
const (
	WindowChallenges  = 10 // WINDOW_POST_CHALLENGE_COUNT
	WinningChallenges = 66 // WINNING_POST_CHALLENGE_COUNT
)

// windowSectors is WINDOW_POST_SECTOR_COUNT per sector size.
var windowSectors = map[uint64]int{2 << 10: 2, 8 << 20: 2, 512 << 20: 2, 32 << 30: 2349, 64 << 30: 2300}

// Shapes lists every registered PoSt proof: per sector size (2 KiB, 8 MiB,
// 512 MiB, 32 GiB, 64 GiB), Winning V1, Window V1 and Window V1_2.
var Shapes = func() []Shape {
	var out []Shape
	for _, ps := range porep.Shapes {
		size := sizeName(ps.SectorSize)
		base := Shape{SectorSize: ps.SectorSize, SubArity: ps.SubArity, TopArity: ps.TopArity}
		win := base
		win.Name, win.Kind, win.Version = "StackedDrgWinning"+size+"V1", Winning, V1_0_0
		win.Sectors, win.Challenges = WinningChallenges, 1
		w1 := base
		w1.Name, w1.Kind, w1.Version = "StackedDrgWindow"+size+"V1", Window, V1_0_0
		w1.Sectors, w1.Challenges = windowSectors[ps.SectorSize], WindowChallenges
		w12 := w1
		w12.Name, w12.Version = "StackedDrgWindow"+size+"V1_2", V1_2_0
		out = append(out, win, w1, w12)
	}
	return out
}()

func sizeName(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// ShapeByName returns the registered shape named name (a RegisteredPoStProof
// variant).
func ShapeByName(name string) (Shape, bool) {
	for _, s := range Shapes {
		if s.Name == name {
			return s, true
		}
	}
	return Shape{}, false
}

// Nodes returns the number of 32-byte leaves of tree R_last.
func (s Shape) Nodes() uint64 { return s.SectorSize / porep.NodeSize }

// TreeArities returns the arity of each level of an R_last path, leaf first.
func (s Shape) TreeArities() []int {
	return porep.Shape{SectorSize: s.SectorSize, SubArity: s.SubArity, TopArity: s.TopArity}.TreeArities()
}

// NumInputs returns the public inputs of a partition, ONE included: per
// circuit sector comm_r and one packed leaf index per challenge.
func (s Shape) NumInputs() int { return 1 + s.Sectors*(1+s.Challenges) }

// Validate reports whether s describes a circuit this package synthesizes.
func (s Shape) Validate() error {
	ps := porep.Shape{Name: s.Name, SectorSize: s.SectorSize, Layers: 1, Partitions: 1, Challenges: 1,
		SubArity: s.SubArity, TopArity: s.TopArity}
	if err := ps.Validate(); err != nil {
		return err
	}
	if s.Sectors < 1 || s.Challenges < 1 {
		return &porep.ShapeError{Name: s.Name, Msg: fmt.Sprintf("%d sectors of %d challenges", s.Sectors, s.Challenges)}
	}
	return nil
}

func (s Shape) String() string {
	return fmt.Sprintf("%s (%s PoSt %s, %d bytes, %d sectors × %d challenges, tree %d-%d-%d)",
		s.Name, s.Kind, s.Version, s.SectorSize, s.Sectors, s.Challenges, porep.BaseArity, s.SubArity, s.TopArity)
}
