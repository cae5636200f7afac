package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// devPrefix starts the names of development parameter files, so that they
// are never mistaken for the official ones.
const devPrefix = "dev-insecure-"

func runSetup(fs *flag.FlagSet, args []string) error {
	size := fs.String("sector-size", "2KiB", "sector size: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB or a byte count")
	postName := fs.String("post", "", "a registered PoSt proof (e.g. StackedDrgWindow2KiBV1_2): its circuit instead of PoRep's")
	updateName := fs.String("update", "", "a registered SnapDeals update proof (e.g. StackedDrg2KiBV1): its circuit instead of PoRep's")
	out := fs.String("out", "", "directory to write the .params and .vk files to (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		fs.Usage()
		return errors.New("--out is required")
	}
	if *postName != "" {
		return postSetup(*postName, *out)
	}
	if *updateName != "" {
		return updateSetup(*updateName, *out)
	}
	shape, err := parseSectorSize(*size)
	if err != nil {
		return err
	}
	fmt.Println("WARNING: INSECURE development parameters (single-party setup); proofs made with them prove nothing on chain.")
	fmt.Printf("shape: %v\n", shape)
	if shape.Layers > 2 {
		fmt.Println("note: this records a 130 M-constraint system and computes ~450 M points; it needs hundreds of GiB and hours.")
	}

	return devSetup(shape, *out)
}

// devSetup records the shape's circuit, runs the insecure development setup
// and writes dir/dev-insecure-<official name>.{params,vk}, printing stages.
// dir is created, and both outputs checked, before the setup starts.
func devSetup(shape porep.Shape, dir string) error {
	return devSetupSystem(shape.ParamsName(), dir, func() (*r1cs.System, error) {
		p, err := porep.SyntheticPartition(shape, 1) // the R1CS depends only on the shape
		if err != nil {
			return nil, err
		}
		sys := r1cs.NewSystem()
		return sys, porep.Synthesize(sys, shape, p)
	})
}

// devSetupSystem is devSetup for the circuit record synthesizes (into a
// fresh system, unfinalized), whose official parameter base name is name.
func devSetupSystem(name, dir string, record func() (*r1cs.System, error)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, devPrefix+name)
	params, err := createOutput(base + ".params")
	if err != nil {
		return err
	}
	defer params.abort()
	vk, err := createOutput(base + ".vk")
	if err != nil {
		return err
	}
	defer vk.abort()

	t0 := time.Now()
	sys, err := record()
	if err != nil {
		return err
	}
	sys.Finalize()
	stage("synthesize", time.Since(t0), sys.Counts().String())

	t0 = time.Now()
	stop := ticker("setup (dev)")
	pk, err := groth16.Setup(sys, rand.Reader)
	stop()
	if err != nil {
		return err
	}
	sys = nil
	stage("setup (dev)", time.Since(t0), fmt.Sprintf("h=%d l=%d a=%d b=%d", len(pk.H), len(pk.L), len(pk.A), len(pk.BG1)))

	t0 = time.Now()
	if err := params.commit(pk.WriteTo); err != nil {
		return err
	}
	if err := vk.commit(pk.VK.WriteTo); err != nil {
		return err
	}
	stage("write", time.Since(t0), base+".{params,vk}")
	return nil
}

// ticker prints how long a long step has run, every 15 s, until stopped.
func ticker(what string) (stop func()) {
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Printf("  … %s: %s\n", what, time.Since(t0).Round(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// parseSectorSize accepts 2KiB, 8MiB, 512MiB, 32GiB, 64GiB (case-insensitive;
// "KiB", "Ki", "K" and "KB" all mean 1024) or a byte count.
func parseSectorSize(s string) (porep.Shape, error) {
	t := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "b")
	t = strings.TrimSuffix(t, "i")
	mult := uint64(1)
	if k := strings.IndexAny(t, "kmg"); k > 0 && k == len(t)-1 {
		mult = map[byte]uint64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}[t[k]]
		t = t[:k]
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return porep.Shape{}, fmt.Errorf("sector size %q: want 2KiB, 8MiB, 512MiB, 32GiB, 64GiB or bytes", s)
	}
	if n > math.MaxUint64/mult {
		return porep.Shape{}, fmt.Errorf("sector size %q: more than 2^64 bytes", s)
	}
	shape, ok := porep.ShapeBySize(n * mult)
	if !ok {
		return porep.Shape{}, fmt.Errorf("sector size %q: no PoRep shape of %d bytes", s, n*mult)
	}
	return shape, nil
}
