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

// Challenges returns the challenged nodes of partition k, derived as
// s.Derivation says (storage-proofs-porep challenges.rs). Every challenge is
// a 32-byte string read as a little-endian integer x and mapped to node
// 1 + x mod (Nodes-1): node 0 is never challenged. With j =
// ChallengesPerPartition*k + i (4 bytes little-endian) for the i-th
// challenge of the partition, the string is
//   - Interactive: SHA-256(replicaID || seed || j);
//   - NonInteractive: SHA-256("filecoin.io|PoRep|1|NonInteractive|1" ||
//     replicaID || commR || j); seed is not used;
//   - Synthetic: synthetic challenge number u of the replica (see
//     synthChallenges), where u is the little-endian uint32 at byte 4j of
//     the selection stream (ChaCha20 keyed by BLAKE2b-256 with key
//     "filecoin.io|PoRep|1|Synthetic|1|Selection" over replicaID || seed),
//     reduced mod the number of synthetic challenges.
func Challenges(s Shape, replicaID, commR, seed [32]byte, k int) ([]uint64, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if k < 0 || k >= s.Partitions {
		return nil, fmt.Errorf("%w: %d of %d", ErrPartition, k, s.Partitions)
	}
	n := s.ChallengesPerPartition
	j0 := uint32(n * k)
	out := make([]uint64, n)
	switch s.Derivation {
	case Interactive, NonInteractive:
		h := sha256.New()
		var prefix []byte
		if s.Derivation == Interactive {
			prefix = append(replicaID[:], seed[:]...)
		} else {
			prefix = append([]byte(niTag), replicaID[:]...)
			prefix = append(prefix, commR[:]...)
		}
		var sum [32]byte
		for i := range out {
			h.Reset()
			h.Write(prefix)
			var jb [4]byte
			binary.LittleEndian.PutUint32(jb[:], j0+uint32(i))
			h.Write(jb[:])
			h.Sum(sum[:0])
			out[i] = toNode(sum, s.Nodes)
		}
	case Synthetic:
		return synthChallenges(s.Nodes, replicaID, commR, seed, j0, out)
	default:
		return nil, fmt.Errorf("%w: derivation %v", ErrShape, s.Derivation)
	}
	return out, nil
}

// niTag is the domain separator of NI-PoRep challenges.
const niTag = "filecoin.io|PoRep|1|NonInteractive|1"

// toNode maps a 32-byte little-endian integer x to node 1 + x mod (nodes-1).
func toNode(x [32]byte, nodes uint64) uint64 {
	var be [32]byte
	for b := range x {
		be[31-b] = x[b]
	}
	var v, r big.Int
	v.SetBytes(be[:])
	r.Mod(&v, new(big.Int).SetUint64(nodes-1))
	return r.Uint64() + 1
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
	challenges, err := Challenges(s, replicaID, commR, seed, k)
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
