package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/r1cs"
)

// The commands that prove a circuit from vanilla proofs (post-prove,
// update-prove) and make its development parameters (setup --post,
// --update) share the steps below.

// setupCircuit makes the insecure development parameters of a circuit
// from vanilla proofs into dir, named paramsName, from the R1CS blank
// synthesizes (c2 setup --post NAME, --update NAME), on the CPU or, with
// onGPU, in the first CUDA device's memory (--gpu).
func setupCircuit(shape fmt.Stringer, paramsName, dir string, onGPU bool, blank func(r1cs.Builder) error) error {
	fmt.Println("WARNING: INSECURE development parameters (single-party setup); proofs made with them prove nothing on chain.")
	fmt.Printf("shape: %v\n", shape)
	record := func() (*r1cs.System, error) {
		sys := r1cs.NewSystem()
		return sys, blank(sys)
	}
	if onGPU {
		return devSetupSystemGPU(paramsName, dir, record)
	}
	return devSetupSystem(paramsName, dir, record)
}

// hex32 parses 64 hex digits (with an optional 0x) into 32 bytes.
func hex32(v string) ([32]byte, bool) {
	var out [32]byte
	b, err := hex.DecodeString(strings.TrimPrefix(v, "0x"))
	if err != nil || len(b) != 32 {
		return out, false
	}
	copy(out[:], b)
	return out, true
}

// circuitFlags are the flags of a command proving a circuit from vanilla
// proofs, beside the proof name and the public values.
type circuitFlags struct {
	proveFlags
	vanilla filesFlag
}

// addCircuitFlags defines the flags on fs; vanilla is the usage of
// --vanilla.
func addCircuitFlags(fs *flag.FlagSet, vanilla string) *circuitFlags {
	f := &circuitFlags{proveFlags: addProveFlags(fs, "proof's")}
	fs.Var(&f.vanilla, "vanilla", vanilla)
	return f
}

// circuitProof describes one proof of a circuit from vanilla proofs to
// circuitFlags.prove.
type circuitProof struct {
	name, setupFlag string // the registered proof, and the c2 setup flag making its development parameters
	// describe prints what n vanilla proofs are about to be proved.
	describe func(n int)
	// decode decodes vanilla proofs as prove does, for errors that name
	// the file (c2.DecodeVanillaPoSt, c2.DecodeVanillaUpdate).
	decode func(vanilla [][]byte) error
	// find resolves the parameter file under --params (see c2.FindParams).
	find func(params string) (file string, dev bool, err error)
	// prove proves the vanilla proofs with p.
	prove func(ctx context.Context, p *c2.Prover, vanilla [][]byte) ([]byte, c2.ProveTimes, error)
	// verified names what the proof is verified against, for the last line.
	verified string
}

// prove reads and decodes the vanilla proofs, finds the parameters, proves on a new
// Prover, prints the stage times and writes the proof to --out.
func (f *circuitFlags) prove(c circuitProof) error {
	o, err := createOutput(*f.out)
	if err != nil {
		return err
	}
	defer o.abort()

	proofs, perFile, err := readVanilla(f.vanilla)
	if err != nil {
		return err
	}
	// Each file's proofs are decoded here, before the parameters are
	// looked for, so that a bad one is named by its file and its place in
	// it; prove decodes them again (milliseconds to a second).
	off := 0
	for i, n := range perFile {
		if err := c.decode(proofs[off : off+n]); err != nil {
			return fmt.Errorf("%s: %w", f.vanilla[i], err)
		}
		off += n
	}
	c.describe(len(proofs))
	_, dev, err := c.find(*f.params)
	if err != nil {
		return fmt.Errorf("%w (c2 setup %s %s --out DIR makes development parameters)", err, c.setupFlag, c.name)
	}
	prover, err := openProver(dev, f.config())
	if err != nil {
		return err
	}
	defer prover.Close()
	t0 := time.Now()
	proof, tm, err := c.prove(context.Background(), prover, proofs)
	if err != nil {
		return err
	}
	stageTimes(time.Since(t0), tm, len(proof)/192)
	if err := o.commit(bytesWriter(proof)); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d bytes), verified against public inputs derived from %s\n", *f.out, len(proof), c.verified)
	return nil
}
