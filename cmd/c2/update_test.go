package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/internal/devparams"
	"github.com/sealc2/c2/update"
)

const updateRefgen = "../../testdata/refgen/out/update-2k/"

// updateArgs returns the commitment flags of refgen's 2 KiB update vector.
func updateArgs(t *testing.T) []string {
	b, err := os.ReadFile(updateRefgen + "meta.json")
	require.NoError(t, err)
	var m struct {
		CommROld string `json:"comm_r_old"`
		CommRNew string `json:"comm_r_new"`
		CommDNew string `json:"comm_d_new"`
	}
	require.NoError(t, json.Unmarshal(b, &m))
	return []string{"--proof", "StackedDrg2KiBV1", "--comm-r-old", m.CommROld, "--comm-r-new", m.CommRNew, "--comm-d-new", m.CommDNew}
}

// TestUpdateProve: `c2 update-prove` proves rust-fil-proofs' 2 KiB
// SnapDeals vanilla proof (bincode, then the JSON array) under the shared
// development parameters, and the proof verifies with the public inputs
// refgen recorded. Skipped under -short unless C2_UPDATE_E2E is set.
func TestUpdateProve(t *testing.T) {
	if testing.Short() && os.Getenv("C2_UPDATE_E2E") == "" {
		t.Skip("2 KiB SnapDeals proof (and, once, its dev parameters)")
	}
	dir, err := devparams.UpdateDir()
	require.NoError(t, err)
	_, vkPath := devparams.UpdatePaths(dir)
	for _, v := range []string{"vanilla-p0.bin", "vanilla.json"} {
		out := filepath.Join(t.TempDir(), "update.proof")
		args := append(updateArgs(t), "--params", dir, "--out", out, "--trust-params", "--vanilla", updateRefgen+v)
		require.NoError(t, run(t, "update-prove", args...), v)
		requireProofsVerify(t, out, vkPath, updateRefgen, 1)
	}
}

// TestUpdateSetupAndProve: `c2 setup --update` writes the 2 KiB parameters
// (about a minute of CPU, so only with C2_UPDATE_E2E set) and
// `c2 update-prove` proves with them.
func TestUpdateSetupAndProve(t *testing.T) {
	if os.Getenv("C2_UPDATE_E2E") == "" {
		t.Skip("set C2_UPDATE_E2E=1: a fresh 2 KiB SnapDeals setup takes about a minute of CPU")
	}
	dir := t.TempDir()
	require.NoError(t, run(t, "setup", "--update", "StackedDrg2KiBV1", "--out", dir))
	s, _ := update.ShapeByName("StackedDrg2KiBV1")
	vkPath := filepath.Join(dir, devPrefix+s.ParamsName()+".vk")
	require.FileExists(t, vkPath)
	out := filepath.Join(dir, "update.proof")
	require.NoError(t, run(t, "update-prove", append(updateArgs(t), "--params", dir, "--out", out, "--vanilla", updateRefgen+"vanilla-p0.bin")...))
	requireProofsVerify(t, out, vkPath, updateRefgen, 1)
}

func TestUpdateProveRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "update.proof")
	require.Error(t, run(t, "setup", "--update", "StackedDrg4KiBV1", "--out", dir))
	require.Error(t, run(t, "update-prove", "--params", dir), "flags are required")

	args := updateArgs(t)
	var ie *update.InputError
	bad := append([]string(nil), args...)
	bad[3] = "12" // --comm-r-old
	require.ErrorAs(t, run(t, "update-prove", append(bad, "--params", dir, "--out", out, "--vanilla", updateRefgen+"vanilla-p0.bin")...), &ie)
	require.Equal(t, "comm-r-old", ie.Field)
	bad[1] = "StackedDrg4KiBV1"
	require.ErrorAs(t, run(t, "update-prove", append(bad, "--params", dir, "--out", out, "--vanilla", updateRefgen+"vanilla-p0.bin")...), &ie)

	// Without parameters the lookup fails, naming the official file.
	err := run(t, "update-prove", append(args, "--params", dir, "--out", out, "--vanilla", updateRefgen+"vanilla.json")...)
	require.ErrorIs(t, err, c2.ErrNoParams)
	s, _ := update.ShapeByName("StackedDrg2KiBV1")
	require.ErrorContains(t, err, s.ParamsName())
	require.NoFileExists(t, out)
}
