package c2

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// DevParamsPrefix starts the file names of insecure development parameters
// (made by `c2 setup`), which Prove uses only when the official file of the
// shape is absent from Config.Params.
const DevParamsPrefix = "dev-insecure-"

// ErrNoParams is returned (wrapped) when no parameter file for a sector
// shape is found.
var ErrNoParams = errors.New("c2: no parameters for this sector shape")

// ErrParamsDigest is returned (wrapped, with the file and both digests) when
// a parameter file under a name Filecoin publishes does not have the
// published digest (Config.TrustParams).
var ErrParamsDigest = errors.New("c2: parameter file is not the published one")

// InputMismatchError reports a C1 output whose witness carries public inputs
// other than those derived from its commitments, seed and ticket: the C1 is
// inconsistent (or corrupt) and no proof of it would verify on chain.
type InputMismatchError struct {
	Partition, Input int
}

func (e *InputMismatchError) Error() string {
	return fmt.Sprintf("c2: C1 partition %d: public input %d derived from replica id, commitments and seed differs from the vanilla proof's", e.Partition, e.Input)
}

// FindParams resolves where the parameters of shape s are: path itself when
// it is a file, else in the directory path the official file
// (<ParamsName><ext>, ext ".params" or ".vk") or, failing that, the
// development one (DevParamsPrefix + the same name). dev reports a file
// named as a development one. Errors wrap ErrNoParams.
func FindParams(path string, s porep.Shape, ext string) (file string, dev bool, err error) {
	return findParamsFile(path, s.ParamsName(), ext)
}

// provingKey reads the proving key of shape s (for c.pk's getCtx).
func (p *Prover) provingKey(s porep.Shape) func(context.Context) (*groth16.ProvingKey, error) {
	return func(ctx context.Context) (*groth16.ProvingKey, error) {
		return p.readKey(ctx, s.Name, s.NumInputs(), p.circuitParams(s.ParamsName()))
	}
}

// recorded records the R1CS of shape s (for c.sys's getCtx) on all cores,
// without an assignment: one challenge recorded and repeated into the
// others (porep.RecordShapeContext); the constraints depend only on the
// shape, never on the caller's data.
func (p *Prover) recorded(s porep.Shape) func(context.Context) (*r1cs.System, error) {
	return func(ctx context.Context) (*r1cs.System, error) {
		t0 := time.Now()
		sys, err := porep.RecordShapeContext(ctx, s, 0)
		if err != nil {
			p.log.Debug("c2: R1CS recording failed", "shape", s.Name, "duration", time.Since(t0), "err", err)
			return nil, err
		}
		p.log.Debug("c2: R1CS recorded", "shape", s.Name, "constraints", sys.NumConstraints(), "duration", time.Since(t0))
		return sys, nil
	}
}

// Prove computes the C2 proof of a PoRep commit-phase-1 output: c1 is the
// JSON filecoin-ffi passes to C2 (or its base64 Commit2In wrapper). It
// returns the partition proofs concatenated in order (192 bytes each), each
// verified against public inputs derived here from the C1's replica id,
// commitments and seed — never against values merely copied from the input.
//
// Parameters are read from Config.Params once per sector shape and kept; the
// shape's R1CS is recorded once and shared by later partitions, whose
// witnesses are synthesized in witness-only mode (Preload does both ahead of
// the first call). Both stay in host memory until Evict or Close: for 2 KiB sectors ~1.1 GB of key and ~0.3 GB of R1CS; for
// 32 GiB sectors ~44 GiB of key and ~13 GB of R1CS (CSR at 8 bytes per
// non-zero, row starts, and the recording partition's assignment).
//
// The C1 is checked natively before parameters are looked for: its
// structure, its registered proof against its vanilla proofs' shape, and its
// challenges and parents against its seed. Its vanilla proofs are verified
// natively too: all of them before the parameters on a shape's first call
// (or the first after Evict), else each partition's before its witness is
// synthesized, so that no partition is proved from unverified ones.
//
// ctx stops the call: while it waits for the key or the R1CS (a first
// call's read or recording goes on for other callers, and stops when none
// is left), between witness syntheses, and in the proving.
//
// Errors: *porep.C1Error or *porep.InputError for a malformed or
// inconsistent C1, *InputMismatchError when its vanilla proofs do not
// belong to its seed and commitments, ErrNoParams (wrapped) or
// *groth16.FormatError for parameters, *PartitionError for a partition
// that could not be proved, ErrClosed after Close, ctx's error.
func (p *Prover) Prove(ctx context.Context, c1 []byte) ([]byte, error) {
	proof, _, err := p.ProveTimed(ctx, c1)
	return proof, err
}

