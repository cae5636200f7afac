package update

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/poseidon"
)

// genRandomness is Poseidon of arity 2 with storage-proofs-update's custom
// domain separation tag (neptune HashType::Custom(CType::Arbitrary(1)):
// tag 1·2^40 in place of the Merkle-tree tag); the round constants and
// matrices are those of arity 2. phi, rho and the challenge digests use it.
var genRandomness = func() *poseidon.Constants {
	c := *poseidon.MustGet(2)
	var tag fr.Element
	tag.SetUint64(1 << 40)
	c.DomainTag = tag
	return &c
}()

// GenRandomnessHash returns Poseidon(a, b) under the custom "gen
// randomness" domain tag.
func GenRandomnessHash(a, b fr.Element) fr.Element {
	h, err := genRandomness.Hash([]fr.Element{a, b})
	if err != nil {
		panic(err) // two elements for arity 2
	}
	return h
}

// Phi returns phi = H(comm_d_new, comm_r_old) (storage-proofs-update phi).
func Phi(commDNew, commROld fr.Element) fr.Element { return GenRandomnessHash(commDNew, commROld) }

// Rho returns rho = H(phi, high), high the h high bits of a node index
// (storage-proofs-update rho).
func Rho(phi fr.Element, high uint32) fr.Element {
	var x fr.Element
	x.SetUint64(uint64(high))
	return GenRandomnessHash(phi, x)
}

// ChallengeNodes returns the node indices partition k challenges: for each
// digest j of the partition, H(comm_r_new, k·DigestsPerPartition + j) read
// as little-endian bits gives ChallengesPerDigest challenges of RandomBits
// bits each, to which k is appended as the high bits, so that every
// challenge lies in the k-th chunk of the sector (storage-proofs-update
// Challenges::new).
func (s Shape) ChallengeNodes(commRNew fr.Element, k int) ([]uint64, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if k < 0 || k >= s.Partitions {
		return nil, &InputError{"k", fmt.Sprintf("partition %d of %d", k, s.Partitions)}
	}
	rb := s.RandomBits()
	per := s.ChallengesPerDigest()
	digests := s.DigestsPerPartition()
	out := make([]uint64, 0, s.Challenges)
	for j := 0; len(out) < s.Challenges; j++ {
		var idx fr.Element
		idx.SetUint64(uint64(k*digests + j))
		d := GenRandomnessHash(commRNew, idx)
		limbs := d.Bits()
		for i := 0; i < per && len(out) < s.Challenges; i++ {
			var c uint64
			for b := 0; b < rb; b++ {
				p := i*rb + b
				c |= (limbs[p/64] >> (p % 64) & 1) << b
			}
			out = append(out, c|uint64(k)<<rb)
		}
	}
	return out, nil
}

// PublicInputs are what a SnapDeals proof is verified against
// (storage-proofs-update's vanilla PublicInputs without k): the old and
// new replica commitments, the new data commitment, and h.
type PublicInputs struct {
	CommROld, CommDNew, CommRNew fr.Element
	// H is the number of high challenge bits rho depends on; filecoin-proofs
	// always uses [Shape.HDefault].
	H int
}

// InputError reports public or private inputs that do not fit the shape.
// Field names the offending value, e.g. "challenge_proofs[3].proof_d_new".
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return fmt.Sprintf("update: %s: %s", e.Field, e.Msg) }

// KAndHSelect returns the first public input of partition k: k in the low
// PartitionBits bits and the one-hot h_select above them.
func (s Shape) KAndHSelect(k, h int) (uint64, error) {
	if k < 0 || k >= s.Partitions {
		return 0, &InputError{"k", fmt.Sprintf("partition %d of %d", k, s.Partitions)}
	}
	hs, ok := s.HSelect(h)
	if !ok {
		return 0, &InputError{"h", fmt.Sprintf("%d is not one of %v", h, s.Hs)}
	}
	return uint64(k) | hs<<s.PartitionBits(), nil
}

// Inputs returns the public inputs of partition k without ONE, as
// EmptySectorUpdateCompound::generate_public_inputs orders them:
// k_and_h_select, comm_r_old, comm_d_new, comm_r_new.
func (s Shape) Inputs(pub PublicInputs, k int) ([]fr.Element, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	kh, err := s.KAndHSelect(k, pub.H)
	if err != nil {
		return nil, err
	}
	var x fr.Element
	x.SetUint64(kh)
	return []fr.Element{x, pub.CommROld, pub.CommDNew, pub.CommRNew}, nil
}
