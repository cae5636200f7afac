package refgen

import (
	"os"
	"path/filepath"
	"testing"
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
