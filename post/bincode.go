package post

import (
	"fmt"

	"github.com/sealc2/c2/internal/vanilla"
	"github.com/sealc2/c2/porep"
)

// MaxSectorProofSize bounds the bincode vanilla proof [DecodeSectorProof]
// accepts: a 64 GiB Winning proof (66 inclusion proofs of 12 levels) is
// about 0.2 MB, so 16 MiB leaves room without letting lengths run away.
const MaxSectorProofSize = 16 << 20

// DecodeSectorProof decodes one vanilla proof in the bincode form
// filecoin-proofs-api's generate_single_vanilla_proof returns and
// filecoin-ffi hands over (bincode 1 defaults: little-endian fixed-width
// integers, u64 lengths, u32 enum tags, 32-byte domains inline). Trailing
// bytes are refused. Errors are *VanillaError values naming the field by
// its serde JSON path.
func DecodeSectorProof(b []byte) (*SectorProof, error) {
	var p SectorProof
	err := vanilla.Bincode(b, MaxSectorProofSize, func(r *vanilla.Reader) {
		p.SectorID = r.U64("sector_id")
		r.Domain(&p.CommR, "comm_r")
		p.Sectors = make([]VanillaSector, r.Length("vanilla_proof.sectors", 8+2*32))
		for i := range p.Sectors {
			at := fmt.Sprintf("vanilla_proof.sectors[%d]", i)
			v := &p.Sectors[i]
			v.InclusionProofs = make([]porep.MerkleProof, r.Length(at+".inclusion_proofs", 4+2*32+8))
			for c := range v.InclusionProofs {
				r.Merkle(&v.InclusionProofs[c], fmt.Sprintf("%s.inclusion_proofs[%d].data", at, c))
			}
			r.Domain(&v.CommC, at+".comm_c")
			r.Domain(&v.CommRLast, at+".comm_r_last")
		}
	})
	if err != nil {
		return nil, placed(err)
	}
	return &p, nil
}

// DecodeVanilla decodes one sector's vanilla proof given either as its
// bincode bytes ([DecodeSectorProof]) or as a serde JSON object
// ([DecodeSectorProofJSON]): bincode first, and, when that fails and b
// reads as a JSON object (a leading '{'), JSON, whose error it then
// returns. Bincode bytes may start with '{' (sector_id's lowest byte).
func DecodeVanilla(b []byte) (*SectorProof, error) {
	return vanilla.BincodeOrJSON(b, DecodeSectorProof, DecodeSectorProofJSON)
}
