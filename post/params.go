package post

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/sealc2/c2/porep"
)

// ParamsVersion is the parameter-cache version filecoin-proofs puts in
// front of every parameter file name (storage-proofs-core VERSION).
const ParamsVersion = 28

// CircuitIdentifier returns the identifier filecoin-proofs caches the
// shape's parameters under (CacheableParameters::cache_identifier): the
// prefix "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-<sub>-<top>"
// and the hex SHA-256 of FallbackPoSt's PublicParams identifier, which
// names the sector size and the circuit's challenge and sector counts (not
// the API version: V1 and V1_2 Window proofs share their parameters).
func (s Shape) CircuitIdentifier() string {
	id := fmt.Sprintf("FallbackPoSt::PublicParams{sector_size: %d, challenge_count: %d, sector_count: %d}",
		s.SectorSize, s.Challenges, s.Sectors)
	h := sha256.Sum256([]byte(id))
	return fmt.Sprintf("proof-of-spacetime-fallback-merkletree-poseidon_hasher-%d-%d-%d-%s",
		porep.BaseArity, s.SubArity, s.TopArity, hex.EncodeToString(h[:]))
}

// ParamsName returns the base name (without ".params" or ".vk") of the
// official Groth16 parameter files of the shape, as filecoin-proofs names
// them in its parameter cache: "v28-" and the circuit identifier.
func (s Shape) ParamsName() string {
	return fmt.Sprintf("v%d-%s", ParamsVersion, s.CircuitIdentifier())
}
