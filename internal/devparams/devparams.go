// Package devparams provides the insecure development parameters of the
// 2 KiB PoRep shape that the tests and `c2 demo` share.
//
// [Dir] returns a directory holding the shape's dev-insecure-….params and
// .vk: $C2_TEST_PARAMS when set, else [CacheDir], the directory `c2 demo`
// uses by default. [Ensure] makes a directory hold them: under an exclusive
// lock on a file in that directory it checks what is there and generates
// whatever is missing or damaged, so test binaries that run in parallel
// (go test ./... runs packages concurrently) generate them once. Generating
// costs about 100 CPU-seconds and 1 GiB of disk.
//
// Anyone who knows the setup's randomness can forge proofs under these
// parameters: they serve tests and demonstrations only.
package devparams

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// EnvDir names the environment variable that, when set, points [Dir] at an
// existing directory of parameters (for example a `c2 setup` output)
// instead of the cache.
const EnvDir = "C2_TEST_PARAMS"

// Shape is the PoRep shape whose parameters this package provides.
var Shape = porep.Shape2KiB

// lockName is the file [Ensure] locks in the parameter directory.
const lockName = ".devparams.lock"

// CacheDir returns <user cache directory>/c2/params, where `c2 demo` keeps
// its parameters by default. It does not create the directory.
func CacheDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "c2", "params"), nil
}

// Dir returns a directory holding the shape's development .params and .vk.
// With $C2_TEST_PARAMS set it returns that directory once [Check] accepts
// it and never writes there; otherwise it returns [CacheDir] after
// [Ensure] with the default generator [Generate].
func Dir() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		if err := Check(dir); err != nil {
			return "", fmt.Errorf("devparams: $%s: %w", EnvDir, err)
		}
		return dir, nil
	}
	dir, err := CacheDir()
	if err != nil {
		return "", fmt.Errorf("devparams: no cache directory (%v): set $%s", err, EnvDir)
	}
	if err := Ensure(dir, Generate); err != nil {
		return "", err
	}
	return dir, nil
}

// Paths returns the paths of the shape's development .params and .vk in
// dir.
func Paths(dir string) (params, vk string) { return paths(dir, Shape.ParamsName()) }

// paths returns the paths of the development .params and .vk of the
// parameters named name in dir.
func paths(dir, name string) (params, vk string) {
	base := filepath.Join(dir, c2.DevParamsPrefix+name)
	return base + ".params", base + ".vk"
}

// wantIC is the number of ic points of the shape's verifying key (its
// public inputs, ONE included); tests of this package change it.
var wantIC = Shape.NumInputs()

// Check reports whether dir holds the shape's development .params and .vk
// and they are whole: the .params file's section counts account for every
// byte (a file cut short by a killed writer fails), its verifying key has
// one ic point per public input of the shape, the .vk decodes with every
// check, and the .vk is the verifying key the .params file starts with. It
// reads the verifying key and the count words only, not the vectors of
// points, so it cannot tell a key of an older version of the circuit with
// as many public inputs: after changing the 2 KiB circuit, remove the
// files (proofs under a stale key fail Prove's verification).
func Check(dir string) error {
	pp, vp := Paths(dir)
	f, lay, err := openParams(pp)
	if err != nil {
		return err
	}
	defer f.Close()
	if lay.IC.Len != wantIC {
		return fmt.Errorf("%s: %d public inputs, the shape has %d", pp, lay.IC.Len, wantIC)
	}
	vk, err := os.ReadFile(vp)
	if err != nil {
		return err
	}
	if _, err := groth16.DecodeVerifyingKey(vk); err != nil {
		return fmt.Errorf("%s: %w", vp, err)
	}
	head := make([]byte, lay.IC.End())
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("%s: %w", pp, err)
	}
	if !bytes.Equal(head, vk) {
		return fmt.Errorf("%s is not the verifying key of %s", vp, pp)
	}
	return nil
}

// openParams opens the .params file pp and scans its layout
// ([groth16.ScanParams]); the caller closes the file.
func openParams(pp string) (*os.File, *groth16.ParamsLayout, error) {
	f, err := os.Open(pp)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var lay *groth16.ParamsLayout
		if lay, err = groth16.ScanParams(f, st.Size()); err == nil {
			return f, lay, nil
		}
		err = fmt.Errorf("%s: %w", pp, err)
	}
	f.Close()
	return nil, nil, err
}

// Ensure makes dir (created if missing) hold parameters that [Check]
// accepts. It holds an exclusive lock on dir/.devparams.lock throughout, so
// concurrent callers, in this process or others, wait for one generation
// instead of repeating it. When Check refuses what is there, Ensure removes
// the shape's development files and calls generate(dir), which must write
// both files into dir (each through a temporary file renamed into place, so
// that a killed generator leaves no damaged file under the final names);
// then Check must accept them.
func Ensure(dir string, generate func(dir string) error) error {
	return locked(dir, lockName, func() error {
		if Check(dir) == nil {
			return nil
		}
		pp, vp := Paths(dir)
		for _, p := range []string{pp, vp} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("devparams: %w", err)
			}
		}
		if err := generate(dir); err != nil {
			return fmt.Errorf("devparams: generating into %s: %w", dir, err)
		}
		if err := Check(dir); err != nil {
			return fmt.Errorf("devparams: generated parameters: %w", err)
		}
		return nil
	})
}

// locked creates dir if missing and runs f holding an exclusive lock on
// dir/name.
func locked(dir, name string, f func() error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("devparams: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("devparams: lock: %w", err)
	}
	defer unlock()
	return f()
}

// Generate writes new development parameters of the shape and their
// verifying key into dir, each through a temporary file renamed into place.
// It synthesizes the shape's circuit once and runs groth16.Setup on it.
func Generate(dir string) error {
	part, err := porep.SyntheticPartition(Shape, 1) // the R1CS depends only on the shape
	if err != nil {
		return err
	}
	pk, err := setup(func(b r1cs.Builder) error { return porep.Synthesize(b, Shape, part) })
	if err != nil {
		return err
	}
	return WriteKey(dir, pk)
}

// setup records the circuit synth synthesizes and runs groth16.Setup on it
// with fresh randomness.
func setup(synth func(b r1cs.Builder) error) (*groth16.ProvingKey, error) {
	sys := r1cs.NewSystem()
	if err := synth(sys); err != nil {
		return nil, err
	}
	sys.Finalize()
	return groth16.Setup(sys, rand.Reader)
}

// WriteKey writes pk and its verifying key into dir under the shape's
// development names, each through a temporary file in dir renamed into
// place: .params first, .vk last.
func WriteKey(dir string, pk *groth16.ProvingKey) error {
	pp, vp := Paths(dir)
	return writeKey(pp, vp, pk)
}

// writeKey writes pk to pp and its verifying key to vp through
// [writeFile]: .params first, .vk last.
func writeKey(pp, vp string, pk *groth16.ProvingKey) error {
	if err := writeFile(pp, pk.WriteTo); err != nil {
		return err
	}
	return writeFile(vp, pk.VK.WriteTo)
}

// writeFile writes path through a temporary file beside it and renames it
// into place; on error no file is left behind.
func writeFile(path string, write func(io.Writer) (int64, error)) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	_, err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