// ProveTimes are the wall times of one ProveTimed call's stages, measured
// by that call alone (Stats sums stages over every call). ParamsLoad comes
// first; Synthesis and Verify happen inside Prove's span, partition by
// partition, beside the proving of other partitions. Checks, ParamsLoad and
// Prove follow one another within the call's wall time.
type ProveTimes struct {
	// Checks is what happens before ParamsLoad: decoding the input and
	// checking it natively (PoRep: the C1's decoding, its consistency, the
	// derived public inputs and, on a shape's first call, the vanilla
	// proofs' verification, which later calls do partition by partition
	// inside Synthesis; PoSt and SnapDeals: the vanilla proofs' decoding,
	// their verification and the derived public inputs).
	Checks time.Duration
	// ParamsLoad is the wait for the shape's proving key and recorded R1CS:
	// on the shape's first call (the first after Evict, or one joining a
	// Preload) the parameter read and the R1CS recording, side by side;
	// near zero once both are cached.
	ParamsLoad time.Duration
	// Synthesis is the witness synthesis of every partition, each checked
	// against the derived public inputs (and, when Checks did not verify
	// them, preceded by the verification of its vanilla proofs), summed
	// (one at a time, on all cores).
	Synthesis time.Duration
	// Prove is the wall time from the first partition's synthesis to the
	// last partition's verified proof: synthesis, the CPU preparation, the
	// device stages, the B_G2 tail and verification of every partition,
	// and the key's load onto a device when it is the first use there.
	Prove time.Duration
	// Verify is the verification of each partition's proof against the
	// public inputs derived from the C1, summed.
	Verify time.Duration
}

// ProveTimed is Prove, and also returns the wall times of the call's own
// stages. On error the times of the stages that ran are returned with it.
func (p *Prover) ProveTimed(ctx context.Context, c1 []byte) ([]byte, ProveTimes, error) {
	var tm ProveTimes
	t0 := time.Now()
	shape, parts, want, err := consistentC1(c1)
	if err != nil {
		tm.Checks = time.Since(t0)
		return nil, tm, err
	}
	cache, done := p.useShape(shape)
	defer done()
	// On a shape's first call the vanilla proofs are verified here, all at
	// once, so that a bad C1 is refused before its parameters are looked
	// for. Once the key and the R1CS are cached, each partition's are
	// verified just before its synthesis: partition 0's alone stand before
	// the devices' first work, the others' run while they prove.
	_, keyed := cache.pk.Peek()
	_, recorded := cache.sys.Peek()
	early := !keyed || !recorded
	if early {
		err = shape.VerifyAll(parts)
	}
	tm.Checks = time.Since(t0)
	if err != nil {
		return nil, tm, err
	}
	t0 = time.Now()
	pk, rec, err := p.loadShape(ctx, cache, shape)
	tm.ParamsLoad = time.Since(t0)
	if err != nil {
		return nil, tm, err
	}

	proofs, err := p.proveStream(ctx, &cache.witnesses.bufferPool, &cache.witnesses.slots, pk, rec, want, &tm,
		func(ctx context.Context, k int, buf []fr.Element) (*r1cs.System, error) {
			if !early {
				if err := shape.Verify(parts[k], k); err != nil {
					return nil, err
				}
			}
			return partitionSystem(ctx, rec, shape, parts[k], want[k], k, 0, buf)
		})
	if err != nil {
		return nil, tm, err
	}
	return groth16.MarshalProofs(proofs), tm, nil
}

// consistentC1 decodes a C1 output and checks its consistency natively (a
// bad one fails in milliseconds with what is inconsistent named, before
// parameters are read or anything is proved); its vanilla proofs are
// verified by the caller (porep.Shape.Verify, VerifyAll). It returns the
// sector shape, the partitions and each partition's derived public inputs
// (ONE excluded).
func consistentC1(c1 []byte) (porep.Shape, []*porep.Partition, [][]fr.Element, error) {
	out, err := porep.DecodeC1(c1)
	if err != nil {
		return porep.Shape{}, nil, nil, err
	}
	shape, parts, err := porep.Partitions(out)
	if err != nil {
		return porep.Shape{}, nil, nil, err
	}
	if err := porep.CheckC1(out, shape, parts); err != nil {
		return porep.Shape{}, nil, nil, err
	}
	want, _, err := out.PublicInputs()
	if err != nil {
		return porep.Shape{}, nil, nil, err
	}
	if len(want) != len(parts) {
		return porep.Shape{}, nil, nil, fmt.Errorf("c2: C1 has %d partitions, its proof type %d", len(parts), len(want))
	}
	return shape, parts, want, nil
}

// loadShape returns the proving key and the recorded R1CS of shape s from
// its cache c, which the caller holds through useShape. The key (a file
// read) and the R1CS (a synthesis) are independent: when missing they are
// built side by side, once the parameter file is known to exist (a missing
// one fails at once, not after the synthesis), and a failure of one stops
// this call's wait for the other.
func (p *Prover) loadShape(ctx context.Context, c *shapeCache, s porep.Shape) (*groth16.ProvingKey, *r1cs.System, error) {
	if p.isClosed() {
		return nil, nil, ErrClosed
	}
	return p.keyAndSystem(ctx, c, p.circuitParams(s.ParamsName()), p.provingKey(s), p.recorded(s))
}

// partitionSystem synthesizes partition k's witness (into buf when it is
// large enough), checks its public inputs against the derived ones and
// pairs it with the recorded R1CS.
func partitionSystem(ctx context.Context, rec *r1cs.System, shape porep.Shape, part *porep.Partition, want []fr.Element, k, workers int, buf []fr.Element) (*r1cs.System, error) {
	w, err := porep.WitnessInto(ctx, shape, part, workers, buf)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &PartitionError{Index: k, Err: err}
	}
	return assignedSystem(rec, w, want, k, func(i int) error { return &InputMismatchError{Partition: k, Input: i} })
}
