package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/specialfile"
)

// porep2KiB holds the 2 KiB PoRep vectors the tests of this file read.
const porep2KiB = "../../testdata/refgen/out/porep-2k/"

// The inputs TestSpecialInputs does not cover are refused at once too:
// post-prove's and update-prove's --vanilla files used to be read with
// os.ReadFile (a FIFO blocked forever, /dev/zero filled memory), serve's
// --config went through toml.DecodeFile (the same), and verify's --inputs
// goes through the same reader as --proof.
func TestMoreSpecialInputs(t *testing.T) {
	dir, fifo := specialfile.FIFO(t)
	out := filepath.Join(dir, "p.bin")
	const rnd = "44434a5158676e757c7b0209101f262d34333ac1c8d7dee5ecebf2f9808f961d"
	const comm = "0000000000000000000000000000000000000000000000000000000000000000"
	postArgs := func(v string) []string {
		return []string{"--proof", "StackedDrgWinning2KiBV1", "--randomness", rnd, "--params", dir, "--out", out, "--vanilla", v}
	}
	updateArgs := func(v string) []string {
		return []string{"--proof", "StackedDrg2KiBV1", "--comm-r-old", comm, "--comm-r-new", comm, "--comm-d-new", comm, "--params", dir, "--out", out, "--vanilla", v}
	}
	// In order: the FIFOs first, so that code reading them whole blocks
	// (and fails the test) before it meets /dev/zero.
	for _, c := range []struct {
		name string
		cmd  string
		args []string
	}{
		{"post-prove --vanilla FIFO", "post-prove", postArgs(fifo)},
		{"post-prove --vanilla /dev/zero", "post-prove", postArgs("/dev/zero")},
		{"post-prove --vanilla DIR", "post-prove", postArgs(dir)},
		{"update-prove --vanilla FIFO", "update-prove", updateArgs(fifo)},
		{"update-prove --vanilla /dev/zero", "update-prove", updateArgs("/dev/zero")},
		{"serve --config FIFO", "serve", []string{"--config", fifo}},
		{"serve --config /dev/zero", "serve", []string{"--config", "/dev/zero"}},
		{"serve --config DIR", "serve", []string{"--config", dir}},
		{"verify --inputs FIFO", "verify", []string{"--vk", porep2KiB + "bellperson-porep-2k.vk", "--proof", porep2KiB + "bellperson-c2.proof", "--inputs", fifo}},
	} {
		specialfile.RequireRefused(t, c.name, "not a regular file", func() error { return run(t, c.cmd, c.args...) })
	}
	require.NoFileExists(t, out)

	// A vanilla file over the cap is refused before it is read.
	big := filepath.Join(dir, "big.bin")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxVanillaFile+1)) // sparse
	require.NoError(t, f.Close())
	_, _, err = readVanilla([]string{big})
	require.ErrorContains(t, err, "larger than")
}

// Every command refuses a stray positional argument, which would stop flag
// parsing and silently drop the flags after it.
func TestEveryCommandRefusesStrayArguments(t *testing.T) {
	require.NotEmpty(t, commands)
	for _, c := range commands {
		err := run(t, c.Name(), "stray", "--out", filepath.Join(t.TempDir(), "x"))
		require.ErrorContains(t, err, `unexpected argument "stray"`, c.Name())
	}
}

// post-prove and update-prove check --out before reading any vanilla proof.
func TestCircuitProveChecksOutputFirst(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.bin") // read only after --out
	err := run(t, "post-prove", "--proof", "StackedDrgWinning2KiBV1", "--randomness", "44434a5158676e757c7b0209101f262d34333ac1c8d7dee5ecebf2f9808f961d",
		"--params", dir, "--out", dir, "--vanilla", missing)
	require.ErrorContains(t, err, "is a directory")
	zero := "0000000000000000000000000000000000000000000000000000000000000000"
	err = run(t, "update-prove", "--proof", "StackedDrg2KiBV1", "--comm-r-old", zero, "--comm-r-new", zero, "--comm-d-new", zero,
		"--params", dir, "--out", dir, "--vanilla", missing)
	require.ErrorContains(t, err, "is a directory")
}
