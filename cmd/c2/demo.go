package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"flag"
	"fmt"
	"runtime"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/devparams"
	"github.com/sealc2/c2/internal/synth"
)

// demoC1 is the C1 output of a 2 KiB sector sealed by rust-fil-proofs
// (testdata/refgen/out/porep-2k/c1.json).
//
//go:embed demodata/c1-2kib.json
var demoC1 []byte

func runDemo(fs *flag.FlagSet, args []string) error {
	synthetic := fs.Bool("synthetic", false, "prove a synthetic PoRep-shaped circuit instead of the 2 KiB C1")
	logSize := fs.Int("log", 16, "with -synthetic: circuit size, 2^log constraints")
	seed := fs.Uint64("seed", 1, "with -synthetic: seed of the circuit and its witness")
	params := fs.String("params", "", "directory of (development) parameters; default: the user cache directory")
	backend := fs.String("backend", "", backendUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !*synthetic {
		return demoC1Proof(*params, *backend)
	}
	fmt.Printf("c2 demo: synthetic PoRep-shaped circuit, 2^%d constraints, %d CPUs\n", *logSize, runtime.GOMAXPROCS(0))
	fmt.Println("WARNING: development parameters from an insecure setup; proofs made with them prove nothing on chain.")

	t0 := time.Now()
	sys, inputs, err := synth.System(synth.Shape{LogSize: *logSize, InputsB: true, Seed: *seed})
	if err != nil {
		return err
	}
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
	stage("  H (FFTs)", tm.H, "")
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

// demoC1Proof proves the embedded C1 with parameters from dir (default: the
// cache the tests share, devparams.CacheDir). Unless dir holds the shape's
// production .params, it makes dir hold whole development parameters
// (devparams.Ensure: under a lock, generated once, a damaged file
// regenerated).
func demoC1Proof(dir, backend string) error {
	if dir == "" {
		cache, err := devparams.CacheDir()
		if err != nil {
			return fmt.Errorf("no cache directory (%v): pass -params DIR", err)
		}
		dir = cache
	}
	c1, shape, _, err := c1Partitions(demoC1)
	if err != nil {
		return err
	}
	fmt.Printf("c2 demo: C2 proof of a %d-byte sector sealed by rust-fil-proofs (%s), %d CPUs\n",
		shape.SectorSize, c1.RegisteredProof, runtime.GOMAXPROCS(0))
	fmt.Println("WARNING: development parameters from an insecure setup; proofs made with them prove nothing on chain.")
	if _, dev, err := findParams(dir, shape, ".params"); err != nil || dev {
		err := devparams.Ensure(dir, func(dir string) error {
			fmt.Printf("no parameters in %s: generating development parameters once (about 1 GiB; minutes on 2 cores)\n", dir)
			return devSetup(shape, dir)
		})
		if err != nil {
			return err
		}
	}

	p, err := c2.New(c2.Config{Backend: c2.Backend(backend), Params: dir, TrustParams: true})
	if err != nil {
		return err
	}
	defer p.Close()
	proof, err := proveC1(p, demoC1)
	if err != nil {
		return err
	}
	fmt.Printf("proof (%d bytes, verified against public inputs derived from the C1): %s\n", len(proof), hex.EncodeToString(proof))
	return nil
}

// proveC1 runs p.Prove on c1 with a progress ticker and prints the time of
// the whole call and of each pipeline stage.
func proveC1(p *c2.Prover, c1 []byte) ([]byte, error) {
	t0 := time.Now()
	stop := ticker("prove")
	proof, err := p.Prove(context.Background(), c1)
	stop()
	if err != nil {
		return nil, err
	}
	stage("prove (params, synthesis, proofs, verification)", time.Since(t0), fmt.Sprint(p.Devices()))
	st := p.Stats().Stages
	stage("  prep (a, b, c; classify)", st.Prep, "")
	stage("  H (NTTs + dense H MSM)", st.H, "")
	stage("  batch additions", st.BatchAdd, "")
	stage("  tail MSMs", st.Tail, "")
	stage("  B_G2 tail (CPU)", st.BG2, "")
	if st.BG2Wait > 0 {
		stage("  waiting for the host's B_G2 share", st.BG2Wait, "")
	}
	stage("  epilogue", st.Epilogue, "")
	stage("  verify", st.Verify, "")
	return proof, nil
}

func stage(name string, d time.Duration, detail string) {
	fmt.Printf("%-34s %10.1f ms  %s\n", name, float64(d.Microseconds())/1000, detail)
}
