package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
)

func init() {
	register("post-prove", "prove a Window or Winning PoSt from per-sector vanilla proofs", runPoStProve)
}

// postSetup makes the development parameters of the registered PoSt proof
// name (c2 setup --post NAME).
func postSetup(name, dir string) error {
	shape, ok := post.ShapeByName(name)
	if !ok {
		return fmt.Errorf("--post %q: no registered PoSt proof of that name (e.g. StackedDrgWindow2KiBV1_2, StackedDrgWinning32GiBV1)", name)
	}
	fmt.Println("WARNING: INSECURE development parameters (single-party setup); proofs made with them prove nothing on chain.")
	fmt.Printf("shape: %v\n", shape)
	return devSetupSystem(shape.ParamsName(), dir, func() (*r1cs.System, error) {
		blank, err := post.BlankPartition(shape) // the R1CS depends only on the shape
		if err != nil {
			return nil, err
		}
		sys := r1cs.NewSystem()
		return sys, post.Synthesize(sys, shape, blank)
	})
}

// filesFlag collects the values of a repeated flag.
type filesFlag []string

func (f *filesFlag) String() string     { return strings.Join(*f, " ") }
func (f *filesFlag) Set(v string) error { *f = append(*f, v); return nil }

func runPoStProve(args []string) error {
	fs := flag.NewFlagSet("post-prove", flag.ContinueOnError)
	name := fs.String("proof", "", "registered PoSt proof, e.g. StackedDrgWindow32GiBV1_2 or StackedDrgWinning32GiBV1 (required)")
	rnd := fs.String("randomness", "", "the PoSt randomness: 64 hex digits, a canonical scalar's 32 bytes (required)")
	var vanilla filesFlag
	fs.Var(&vanilla, "vanilla", "a sector's vanilla proof (bincode from generate_single_vanilla_proof, or its JSON object), or a JSON array of them; repeat in sector order (required)")
	params := fs.String("params", "", "a .params file, or a directory holding the proof's official or "+devPrefix+" parameters (required)")
	out := fs.String("out", "proof.bin", "file to write the proof to (192 bytes per partition, concatenated)")
	backend := fs.String("backend", "", "device backend: cpu, cuda, or empty for automatic")
	trust := fs.Bool("trust-params", false, "skip the subgroup checks of the parameter points (as filecoin-proofs does); only for files from a trusted source")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" || *rnd == "" || len(vanilla) == 0 || *params == "" {
		fs.Usage()
		return errors.New("--proof, --randomness, --vanilla and --params are required")
	}
	shape, ok := post.ShapeByName(*name)
	if !ok {
		return &post.InputError{Field: "proof", Msg: fmt.Sprintf("%q is no registered PoSt proof", *name)}
	}
	var randomness [32]byte
	if b, err := hex.DecodeString(strings.TrimPrefix(*rnd, "0x")); err != nil || len(b) != 32 {
		return &post.InputError{Field: "randomness", Msg: fmt.Sprintf("%q is not 64 hex digits", *rnd)}
	} else {
		copy(randomness[:], b)
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
	fmt.Printf("%s: %d vanilla proof(s), %s\n", shape.Name, len(proofs), shape)
	_, dev, err := c2.FindPoStParams(*params, shape, ".params")
	if err != nil {
		return fmt.Errorf("%w (c2 setup --post %s --out DIR makes development parameters)", err, shape.Name)
	}
	prover, err := openProver(dev, c2.Config{Backend: c2.Backend(*backend), Params: *params, TrustParams: *trust})
	if err != nil {
		return err
	}
	defer prover.Close()
	prove := prover.ProveWindowPoStTimed
	if shape.Kind == post.Winning {
		prove = prover.ProveWinningPoStTimed
	}
	t0 := time.Now()
	proof, tm, err := prove(context.Background(), shape.Name, randomness, proofs)
	if err != nil {
		return err
	}
	stageTimes(time.Since(t0), tm, len(proof)/192)
	if err := o.commit(bytesWriter(proof)); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d bytes), verified against public inputs derived from the randomness and sectors\n", *out, len(proof))
	return nil
}

// stageTimes prints the wall time of a timed call that proved n
// partitions and its stages.
func stageTimes(wall time.Duration, tm c2.ProveTimes, n int) {
	stage("prove", wall, fmt.Sprintf("%d partition(s)", n))
	stage("  params (key read, R1CS)", tm.ParamsLoad, "")
	stage("  partitions (proving span)", tm.Prove, "")
	stage("    witness synthesis", tm.Synthesis, "")
	stage("    verification", tm.Verify, "")
}

// openProver warns when the parameters found are development ones (dev)
// and starts a Prover with cfg.
func openProver(dev bool, cfg c2.Config) (*c2.Prover, error) {
	if dev {
		fmt.Println("WARNING: using INSECURE development parameters; this proof is worthless on chain.")
	}
	return c2.New(cfg)
}

// readVanilla reads the vanilla proof files in order; a file holding a JSON
// array (serde_json of Vec<FallbackPoStSectorProof>) gives its elements.
// Any other file is one proof as it is (bincode may start with '[' too).
func readVanilla(files []string) ([][]byte, error) {
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var objs []json.RawMessage
		if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("[")) || json.Unmarshal(b, &objs) != nil {
			out = append(out, b)
			continue
		}
		for _, o := range objs {
			out = append(out, o)
		}
	}
	return out, nil
}
