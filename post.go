package c2

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
)

// postShape returns the cache of PoSt shape s: the proving key and R1CS of
// its circuit (its parameter name, which V1 and V1_2 Window proofs share),
// kept beside the PoRep shapes and dropped with them by Close.
func (p *Prover) postShape(s post.Shape) *shapeCache { return p.cache("post/" + s.ParamsName()) }

// FindPoStParams resolves where the parameters of PoSt shape s are, as
// FindParams does for PoRep: path itself when it is a file, else in the
// directory path the official file (s.ParamsName() + ext, ext ".params" or
// ".vk") or, failing that, the development one (DevParamsPrefix + the same
// name). dev reports a file named as a development one. Errors wrap
// ErrNoParams.
func FindPoStParams(path string, s post.Shape, ext string) (file string, dev bool, err error) {
	return findParamsFile(path, s.ParamsName(), ext)
}

// postParamsPath finds the PoSt shape's parameter file under Config.Params.
func (p *Prover) postParamsPath(s post.Shape) (string, bool, error) {
	if p.cfg.Params == "" {
		return "", false, fmt.Errorf("%w: Config.Params is empty", ErrNoParams)
	}
	return FindPoStParams(p.cfg.Params, s, ".params")
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
// one) and kept with the circuit's R1CS, recorded once; partitions are
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
	return p.provePoSt(ctx, post.Window, proof, randomness, vanilla)
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
	return p.provePoSt(ctx, post.Winning, proof, randomness, vanilla)
}

// provePoSt is ProveWindowPoSt and ProveWinningPoSt, kind telling which.
func (p *Prover) provePoSt(ctx context.Context, kind post.Kind, name string, randomness [32]byte, vanilla [][]byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	shape, ok := post.ShapeByName(name)
	switch {
	case !ok:
		return nil, &post.InputError{Field: "proof", Msg: fmt.Sprintf("%q is no registered PoSt proof", name)}
	case shape.Kind != kind:
		return nil, &post.InputError{Field: "proof", Msg: fmt.Sprintf("%s is a %s PoSt proof, not %s", name, shape.Kind, kind)}
	}
	proofs, err := DecodeVanillaPoSt(vanilla)
	if err != nil {
		return nil, err
	}
	parts, pub, err := post.Partitions(shape, proofs)
	if err != nil {
		return nil, err
	}
	if err := post.CheckRoots(proofs); err != nil {
		return nil, err
	}
	// Check every partition natively first: a bad vanilla proof fails in
	// milliseconds, named, before parameters are read or anything is proved.
	want := make([][]fr.Element, len(parts))
	for k, part := range parts {
		if err := shape.Verify(randomness, pub, part, k); err != nil {
			return nil, err
		}
		if want[k], err = post.PublicInputs(shape, randomness, pub, k); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}

	return p.proveShape(ctx, p.postShape(shape), shape.Name, shape.NumInputs(),
		func() (string, bool, error) { return p.postParamsPath(shape) },
		func(sys *r1cs.System) error {
			blank, err := post.BlankPartition(shape) // the R1CS depends only on the shape
			if err != nil {
				return err
			}
			return post.Synthesize(sys, shape, blank)
		},
		func(ctx context.Context, k, workers int) (*r1cs.Witness, error) {
			return post.WitnessContext(ctx, shape, parts[k], workers)
		},
		want,
		func(k, i int) error {
			return &post.InputError{Field: fmt.Sprintf("partition %d: public input %d", k, i),
				Msg: "the witness's differs from the one derived from the randomness and sectors"}
		})
}

// DecodeVanillaPoSt decodes per-sector PoSt vanilla proofs: each one the
// bincode bytes generate_single_vanilla_proof returns, or a
// FallbackPoStSectorProof in serde JSON (an object). Errors are
// *post.VanillaError values whose Field starts with the proof's position,
// e.g. "[2].vanilla_proof.sectors[0].comm_c".
func DecodeVanillaPoSt(vanilla [][]byte) ([]post.SectorProof, error) {
	if len(vanilla) == 0 {
		return nil, &post.VanillaError{Err: errors.New("no vanilla proof")}
	}
	out := make([]post.SectorProof, len(vanilla))
	for i, b := range vanilla {
		sp, err := post.DecodeSectorProof(b)
		if err != nil && bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{")) {
			// Not bincode, and it reads as a JSON object: judge it as JSON.
			sp, err = post.DecodeSectorProofJSON(b)
		}
		if err != nil {
			var ve *post.VanillaError
			if !errors.As(err, &ve) {
				return nil, &post.VanillaError{Field: fmt.Sprintf("[%d]", i), Err: err}
			}
			f := fmt.Sprintf("[%d]", i)
			if ve.Field != "" {
				f += "." + ve.Field
			}
			return nil, &post.VanillaError{Field: f, Err: ve.Err}
		}
		out[i] = *sp
	}
	return out, nil
}
