// Package post synthesizes the Filecoin Window and Winning PoSt circuit
// (storage-proofs-post's FallbackPoStCircuit) constraint for constraint as
// rust-fil-proofs and bellperson do: the same variables in the same order,
// the same constraints with the same coefficients, hence the same R1CS,
// witness, public inputs and Groth16 parameters.
//
// A partition proves [Shape.Sectors] sectors. For each, in order, the
// circuit allocates comm_r_last and comm_c (private) and comm_r (a public
// input), enforces comm_r = Poseidon(comm_c, comm_r_last), then proves each
// challenged leaf in tree R_last under comm_r_last with the PoR gadget,
// whose packed path bits (the leaf's index) become a public input.
//
//	shape, _ := ShapeByName("StackedDrgWindow32GiBV1_2")
//	err := Synthesize(sys, shape, part)           // record (r1cs.System), count (r1cs.Counter), …
//	w, err := WitnessContext(ctx, shape, part, 0, nil) // … or only the assignment, on all cores
package post

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

// Sector is one circuit sector: storage-proofs-post's Sector with values.
type Sector struct {
	CommR, CommC, CommRLast fr.Element
	// Leaves and Paths hold, per challenge, the challenged leaf of tree
	// R_last and its inclusion path (leaf level first).
	Leaves []fr.Element
	Paths  [][]gadget.PathLevel
}

// Partition is what one Groth16 proof proves: exactly Shape.Sectors sectors
// (filecoin-proofs pads a short last partition by repeating its last sector).
type Partition struct {
	Sectors []Sector
}

// InputError reports a partition that does not fit its shape. Field names
// the offending value, e.g. "sectors[3].paths[1][2]".
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return fmt.Sprintf("post: %s: %s", e.Field, e.Msg) }

// Check reports whether p has the shape s fixes: the sector and challenge
// counts and, per path, the arities of tree R_last with in-range indices.
func (s Shape) Check(p *Partition) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if p == nil {
		return &InputError{"sectors", "no partition"}
	}
	if len(p.Sectors) != s.Sectors {
		return &InputError{"sectors", fmt.Sprintf("%d sectors, want %d", len(p.Sectors), s.Sectors)}
	}
	arities := s.TreeArities()
	for i := range p.Sectors {
		sec := &p.Sectors[i]
		if len(sec.Leaves) != s.Challenges || len(sec.Paths) != s.Challenges {
			return &InputError{fmt.Sprintf("sectors[%d]", i),
				fmt.Sprintf("%d leaves and %d paths, want %d", len(sec.Leaves), len(sec.Paths), s.Challenges)}
		}
		for c, path := range sec.Paths {
			if len(path) != len(arities) {
				return &InputError{fmt.Sprintf("sectors[%d].paths[%d]", i, c),
					fmt.Sprintf("%d levels, want %d", len(path), len(arities))}
			}
			for l := range path {
				if path[l].Arity() != arities[l] || path[l].Index < 0 || path[l].Index >= arities[l] {
					return &InputError{fmt.Sprintf("sectors[%d].paths[%d][%d]", i, c, l),
						fmt.Sprintf("index %d of arity %d, want arity %d", path[l].Index, path[l].Arity(), arities[l])}
				}
			}
		}
	}
	return nil
}

// Synthesize synthesizes the circuit of partition p (shape s) into b in
// bellperson's order (FallbackPoStCircuit::synthesize_default). b may
// record ([r1cs.System]), count ([r1cs.Counter]) or keep only the witness
// ([r1cs.Witness]); the caller finalizes it. p must pass [Shape.Check]; any
// error is returned before b is touched.
func Synthesize(b r1cs.Builder, s Shape, p *Partition) error {
	if err := s.Check(p); err != nil {
		return err
	}
	cs := gadget.New(b)
	for i := range p.Sectors {
		if err := synthSector(cs, &p.Sectors[i]); err != nil {
			return err
		}
	}
	return nil
}

// synthSector is Sector::synthesize.
func synthSector(cs *gadget.CS, sec *Sector) error {
	commRLast := cs.AllocNum(sec.CommRLast)
	commC := cs.AllocNum(sec.CommC)
	commR := cs.AllocNum(sec.CommR)
	cs.Inputize(commR)
	cs.Equal(commR, cs.Poseidon(poseidon.MustGet(2), []gadget.Num{commC, commRLast}))
	for c := range sec.Leaves {
		if err := cs.PoR(gadget.TreePoseidon, cs.AllocNum(sec.Leaves[c]), sec.Paths[c], commRLast); err != nil {
			return err
		}
	}
	return nil
}

