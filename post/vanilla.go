package post

import (
	"encoding/json"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/fielderr"
	"github.com/sealc2/c2/internal/vanilla"
	"github.com/sealc2/c2/porep"
)

// SectorProof is filecoin-proofs' FallbackPoStSectorProof: the vanilla proof
// of one sector that generate_single_vanilla_proof returns (filecoin-ffi
// hands it over bincode-encoded; [DecodeSectorProofJSON] reads its serde
// JSON form, [DecodeSectorProof] the bincode bytes).
type SectorProof struct {
	SectorID uint64
	CommR    porep.Domain
	// Sectors is vanilla_proof.sectors: one entry per proved sector (one
	// for proofs made by generate_single_vanilla_proof).
	Sectors []VanillaSector
}

// VanillaSector is storage-proofs-post's SectorProof: the inclusion proofs
// of the challenged leaves in tree R_last and the sector's private roots.
type VanillaSector struct {
	InclusionProofs []porep.MerkleProof
	CommC           porep.Domain
	CommRLast       porep.Domain
}

// VanillaError reports a vanilla proof that cannot be decoded or does not
// fit the shape. Field is the path of the offending value, e.g.
// "[1].vanilla_proof.sectors[0].inclusion_proofs[3].data.Single.leaf";
// the message reads "post: vanilla proof: field: cause".
type VanillaError = fielderr.Error[vanillaProof]

// vanillaProof is the kind of input a VanillaError speaks of.
type vanillaProof struct{}

func (vanillaProof) Subject() string { return "post: vanilla proof" }

// jsonSectorProof mirrors the serde JSON of FallbackPoStSectorProof, its
// pointer fields the required members ([vanilla.Required]); the Merkle
// proofs stay raw so that their errors can be placed.
type jsonSectorProof struct {
	SectorID     *uint64       `json:"sector_id"`
	CommR        *porep.Domain `json:"comm_r"`
	VanillaProof *struct {
		Sectors *[]struct {
			InclusionProofs *[]json.RawMessage `json:"inclusion_proofs"`
			CommC           *porep.Domain      `json:"comm_c"`
			CommRLast       *porep.Domain      `json:"comm_r_last"`
		} `json:"sectors"`
	} `json:"vanilla_proof"`
}

// DecodeSectorProofJSON decodes one FallbackPoStSectorProof in serde JSON.
func DecodeSectorProofJSON(b []byte) (*SectorProof, error) {
	p, err := vanilla.One(b, (*SectorProof).decodeJSON)
	return p, placed(err)
}

// decodeJSON decodes p from the serde JSON at path at; errors are
// *vanilla.FieldError values.
func (p *SectorProof) decodeJSON(b []byte, at string) error {
	var j jsonSectorProof
	if err := vanilla.Object(b, &j, at); err != nil {
		return err
	}
	p.SectorID, p.CommR = *j.SectorID, *j.CommR
	p.Sectors = make([]VanillaSector, len(*j.VanillaProof.Sectors))
	for i, s := range *j.VanillaProof.Sectors {
		f := vanilla.Join(at, fmt.Sprintf("vanilla_proof.sectors[%d]", i))
		if err := vanilla.Required(&s, f); err != nil {
			return err
		}
		v := &p.Sectors[i]
		v.CommC, v.CommRLast = *s.CommC, *s.CommRLast
		v.InclusionProofs = make([]porep.MerkleProof, len(*s.InclusionProofs))
		for c, m := range *s.InclusionProofs {
			if err := vanilla.MerkleJSON(&v.InclusionProofs[c], m, fmt.Sprintf("%s.inclusion_proofs[%d]", f, c)); err != nil {
				return err
			}
		}
	}
	return nil
}

// placed turns a *vanilla.FieldError into a *VanillaError.
func placed(err error) error { return vanilla.Place(err, fielderr.Wrap[vanillaProof]) }

// fieldErr is a shape mismatch at a vanilla-proof path.
func fieldErr(field, format string, args ...any) *VanillaError {
	return fielderr.Errorf[vanillaProof](field, format, args...)
}

// circuitSector converts one vanilla sector into a circuit sector with the
// given comm_r, checking that each value is a canonical scalar.
func circuitSector(v *VanillaSector, commR fr.Element, at string) (Sector, error) {
	sec := Sector{CommR: commR}
	var err error
	if sec.CommC, err = vanilla.Element(v.CommC, at+".comm_c"); err != nil {
		return sec, placed(err)
	}
	if sec.CommRLast, err = vanilla.Element(v.CommRLast, at+".comm_r_last"); err != nil {
		return sec, placed(err)
	}
	for c := range v.InclusionProofs {
		m := &v.InclusionProofs[c]
		f := fmt.Sprintf("%s.inclusion_proofs[%d]", at, c)
		leaf, err := vanilla.Element(m.Leaf, f+".leaf")
		if err != nil {
			return sec, placed(err)
		}
		path, err := vanilla.Levels(m, f)
		if err != nil {
			return sec, placed(err)
		}
		sec.Leaves = append(sec.Leaves, leaf)
		sec.Paths = append(sec.Paths, path)
	}
	return sec, nil
}

