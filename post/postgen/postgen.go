// Package postgen makes PoSt vanilla proofs without sealed sectors, to time
// and check Window and Winning PoSt proving at any sector size. Each
// sector's tree R_last is a sparse tree (internal/sparsetree) whose
// challenged leaves, like its comm_c, are values derived from a seed;
// comm_r = Poseidon(comm_c, comm_r_last). The inclusion proofs are those of
// the leaves the PoSt's randomness challenges (post.LeafChallenge), so the
// proofs pass post.Shape.VerifyPartition and their circuits are satisfied:
// they cost what real ones cost to prove. They prove nothing about stored
// data.
package postgen

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/sealc2/c2/internal/sparsetree"
	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/post"
)

// Generate returns the vanilla proofs of n sectors, numbered firstID,
// firstID+1, …, for a PoSt of shape s under randomness (a canonical
// scalar, as filecoin-proofs requires), in the order post.Partitions takes
// them: for Window one proof per sector, partition k proving sectors
// k·s.Sectors onwards; for Winning n is 1 and its proof holds the
// s.Sectors × s.Challenges inclusion proofs of the one challenged sector.
// The same arguments give the same proofs. Generate stops early when ctx
// is done; bad arguments give *post.InputError values naming the field.
func Generate(ctx context.Context, s post.Shape, seed, randomness [32]byte, firstID uint64, n int) ([]post.SectorProof, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if _, err := fr.LittleEndian.Element(&randomness); err != nil {
		return nil, &post.InputError{Field: "randomness", Msg: "not a canonical field element"}
	}
	switch {
	case n < 1:
		return nil, &post.InputError{Field: "sectors", Msg: fmt.Sprintf("%d; at least 1", n)}
	case s.Kind == post.Winning && n != 1:
		return nil, &post.InputError{Field: "sectors", Msg: fmt.Sprintf("Winning PoSt proves 1 sector, not %d", n)}
	case firstID+uint64(n) < firstID:
		return nil, &post.InputError{Field: "first_id", Msg: fmt.Sprintf("%d sectors from %d overflow 64 bits", n, firstID)}
	}
	out := make([]post.SectorProof, n)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for j := range out {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var err error
			out[j], err = sector(s, seed, randomness, firstID+uint64(j), j)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// sector returns the proof of sector id at place j of the proof.
func sector(s post.Shape, seed, randomness [32]byte, id uint64, j int) (post.SectorProof, error) {
	// the challenged leaves, in the order of the inclusion proofs
	// (post.PartitionInputs: sector place j, or for Winning circuit sector
	// i of the one sector)
	var pos []uint64
	places, at := 1, j
	if s.Kind == post.Winning {
		places, at = s.Sectors, 0
	}
	for i := range places {
		for c := range s.Challenges {
			idx := post.ChallengeIndex(s.Version, at+i, s.Challenges, c)
			pos = append(pos, post.LeafChallenge(s, randomness, id, idx))
		}
	}
	leaves := make(map[uint64]fr.Element, len(pos))
	for _, p := range pos {
		leaves[p] = element(seed, "leaf", id, p)
	}
	tree := sparsetree.New(gadget.TreePoseidon, s.TreeArities(), leaves, element(seed, "default leaf", id), 1)
	commC, commRLast := element(seed, "comm_c", id), tree.Root()
	commR, err := poseidon.MustGet(2).Hash([]fr.Element{commC, commRLast})
	if err != nil {
		return post.SectorProof{}, err
	}
	v := post.VanillaSector{CommC: sparsetree.Domain(commC), CommRLast: sparsetree.Domain(commRLast)}
	for _, p := range pos {
		v.InclusionProofs = append(v.InclusionProofs, tree.MerkleProof(p, s.SubArity, s.TopArity))
	}
	return post.SectorProof{SectorID: id, CommR: sparsetree.Domain(commR), Sectors: []post.VanillaSector{v}}, nil
}

// element returns a field element derived from the seed, a tag and xs:
// SHA-256 of them, reduced modulo r.
func element(seed [32]byte, tag string, xs ...uint64) fr.Element {
	h := sha256.New()
	h.Write([]byte("postgen/" + tag + "/"))
	h.Write(seed[:])
	var b [8]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	var e fr.Element
	e.SetBytes(h.Sum(nil))
	return e
}
