package inputs

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/graph"
)

// perChallenge is the number of public inputs per challenge: the tree D path
// (the challenge), 6 base and 8 expander parent paths, the challenge as a
// UInt64, the tree R_last path and the tree C path of the challenge.
const perChallenge = 1 + graph.BaseDegree + graph.ExpansionDegree + 1 + 1 + 1

// FieldError reports a 32-byte value that is not a canonical little-endian
// BLS12-381 scalar.
type FieldError struct {
	Field string // "replica_id", "comm_d" or "comm_r"
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("inputs: %s is not a canonical little-endian field element", e.Field)
}

// ErrPartition reports a partition index outside [0, Shape.Partitions).
var ErrPartition = errors.New("inputs: partition out of range")

// ErrShape reports a Shape that cannot describe a sector.
var ErrShape = errors.New("inputs: invalid shape")

// ReplicaID is storage-proofs-porep generate_replica_id: SHA-256 of prover id,
// sector id (8 bytes big-endian), ticket, comm_d and PoRep id, with the top
// two bits of the last byte cleared so that it is a field element when read
// little-endian.
func ReplicaID(proverID [32]byte, sectorID uint64, ticket, commD, porepID [32]byte) [32]byte {
	h := sha256.New()
	h.Write(proverID[:])
	var sid [8]byte
	binary.BigEndian.PutUint64(sid[:], sectorID)
	h.Write(sid[:])
	h.Write(ticket[:])
	h.Write(commD[:])
	h.Write(porepID[:])
	var out [32]byte
	h.Sum(out[:0])
	out[31] &= 0x3f
	return out
}

func (s Shape) check() error {
	if s.Nodes < 2 || s.Nodes > graph.MaxNodes || s.Partitions < 1 || s.ChallengesPerPartition < 1 ||
		uint64(s.Partitions)*uint64(s.ChallengesPerPartition) > 1<<32 || s.Partitions > 256 {
		return fmt.Errorf("%w: %+v", ErrShape, s)
	}
	return nil
}

// Challenges returns the interactive PoRep challenges of partition k
// (storage-proofs-porep InteractiveChallenges::derive): for i in
// [0, ChallengesPerPartition), with j = ChallengesPerPartition*k + i, the
// SHA-256 of replicaID || seed || j (4 bytes little-endian) read as a
// little-endian integer, reduced mod Nodes-1, plus 1. Node 0 is never
// challenged.
func Challenges(s Shape, replicaID, seed [32]byte, k int) ([]uint64, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if k < 0 || k >= s.Partitions {
		return nil, fmt.Errorf("%w: %d of %d", ErrPartition, k, s.Partitions)
	}
	out := make([]uint64, s.ChallengesPerPartition)
	mod := new(big.Int).SetUint64(s.Nodes - 1)
	var v, r big.Int
	var le [32]byte
	for i := range out {
		j := uint32(s.ChallengesPerPartition*k + i)
		h := sha256.New()
		h.Write(replicaID[:])
		h.Write(seed[:])
		var jb [4]byte
		binary.LittleEndian.PutUint32(jb[:], j)
		h.Write(jb[:])
		var sum [32]byte
		h.Sum(sum[:0])
		for b := range sum {
			le[31-b] = sum[b]
		}
		v.SetBytes(le[:])
		r.Mod(&v, mod)
		out[i] = r.Uint64() + 1
	}
	return out, nil
}

func element(b [32]byte, field string) (fr.Element, error) {
	e, err := fr.LittleEndian.Element(&b)
	if err != nil {
		return fr.Element{}, &FieldError{Field: field}
	}
	return e, nil
}

// Partition returns the public inputs of partition k in the order the
// circuit allocates them, without the constant ONE (which the verifier
// prepends): replica_id, comm_d, comm_r, then for each challenge c of the
// partition: c (tree D path), the 6 base parents, the 8 expander parents,
// c (UInt64), c (tree R_last path), c (tree C path). Every Merkle path input
// packs the path's index bits, which for these trees is the leaf index.
//
// replicaID, commD and commR are little-endian field elements (as in the C1
// JSON); seed is the interactive randomness; porepID selects the graph.
func Partition(s Shape, replicaID, commD, commR, seed, porepID [32]byte, k int) ([]fr.Element, error) {
	challenges, err := Challenges(s, replicaID, seed, k)
	if err != nil {
		return nil, err
	}
	g, err := graph.New(s.Nodes, porepID, s.APIVersion)
	if err != nil {
		return nil, err
	}
	out := make([]fr.Element, 0, s.NumInputs())
	for _, f := range []struct {
		b    [32]byte
		name string
	}{{replicaID, "replica_id"}, {commD, "comm_d"}, {commR, "comm_r"}} {
		e, err := element(f.b, f.name)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	var parents [graph.Degree]uint32
	for _, c := range challenges {
		if err := g.Parents(c, parents[:]); err != nil {
			return nil, err
		}
		var e fr.Element
		out = append(out, *e.SetUint64(c))
		for _, p := range parents {
			out = append(out, *e.SetUint64(uint64(p)))
		}
		e.SetUint64(c)
		out = append(out, e, e, e)
	}
	return out, nil
}
