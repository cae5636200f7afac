package c2

import (
	"context"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
)

// postCircuits is the PoSt family of circuits. A circuit's cache is named
// by its parameter file, which V1 and V1_2 Window proofs share.
var postCircuits = vanillaFamily[post.Shape]{
	dir:      "post/",
	noun:     "PoSt",
	byName:   post.ShapeByName,
	inputErr: func(field, msg string) error { return &post.InputError{Field: field, Msg: msg} },
	label:    func(s post.Shape) string { return s.Name },
	blank:    post.SynthesizeBlank,
	record:   post.RecordContext,
}

// FindPoStParams resolves where the parameters of PoSt shape s are, as
// FindParams does for PoRep: path itself when it is a file, else in the
// directory path the official file (s.ParamsName() + ext, ext ".params" or
// ".vk") or, failing that, the development one (DevParamsPrefix + the same
// name). dev reports a file named as a development one. Errors wrap
// ErrNoParams.
func FindPoStParams(path string, s post.Shape, ext string) (file string, dev bool, err error) {
	return findParamsFile(path, s.ParamsName(), ext)
}

// ProveWindowPoSt computes the Window PoSt SNARK of the registered PoSt
// proof named proof (a RegisteredPoStProof variant, e.g.
// "StackedDrgWindow32GiBV1_2") over the sectors whose vanilla proofs are
// given, in order, with the challenge randomness: one Groth16 proof per
// partition of post.Shape.Sectors sectors (the last one padded with its
// last sector), 192 bytes each, concatenated in order, each verified
// against public inputs derived here from the randomness and the sectors'
// ids and comm_r — never against values merely copied from the input.
//
// Each vanilla proof is one sector's FallbackPoStSectorProof as
// filecoin-ffi's generate_single_vanilla_proof returns it (bincode), or its
// serde JSON object. Every partition is checked natively (comm_r against
// comm_c and comm_r_last, each challenged leaf against the randomness, each
// inclusion path and its recorded root against comm_r_last) before
// parameters are looked for.
// Parameters are read from Config.Params once per PoSt circuit (the
// official file named by post.Shape.ParamsName, else the dev-insecure-
// one) and kept with the circuit's R1CS, recorded once, until EvictPoSt or
// Close (PreloadPoSt does both ahead of the first call); partitions are
// synthesized in witness-only mode. ctx stops the call as it stops Prove.
//
// Errors: *post.VanillaError for a vanilla proof that cannot be decoded or
// does not fit the shape (its Field names the proof, "[i]…"),
// *post.InputError for an unknown or non-Window proof name, a randomness
// that is not a canonical scalar, or a vanilla proof that does not prove
// what the randomness and its sector challenge; ErrNoParams (wrapped) or
// *groth16.FormatError for parameters, *PartitionError for a partition
// that could not be proved, ErrClosed after Close, ctx's error.
func (p *Prover) ProveWindowPoSt(ctx context.Context, proof string, randomness [32]byte, vanilla [][]byte) ([]byte, error) {
	out, _, err := p.ProveWindowPoStTimed(ctx, proof, randomness, vanilla)
	return out, err
}

// ProveWindowPoStTimed is ProveWindowPoSt, and also returns the wall times
// of the call's own stages, as ProveTimed does for PoRep: ParamsLoad the
// wait for the circuit's key and recorded R1CS, Synthesis and Verify
// summed over the partitions inside the span of Prove. On error the times
// of the stages that ran are returned with it.
func (p *Prover) ProveWindowPoStTimed(ctx context.Context, proof string, randomness [32]byte, vanilla [][]byte) ([]byte, ProveTimes, error) {
	return p.provePoSt(ctx, post.Window, proof, randomness, vanilla, -1)
}

