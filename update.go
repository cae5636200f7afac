package c2

import (
	"context"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/r1cs"
	"github.com/sealc2/c2/update"
)

// updateCircuits is the SnapDeals family of circuits, one per sector
// size.
var updateCircuits = vanillaFamily[update.Shape]{
	dir:      "update/",
	noun:     "update",
	byName:   update.ShapeByName,
	inputErr: func(field, msg string) error { return &update.InputError{Field: field, Msg: msg} },
	label:    func(s update.Shape) string { return s.Name },
	blank:    update.SynthesizeBlank,
	record:   update.RecordContext,
}

// FindUpdateParams resolves where the parameters of SnapDeals shape s are,
// as FindParams does for PoRep: path itself when it is a file, else in the
// directory path the official file (s.ParamsName() + ext, ext ".params" or
// ".vk") or, failing that, the development one (DevParamsPrefix + the same
// name). dev reports a file named as a development one. Errors wrap
// ErrNoParams.
func FindUpdateParams(path string, s update.Shape, ext string) (file string, dev bool, err error) {
	return findParamsFile(path, s.ParamsName(), ext)
}

// UpdateCommitments are the public values a SnapDeals proof is about, as
// filecoin-ffi passes them: the old replica's comm_r (the sector key's
// sealed CID), the new replica's comm_r and the new data's comm_d, each the
// 32 bytes of a canonical scalar, little-endian.
type UpdateCommitments struct {
	CommROld, CommRNew, CommDNew [32]byte
}

// PublicInputs converts the commitments into the public values of a proof
// of shape s (h = s.HDefault(), as filecoin-proofs uses), from which
// update.Shape.Inputs derives each partition's public inputs. Bytes that
// are not a canonical scalar give an *update.InputError naming the
// commitment ("comm_r_old", "comm_r_new", "comm_d_new").
func (c UpdateCommitments) PublicInputs(s update.Shape) (update.PublicInputs, error) {
	pub := update.PublicInputs{H: s.HDefault()}
	for _, x := range []struct {
		name string
		b    *[32]byte
		dst  *fr.Element
	}{{"comm_r_old", &c.CommROld, &pub.CommROld}, {"comm_r_new", &c.CommRNew, &pub.CommRNew}, {"comm_d_new", &c.CommDNew, &pub.CommDNew}} {
		e, err := fr.LittleEndian.Element(x.b)
		if err != nil {
			return pub, &update.InputError{Field: x.name, Msg: "not a canonical field element"}
		}
		*x.dst = e
	}
	return pub, nil
}

// ProveUpdate computes the SnapDeals (empty-sector update) SNARK of the
// registered update proof named proof (a RegisteredUpdateProof variant,
// e.g. "StackedDrg32GiBV1") from its vanilla partition proofs, as
// generate_empty_sector_update_proof_with_vanilla does: one Groth16 proof
// per partition, 192 bytes each, concatenated in partition order, each
// verified against public inputs derived here from the commitments —
// never against values merely copied from the input.
//
// vanilla holds one entry per partition, in order: the bytes
// generate_partition_proofs returns for it (bincode PartitionProofBytes,
// what filecoin-ffi hands over), or its serde JSON object. Every partition
// is checked natively (comm_c against both comm_r, each challenged node's
// three inclusion proofs at the node derived from comm_r_new, the
// encoding of the new replica, the apex tree against comm_d_new) before
// parameters are looked for. Parameters are read from Config.Params once
// per shape (the official file named by update.Shape.ParamsName, else the
// dev-insecure- one) and kept with the circuit's R1CS, recorded once,
// until EvictUpdate or Close (PreloadUpdate does both ahead of the first
// call); partitions are synthesized in witness-only mode. ctx stops the
// call as it stops Prove.
//
// Errors: *update.VanillaError for a vanilla proof that cannot be decoded
// or does not fit the shape or the commitments (its Field names the
// partition, "[k]…"), *update.InputError for an unknown proof name, a
// commitment that is not a canonical scalar or a proof that does not
// encode what the commitments say; ErrNoParams (wrapped) or
// *groth16.FormatError for parameters, *PartitionError for a partition
// that could not be proved, ErrClosed after Close, ctx's error.
func (p *Prover) ProveUpdate(ctx context.Context, proof string, comms UpdateCommitments, vanilla [][]byte) ([]byte, error) {
	out, _, err := p.ProveUpdateTimed(ctx, proof, comms, vanilla)
	return out, err
}

