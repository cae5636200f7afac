package c2

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/r1cs"
)

// This file holds the steps every proof kind takes between its native
// checks and its verified proofs: finding a parameter file by its official
// name, reading the key, recording the R1CS beside it, and proving
// partitions in groups the host budget holds.

// findParamsFile resolves path for the official parameter base name: path
// itself when it is a file, else in the directory path the official file
// (name+ext) or, failing that, the development one (DevParamsPrefix +
// name+ext). dev reports a file named as a development one. Errors wrap
// ErrNoParams.
func findParamsFile(path, name, ext string) (file string, dev bool, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", false, fmt.Errorf("%w: %v", ErrNoParams, err)
	}
	if !st.IsDir() {
		return path, strings.HasPrefix(filepath.Base(path), DevParamsPrefix), nil
	}
	for _, n := range []string{name + ext, DevParamsPrefix + name + ext} {
		q := filepath.Join(path, n)
		if _, err := os.Stat(q); err == nil {
			return q, n != name+ext, nil
		}
	}
	return "", false, fmt.Errorf("%w: no %s%s (or %s…) in %s", ErrNoParams, name, ext, DevParamsPrefix, path)
}

// readKey opens the proving key in the file find resolves (its verifying
// key decoded, its bases read later by the devices that load it; see
// openKey) and checks that it has numInputs public inputs, ONE included.
// label names the shape in logs and errors.
func (p *Prover) readKey(ctx context.Context, label string, numInputs int, find func() (string, bool, error)) (*groth16.ProvingKey, error) {
	path, _, err := find()
	if err != nil {
		return nil, err
	}
	var opts []groth16.ReadOption
	if p.cfg.TrustParams {
		opts = append(opts, groth16.TrustedFile())
	}
	t0 := time.Now()
	pk, err := p.openKey(ctx, path, opts...)
	p.log.Debug("c2: parameters read", "shape", label, "file", path, "duration", time.Since(t0), "err", err)
	if err != nil {
		return nil, err
	}
	if pk.VK.NumInputs() != numInputs {
		p.closeKey(pk)
		return nil, fmt.Errorf("c2: %s: key for %d public inputs, %s has %d", path, pk.VK.NumInputs(), label, numInputs)
	}
	return pk, nil
}

// recordSystem records the R1CS synthesize builds into a fresh system and
// finalizes it; label names the shape in logs.
func (p *Prover) recordSystem(label string, synthesize func(*r1cs.System) error) (*r1cs.System, error) {
	sys := r1cs.NewSystem()
	t0 := time.Now()
	err := synthesize(sys)
	p.log.Debug("c2: R1CS recorded", "shape", label, "constraints", sys.NumConstraints(), "duration", time.Since(t0), "err", err)
	if err != nil {
		return nil, err
	}
	sys.Finalize()
	return sys, nil
}

// keyAndSystem returns the shape's cached key and R1CS, building both side
// by side on a first call. The parameter file is looked up first (find),
// unless the key is cached, so that a missing one fails at once rather
// than after the recording. A failure of one stops this call's wait for
// the other; ctx's error is returned once ctx ends.
func (p *Prover) keyAndSystem(ctx context.Context, c *shapeCache, find func() (string, bool, error),
	key func(context.Context) (*groth16.ProvingKey, error), record func(context.Context) (*r1cs.System, error)) (*groth16.ProvingKey, *r1cs.System, error) {
	if _, cached := c.pk.peek(); !cached {
		if _, _, err := find(); err != nil {
			return nil, nil, err
		}
	}
	var (
		pk  *groth16.ProvingKey
		rec *r1cs.System
	)
	eg, ectx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) { pk, err = c.pk.getCtx(ectx, key); return err })
	eg.Go(func() (err error) { rec, err = c.sys.getCtx(ectx, record); return err })
	if err := eg.Wait(); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return pk, rec, nil
}