// MaxPoStOffset bounds the sectors that precede the partition a
// ProveWindowPoStPartition call proves (partition × post.Shape.Sectors):
// 65536, 27 partitions of 32 GiB sectors, 32768 of 2 KiB ones: many more
// partitions than one Window PoSt message proves on chain (the actors'
// PoStedPartitionsMax is 3). The call derives the public inputs from the
// partition's own sectors and its index (post.PartitionInputs), so the
// bound costs nothing; it refuses indices no proof reaches.
const MaxPoStOffset = 1 << 16

// ProveWindowPoStPartition computes the Groth16 proof of one partition of
// a Window PoSt, as filecoin-ffi's generate_single_window_post_with_vanilla
// does (Curio's WINDOW_POST_PARTITION): vanilla holds the vanilla proofs of
// that partition's sectors only, in order (at most post.Shape.Sectors; a
// short partition is padded with its last sector), partition is its index
// in the whole proof, and the result is its one 192-byte proof, verified
// against the public inputs of that partition of the whole PoSt, those
// the chain checks it against.
//
// The index matters for V1 (StackedDrgWindow…V1, API 1.0.0), which derives
// the challenges of a sector from its position over all partitions
// (partition × post.Shape.Sectors + its place in the partition), as
// generate_fallback_sector_challenges does for the vanilla proofs of the
// whole deadline: the same vanilla proofs proved by ProveWindowPoSt, as
// partition 0, fail its native check. V1_2 derives them from the sector
// alone: any index gives the proof ProveWindowPoSt gives. Errors name the
// partition by its index in the whole proof. Native checks, parameters,
// caching and cancellation are as for ProveWindowPoSt.
//
// Errors: those of ProveWindowPoSt; *post.InputError also for a negative
// partition, more sectors than a partition holds, or more than
// MaxPoStOffset sectors before the partition.
func (p *Prover) ProveWindowPoStPartition(ctx context.Context, proof string, randomness [32]byte, partition int, vanilla [][]byte) ([]byte, error) {
	out, _, err := p.ProveWindowPoStPartitionTimed(ctx, proof, randomness, partition, vanilla)
	return out, err
}

// ProveWindowPoStPartitionTimed is ProveWindowPoStPartition, and also
// returns the wall times of the call's own stages, as ProveWindowPoStTimed
// does.
func (p *Prover) ProveWindowPoStPartitionTimed(ctx context.Context, proof string, randomness [32]byte, partition int, vanilla [][]byte) ([]byte, ProveTimes, error) {
	if partition < 0 {
		return nil, ProveTimes{}, &post.InputError{Field: "partition", Msg: fmt.Sprintf("%d is negative", partition)}
	}
	return p.provePoSt(ctx, post.Window, proof, randomness, vanilla, partition)
}

// ProveWinningPoSt computes the Winning PoSt SNARK of the registered PoSt
// proof named proof (e.g. "StackedDrgWinning32GiBV1") from the vanilla
// proof of the one challenged sector (vanilla holds exactly one, as
// generate_single_vanilla_proof returns it, or its JSON object): one
// 192-byte Groth16 proof, verified against public inputs derived here from
// the randomness, the sector's id and its comm_r. Everything else —
// native checks first, parameters, caching, cancellation, errors — is as
// for ProveWindowPoSt.
func (p *Prover) ProveWinningPoSt(ctx context.Context, proof string, randomness [32]byte, vanilla [][]byte) ([]byte, error) {
	out, _, err := p.ProveWinningPoStTimed(ctx, proof, randomness, vanilla)
	return out, err
}

// ProveWinningPoStTimed is ProveWinningPoSt, and also returns the wall
// times of the call's own stages, as ProveWindowPoStTimed does.
func (p *Prover) ProveWinningPoStTimed(ctx context.Context, proof string, randomness [32]byte, vanilla [][]byte) ([]byte, ProveTimes, error) {
	return p.provePoSt(ctx, post.Winning, proof, randomness, vanilla, -1)
}

