package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/specialfile"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/post"
)

const porepRefgen = "../../testdata/refgen/out/porep-2k/"

// run runs the c2 command name with args as main does: on a new flag set
// from the command table.
func run(t *testing.T, name string, args ...string) error {
	t.Helper()
	c := lookup(name)
	if c == nil {
		t.Errorf("no c2 command %q", name) // not Fatal: run is called from goroutines too
		return fmt.Errorf("no c2 command %q", name)
	}
	return c.Run(c.FlagSet(), args)
}

// bellperson's C2 proof of the committed 2 KiB C1 under bellperson's key,
// checked the way a verifier does: public inputs derived from the C1.
func TestVerifyBellpersonProof(t *testing.T) {
	args := []string{"--vk", porepRefgen + "bellperson-porep-2k.vk", "--proof", porepRefgen + "bellperson-c2.proof"}
	require.NoError(t, run(t, "verify", append(args, "--c1", porepRefgen+"c1.json")...))
	require.NoError(t, run(t, "verify", append(args, "--inputs", porepRefgen+"inputs-p0.bin")...), "inputs given as a file")

	// The same proof with one byte of C changed is refused.
	raw, err := os.ReadFile(porepRefgen + "bellperson-c2.proof")
	require.NoError(t, err)
	raw[len(raw)-1] ^= 1
	bad := filepath.Join(t.TempDir(), "bad.proof")
	require.NoError(t, os.WriteFile(bad, raw, 0o644))
	err = run(t, "verify", "--vk", porepRefgen+"bellperson-porep-2k.vk", "--proof", bad, "--c1", porepRefgen+"c1.json")
	require.Error(t, err)

	// Inputs of the wrong length name the file.
	short := filepath.Join(t.TempDir(), "short.bin")
	require.NoError(t, os.WriteFile(short, make([]byte, 31), 0o644))
	err = run(t, "verify", append(args, "--inputs", short)...)
	require.ErrorContains(t, err, short)

	// Another sector's inputs (the 8 MiB C1) do not fit this key.
	err = run(t, "verify", append(args, "--c1", "../../testdata/refgen/out/porep-8m/c1.json")...)
	require.Error(t, err)
}

func TestVerifyNeedsItsFlags(t *testing.T) {
	require.Error(t, run(t, "verify"))
	require.Error(t, run(t, "verify", "--vk", porepRefgen+"bellperson-porep-2k.vk", "--proof", porepRefgen+"bellperson-c2.proof"),
		"neither --c1 nor --inputs")
	require.Error(t, run(t, "verify", "--vk", porepRefgen+"bellperson-porep-2k.vk", "--proof", porepRefgen+"bellperson-c2.proof",
		"--c1", porepRefgen+"c1.json", "--inputs", porepRefgen+"inputs-p0.bin"), "both --c1 and --inputs")
	var fe *groth16.FormatError
	require.ErrorAs(t, run(t, "verify", "--vk", porepRefgen+"c1.json", "--proof", porepRefgen+"bellperson-c2.proof",
		"--inputs", porepRefgen+"inputs-p0.bin"), &fe, "a JSON file is no verifying key")
}

func TestProveRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "proof.bin")
	require.Error(t, run(t, "prove", "--params", dir), "--c1 is required")

	// No parameters for the shape in the directory.
	err := run(t, "prove", "--c1", porepRefgen+"c1.json", "--params", dir, "--out", out)
	require.ErrorIs(t, err, c2.ErrNoParams)
	require.ErrorContains(t, err, "v28-stacked-proof-of-replication")
	require.NoFileExists(t, out)

	// A truncated C1 is a C1Error, before any parameters are looked at,
	// naming the file and the field; verify --c1 says the same.
	raw, err := os.ReadFile(porepRefgen + "c1.json")
	require.NoError(t, err)
	trunc := filepath.Join(dir, "c1.json")
	require.NoError(t, os.WriteFile(trunc, raw[:len(raw)/2], 0o644))
	var ce *porep.C1Error
	err = run(t, "prove", "--c1", trunc, "--params", dir, "--out", out)
	require.ErrorAs(t, err, &ce)
	require.True(t, strings.HasPrefix(err.Error(), trunc+": "), err.Error())
	require.ErrorContains(t, err, "vanilla_proofs.")
	require.NoFileExists(t, out)
	err = run(t, "verify", "--c1", trunc, "--vk", dir, "--proof", out)
	require.ErrorAs(t, err, &ce)
	require.True(t, strings.HasPrefix(err.Error(), trunc+": "), err.Error())

	// An interactive C1 relabeled as Synthetic PoRep, whose challenges
	// derive otherwise, is refused for its challenges, not for want of
	// parameters.
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	m["registered_proof"] = "StackedDrg2KiBV1_1_Feat_SyntheticPoRep"
	syn, err := json.Marshal(m)
	require.NoError(t, err)
	synPath := filepath.Join(dir, "synthetic.json")
	require.NoError(t, os.WriteFile(synPath, syn, 0o644))
	err = run(t, "prove", "--c1", synPath, "--params", dir, "--out", out)
	var ie *porep.InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "challenge", ie.Field)
	require.ErrorContains(t, err, "the synthetic derivation gives")
	require.NotErrorIs(t, err, c2.ErrNoParams)
	require.True(t, strings.HasPrefix(err.Error(), synPath+": "), err.Error())
}

