package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/internal/regfile"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
)

// postSetup makes the development parameters of the registered PoSt proof
// name (c2 setup --post NAME [--gpu]).
func postSetup(name, dir string, onGPU bool) error {
	return setupRegistered(name, dir, onGPU, post.ShapeByName, post.SynthesizeBlank,
		fmt.Errorf("--post %q: no registered PoSt proof of that name (e.g. StackedDrgWindow2KiBV1_2, StackedDrgWinning32GiBV1)", name))
}

// registeredShape is a shape of a registered PoSt or update proof.
type registeredShape interface {
	fmt.Stringer
	ParamsName() string
}

// setupRegistered makes the development parameters of the shape byName
// finds for name, its blank circuit synthesized by blank, as setupCircuit
// does; unknown is the error for a name byName does not find.
func setupRegistered[S registeredShape](name, dir string, onGPU bool, byName func(string) (S, bool), blank func(r1cs.Builder, S) error, unknown error) error {
	shape, ok := byName(name)
	if !ok {
		return unknown
	}
	return setupCircuit(shape, shape.ParamsName(), dir, onGPU, func(b r1cs.Builder) error { return blank(b, shape) })
}

// postShape returns the registered PoSt proof name (--proof).
func postShape(name string) (post.Shape, error) {
	s, ok := post.ShapeByName(name)
	if !ok {
		return s, &post.InputError{Field: "proof", Msg: fmt.Sprintf("%q is no registered PoSt proof", name)}
	}
	return s, nil
}

// postRandomness parses a PoSt randomness (--randomness): 64 hex digits.
func postRandomness(h string) ([32]byte, error) {
	r, ok := hex32(h)
	if !ok {
		return r, &post.InputError{Field: "randomness", Msg: fmt.Sprintf("%q is not 64 hex digits", h)}
	}
	return r, nil
}

// filesFlag collects the values of a repeated flag.
type filesFlag []string

func (f *filesFlag) String() string     { return strings.Join(*f, " ") }
func (f *filesFlag) Set(v string) error { *f = append(*f, v); return nil }

func runPoStProve(fs *flag.FlagSet, args []string) error {
	name := fs.String("proof", "", "registered PoSt proof, e.g. StackedDrgWindow32GiBV1_2 or StackedDrgWinning32GiBV1 (required)")
	rnd := fs.String("randomness", "", "the PoSt randomness: 64 hex digits, a canonical scalar's 32 bytes (required)")
	f := addCircuitFlags(fs, "a sector's vanilla proof (bincode from generate_single_vanilla_proof, or its JSON object), or a JSON array of them; repeat in sector order (required)")
	partition := fs.Int("partition", -1, "Window PoSt only: prove the one partition of this index in the whole proof, from that partition's sectors (--vanilla); -1 proves the whole proof")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" || *rnd == "" || len(f.vanilla) == 0 || *f.params == "" {
		fs.Usage()
		return errors.New("--proof, --randomness, --vanilla and --params are required")
	}
	shape, err := postShape(*name)
	if err != nil {
		return err
	}
	randomness, err := postRandomness(*rnd)
	if err != nil {
		return err
	}
	prove := (*c2.Prover).ProveWindowPoStTimed
	switch {
	case *partition < -1:
		return &post.InputError{Field: "partition", Msg: fmt.Sprintf("%d is negative", *partition)}
	case *partition >= 0 && shape.Kind == post.Winning:
		return &post.InputError{Field: "partition", Msg: "a Winning PoSt has one partition: leave --partition out"}
	case *partition >= 0:
		k := *partition
		prove = func(p *c2.Prover, ctx context.Context, proof string, rnd [32]byte, vanilla [][]byte) ([]byte, c2.ProveTimes, error) {
			return p.ProveWindowPoStPartitionTimed(ctx, proof, rnd, k, vanilla)
		}
	case shape.Kind == post.Winning:
		prove = (*c2.Prover).ProveWinningPoStTimed
	}
	return f.prove(circuitProof{
		name: shape.Name, setupFlag: "--post",
		describe: func(n int) { fmt.Printf("%s: %d vanilla proof(s), %s\n", shape.Name, n, shape) },
		decode: func(vanilla [][]byte) error {
			_, err := c2.DecodeVanillaPoSt(vanilla)
			return err
		},
		find: func(params string) (string, bool, error) { return c2.FindPoStParams(params, shape, ".params") },
		prove: func(ctx context.Context, p *c2.Prover, vanilla [][]byte) ([]byte, c2.ProveTimes, error) {
			return prove(p, ctx, shape.Name, randomness, vanilla)
		},
		verified: "the randomness and sectors",
	})
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

// maxVanillaFile bounds a vanilla proof file post-prove and update-prove
// read: a JSON array of a whole 32 GiB Window PoSt partition's proofs
// (2,349 sectors of about 85 kB of JSON each) is about 0.2 GB.
const maxVanillaFile = 1 << 30

// readVanilla reads the vanilla proof files in order (regular files of at
// most maxVanillaFile bytes); a file holding a JSON array (serde_json of
// Vec<FallbackPoStSectorProof>) gives its elements. Any other file is one
// proof as it is (bincode may start with '[' too). perFile[i] is how many
// proofs files[i] gave.
func readVanilla(files []string) (proofs [][]byte, perFile []int, err error) {
	for _, f := range files {
		b, err := regfile.Read(f, maxVanillaFile)
		if err != nil {
			return nil, nil, err
		}
		var objs []json.RawMessage
		if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("[")) || json.Unmarshal(b, &objs) != nil {
			proofs, perFile = append(proofs, b), append(perFile, 1)
			continue
		}
		for _, o := range objs {
			proofs = append(proofs, o)
		}
		perFile = append(perFile, len(objs))
	}
	return proofs, perFile, nil
}
