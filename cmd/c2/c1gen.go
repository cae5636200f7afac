package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sealc2/c2/porep/c1gen"
	"github.com/sealc2/c2/porep/inputs"
)

func runC1gen(fs *flag.FlagSet, args []string) error {
	size := fs.String("sector-size", "", "sector size: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB or a byte count (required unless --proof)")
	v11 := fs.Bool("v1_1", false, "make a StackedDrg*V1_1 proof (default StackedDrg*V1)")
	proofName := fs.String("proof", "", "registered proof name, e.g. StackedDrg32GiBV1_1 (instead of --sector-size and --v1_1)")
	g := addGenFlags(fs)
	sectorID := fs.Uint64("sector-id", 0, "sector number (default: derived from the seed)")
	wrap := fs.Bool("commit2in", false, "wrap the C1 JSON in a Commit2In object (lotus-bench's format)")
	check := fs.Bool("check", false, "decode the output again and check every partition's vanilla proofs natively")
	checkCircuit := fs.Bool("check-circuit", false, "as --check, and also synthesize every partition's circuit and check each constraint against the public inputs a verifier derives (one core: about 1 s at 2 KiB, about a minute and 4 GB a partition at 32 GiB; no parameters needed)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	proof, err := c1genProof(*proofName, *size, *v11)
	if err != nil {
		return err
	}
	seed, err := parseSeed(*g.seed)
	if err != nil {
		return err
	}
	opts := &c1gen.Options{}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "sector-id" {
			opts.SectorID = sectorID
		}
	})

	// The destination is checked (and its temporary file created) before
	// the work.
	dst, err := optionalOutput(*g.out)
	if err != nil {
		return err
	}
	defer dst.abort()

	t0 := time.Now()
	sec, err := c1gen.Generate(proof, seed, opts)
	if err != nil {
		return err
	}
	var b []byte
	if *wrap {
		b, err = sec.Commit2In()
	} else {
		b, err = sec.JSON()
	}
	if err != nil {
		return err
	}
	gen := time.Since(t0)

	if *check || *checkCircuit {
		t1 := time.Now()
		n, err := checkC1(b, *checkCircuit)
		if err != nil {
			return fmt.Errorf("generated C1 output fails its check (a c1gen bug): %w", err)
		}
		what := "vanilla proofs verified"
		if *checkCircuit {
			what += ", circuits satisfied"
		}
		fmt.Fprintf(os.Stderr, "check: %d partitions, %s in %v\n", n, what, time.Since(t1).Round(time.Millisecond))
	}

	dest, err := writeResult(dst, b)
	if err != nil {
		return err
	}
	summarizeC1(os.Stderr, sec, len(b), gen, dest)
	return nil
}

// c1genProof picks the registered proof from --proof, or from
// --sector-size and --v1_1.
func c1genProof(name, size string, v11 bool) (inputs.Proof, error) {
	switch {
	case name != "" && size != "":
		return 0, errors.New("give --proof or --sector-size, not both")
	case name != "":
		return inputs.ParseProof(name)
	case size == "":
		return 0, errors.New("--sector-size (or --proof) is required")
	}
	shape, err := parseSectorSize(size)
	if err != nil {
		return 0, err
	}
	for p := inputs.StackedDrg2KiBV1; p <= inputs.StackedDrg64GiBV1_1; p++ {
		is, err := p.Shape()
		if err == nil && is.SectorSize == shape.SectorSize && (p >= inputs.StackedDrg2KiBV1_1) == v11 {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no interactive proof for sector size %s", size)
}

// genFlags are the flags the generators (c1gen, postgen) share: the seed
// their output derives from and the file it goes to.
type genFlags struct {
	seed, out *string
}

// addGenFlags defines --seed and --out on fs.
func addGenFlags(fs *flag.FlagSet) genFlags {
	return genFlags{
		seed: fs.String("seed", "", "generator seed: up to 64 hex digits (an even number), zero-padded on the right to 32 bytes (default all zero)"),
		out:  fs.String("out", "", "file to write (default standard output); written to a temporary file beside it, then renamed"),
	}
}

// parseSeed reads up to 32 bytes of hex into the start of a zero seed.
func parseSeed(s string) ([32]byte, error) {
	var seed [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) > len(seed) {
		return seed, fmt.Errorf("--seed %q: want up to 64 hex digits, an even number", s)
	}
	copy(seed[:], b)
	return seed, nil
}

// checkC1 decodes b as C2 would and verifies every partition natively;
// with circuit, it also checks that every partition's circuit holds with
// the public inputs a verifier derives from the C1's commitments and seed
// (c1gen.CheckCircuit). It returns the number of partitions.
func checkC1(b []byte, circuit bool) (int, error) {
	c1, shape, parts, err := c1Partitions(b)
	if err != nil {
		return 0, err
	}
	for k, p := range parts {
		if err := shape.Verify(p, k); err != nil {
			return 0, err
		}
	}
	if !circuit {
		return len(parts), nil
	}
	pub, _, err := c1.PublicInputs() // one a partition: c1Partitions checked the count
	if err != nil {
		return 0, err
	}
	for k, p := range parts {
		in, err := c1gen.CheckCircuit(shape, p)
		if err != nil {
			return 0, fmt.Errorf("partition %d: %w", k, err)
		}
		want := pub[k]
		if len(in) != len(want)+1 {
			return 0, fmt.Errorf("partition %d: the circuit has %d public inputs, a verifier derives %d", k, len(in)-1, len(want))
		}
		for i := range want {
			if in[i+1] != want[i] {
				return 0, fmt.Errorf("partition %d: public input %d of the circuit differs from the one a verifier derives", k, i)
			}
		}
	}
	return len(parts), nil
}

func summarizeC1(w io.Writer, sec *c1gen.Sector, n int, d time.Duration, dest string) {
	fmt.Fprintf(w, "%s: synthetic CC sector %d, %d bytes to %s in %v (NOT a sealed sector: for benchmarks and tests)\n",
		sec.Proof, sec.SectorID, n, dest, d.Round(time.Millisecond))
	fmt.Fprintf(w, "  prover_id  %x\n  replica_id %x\n  comm_d     %x\n  comm_r     %x\n  seed       %x\n  ticket     %x\n",
		sec.ProverID, sec.C1.ReplicaID, sec.C1.CommD, sec.C1.CommR, sec.C1.Seed, sec.C1.Ticket)
}
