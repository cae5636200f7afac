package post

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/internal/vanilla"
	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/poseidon"
)

// VerifyPartition checks natively, without the circuit, that p, partition
// k of a PoSt whose public sectors in that partition are own (as
// [PartitionInputs] takes them), proves what its circuit proves with the
// given randomness: per circuit sector, comm_r is the public sector's and
// equals Poseidon(comm_c, comm_r_last); per challenge the path starts at
// the leaf PartitionInputs derives and leads from the leaf to comm_r_last.
// It also runs [Shape.Check]. A partition that passes synthesizes into a
// satisfied circuit whose public inputs are those PartitionInputs returns;
// errors are *InputError values naming the partition, sector and
// challenge.
func (s Shape) VerifyPartition(randomness [32]byte, own []PublicSector, p *Partition, k int) error {
	if err := s.Check(p); err != nil {
		return err
	}
	want, err := PartitionInputs(s, randomness, own, k)
	if err != nil {
		return err
	}
	h2 := poseidon.MustGet(2)
	per := 1 + s.Challenges
	// Sectors are checked on all cores; the error is the first sector's
	// that fails, as in order.
	return parallel.FirstError(len(p.Sectors), func(i int) error {
		sec := &p.Sectors[i]
		at := fmt.Sprintf("partition %d: sectors[%d]", k, i)
		if !sec.CommR.Equal(&want[i*per]) {
			return &InputError{at + ".comm_r", "differs from the public sector's"}
		}
		h, err := h2.Hash([]fr.Element{sec.CommC, sec.CommRLast})
		if err != nil {
			return err
		}
		if !h.Equal(&sec.CommR) {
			return &InputError{at, "comm_r ≠ Poseidon(comm_c, comm_r_last)"}
		}
		for c := range sec.Paths {
			f := fmt.Sprintf("%s.paths[%d]", at, c)
			leaf := want[i*per+1+c]
			if !leaf.IsUint64() || vanilla.Position(sec.Paths[c]) != leaf.Uint64() {
				return &InputError{f, fmt.Sprintf("proves leaf %d, the challenge is %s", vanilla.Position(sec.Paths[c]), leaf.String())}
			}
			root, err := gadget.PathRoot(gadget.TreePoseidon, sec.Leaves[c], sec.Paths[c])
			if err != nil {
				return &InputError{f, err.Error()}
			}
			if !root.Equal(&sec.CommRLast) {
				return &InputError{f, "does not lead to comm_r_last"}
			}
		}
		return nil
	})
}
