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
func Paths(dir string) (params, vk string) {
	base := filepath.Join(dir, c2.DevParamsPrefix+Shape.ParamsName())
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
	f, err := os.Open(pp)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	lay, err := groth16.ScanParams(f, st.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", pp, err)
	}
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

// Ensure makes dir (created if missing) hold parameters that [Check]
// accepts. It holds an exclusive lock on dir/.devparams.lock throughout, so
// concurrent callers, in this process or others, wait for one generation
// instead of repeating it. When Check refuses what is there, Ensure removes
// the shape's development files and calls generate(dir), which must write
// both files into dir (each through a temporary file renamed into place, so
// that a killed generator leaves no damaged file under the final names);
// then Check must accept them.
func Ensure(dir string, generate func(dir string) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("devparams: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, lockName))
	if err != nil {
		return fmt.Errorf("devparams: lock: %w", err)
	}
	defer unlock()
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
}

// Generate writes new development parameters of the shape and their
// verifying key into dir, each through a temporary file renamed into place.
// It synthesizes the shape's circuit once and runs groth16.Setup on it.
func Generate(dir string) error {
	part, err := porep.SyntheticPartition(Shape, 1) // the R1CS depends only on the shape
	if err != nil {
		return err
	}
	sys := r1cs.NewSystem()
	if err := porep.Synthesize(sys, Shape, part); err != nil {
		return err
	}
	sys.Finalize()
	pk, err := groth16.Setup(sys, rand.Reader)
	if err != nil {
		return err
	}
	return WriteKey(dir, pk)
}

// WriteKey writes pk and its verifying key into dir under the shape's
// development names, each through a temporary file in dir renamed into
// place: .params first, .vk last.
func WriteKey(dir string, pk *groth16.ProvingKey) error {
	pp, vp := Paths(dir)
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
