package update

import (
	"encoding/json"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/fielderr"
	"github.com/sealc2/c2/internal/vanilla"
	"github.com/sealc2/c2/porep"
)

// PartitionProof is storage-proofs-update's vanilla PartitionProof, what
// filecoin-proofs-api's generate_partition_proofs returns per partition
// (filecoin-ffi hands each over bincode-encoded, [DecodePartitionProof];
// [DecodePartitionProofJSON] reads the serde JSON form).
type PartitionProof struct {
	CommC           porep.Domain
	ApexLeafs       []porep.Domain
	ChallengeProofs []ChallengeProof
}

// ChallengeProof holds the three inclusion proofs of one challenged node:
// in the old replica's tree R, in the new data's tree D and in the new
// replica's tree R.
type ChallengeProof struct {
	ProofROld, ProofDNew, ProofRNew porep.MerkleProof
}

// VanillaError reports a vanilla proof that cannot be decoded or does not
// fit the shape. Field is the serde JSON path of the offending value, e.g.
// "[0].challenge_proofs[3].proof_d_new.data.Single.leaf"; the message
// reads "update: vanilla proof: field: cause".
type VanillaError = fielderr.Error[vanillaProof]

// vanillaProof is the kind of input a VanillaError speaks of.
type vanillaProof struct{}

func (vanillaProof) Subject() string { return "update: vanilla proof" }

// fieldErr is a shape mismatch at a vanilla-proof path.
func fieldErr(field, format string, args ...any) *VanillaError {
	return fielderr.Errorf[vanillaProof](field, format, args...)
}

// placed turns a *vanilla.FieldError into a *VanillaError.
func placed(err error) error { return vanilla.Place(err, fielderr.Wrap[vanillaProof]) }

// jsonPartitionProof mirrors the serde JSON of PartitionProof, its pointer
// fields the required members ([vanilla.Required]).
type jsonPartitionProof struct {
	CommC           *porep.Domain    `json:"comm_c"`
	ApexLeafs       *[]porep.Domain  `json:"apex_leafs"`
	ChallengeProofs *[]jsonChallenge `json:"challenge_proofs"`
}

type jsonChallenge struct {
	ProofROld *json.RawMessage `json:"proof_r_old"`
	ProofDNew *json.RawMessage `json:"proof_d_new"`
	ProofRNew *json.RawMessage `json:"proof_r_new"`
}

// DecodePartitionProofJSON decodes one PartitionProof in serde JSON.
func DecodePartitionProofJSON(b []byte) (*PartitionProof, error) {
	p, err := vanilla.One(b, (*PartitionProof).decodeJSON)
	return p, placed(err)
}

// decodeJSON decodes p from the serde JSON at path at; errors are
// *vanilla.FieldError values.
func (p *PartitionProof) decodeJSON(b []byte, at string) error {
	var j jsonPartitionProof
	if err := vanilla.Object(b, &j, at); err != nil {
		return err
	}
	p.CommC, p.ApexLeafs = *j.CommC, *j.ApexLeafs
	p.ChallengeProofs = make([]ChallengeProof, len(*j.ChallengeProofs))
	for i, c := range *j.ChallengeProofs {
		f := fmt.Sprintf("challenge_proofs[%d]", i)
		cp := &p.ChallengeProofs[i]
		for _, m := range []struct {
			name string
			raw  *json.RawMessage
			dst  *porep.MerkleProof
		}{{"proof_r_old", c.ProofROld, &cp.ProofROld}, {"proof_d_new", c.ProofDNew, &cp.ProofDNew}, {"proof_r_new", c.ProofRNew, &cp.ProofRNew}} {
			if m.raw == nil {
				return vanilla.Missing(at, f+"."+m.name)
			}
			if err := vanilla.MerkleJSON(m.dst, *m.raw, vanilla.Join(at, f+"."+m.name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// MaxPartitionProofSize bounds the bincode vanilla proof
// [DecodePartitionProof] accepts: a 64 GiB partition proof (86 challenges
// of three proofs, about 1,500 bytes each, and 128 apex leaves) is about
// 0.4 MB.
const MaxPartitionProofSize = 16 << 20

// DecodePartitionProof decodes one partition proof in the bincode form
// filecoin-proofs-api's generate_partition_proofs returns
// (PartitionProofBytes; bincode 1 defaults: little-endian fixed-width
// integers, u64 lengths, u32 enum tags, 32-byte domains inline). Trailing
// bytes are refused. Errors are *VanillaError values naming the field by
// its serde JSON path.
func DecodePartitionProof(b []byte) (*PartitionProof, error) {
	var p PartitionProof
	err := vanilla.Bincode(b, MaxPartitionProofSize, func(r *vanilla.Reader) {
		r.Domain(&p.CommC, "comm_c")
		p.ApexLeafs = make([]porep.Domain, r.Length("apex_leafs", 32))
		for i := range p.ApexLeafs {
			r.Domain(&p.ApexLeafs[i], fmt.Sprintf("apex_leafs[%d]", i))
		}
		// A Merkle proof takes at least a tag, two domains and a length.
		p.ChallengeProofs = make([]ChallengeProof, r.Length("challenge_proofs", 3*(4+64+8)))
		for i := range p.ChallengeProofs {
			c := &p.ChallengeProofs[i]
			for j, m := range []*porep.MerkleProof{&c.ProofROld, &c.ProofDNew, &c.ProofRNew} {
				r.Merkle(m, fmt.Sprintf("challenge_proofs[%d].%s.data", i, [...]string{"proof_r_old", "proof_d_new", "proof_r_new"}[j]))
			}
		}
	})
	if err != nil {
		return nil, placed(err)
	}
	return &p, nil
}

// DecodeVanilla decodes one partition proof given either as its bincode
// bytes or as a serde JSON object: bincode first, and, when that fails and
// b reads as a JSON object (a leading '{'), JSON, whose error it then
// returns. Bincode bytes may start with '{' (comm_c's lowest byte).
func DecodeVanilla(b []byte) (*PartitionProof, error) {
	return vanilla.BincodeOrJSON(b, DecodePartitionProof, DecodePartitionProofJSON)
}

// element converts a domain to a field element, naming field on failure.
func element(d porep.Domain, field string) (fr.Element, error) {
	e, err := vanilla.Element(d, field)
	return e, placed(err)
}