func TestSetupRefusesBadSize(t *testing.T) {
	require.Error(t, run(t, "setup", "--out", t.TempDir(), "--sector-size", "3KiB"))
	require.Error(t, run(t, "setup", "--sector-size", "2KiB"), "--out is required")
}

// setup --gpu, for PoRep and for a PoSt circuit: without a CUDA device it
// fails and leaves nothing in the output directory, with one it writes
// both files.
func TestSetupGPU(t *testing.T) {
	pdir := t.TempDir()
	if err := run(t, "setup", "--gpu", "--post", "StackedDrgWindow2KiBV1_2", "--out", pdir); err != nil {
		entries, rerr := os.ReadDir(pdir)
		require.NoError(t, rerr)
		require.Empty(t, entries, "a failed setup leaves no file")
	} else {
		s, _ := post.ShapeByName("StackedDrgWindow2KiBV1_2")
		vk, err := groth16.ReadVerifyingKey(filepath.Join(pdir, devPrefix+s.ParamsName()+".vk"))
		require.NoError(t, err)
		require.Equal(t, s.NumInputs(), vk.NumInputs())
	}
	require.ErrorContains(t, run(t, "setup", "--post", "StackedDrgWindow2KiBV1_2", "--update", "StackedDrg2KiBV1", "--out", pdir), "not both")
	dir := t.TempDir()
	err := run(t, "setup", "--gpu", "--sector-size", "2KiB", "--out", dir)
	base := filepath.Join(dir, devPrefix+porep.Shape2KiB.ParamsName())
	if err != nil {
		entries, rerr := os.ReadDir(dir)
		require.NoError(t, rerr)
		require.Empty(t, entries, "a failed setup leaves no file")
		return
	}
	vk, err := groth16.ReadVerifyingKey(base + ".vk")
	require.NoError(t, err)
	pvk, err := groth16.ReadParamsVerifyingKey(base + ".params")
	require.NoError(t, err)
	require.Equal(t, vk, pvk)
}

// A stray word used to stop flag parsing and silently drop the flags after
// it; every command refuses it now.
func TestStrayArgumentsRefused(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "proof.bin")
	err := run(t, "prove", "--c1", porepRefgen+"c1.json", "stray", "--out", out, "--params", dir)
	require.ErrorContains(t, err, `unexpected argument "stray"`)
	require.NoFileExists(t, out)
	for _, name := range []string{"setup", "verify", "demo", "devices"} {
		require.ErrorContains(t, run(t, name, "stray"), `unexpected argument "stray"`, name)
	}
}

// 18014398509481986 KiB is 2^64 + 2048 bytes: it used to wrap to 2 KiB.
func TestSetupRefusesOverflowingSize(t *testing.T) {
	for _, s := range []string{"18014398509481986K", "18014398509481986KiB", "17179869186GiB", "18446744073709551617"} {
		_, err := parseSectorSize(s)
		require.Error(t, err, s)
	}
	shape, err := parseSectorSize("2048")
	require.NoError(t, err)
	require.EqualValues(t, 2048, shape.SectorSize)
}

// An unusable --out fails before any work: prove used to prove for minutes
// and then fail on "is a directory", losing the proof.
func TestProveChecksOutputFirst(t *testing.T) {
	dir := t.TempDir()
	// No parameters in dir: the old code reported ErrNoParams (or, with
	// parameters, proved) before looking at --out.
	err := run(t, "prove", "--c1", porepRefgen+"c1.json", "--params", dir, "--out", dir)
	require.ErrorContains(t, err, "is a directory")
	err = run(t, "prove", "--c1", porepRefgen+"c1.json", "--params", dir, "--out", filepath.Join(dir, "missing", "proof.bin"))
	require.Error(t, err)
	require.NotErrorIs(t, err, c2.ErrNoParams)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no temporary file is left behind")
}

// setup checks and creates its outputs before the setup (minutes at 2 KiB).
func TestSetupChecksOutputFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	done := make(chan error, 1)
	go func() { done <- run(t, "setup", "--sector-size", "2KiB", "--out", filepath.Join(file, "sub")) }()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("setup ran instead of refusing an --out under a regular file")
	}

	// A directory where the .params file goes is refused before the setup.
	s, _ := porep.ShapeBySize(2048)
	require.NoError(t, os.Mkdir(filepath.Join(dir, devPrefix+s.ParamsName()+".params"), 0o755))
	go func() { done <- run(t, "setup", "--sector-size", "2KiB", "--out", dir) }()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "is a directory")
	case <-time.After(10 * time.Second):
		t.Fatal("setup ran instead of refusing a directory in place of its output")
	}
}