// Partitions turns the per-sector vanilla proofs of a PoSt into the
// circuit partitions filecoin-proofs proves (partition_vanilla_proofs, then
// FallbackPoStCompound::circuit) and the public sectors
// [Shape.PartitionSectors] takes. Window: the sectors in the order given,
// Sectors per partition, a short last partition padded by repeating its
// last sector. Winning: one proof of one sector whose 66 inclusion proofs
// become the 66 circuit sectors. Errors are *VanillaError values naming the
// offending proof ("[i]...") or *InputError values from [Shape.Check].
func Partitions(s Shape, proofs []SectorProof) ([]*Partition, []PublicSector, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	if len(proofs) == 0 {
		return nil, nil, fieldErr("", "no vanilla proof")
	}
	pub := make([]PublicSector, len(proofs))
	for i := range proofs {
		cr, err := proofs[i].CommR.Element()
		if err != nil {
			return nil, nil, fieldErr(fmt.Sprintf("[%d].comm_r", i), "not a canonical field element")
		}
		pub[i] = PublicSector{ID: proofs[i].SectorID, CommR: cr}
		if len(proofs[i].Sectors) == 0 {
			return nil, nil, fieldErr(fmt.Sprintf("[%d].vanilla_proof.sectors", i), "empty")
		}
	}
	var parts []*Partition
	if s.Kind == Winning {
		if len(proofs) != 1 || len(proofs[0].Sectors) != 1 {
			return nil, nil, fieldErr("", "Winning PoSt needs 1 proof of 1 sector, got %d proofs", len(proofs))
		}
		v := proofs[0].Sectors[0]
		at := "[0].vanilla_proof.sectors[0]"
		if n := len(v.InclusionProofs); n != s.Sectors*s.Challenges {
			return nil, nil, fieldErr(at+".inclusion_proofs", "%d proofs, want %d", n, s.Sectors*s.Challenges)
		}
		p := &Partition{Sectors: make([]Sector, s.Sectors)}
		for i := range p.Sectors {
			one := VanillaSector{InclusionProofs: v.InclusionProofs[i*s.Challenges : (i+1)*s.Challenges], CommC: v.CommC, CommRLast: v.CommRLast}
			sec, err := circuitSector(&one, pub[0].CommR, at)
			if err != nil {
				return nil, nil, err
			}
			p.Sectors[i] = sec
		}
		parts = append(parts, p)
	} else {
		for k := 0; k < s.Partitions(len(proofs)); k++ {
			chunk := pub[k*s.Sectors : min(len(pub), (k+1)*s.Sectors)]
			p := &Partition{}
			for j, ps := range chunk {
				i := k*s.Sectors + j
				// filecoin-proofs looks the proof up by sector id: the first match.
				for m := range proofs {
					if proofs[m].SectorID == ps.ID {
						i = m
						break
					}
				}
				for vs := range proofs[i].Sectors {
					at := fmt.Sprintf("[%d].vanilla_proof.sectors[%d]", i, vs)
					// comm_r comes from the public sector of the circuit position.
					pos := min(len(p.Sectors), len(chunk)-1)
					sec, err := circuitSector(&proofs[i].Sectors[vs], chunk[pos].CommR, at)
					if err != nil {
						return nil, nil, err
					}
					p.Sectors = append(p.Sectors, sec)
				}
			}
			for len(p.Sectors) < s.Sectors {
				p.Sectors = append(p.Sectors, p.Sectors[len(p.Sectors)-1])
			}
			parts = append(parts, p)
		}
	}
	for k, p := range parts {
		if err := s.Check(p); err != nil {
			return nil, nil, fmt.Errorf("partition %d: %w", k, err)
		}
	}
	return parts, pub, nil
}

// MarshalJSON writes p in the serde JSON of FallbackPoStSectorProof, the
// form [DecodeSectorProofJSON] reads.
func (p SectorProof) MarshalJSON() ([]byte, error) {
	type sector struct {
		InclusionProofs []porep.MerkleProof `json:"inclusion_proofs"`
		CommC           porep.Domain        `json:"comm_c"`
		CommRLast       porep.Domain        `json:"comm_r_last"`
	}
	out := struct {
		SectorID     uint64       `json:"sector_id"`
		CommR        porep.Domain `json:"comm_r"`
		VanillaProof struct {
			Sectors []sector `json:"sectors"`
		} `json:"vanilla_proof"`
	}{SectorID: p.SectorID, CommR: p.CommR}
	out.VanillaProof.Sectors = make([]sector, len(p.Sectors))
	for i, s := range p.Sectors {
		out.VanillaProof.Sectors[i] = sector(s)
	}
	return json.Marshal(out)
}