// provePoSt is ProveWindowPoStTimed and ProveWinningPoStTimed, kind
// telling which, and with partition ≥ 0 ProveWindowPoStPartitionTimed.
func (p *Prover) provePoSt(ctx context.Context, kind post.Kind, name string, randomness [32]byte, vanilla [][]byte, partition int) ([]byte, ProveTimes, error) {
	var tm ProveTimes
	if err := ctx.Err(); err != nil {
		return nil, tm, err
	}
	shape, err := postCircuits.shape(name)
	if err != nil {
		return nil, tm, err
	}
	if shape.Kind != kind {
		return nil, tm, &post.InputError{Field: "proof", Msg: fmt.Sprintf("%s is a %s PoSt proof, not %s", name, shape.Kind, kind)}
	}
	t0 := time.Now()
	parts, want, err := checkPoSt(shape, randomness, vanilla, partition)
	tm.Checks = time.Since(t0)
	if err != nil {
		return nil, tm, err
	}
	out, err := postCircuits.prove(ctx, p, shape, want, "the randomness and sectors", &tm,
		func(ctx context.Context, k, workers int, aux []fr.Element) (*r1cs.Witness, error) {
			return post.WitnessContext(ctx, shape, parts[k], workers, aux)
		})
	return out, tm, err
}

// checkPoSt decodes the vanilla proofs of a PoSt of shape (partition ≥ 0:
// one Window partition's) and checks them natively: roots, partition
// bounds and every partition's inclusion paths. It returns the
// partitions and each one's public inputs (ONE excluded).
func checkPoSt(shape post.Shape, randomness [32]byte, vanilla [][]byte, partition int) ([]*post.Partition, [][]fr.Element, error) {
	proofs, err := DecodeVanillaPoSt(vanilla)
	if err != nil {
		return nil, nil, err
	}
	parts, pub, err := post.Partitions(shape, proofs)
	if err != nil {
		return nil, nil, err
	}
	if err := post.CheckRoots(proofs); err != nil {
		return nil, nil, err
	}
	if partition >= 0 {
		if err := checkPartition(shape, len(pub), partition); err != nil {
			return nil, nil, err
		}
	}
	// Check every partition natively first: a bad vanilla proof fails in
	// milliseconds, named, before parameters are read or anything is proved.
	want := make([][]fr.Element, len(parts))
	for k, part := range parts {
		// own are the partition's public sectors, idx its index in the
		// whole proof.
		own, idx := pub, partition
		if partition < 0 {
			if own, err = shape.PartitionSectors(pub, k); err != nil {
				return nil, nil, err
			}
			idx = k
		}
		if err := shape.VerifyPartition(randomness, own, part, idx); err != nil {
			return nil, nil, err
		}
		if want[k], err = post.PartitionInputs(shape, randomness, own, idx); err != nil {
			return nil, nil, err
		}
	}
	return parts, want, nil
}

// checkPartition checks the n sectors of Window partition partition
// before anything is derived from them: a partition holds at most
// shape.Sectors, and at most MaxPoStOffset sectors precede it.
func checkPartition(shape post.Shape, n, partition int) error {
	switch {
	case n > shape.Sectors:
		return &post.InputError{Field: "vanilla", Msg: fmt.Sprintf("%d sectors; a partition of %s holds at most %d", n, shape.Name, shape.Sectors)}
	case partition > MaxPoStOffset/shape.Sectors:
		return &post.InputError{Field: "partition", Msg: fmt.Sprintf("%d: more than %d sectors of %s before it", partition, MaxPoStOffset, shape.Name)}
	}
	return nil
}

// DecodeVanillaPoSt decodes per-sector PoSt vanilla proofs: each one the
// bincode bytes generate_single_vanilla_proof returns, or a
// FallbackPoStSectorProof in serde JSON (an object). Errors are
// *post.VanillaError values whose Field starts with the proof's position,
// e.g. "[2].vanilla_proof.sectors[0].comm_c".
func DecodeVanillaPoSt(vanilla [][]byte) ([]post.SectorProof, error) {
	return decodeVanilla[post.SectorProof, post.VanillaError](vanilla, post.DecodeVanilla)
}