// Outputs are written to a temporary file renamed into place.
func TestOutputCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.bin")
	o, err := createOutput(path)
	require.NoError(t, err)
	require.NoFileExists(t, path, "nothing carries the name before commit")
	require.NoError(t, o.commit(bytesWriter([]byte("proof"))))
	o.abort() // after commit: nothing to do
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "proof", string(got))

	o, err = createOutput(path)
	require.NoError(t, err)
	o.abort()
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "proof", string(got), "an aborted output keeps the old file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}

// Special and oversized inputs are refused at once with a clear error: a
// FIFO used to block forever, a directory --vk with --inputs said "mmap
// adir: no such device", and a C1 was read whole whatever its size.
func TestSpecialInputs(t *testing.T) {
	dir := t.TempDir()
	err := run(t, "verify", "--vk", dir, "--proof", porepRefgen+"bellperson-c2.proof", "--inputs", porepRefgen+"inputs-p0.bin")
	require.ErrorContains(t, err, "is a directory")
	require.NotContains(t, err.Error(), "mmap")

	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(porep.MaxC1Size+1)) // sparse
	require.NoError(t, f.Close())
	err = run(t, "prove", "--c1", big, "--params", dir, "--out", filepath.Join(dir, "p.bin"))
	require.ErrorIs(t, err, porep.ErrTooLarge)

	if runtime.GOOS != "linux" {
		return
	}
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for name, args := range map[string][]string{
		"prove --c1":     {"--c1", fifo, "--params", dir, "--out", filepath.Join(dir, "p.bin")},
		"verify --c1":    {"--vk", porepRefgen + "bellperson-porep-2k.vk", "--proof", porepRefgen + "bellperson-c2.proof", "--c1", fifo},
		"verify --vk":    {"--vk", fifo, "--proof", porepRefgen + "bellperson-c2.proof", "--inputs", porepRefgen + "inputs-p0.bin"},
		"verify --proof": {"--vk", porepRefgen + "bellperson-porep-2k.vk", "--proof", fifo, "--inputs", porepRefgen + "inputs-p0.bin"},
	} {
		cmd := "verify"
		if name == "prove --c1" {
			cmd = "prove"
		}
		specialfile.RequireRefused(t, name, "regular file", func() error { return run(t, cmd, args...) })
	}
}

// The command table: every usage line starts "c2 NAME", names are unique,
// and a command's -h prints its usage line and description.
func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		require.True(t, strings.HasPrefix(c.UsageLine, "c2 "+c.Name()), c.UsageLine)
		require.False(t, seen[c.Name()], "two commands %q", c.Name())
		seen[c.Name()] = true
		require.NotEmpty(t, c.Short, c.Name())
		require.Same(t, c, lookup(c.Name()))

		var b strings.Builder
		fs := c.FlagSet()
		fs.SetOutput(&b)
		require.ErrorIs(t, c.Run(fs, []string{"-h"}), flag.ErrHelp, c.Name())
		require.True(t, strings.HasPrefix(b.String(), "usage: "+c.UsageLine+"\n"), c.Name())
		require.Contains(t, b.String(), c.Long, c.Name())
	}
	require.Nil(t, lookup("nope"))
}

// dispatch answers help and usage errors with the exit statuses main
// returns, help on stdout and errors on stderr.
func TestDispatch(t *testing.T) {
	call := func(args ...string) (code int, stdout, stderr string) {
		var o, e strings.Builder
		code = dispatch(args, &o, &e)
		return code, o.String(), e.String()
	}
	code, out, errs := call("help")
	require.Equal(t, 0, code)
	require.Empty(t, errs)
	for _, c := range commands {
		require.Contains(t, out, "  "+c.Name()+" ")
	}
	for _, c := range commands {
		code, out, errs = call("help", c.Name())
		require.Equal(t, 0, code, c.Name())
		require.Empty(t, errs, c.Name())
		require.True(t, strings.HasPrefix(out, "usage: "+c.UsageLine+"\n"), c.Name())
	}
	code, out, errs = call("help", "nope")
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Contains(t, errs, `"nope"`)

	code, out, _ = call("--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "commands:")

	code, out, errs = call()
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Contains(t, errs, "commands:")

	code, _, errs = call("nope")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `unknown command "nope"`)

	code, _, errs = call("prove", "-h")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "usage: c2 prove")

	code, _, errs = call("prove", "--c1", filepath.Join(t.TempDir(), "missing.json"), "--params", t.TempDir())
	require.Equal(t, 1, code)
	require.Contains(t, errs, "c2 prove: ")
	require.Contains(t, errs, "missing.json")
}
