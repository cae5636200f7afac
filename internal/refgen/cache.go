package refgen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/r1cs"
)

// EnvCache names the environment variable that points at the outputs of
// refgen's on-demand runs (README "Recorded runs"): bellperson parameters
// too large to commit, and the proofs made with them.
const EnvCache = "REFGEN_CACHE"

// Cached returns $REFGEN_CACHE and the path of the file name in it,
// skipping t when the variable is unset or the file is missing; run names
// the refgen command that makes the file (e.g. "porep-params").
func Cached(t testing.TB, name, run string) (cache, path string) {
	t.Helper()
	cache = os.Getenv(EnvCache)
	if cache == "" {
		t.Skipf("%s not set (see testdata/refgen/README.md, %s)", EnvCache, run)
	}
	path = filepath.Join(cache, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s: run `refgen %s` first", path, run)
	}
	return cache, path
}

// ProveForRefgen proves sys with the bellperson parameters at paramsPath,
// checks the proof against vk and inputs, and writes it to
// $REFGEN_CACHE/name, where `refgen verify` judges it (see
// testdata/refgen/verify-go-proofs.sh); it fails t on any error.
func ProveForRefgen(t testing.TB, paramsPath string, sys *r1cs.System, vk *groth16.VerifyingKey, inputs []fr.Element, name string) {
	t.Helper()
	pk, err := groth16.ReadParams(paramsPath)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(pk, sys)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(vk, proof, inputs); err != nil {
		t.Fatalf("Go proof with bellperson's parameters: %v", err)
	}
	b := proof.Bytes()
	if err := os.WriteFile(filepath.Join(os.Getenv(EnvCache), name), b[:], 0o644); err != nil {
		t.Fatal(err)
	}
}
