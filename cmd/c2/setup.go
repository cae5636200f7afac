package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	c2 "github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// devPrefix starts the names of development parameter files, so that they
// are never mistaken for the official ones (the prefix c2 looks for).
const devPrefix = c2.DevParamsPrefix

func runSetup(fs *flag.FlagSet, args []string) error {
	size := fs.String("sector-size", "2KiB", "sector size: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB or a byte count")
	postName := fs.String("post", "", "a registered PoSt proof (e.g. StackedDrgWindow2KiBV1_2): its circuit instead of PoRep's")
	updateName := fs.String("update", "", "a registered SnapDeals update proof (e.g. StackedDrg2KiBV1): its circuit instead of PoRep's")
	out := fs.String("out", "", "directory to write the .params and .vk files to (required)")
	onGPU := fs.Bool("gpu", false, "make the key in the first CUDA device's memory (PoRep 2^27 in about 20 s) and write it from there; needs libc2cuda.so and a GPU")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		fs.Usage()
		return errors.New("--out is required")
	}
	if *postName != "" && *updateName != "" {
		return errors.New("give --post or --update, not both")
	}
	if *postName != "" {
		return postSetup(*postName, *out, *onGPU)
	}
	if *updateName != "" {
		return updateSetup(*updateName, *out, *onGPU)
	}
	shape, err := parseSectorSize(*size)
	if err != nil {
		return err
	}
	fmt.Println("WARNING: INSECURE development parameters (single-party setup); proofs made with them prove nothing on chain.")
	fmt.Printf("shape: %v\n", shape)
	if *onGPU {
		return devSetupGPU(shape, *size, *out)
	}
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
	base, params, vk, err := devOutputs(dir, name)
	if err != nil {
		return err
	}
	defer params.abort()
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

// devOutputs creates dir and the (uncommitted) outputs
// dir/dev-insecure-name.params and .vk, base being their path without the
// extension; on error nothing is left to abort.
func devOutputs(dir, name string) (base string, params, vk *output, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, nil, err
	}
	base = filepath.Join(dir, devPrefix+name)
	if params, err = createOutput(base + ".params"); err != nil {
		return "", nil, nil, err
	}
	if vk, err = createOutput(base + ".vk"); err != nil {
		params.abort()
		return "", nil, nil, err
	}
	return base, params, vk, nil
}

// devSetupGPU makes the development key of shape (sector size size) in the
// first CUDA device's memory and writes dir/dev-insecure-<official
// name>.{params,vk} from there (see onGPU).
func devSetupGPU(shape porep.Shape, size, dir string) error {
	proof, err := c1genProof("", size, false)
	if err != nil {
		return err
	}
	return onGPU(shape.ParamsName(), dir, "record + setup (GPU)",
		func(ctx context.Context, p *c2.Prover) (*groth16.VerifyingKey, func(io.Writer) error, error) {
			vk, err := p.DevSetupProof(ctx, proof.String(), rand.Reader)
			return vk, func(w io.Writer) error { return p.WriteDevParams(ctx, proof.String(), w, nil) }, err
		})
}

// devSetupSystemGPU is devSetupSystem with the key made in the first CUDA
// device's memory (Prover.DevSetup) and written from there (see onGPU).
func devSetupSystemGPU(name, dir string, record func() (*r1cs.System, error)) error {
	return onGPU(name, dir, "setup (GPU)", func(ctx context.Context, p *c2.Prover) (*groth16.VerifyingKey, func(io.Writer) error, error) {
		t0 := time.Now()
		sys, err := record()
		if err != nil {
			return nil, nil, err
		}
		sys.Finalize()
		stage("synthesize", time.Since(t0), sys.Counts().String())
		pk, err := p.DevSetup(ctx, sys, rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		return &pk.VK, func(w io.Writer) error { return p.WriteDevKey(ctx, pk, w, nil) }, nil
	})
}

// onGPU makes development parameters named name on the first CUDA device
// and writes dir/dev-insecure-name.{params,vk} from there, the bases a
// chunk at a time: dir is created and both outputs checked, then mk
// (timed as step) makes the key and returns its verifying key and the
// writer of its .params.
func onGPU(name, dir, step string, mk func(ctx context.Context, p *c2.Prover) (*groth16.VerifyingKey, func(io.Writer) error, error)) error {
	base, params, vkOut, err := devOutputs(dir, name)
	if err != nil {
		return err
	}
	defer params.abort()
	defer vkOut.abort()
	p, err := c2.New(c2.Config{Backend: c2.BackendCUDA})
	if err != nil {
		return err
	}
	defer p.Close()
	ctx := context.Background()

	t0 := time.Now()
	stop := ticker(step)
	vk, write, err := mk(ctx, p)
	stop()
	if err != nil {
		return err
	}
	stage(step, time.Since(t0), strings.Join(p.Devices(), ","))

	t0 = time.Now()
	stop = ticker("write")
	err = params.commit(func(w io.Writer) (int64, error) { return 0, write(w) })
	stop()
	if err != nil {
		return err
	}
	if err := vkOut.commit(vk.WriteTo); err != nil {
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
