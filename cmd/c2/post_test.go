package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/post"
)

const postRefgen = "../../testdata/refgen/out/post-2k/"

// TestPoStSetupAndProve: `c2 setup --post` makes the 2 KiB Window
// parameters, `c2 post-prove` proves rust-fil-proofs' V1_2 vanilla proofs
// with them, and each partition's proof verifies under the written vk
// with the public inputs refgen recorded from Rust.
func TestPoStSetupAndProve(t *testing.T) {
	dir := t.TempDir()
	const name = "StackedDrgWindow2KiBV1_2"
	require.NoError(t, run(t, "setup", "--post", name, "--out", dir))
	s, _ := post.ShapeByName(name)
	vkPath := filepath.Join(dir, devPrefix+s.ParamsName()+".vk")
	require.FileExists(t, vkPath)

	v := postRefgen + "window-2k-v1_2/"
	out := filepath.Join(dir, "post.proof")
	const rnd = "44434a5158676e757c7b0209101f262d34333ac1c8d7dee5ecebf2f9808f961d"
	args := []string{"--proof", name, "--randomness", rnd, "--params", dir, "--out", out, "--trust-params",
		"--vanilla", v + "vanilla-5001.bin", "--vanilla", v + "vanilla-5002.bin", "--vanilla", v + "vanilla-5003.bin"}
	require.NoError(t, run(t, "post-prove", args...))

	requireProofsVerify(t, out, vkPath, v, 2)

	// Partition 1 alone, from its own sector: the whole proof's second proof.
	whole, err := os.ReadFile(out)
	require.NoError(t, err)
	one := filepath.Join(dir, "p1.proof")
	require.NoError(t, run(t, "post-prove", "--proof", name, "--randomness", rnd, "--params", dir, "--out", one,
		"--trust-params", "--partition", "1", "--vanilla", v+"vanilla-5003.bin"))
	vk, proofs := refgen.KeyAndProofs(t, vkPath, one)
	require.Len(t, proofs, 1)
	require.NoError(t, groth16.Verify(vk, &proofs[0], refgen.ReadScalars(t, filepath.Join(v, "inputs-p1.bin"))))
	require.Len(t, whole, 2*groth16.ProofSize)
}

// requireProofsVerify checks that the proof file out holds n proofs and
// that proof k verifies under vkPath with the public inputs refgen recorded
// in dir/inputs-pK.bin.
func requireProofsVerify(t *testing.T, out, vkPath, dir string, n int) {
	t.Helper()
	vk, proofs := refgen.KeyAndProofs(t, vkPath, out)
	require.Len(t, proofs, n)
	for k := range proofs {
		in := refgen.ReadScalars(t, filepath.Join(dir, fmt.Sprintf("inputs-p%d.bin", k)))
		require.NoError(t, groth16.Verify(vk, &proofs[k], in), "partition %d", k)
	}
}

func TestPoStProveRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "post.proof")
	require.Error(t, run(t, "setup", "--post", "StackedDrgWindow3KiBV1", "--out", dir))
	require.Error(t, run(t, "post-prove", "--params", dir), "flags are required")

	v := postRefgen + "winning-2k-v1/"
	const rnd = "44434a5158676e757c7b0209101f262d34333ac1c8d7dee5ecebf2f9808f961d"
	base := []string{"--proof", "StackedDrgWinning2KiBV1", "--params", dir, "--out", out}
	var ie *post.InputError
	require.ErrorAs(t, run(t, "post-prove", append(base, "--randomness", "12", "--vanilla", v+"vanilla-5002.bin")...), &ie)
	require.ErrorAs(t, run(t, "post-prove", append(base, "--randomness", rnd, "--partition", "0", "--vanilla", v+"vanilla-5002.bin")...), &ie)
	require.Equal(t, "partition", ie.Field, "a Winning PoSt has no partitions to pick")
	require.ErrorAs(t, run(t, "post-prove", append(base, "--randomness", rnd, "--partition", "-2", "--vanilla", v+"vanilla-5002.bin")...), &ie)
	// The JSON array form is read; without parameters the lookup fails, naming the official file.
	err := run(t, "post-prove", append(base, "--randomness", rnd, "--vanilla", v+"vanilla.json")...)
	require.ErrorIs(t, err, c2.ErrNoParams)
	s, _ := post.ShapeByName("StackedDrgWinning2KiBV1")
	require.ErrorContains(t, err, s.ParamsName())
	require.NoFileExists(t, out)

	got, perFile, err := readVanilla([]string{postRefgen + "window-2k-v1/vanilla.json", postRefgen + "window-2k-v1/vanilla-5001.bin"})
	require.NoError(t, err)
	require.Len(t, got, 4)
	require.Equal(t, []int{3, 1}, perFile)

	// A bad vanilla file is named with the place in it, before any
	// parameters are looked for: here an array's element 1 is empty.
	raw, err := os.ReadFile(v + "vanilla.json")
	require.NoError(t, err)
	var objs []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &objs))
	require.NotEmpty(t, objs)
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("["+string(objs[0])+",{}]"), 0o644))
	err = run(t, "post-prove", append(base, "--randomness", rnd, "--vanilla", v+"vanilla-5002.bin", "--vanilla", bad)...)
	var ve *post.VanillaError
	require.ErrorAs(t, err, &ve)
	require.NotErrorIs(t, err, c2.ErrNoParams)
	require.True(t, strings.HasPrefix(err.Error(), bad+": post: vanilla proof: [1]"), err.Error())
}

// TestPoStgenThenProve: `c2 postgen` writes three synthetic sectors' vanilla
// proofs and the randomness it used; `c2 post-prove` proves them (two
// partitions) and each proof verifies with the public inputs a verifier
// derives from the sectors and the randomness. The same flags give the same
// bytes.
func TestPoStgenThenProve(t *testing.T) {
	dir := t.TempDir()
	const name = "StackedDrgWindow2KiBV1_2"
	require.NoError(t, run(t, "setup", "--post", name, "--out", dir))
	s, _ := post.ShapeByName(name)
	van, again := filepath.Join(dir, "vanilla.json"), filepath.Join(dir, "again.json")
	const rnd = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f00"
	gen := []string{"--proof", name, "--sectors", "3", "--first-id", "40", "--seed", "5eed", "--randomness", rnd}
	require.NoError(t, run(t, "postgen", append(gen, "--out", van)...))
	require.NoError(t, run(t, "postgen", append(gen, "--out", again)...))
	a, err := os.ReadFile(van)
	require.NoError(t, err)
	b, err := os.ReadFile(again)
	require.NoError(t, err)
	require.Equal(t, a, b)

	out := filepath.Join(dir, "post.proof")
	require.NoError(t, run(t, "post-prove", "--proof", name, "--randomness", rnd, "--params", dir, "--out", out,
		"--trust-params", "--vanilla", van))
	vk, proofs := refgen.KeyAndProofs(t, filepath.Join(dir, devPrefix+s.ParamsName()+".vk"), out)
	require.Len(t, proofs, 2)
	var raw []json.RawMessage
	require.NoError(t, json.Unmarshal(a, &raw))
	sp := make([]post.SectorProof, len(raw))
	for i := range raw {
		p, err := post.DecodeSectorProofJSON(raw[i])
		require.NoError(t, err)
		sp[i] = *p
	}
	_, pub, err := post.Partitions(s, sp)
	require.NoError(t, err)
	randomness, ok := hex32(rnd)
	require.True(t, ok)
	for k := range proofs {
		own, err := s.PartitionSectors(pub, k)
		require.NoError(t, err)
		in, err := post.PartitionInputs(s, randomness, own, k)
		require.NoError(t, err)
		require.NoError(t, groth16.Verify(vk, &proofs[k], in), "partition %d", k)
	}
	require.Equal(t, uint64(40), pub[0].ID)

	var ie *post.InputError
	require.ErrorAs(t, run(t, "postgen", "--proof", "StackedDrgWindow3KiBV1"), &ie)
	require.Error(t, run(t, "postgen"), "--proof is required")
}
