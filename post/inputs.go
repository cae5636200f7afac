package post

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// PublicSector is a sector a PoSt proves: its id and replica commitment
// (storage-proofs-post's PublicSector).
type PublicSector struct {
	ID    uint64
	CommR fr.Element
}

// ChallengeIndex returns the index from which challenge n of the sector at
// position sectorIndex (counted over all partitions) is derived
// (storage-proofs-post get_challenge_index).
func ChallengeIndex(v APIVersion, sectorIndex, challenges, n int) uint64 {
	if v == V1_2_0 {
		return uint64(n)
	}
	return uint64(sectorIndex*challenges + n)
}

// LeafChallenge returns the challenged leaf of a sector: the first 8 bytes,
// little-endian, of SHA-256(randomness ‖ sectorID ‖ index) (both integers
// as 8 little-endian bytes), modulo the number of leaves
// (generate_leaf_challenge).
func LeafChallenge(s Shape, randomness [32]byte, sectorID, index uint64) uint64 {
	var buf [48]byte
	copy(buf[:], randomness[:])
	binary.LittleEndian.PutUint64(buf[32:], sectorID)
	binary.LittleEndian.PutUint64(buf[40:], index)
	h := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(h[:8]) % s.Nodes()
}

// Partitions returns the number of partitions (Groth16 proofs) that prove
// n sectors: one for Winning, ⌈n / Sectors⌉ (at least one) for Window.
func (s Shape) Partitions(n int) int {
	if s.Kind == Winning || n <= s.Sectors {
		return 1
	}
	return (n + s.Sectors - 1) / s.Sectors
}

// PartitionSectors returns the public sectors of partition k of a PoSt
// over sectors, as FallbackPoStCompound::generate_public_inputs picks them:
// for Window the k-th run of Sectors sectors (the last one may be short),
// for Winning (k = 0) the one challenged sector. Errors are *InputError
// values.
func (s Shape) PartitionSectors(sectors []PublicSector, k int) ([]PublicSector, error) {
	if len(sectors) == 0 {
		return nil, &InputError{"sectors", "no sector"}
	}
	if k < 0 || k >= s.Partitions(len(sectors)) {
		return nil, &InputError{"partition", fmt.Sprintf("partition %d of %d sectors", k, len(sectors))}
	}
	if s.Kind == Winning {
		return sectors, nil
	}
	return sectors[k*s.Sectors : min(len(sectors), (k+1)*s.Sectors)], nil
}

// PartitionInputs returns the public inputs (without ONE) of partition k of
// a PoSt from the public sectors of that partition alone, in order, as
// FallbackPoStCompound::generate_public_inputs computes them for partition
// k of the whole proof: per circuit sector its comm_r, then per challenge
// the challenged leaf's index. The challenge indices of the sector at
// place i count its position k·Sectors + i in the whole proof (V1; V1_2
// uses the challenge number alone), so no other partition's sectors are
// needed. Window takes 1 to Sectors sectors, a short partition repeating
// its last sector's inputs; Winning takes its one challenged sector, k = 0,
// repeated once per circuit sector (as verify_winning_post builds its
// inputs). randomness must be a canonical scalar (filecoin-proofs refuses
// others). Errors are *InputError values naming the field.
func PartitionInputs(s Shape, randomness [32]byte, sectors []PublicSector, k int) ([]fr.Element, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if _, err := fr.LittleEndian.Element(&randomness); err != nil {
		return nil, &InputError{"randomness", "not a canonical field element"}
	}
	switch n := len(sectors); {
	case n == 0:
		return nil, &InputError{"sectors", "no sector"}
	case s.Kind == Winning && n != 1:
		return nil, &InputError{"sectors", fmt.Sprintf("Winning PoSt proves 1 sector, got %d", n)}
	case n > s.Sectors:
		return nil, &InputError{"sectors", fmt.Sprintf("%d sectors; a partition of %s holds at most %d", n, s.Name, s.Sectors)}
	case k < 0 || (s.Kind == Winning && k != 0):
		return nil, &InputError{"partition", fmt.Sprintf("%d is no partition of %s", k, s.Name)}
	case uint64(k) >= math.MaxInt64/(uint64(s.Sectors)*uint64(s.Challenges)):
		return nil, &InputError{"partition", fmt.Sprintf("%d: its challenge indices overflow 63 bits", k)}
	}
	if s.Kind == Winning {
		sectors = slices.Repeat(sectors, s.Sectors)
	}
	per := 1 + s.Challenges
	out := make([]fr.Element, 0, s.Sectors*per)
	for i, sec := range sectors {
		out = append(out, sec.CommR)
		for n := 0; n < s.Challenges; n++ {
			idx := ChallengeIndex(s.Version, k*s.Sectors+i, s.Challenges, n)
			var e fr.Element
			e.SetUint64(LeafChallenge(s, randomness, sec.ID, idx))
			out = append(out, e)
		}
	}
	for len(out) < s.Sectors*per {
		out = append(out, out[len(out)-per:]...)
	}
	return out, nil
}
