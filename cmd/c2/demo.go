package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"runtime"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/r1cs"
)

func init() {
	register("demo", "prove and verify a built-in PoRep-shaped circuit (development parameters)", runDemo)
}

func runDemo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	logSize := fs.Int("log", 16, "circuit size: 2^log constraints")
	seed := fs.Uint64("seed", 1, "seed of the synthetic circuit and its witness")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Printf("c2 demo: synthetic PoRep-shaped circuit, 2^%d constraints, %d CPUs\n", *logSize, runtime.GOMAXPROCS(0))
	fmt.Println("WARNING: development parameters from an insecure setup; proofs made with them prove nothing on chain.")

	t0 := time.Now()
	sys := r1cs.NewSystem()
	inputs, err := synth.Build(sys, synth.Shape{LogSize: *logSize, InputsB: true, Seed: *seed})
	if err != nil {
		return err
	}
	sys.Finalize()
	c := sys.Counts()
	stage("synthesize", time.Since(t0), c.String())

	t0 = time.Now()
	pk, err := groth16.Setup(sys, rand.Reader)
	if err != nil {
		return err
	}
	stage("setup (dev)", time.Since(t0), fmt.Sprintf("h=%d l=%d a=%d b=%d", len(pk.H), len(pk.L), len(pk.A), len(pk.BG1)))

	var r, s fr.Element
	if _, err := r.SetRandom(); err != nil {
		return err
	}
	if _, err := s.SetRandom(); err != nil {
		return err
	}
	t0 = time.Now()
	proof, tm, err := groth16.ProveWith(pk, sys, r, s)
	if err != nil {
		return err
	}
	total := time.Since(t0)
	stage("  evaluate a,b,c", tm.Evaluate, "")
	stage("  H (7 FFTs)", tm.H, "")
	stage("  prep_msm (split)", tm.Split, "")
	stage("  MSMs (H, L, A, B_G1, B_G2)", tm.MSM, "")
	stage("  assemble", tm.Assemble, "")
	stage("prove", total, "")

	t0 = time.Now()
	if err := groth16.Verify(&pk.VK, proof, inputs); err != nil {
		return fmt.Errorf("the proof does not verify: %w", err)
	}
	stage("verify", time.Since(t0), "ok")
	b := proof.Bytes()
	fmt.Printf("proof (%d bytes): %s\n", len(b), hex.EncodeToString(b[:]))
	return nil
}

func stage(name string, d time.Duration, detail string) {
	fmt.Printf("%-30s %10.1f ms  %s\n", name, float64(d.Microseconds())/1000, detail)
}
