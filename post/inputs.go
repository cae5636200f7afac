package post

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

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

// circuitSectors returns the public sectors as the circuit sees them: for
// Winning the one challenged sector repeated once per circuit sector (as
// verify_winning_post builds its public inputs), for Window the sectors.
func (s Shape) circuitSectors(sectors []PublicSector) ([]PublicSector, error) {
	if len(sectors) == 0 {
		return nil, &InputError{"sectors", "no sector"}
	}
	if s.Kind == Window {
		return sectors, nil
	}
	if len(sectors) != 1 {
		return nil, &InputError{"sectors", fmt.Sprintf("Winning PoSt proves 1 sector, got %d", len(sectors))}
	}
	out := make([]PublicSector, s.Sectors)
	for i := range out {
		out[i] = sectors[0]
	}
	return out, nil
}

// PublicInputs returns the public inputs (without ONE) of partition k of a
// PoSt over sectors with the given randomness, as
// FallbackPoStCompound::generate_public_inputs computes them: per sector of
// the partition its comm_r, then per challenge the challenged leaf's index;
// a short last partition repeats its last sector's inputs. Winning takes
// the one challenged sector. randomness must be a canonical scalar
// (filecoin-proofs refuses others).
func PublicInputs(s Shape, randomness [32]byte, sectors []PublicSector, k int) ([]fr.Element, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if _, err := fr.LittleEndian.Element(&randomness); err != nil {
		return nil, &InputError{"randomness", "not a canonical field element"}
	}
	all, err := s.circuitSectors(sectors)
	if err != nil {
		return nil, err
	}
	if k < 0 || k*s.Sectors >= len(all) {
		return nil, &InputError{"partition", fmt.Sprintf("partition %d of %d sectors", k, len(all))}
	}
	chunk := all[k*s.Sectors : min(len(all), (k+1)*s.Sectors)]
	per := 1 + s.Challenges
	out := make([]fr.Element, 0, s.Sectors*per)
	for i, sec := range chunk {
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

// WinningSectorChallenge returns the index, in 0..setLen, of the sector
// challenge n of a Winning PoSt picks among the miner's setLen sectors: the
// first 8 bytes, little-endian, of SHA-256(proverID ‖ randomness ‖ n as 8
// little-endian bytes), modulo setLen (generate_sector_challenge; Winning
// PoSt asks for n = 0 only). setLen must not be zero.
func WinningSectorChallenge(proverID, randomness [32]byte, n, setLen uint64) (uint64, error) {
	if setLen == 0 {
		return 0, &InputError{"sector_set_len", "empty sector set"}
	}
	var buf [72]byte
	copy(buf[:], proverID[:])
	copy(buf[32:], randomness[:])
	binary.LittleEndian.PutUint64(buf[64:], n)
	h := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(h[:8]) % setLen, nil
}
