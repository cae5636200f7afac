package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/update"
)

// updateSetup makes the development parameters of the registered update
// proof name (c2 setup --update NAME).
func updateSetup(name, dir string, onGPU bool) error {
	return setupRegistered(name, dir, onGPU, update.ShapeByName, update.SynthesizeBlank,
		fmt.Errorf("--update %q: no registered update proof of that name (StackedDrg2KiBV1, 8MiBV1, 512MiBV1, 32GiBV1 or 64GiBV1)", name))
}

// commitmentFlag parses a 32-byte commitment given as 64 hex digits.
func commitmentFlag(name, v string, dst *[32]byte) error {
	b, ok := hex32(v)
	if !ok {
		return &update.InputError{Field: name, Msg: fmt.Sprintf("%q is not 64 hex digits", v)}
	}
	*dst = b
	return nil
}

func runUpdateProve(fs *flag.FlagSet, args []string) error {
	name := fs.String("proof", "", "registered update proof, e.g. StackedDrg32GiBV1 (required)")
	rOld := fs.String("comm-r-old", "", "the sector key's comm_r: 64 hex digits, a canonical scalar's 32 bytes (required)")
	rNew := fs.String("comm-r-new", "", "the updated replica's comm_r, 64 hex digits (required)")
	dNew := fs.String("comm-d-new", "", "the new data's comm_d, 64 hex digits (required)")
	f := addCircuitFlags(fs, "a partition's vanilla proof (bincode from generate_partition_proofs, or its JSON object), or a JSON array of them; repeat in partition order (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" || *rOld == "" || *rNew == "" || *dNew == "" || len(f.vanilla) == 0 || *f.params == "" {
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
	return f.prove(circuitProof{
		name: shape.Name, setupFlag: "--update",
		describe: func(n int) { fmt.Printf("%s: %d vanilla partition proof(s), %s\n", shape.Name, n, shape) },
		decode: func(vanilla [][]byte) error {
			_, err := c2.DecodeVanillaUpdate(vanilla)
			return err
		},
		find: func(params string) (string, bool, error) { return c2.FindUpdateParams(params, shape, ".params") },
		prove: func(ctx context.Context, p *c2.Prover, vanilla [][]byte) ([]byte, c2.ProveTimes, error) {
			return p.ProveUpdateTimed(ctx, shape.Name, comms, vanilla)
		},
		verified: "the commitments",
	})
}
