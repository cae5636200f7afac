package devparams

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
	"github.com/sealc2/c2/update"
)

// This file provides, beside the PoRep ones, the development parameters of
// the 2 KiB SnapDeals circuit (1.7 M constraints), cached the same way:
// [UpdateDir] returns $C2_TEST_PARAMS when it holds them, else [CacheDir]
// after [EnsureUpdate]. Generating costs about a minute of CPU and 0.7 GiB
// of disk. [GeneratePoSt] writes those of a PoSt shape, uncached.

// UpdateShape is the SnapDeals shape whose parameters UpdateDir provides.
var UpdateShape, _ = update.ShapeByName("StackedDrg2KiBV1")

// updateLockName is the file [EnsureUpdate] locks in the directory.
const updateLockName = ".devparams-update.lock"

// UpdatePaths returns the paths of the update shape's development .params
// and .vk in dir.
func UpdatePaths(dir string) (params, vk string) { return paths(dir, UpdateShape.ParamsName()) }

// CheckUpdate reports whether dir holds the update shape's development
// .params and .vk, whole and belonging together: the .vk decodes with
// every check and has one ic point per public input of the shape, the
// .params file's section counts account for all its bytes, and it starts
// with exactly the .vk's bytes.
func CheckUpdate(dir string) error {
	pp, vp := UpdatePaths(dir)
	vk, err := os.ReadFile(vp)
	if err != nil {
		return err
	}
	key, err := groth16.DecodeVerifyingKey(vk)
	if err != nil {
		return fmt.Errorf("%s: %w", vp, err)
	}
	if n := key.NumInputs(); n != UpdateShape.NumInputs() {
		return fmt.Errorf("%s: %d public inputs, %s has %d", vp, n, UpdateShape.Name, UpdateShape.NumInputs())
	}
	f, _, err := openParams(pp)
	if err != nil {
		return err
	}
	defer f.Close()
	prefix := make([]byte, len(vk))
	if _, err := f.ReadAt(prefix, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", pp, err)
	}
	if !bytes.Equal(prefix, vk) {
		return fmt.Errorf("%s does not start with %s", pp, vp)
	}
	return nil
}

// EnsureUpdate makes dir (created if missing) hold update parameters that
// [CheckUpdate] accepts, generating them with [GenerateUpdate] under an
// exclusive lock on dir/.devparams-update.lock when they are missing or
// damaged (as [Ensure] does for PoRep).
func EnsureUpdate(dir string) error {
	return locked(dir, updateLockName, func() error {
		if CheckUpdate(dir) == nil {
			return nil
		}
		if err := GenerateUpdate(dir); err != nil {
			return fmt.Errorf("devparams: generating update parameters into %s: %w", dir, err)
		}
		return CheckUpdate(dir)
	})
}

// GenerateUpdate records the blank update circuit, runs groth16.Setup on
// it and writes the key and its verifying key into dir (each through a
// temporary file renamed into place, .params first).
func GenerateUpdate(dir string) error {
	pk, err := setup(func(b r1cs.Builder) error { return update.SynthesizeBlank(b, UpdateShape) })
	if err != nil {
		return err
	}
	pp, vp := UpdatePaths(dir)
	return writeKey(pp, vp, pk)
}

// GeneratePoSt records the blank circuit of the PoSt shape s, runs
// groth16.Setup on it and writes the key and its verifying key into dir
// under s's development names (as GenerateUpdate does).
func GeneratePoSt(dir string, s post.Shape) error {
	pk, err := setup(func(b r1cs.Builder) error { return post.SynthesizeBlank(b, s) })
	if err != nil {
		return err
	}
	pp, vp := paths(dir, s.ParamsName())
	return writeKey(pp, vp, pk)
}

// UpdateDir returns a directory holding the update shape's development
// parameters: $C2_TEST_PARAMS when [CheckUpdate] accepts it (it is never
// written), else [CacheDir] after [EnsureUpdate].
func UpdateDir() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" && CheckUpdate(dir) == nil {
		return dir, nil
	}
	dir, err := CacheDir()
	if err != nil {
		return "", fmt.Errorf("devparams: no cache directory (%v)", err)
	}
	if err := EnsureUpdate(dir); err != nil {
		return "", err
	}
	return dir, nil
}
