package c2_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/sealc2/c2"
)

// A node embeds one Prover per process and calls Prove for each sector's C1
// output. Parameters are read once per sector size from Config.Params.
func ExampleProver_Prove() {
	p, err := c2.New(c2.Config{Params: "/var/tmp/filecoin-proof-parameters", TrustParams: true})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	c1, err := os.ReadFile("c1.json") // what filecoin-ffi's SealCommitPhase1 returned
	if err != nil {
		log.Fatal(err)
	}
	proof, err := p.Prove(context.Background(), c1)
	var mismatch *c2.InputMismatchError
	switch {
	case errors.Is(err, c2.ErrNoParams):
		log.Fatal("download the v28 parameters first: ", err)
	case errors.As(err, &mismatch):
		log.Fatal("the C1 output is inconsistent: ", err)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Printf("%d-byte seal proof, verified\n", len(proof))
}