// assignedSystem pairs a witness-only assignment with the recorded R1CS
// after checking its public inputs (ONE excluded) against want; mismatch
// builds the error for the first input i (1-based) that differs.
func assignedSystem(rec *r1cs.System, w *r1cs.Witness, want []fr.Element, k int, mismatch func(i int) error) (*r1cs.System, error) {
	if len(w.Inputs) != len(want)+1 {
		return nil, &PartitionError{Index: k, Err: fmt.Errorf("witness has %d public inputs, the proof type %d", len(w.Inputs)-1, len(want))}
	}
	for i := range want {
		if w.Inputs[i+1] != want[i] {
			return nil, mismatch(i + 1)
		}
	}
	sys, err := rec.WithAssignment(w.Inputs, w.Aux)
	if err != nil {
		return nil, &PartitionError{Index: k, Err: err}
	}
	return sys, nil
}

// proveShape is the flow shared by the circuits proved from vanilla
// proofs: the shape's key (the file find resolves, checked for numInputs
// public inputs) and R1CS (recorded by record) from cache c, then for each
// partition k its witness, checked against want[k] — mismatch builds the
// error for a differing public input i — proved in groups, verified and
// serialized. label names the shape in logs and errors.
func (p *Prover) proveShape(ctx context.Context, c *shapeCache, label string, numInputs int, find func() (string, bool, error),
	record func(*r1cs.System) error, witness func(ctx context.Context, k, workers int) (*r1cs.Witness, error),
	want [][]fr.Element, mismatch func(k, i int) error) ([]byte, error) {
	pk, rec, err := p.keyAndSystem(ctx, c, find,
		func(ctx context.Context) (*groth16.ProvingKey, error) { return p.readKey(ctx, label, numInputs, find) },
		func(ctx context.Context) (*r1cs.System, error) {
			return p.recordSystem(label, func(sys *r1cs.System) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				return record(sys)
			})
		})
	if err != nil {
		return nil, err
	}
	out, err := p.proveGroups(ctx, pk, rec, want, func(ctx context.Context, k, workers int) (*r1cs.System, error) {
		w, err := witness(ctx, k, workers)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, &PartitionError{Index: k, Err: err}
		}
		return assignedSystem(rec, w, want[k], k, func(i int) error { return mismatch(k, i) })
	})
	if err != nil {
		return nil, err
	}
	return groth16.MarshalProofs(out), nil
}

// proveGroups proves n partitions under pk, whose R1CS is rec, and verifies
// the proofs against want (one input vector per partition, ONE excluded),
// never against the witnesses' inputs alone. Witnesses are the big host
// allocation (32 bytes per aux variable, plus a, b, c in the pipeline):
// partitions go in groups whose witnesses fit the host budget, at least one
// at a time; build(ctx, k, workers) synthesizes partition k on up to
// workers goroutines and returns its assigned system. Errors: build's, a
// *PartitionError (index within the call), ctx's error.
func (p *Prover) proveGroups(ctx context.Context, pk *groth16.ProvingKey, rec *r1cs.System, want [][]fr.Element,
	build func(ctx context.Context, k, workers int) (*r1cs.System, error)) ([]groth16.Proof, error) {
	n := len(want)
	perPart := 32 * int64(rec.NumAux()+3*pk.DomainSize())
	group := int(max(1, min(int64(p.cfg.PrepWorkers+1), p.cfg.HostMemory/max(perPart, 1))))
	proofs := make([]groth16.Proof, 0, n)
	for lo := 0; lo < n; lo += group {
		hi := min(lo+group, n)
		systems := make([]*r1cs.System, hi-lo)
		var eg errgroup.Group
		for k := lo; k < hi; k++ {
			eg.Go(func() error {
				sys, err := build(ctx, k, max(1, runtime.GOMAXPROCS(0)/(hi-lo)))
				systems[k-lo] = sys
				return err
			})
		}
		if err := eg.Wait(); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ps, err := p.ProvePartitions(ctx, pk, systems)
		if err != nil {
			var pe *PartitionError
			if errors.As(err, &pe) {
				pe.Index += lo
			}
			return nil, err
		}
		proofs = append(proofs, ps...)
	}
	if err := groth16.VerifyBatch(&pk.VK, proofs, want); err != nil {
		return nil, fmt.Errorf("c2: proof failed verification against derived public inputs: %w", err)
	}
	return proofs, nil
}