// ProveUpdateTimed is ProveUpdate, and also returns the wall times of the
// call's own stages, as ProveTimed does for PoRep: ParamsLoad the wait for
// the circuit's key and recorded R1CS, Synthesis and Verify summed over
// the partitions inside the span of Prove. On error the times of the
// stages that ran are returned with it.
func (p *Prover) ProveUpdateTimed(ctx context.Context, proof string, comms UpdateCommitments, vanilla [][]byte) ([]byte, ProveTimes, error) {
	var tm ProveTimes
	if err := ctx.Err(); err != nil {
		return nil, tm, err
	}
	shape, err := updateCircuits.shape(proof)
	if err != nil {
		return nil, tm, err
	}
	t0 := time.Now()
	pub, parts, want, err := checkUpdate(shape, comms, vanilla)
	tm.Checks = time.Since(t0)
	if err != nil {
		return nil, tm, err
	}
	out, err := updateCircuits.prove(ctx, p, shape, want, "the commitments", &tm,
		func(ctx context.Context, k, workers int, aux []fr.Element) (*r1cs.Witness, error) {
			return update.WitnessContext(ctx, shape, pub, parts[k], k, workers, aux)
		})
	return out, tm, err
}

// checkUpdate derives the public inputs of a SnapDeals proof of shape
// from comms, decodes its vanilla partition proofs and checks each one
// natively. It returns the public inputs, the partitions and each one's
// public inputs for the circuit (ONE excluded).
func checkUpdate(shape update.Shape, comms UpdateCommitments, vanilla [][]byte) (update.PublicInputs, []*update.Partition, [][]fr.Element, error) {
	pub, err := comms.PublicInputs(shape)
	if err != nil {
		return pub, nil, nil, err
	}
	proofs, err := DecodeVanillaUpdate(vanilla)
	if err != nil {
		return pub, nil, nil, err
	}
	if len(proofs) != shape.Partitions {
		return pub, nil, nil, &update.VanillaError{Err: fmt.Errorf("%d partition proofs, %s has %d partitions", len(proofs), shape.Name, shape.Partitions)}
	}
	// Check every partition natively first: a bad vanilla proof fails in
	// milliseconds, named, before parameters are read or anything is proved.
	parts := make([]*update.Partition, len(proofs))
	want := make([][]fr.Element, len(proofs))
	for k := range proofs {
		at := fmt.Sprintf("[%d]", k)
		if err := shape.Verify(pub, &proofs[k], k, at); err != nil {
			return pub, nil, nil, err
		}
		if parts[k], err = shape.FromVanilla(&proofs[k], at); err != nil {
			return pub, nil, nil, err
		}
		if want[k], err = shape.Inputs(pub, k); err != nil {
			return pub, nil, nil, err
		}
	}
	return pub, parts, want, nil
}

// DecodeVanillaUpdate decodes the vanilla partition proofs of a SnapDeals
// proof, one per partition in order: each the bincode bytes
// generate_partition_proofs returns, or a PartitionProof in serde JSON (an
// object). Errors are *update.VanillaError values whose Field starts with
// the partition, e.g. "[2].challenge_proofs[0].proof_d_new.data.Single.leaf".
func DecodeVanillaUpdate(vanilla [][]byte) ([]update.PartitionProof, error) {
	return decodeVanilla[update.PartitionProof, update.VanillaError](vanilla, update.DecodeVanilla)
}