// WitnessContext computes the assignment of partition p (shape s) on up to
// workers goroutines (GOMAXPROCS when workers ≤ 0), its aux values written
// into aux when aux (nil, or a buffer to reuse) has the capacity for them.
// The result equals what
// [Synthesize] into an [r1cs.Witness] produces: Inputs[0] is ONE, then the
// public inputs in order; Aux in allocation order. Sectors share no
// variable and allocate alike, so each is synthesized on its own, straight
// into its place in the result ([r1cs.Witness.AppendParts]).
// No sector starts once ctx is done, and ctx's error is returned when those
// running end.
func WitnessContext(ctx context.Context, s Shape, p *Partition, workers int, aux []fr.Element) (*r1cs.Witness, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	w := r1cs.NewWitness(s.NumInputs(), 0)
	w.Aux = aux[:0]
	err := w.AppendParts(ctx, len(p.Sectors), workers, func(i int, part *r1cs.Witness) error {
		return synthSector(gadget.New(part), &p.Sectors[i])
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// SynthesizeBlank synthesizes the circuit of shape s from its
// [BlankPartition] into b: the R1CS of the shape, with values that satisfy
// nothing.
func SynthesizeBlank(b r1cs.Builder, s Shape) error {
	blank, err := BlankPartition(s)
	if err != nil {
		return err
	}
	return Synthesize(b, s, blank)
}

// RecordContext records the R1CS of shape s, the one [SynthesizeBlank]
// gives, on up to workers goroutines (GOMAXPROCS when workers ≤ 0), and
// finalizes it without an assignment ([r1cs.System.Unassigned]): each
// sector is a segment of a shape-only [r1cs.Segmented] recording (sectors
// share no variable), so the constraints equal the sequential recording's.
// The blank sectors are alike, so the first is recorded and repeated
// ([r1cs.Segmented.Repeat]) into the others' variables: a 32 GiB Window
// partition's 125 M constraints cost one sector's recording and the
// joined System's ≈ 11 GB. ctx's error is returned once ctx is done, within
// 4096 constraints of its end while a sector is recorded.
func RecordContext(ctx context.Context, s Shape, workers int) (*r1cs.System, error) {
	blank, err := BlankPartition(s)
	if err != nil {
		return nil, err
	}
	// Every sector of a blank partition allocates what the first does. Both
	// syntheses stop within 4096 constraints of ctx's end (r1cs.BuildContext).
	sector0 := func(b r1cs.Builder) error { return synthSector(gadget.New(b), &blank.Sectors[0]) }
	var one r1cs.Witness
	if err := r1cs.BuildContext(ctx, &one, sector0); err != nil {
		return nil, err
	}
	nIn, nAux := len(one.Inputs), len(one.Aux)
	rec := r1cs.NewSegmentedShape(1+len(blank.Sectors)*nIn, len(blank.Sectors)*nAux)
	first := rec.Segment(nIn, nAux)
	err = r1cs.BuildContext(ctx, first, sector0)
	first.Done()
	if err != nil {
		return nil, err
	}
	if err := rec.Repeat(first, len(blank.Sectors)-1, nil); err != nil {
		return nil, fmt.Errorf("post: %s: sectors cannot be repeated: %w", s.Name, err)
	}
	return rec.System(ctx, workers)
}

// BlankPartition returns a partition of shape s whose values are all zero:
// it synthesizes the R1CS of the shape (which depends on nothing else), as
// FallbackPoStCompound::blank_circuit does for parameter generation, but
// its witness satisfies nothing.
func BlankPartition(s Shape) (*Partition, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	arities := s.TreeArities()
	path := make([]gadget.PathLevel, len(arities))
	for l, a := range arities {
		path[l].Siblings = make([]fr.Element, a-1)
	}
	sec := Sector{Leaves: make([]fr.Element, s.Challenges), Paths: make([][]gadget.PathLevel, s.Challenges)}
	for c := range sec.Paths {
		sec.Paths[c] = path
	}
	p := &Partition{Sectors: make([]Sector, s.Sectors)}
	for i := range p.Sectors {
		p.Sectors[i] = sec
	}
	return p, nil
}
