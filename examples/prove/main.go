// Command prove is the smallest program that embeds c2 to turn a Filecoin
// PoRep commit-phase-1 output into the seal proof: load the parameters once,
// create a Prover, prove, handle errors, close. Copy it into node software.
//
//	go run ./examples/prove -c1 c1.json -params FILE.params -out proof.bin
//
// The parameters are the official v28 .params file of the sector size (or,
// for tests, one made by `c2 setup`).
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
	"github.com/sealc2/c2/r1cs"
)

func main() {
	c1Path := flag.String("c1", "", "C1 output (JSON as filecoin-ffi returns it)")
	paramsPath := flag.String("params", "", "Groth16 parameters of the sector size (.params)")
	out := flag.String("out", "proof.bin", "where to write the proof")
	flag.Parse()
	if *c1Path == "" || *paramsPath == "" {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *c1Path, *paramsPath, *out); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, c1Path, paramsPath, out string) error {
	// Parameters are large (1 GiB for 2 KiB sectors, 44 GiB for 32 GiB):
	// load them once per sector size and reuse them for every sector.
	pk, err := groth16.ReadParams(paramsPath)
	if err != nil {
		return err // a *groth16.FormatError names the file, section and point
	}

	// One Prover per process: it owns the GPUs (or the CPU) and the memory
	// budgets, and is safe for concurrent use.
	prover, err := c2.New(c2.Config{})
	if err != nil {
		return err
	}
	defer prover.Close()

	b, err := os.ReadFile(c1Path)
	if err != nil {
		return err
	}
	proof, err := prove(ctx, prover, pk, b)
	var ie *porep.InputError
	var pe *c2.PartitionError
	switch {
	case errors.As(err, &ie):
		return fmt.Errorf("the C1 output is malformed (%s): %w", ie.Field, err)
	case errors.As(err, &pe):
		return fmt.Errorf("partition %d could not be proved: %w", pe.Index, err)
	case err != nil:
		return err
	}
	return os.WriteFile(out, proof, 0o644)
}

// prove synthesizes the PoRep circuit of every partition of the C1 output
// and proves them; the returned proofs (192 bytes per partition,
// concatenated) have been verified.
func prove(ctx context.Context, prover *c2.Prover, pk *groth16.ProvingKey, c1JSON []byte) ([]byte, error) {
	c1, err := porep.DecodeC1(c1JSON)
	if err != nil {
		return nil, err // a *porep.C1Error names the JSON path
	}
	shape, parts, err := porep.Partitions(c1)
	if err != nil {
		return nil, err
	}
	if pk.VK.NumInputs() != shape.NumInputs() {
		return nil, fmt.Errorf("parameters for %d inputs, %s has %d", pk.VK.NumInputs(), shape.Name, shape.NumInputs())
	}
	systems := make([]*r1cs.System, len(parts))
	for k, p := range parts {
		// Check the vanilla proofs natively first (milliseconds): a bad C1
		// output fails here with the challenge and part named, not later
		// as an unsatisfied circuit.
		if err := shape.Verify(p, k); err != nil {
			return nil, err
		}
		sys := r1cs.NewSystem()
		if err := porep.Synthesize(sys, shape, p); err != nil {
			return nil, err
		}
		sys.Finalize()
		systems[k] = sys
	}
	proofs, err := prover.ProvePartitions(ctx, pk, systems)
	if err != nil {
		return nil, err
	}
	return groth16.MarshalProofs(proofs), nil
}
