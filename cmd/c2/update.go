package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/r1cs"
	"github.com/sealc2/c2/update"
)

func init() {
	register("update-prove", "prove a SnapDeals sector update from its vanilla partition proofs", runUpdateProve)
}

// updateSetup makes the development parameters of the registered update
// proof name (c2 setup --update NAME).
func updateSetup(name, dir string) error {
	shape, ok := update.ShapeByName(name)
	if !ok {
		return fmt.Errorf("--update %q: no registered update proof of that name (StackedDrg2KiBV1, 8MiBV1, 512MiBV1, 32GiBV1 or 64GiBV1)", name)
	}
	fmt.Println("WARNING: INSECURE development parameters (single-party setup); proofs made with them prove nothing on chain.")
	fmt.Printf("shape: %v\n", shape)
	return devSetupSystem(shape.ParamsName(), dir, func() (*r1cs.System, error) {
		blank, err := update.BlankPartition(shape) // the R1CS depends only on the shape
		if err != nil {
			return nil, err
		}
		sys := r1cs.NewSystem()
		return sys, update.Synthesize(sys, shape, update.BlankInputs(shape), blank, 0)
	})
}

// commitmentFlag parses a 32-byte commitment given as 64 hex digits.
func commitmentFlag(name, v string, dst *[32]byte) error {
	b, err := hex.DecodeString(strings.TrimPrefix(v, "0x"))
	if err != nil || len(b) != 32 {
		return &update.InputError{Field: name, Msg: fmt.Sprintf("%q is not 64 hex digits", v)}
	}
	copy(dst[:], b)
	return nil
}

func runUpdateProve(args []string) error {
	fs := flag.NewFlagSet("update-prove", flag.ContinueOnError)
	name := fs.String("proof", "", "registered update proof, e.g. StackedDrg32GiBV1 (required)")
	rOld := fs.String("comm-r-old", "", "the sector key's comm_r: 64 hex digits, a canonical scalar's 32 bytes (required)")
	rNew := fs.String("comm-r-new", "", "the updated replica's comm_r, 64 hex digits (required)")
	dNew := fs.String("comm-d-new", "", "the new data's comm_d, 64 hex digits (required)")
	var vanilla filesFlag
	fs.Var(&vanilla, "vanilla", "a partition's vanilla proof (bincode from generate_partition_proofs, or its JSON object), or a JSON array of them; repeat in partition order (required)")
	params := fs.String("params", "", "a .params file, or a directory holding the proof's official or "+devPrefix+" parameters (required)")
	out := fs.String("out", "proof.bin", "file to write the proof to (192 bytes per partition, concatenated)")
	backend := fs.String("backend", "", "device backend: cpu, cuda, or empty for automatic")
	trust := fs.Bool("trust-params", false, "skip the subgroup checks of the parameter points (as filecoin-proofs does); only for files from a trusted source")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" || *rOld == "" || *rNew == "" || *dNew == "" || len(vanilla) == 0 || *params == "" {
		fs.Usage()
		return errors.New("--proof, --comm-r-old, --comm-r-new, --comm-d-new, --vanilla and --params are required")
	}
	shape, ok := update.ShapeByName(*name)
	if !ok {
		return &update.InputError{Field: "proof", Msg: fmt.Sprintf("%q is no registered update proof", *name)}
	}
	var comms c2.UpdateCommitments
	for _, f := range []struct {
		name, v string
		dst     *[32]byte
	}{{"comm-r-old", *rOld, &comms.CommROld}, {"comm-r-new", *rNew, &comms.CommRNew}, {"comm-d-new", *dNew, &comms.CommDNew}} {
		if err := commitmentFlag(f.name, f.v, f.dst); err != nil {
			return err
		}
	}
	o, err := createOutput(*out)
	if err != nil {
		return err
	}
	defer o.abort()

	proofs, err := readVanilla(vanilla)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d vanilla partition proof(s), %s\n", shape.Name, len(proofs), shape)
	_, dev, err := c2.FindUpdateParams(*params, shape, ".params")
	if err != nil {
		return fmt.Errorf("%w (c2 setup --update %s --out DIR makes development parameters)", err, shape.Name)
	}
	prover, err := openProver(dev, c2.Config{Backend: c2.Backend(*backend), Params: *params, TrustParams: *trust})
	if err != nil {
		return err
	}
	defer prover.Close()
	t0 := time.Now()
	proof, tm, err := prover.ProveUpdateTimed(context.Background(), shape.Name, comms, proofs)
	if err != nil {
		return err
	}
	stageTimes(time.Since(t0), tm, len(proof)/192)
	if err := o.commit(bytesWriter(proof)); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d bytes), verified against public inputs derived from the commitments\n", *out, len(proof))
	return nil
}
