package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/r1cs"
)

func init() {
	register("prove", "prove a PoRep C1 output (seal commit phase 2)", runProve)
}

func runProve(args []string) error {
	fs := flag.NewFlagSet("prove", flag.ContinueOnError)
	c1Path := fs.String("c1", "", "C1 output: filecoin-ffi JSON, or a Commit2In wrapper (required)")
	params := fs.String("params", "", "a .params file, or a directory holding the shape's official or "+devPrefix+" parameters (required)")
	out := fs.String("out", "proof.bin", "file to write the proof to (192 bytes per partition, concatenated)")
	backend := fs.String("backend", "", "device backend: cpu, cuda, or empty for automatic")
	trust := fs.Bool("trust-params", false, "skip the subgroup checks of the parameter points (as filecoin-proofs does); only for files from a trusted source")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *c1Path == "" || *params == "" {
		fs.Usage()
		return errors.New("--c1 and --params are required")
	}

	t0 := time.Now()
	b, err := os.ReadFile(*c1Path)
	if err != nil {
		return err
	}
	c1, err := porep.DecodeC1(b)
	if err != nil {
		return err
	}
	shape, parts, err := porep.Partitions(c1)
	if err != nil {
		return err
	}
	for k, p := range parts {
		if err := shape.Verify(p, k); err != nil {
			return fmt.Errorf("the C1 output's vanilla proofs do not hold: %w", err)
		}
	}
	// The public inputs a verifier derives from the commitments and the seed.
	proofType, err := inputs.ParseProof(c1.RegisteredProof)
	if err != nil {
		return err
	}
	is, err := proofType.Shape()
	if err != nil {
		return err
	}
	want := make([][]fr.Element, len(parts))
	for k := range parts {
		if want[k], err = inputs.Partition(is, c1.ReplicaID, c1.CommD, c1.CommR, c1.Seed, proofType.PoRepID(), k); err != nil {
			return err
		}
	}
	stage("read + check C1", time.Since(t0), fmt.Sprintf("%s, %d partitions", c1.RegisteredProof, len(parts)))

	t0 = time.Now()
	path, dev, err := findParams(*params, shape, ".params")
	if err != nil {
		return err
	}
	if dev {
		fmt.Println("WARNING: using INSECURE development parameters; this proof is worthless on chain.")
	}
	var opts []groth16.ReadOption
	if *trust {
		opts = append(opts, groth16.TrustedFile())
	}
	pk, err := groth16.ReadParams(path, opts...)
	if err != nil {
		return err
	}
	stage("read params", time.Since(t0), path)

	prover, err := c2.New(c2.Config{Backend: c2.Backend(*backend)})
	if err != nil {
		return err
	}
	defer prover.Close()

	// The R1CS depends only on the shape: record it once (with partition
	// 0's assignment) and give every later partition only its witness, so
	// that one system is held at a time (26 GB for 32 GiB sectors).
	t0 = time.Now()
	sys := r1cs.NewSystem()
	if err := porep.Synthesize(sys, shape, parts[0]); err != nil {
		return err
	}
	sys.Finalize()
	stage("synthesize (record)", time.Since(t0), sys.Counts().String())
	proofs := make([]groth16.Proof, len(parts))
	for k, p := range parts {
		if k > 0 {
			t0 = time.Now()
			w, err := porep.Witness(shape, p, 0)
			if err != nil {
				return err
			}
			if err := sys.SetAssignment(w.Inputs, w.Aux); err != nil {
				return err
			}
			stage(fmt.Sprintf("partition %d witness", k), time.Since(t0), "")
		}
		if !slices.Equal(sys.Inputs()[1:], want[k]) {
			return fmt.Errorf("partition %d: the vanilla proofs' challenges or parents differ from those of the seed and PoRep id", k)
		}
		t0 = time.Now()
		pr, err := prover.ProvePartitions(context.Background(), pk, []*r1cs.System{sys})
		if err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
		proofs[k] = pr[0]
		stage(fmt.Sprintf("partition %d prove + verify", k), time.Since(t0), fmt.Sprint(prover.Devices()))
	}
	if err := os.WriteFile(*out, groth16.MarshalProofs(proofs), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d bytes)\n", *out, len(proofs)*groth16.ProofSize)
	return nil
}

// findParams resolves --params: a file is used as is; in a directory the
// official file of the shape is preferred to the development one. dev
// reports a development file (by its name).
func findParams(p string, s porep.Shape, ext string) (path string, dev bool, err error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", false, err
	}
	if !st.IsDir() {
		return p, strings.HasPrefix(filepath.Base(p), devPrefix), nil
	}
	for _, name := range []string{s.ParamsName() + ext, devPrefix + s.ParamsName() + ext} {
		q := filepath.Join(p, name)
		if _, err := os.Stat(q); err == nil {
			return q, name != s.ParamsName()+ext, nil
		}
	}
	return "", false, fmt.Errorf("no %s%s or %s%s%s in %s (c2 setup --sector-size %d --out %s makes development parameters)",
		s.ParamsName(), ext, devPrefix, s.ParamsName(), ext, p, s.SectorSize, p)
}
