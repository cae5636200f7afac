// Command prove is the smallest program that embeds c2 to turn a Filecoin
// PoRep commit-phase-1 output into the seal proof: create a Prover once,
// prove, handle errors, close. Copy it into node software.
//
//	go run ./examples/prove -c1 c1.json -params /var/tmp/filecoin-proof-parameters -out proof.bin
//
// -params is the directory of the official v28 parameter files (or a single
// .params file, or a directory made by `c2 setup` for tests).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
)

func main() {
	c1Path := flag.String("c1", "", "C1 output (JSON as filecoin-ffi returns it)")
	params := flag.String("params", "", "directory of the Groth16 parameter files (or one .params file)")
	out := flag.String("out", "proof.bin", "where to write the proof")
	flag.Parse()
	if *c1Path == "" || *params == "" {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *c1Path, *params, *out); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, c1Path, params, out string) error {
	// One Prover per process: it owns the GPUs (or the CPU), the memory
	// budgets and the parameters it loaded (once per sector size), and is
	// safe for concurrent use. TrustParams reads the published parameters
	// without subgroup checks, as filecoin-proofs does.
	prover, err := c2.New(c2.Config{Params: params, TrustParams: true})
	if err != nil {
		return err
	}
	defer prover.Close()

	c1, err := os.ReadFile(c1Path)
	if err != nil {
		return err
	}
	proof, err := prover.Prove(ctx, c1) // verified before it is returned
	var ce *porep.C1Error
	var ie *porep.InputError
	var fe *groth16.FormatError
	var pe *c2.PartitionError
	switch {
	case errors.As(err, &ce), errors.As(err, &ie):
		return fmt.Errorf("the C1 output is malformed: %w", err)
	case errors.Is(err, c2.ErrNoParams), errors.As(err, &fe):
		return fmt.Errorf("parameters: %w", err)
	case errors.As(err, &pe):
		return fmt.Errorf("partition %d could not be proved: %w", pe.Index, err)
	case err != nil:
		return err
	}
	return os.WriteFile(out, proof, 0o644) // 192 bytes per partition
}
