package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/porep"
)

func runProve(fs *flag.FlagSet, args []string) error {
	c1Path := fs.String("c1", "", "C1 output: filecoin-ffi JSON, or a Commit2In wrapper (required)")
	f := addProveFlags(fs, "shape's")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *c1Path == "" || *f.params == "" {
		fs.Usage()
		return errors.New("--c1 and --params are required")
	}
	// The output is checked and its temporary file created before anything
	// else, so that a bad --out fails in milliseconds, not after the proof.
	o, err := createOutput(*f.out)
	if err != nil {
		return err
	}
	defer o.abort()

	b, err := porep.ReadC1(*c1Path)
	if err != nil {
		return err
	}
	c1, shape, parts, err := c1Partitions(b)
	if err != nil {
		return inC1(*c1Path, err)
	}
	fmt.Printf("%s: %d partition(s) of %d challenges, %d-byte sector, %d layers\n",
		c1.RegisteredProof, len(parts), shape.Challenges, shape.SectorSize, shape.Layers)
	_, dev, err := findParams(*f.params, shape, ".params")
	if err != nil {
		return err
	}
	prover, err := openProver(dev, f.config())
	if err != nil {
		return err
	}
	defer prover.Close()
	proof, err := proveC1(prover, b)
	if err != nil {
		return inC1(*c1Path, err)
	}
	if err := o.commit(bytesWriter(proof)); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d bytes), verified against public inputs derived from the C1\n", *f.out, len(proof))
	return nil
}

// c1Partitions decodes the C1 output b as C2 does (porep.DecodeC1), splits
// it into its shape's partitions (porep.Partitions) and checks its
// consistency natively (porep.CheckC1: a registered proof c2 proves, the
// challenges its seed derives), so that a bad C1 is refused before
// parameters are looked for, as Prove refuses it.
func c1Partitions(b []byte) (*porep.C1Output, porep.Shape, []*porep.Partition, error) {
	c1, err := porep.DecodeC1(b)
	if err != nil {
		return nil, porep.Shape{}, nil, err
	}
	shape, parts, err := porep.Partitions(c1)
	if err != nil {
		return nil, porep.Shape{}, nil, err
	}
	if err := porep.CheckC1(c1, shape, parts); err != nil {
		return nil, porep.Shape{}, nil, err
	}
	return c1, shape, parts, nil
}

// inC1 names the C1 file path in err when err is about what the file holds
// (a porep.C1Error or porep.InputError, which name the field); other errors
// (parameters, devices) pass unchanged.
func inC1(path string, err error) error {
	var ce *porep.C1Error
	var ie *porep.InputError
	if errors.As(err, &ce) || errors.As(err, &ie) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return err
}

// backendUsage is the usage of --backend.
const backendUsage = "device backend: cpu, cuda, or empty for automatic"

// proveFlags are the flags of a command proving on a new Prover and
// writing the proof to a file.
type proveFlags struct {
	params, out, backend *string
	trust                *bool
}

// addProveFlags defines --params, --out, --backend and --trust-params on
// fs; of names whose parameters --params holds ("shape's", "proof's").
func addProveFlags(fs *flag.FlagSet, of string) proveFlags {
	return proveFlags{
		params:  fs.String("params", "", "a .params file, or a directory holding the "+of+" official or "+devPrefix+" parameters (required)"),
		out:     fs.String("out", "proof.bin", "file to write the proof to (192 bytes per partition, concatenated)"),
		backend: fs.String("backend", "", backendUsage),
		trust:   fs.Bool("trust-params", false, "read the parameters as filecoin-proofs does, without checks beyond the curve; otherwise a file under a published name must have its published digest (as paramfetch checks) and any other file has its points checked (minutes at 32 GiB)"),
	}
}

// config returns the Prover configuration the flags select.
func (f proveFlags) config() c2.Config {
	return c2.Config{Backend: c2.Backend(*f.backend), Params: *f.params, TrustParams: *f.trust}
}

// openProver warns when the parameters found are development ones (dev)
// and starts a Prover with cfg.
func openProver(dev bool, cfg c2.Config) (*c2.Prover, error) {
	if dev {
		fmt.Println("WARNING: using INSECURE development parameters; this proof is worthless on chain.")
	}
	return c2.New(cfg)
}

// findParams resolves --params with c2.FindParams, and says how to make
// development parameters when there are none.
func findParams(p string, s porep.Shape, ext string) (path string, dev bool, err error) {
	path, dev, err = c2.FindParams(p, s, ext)
	if err != nil {
		return "", false, fmt.Errorf("%w (c2 setup --sector-size %d --out DIR makes development parameters)", err, s.SectorSize)
	}
	return path, dev, nil
}
