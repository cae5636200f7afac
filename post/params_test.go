package post

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
)

// TestParamsName: the parameter file names and circuit identifiers equal
// those filecoin-proofs reported for every registered PoSt proof refgen
// recorded (post-counts.json and the post-2k and post-8m vectors).
func TestParamsName(t *testing.T) {
	type rec struct {
		CircuitIdentifier  string `json:"circuit_identifier"`
		OfficialParamsFile string `json:"official_params_file"`
	}
	b, err := os.ReadFile(filepath.Join(refgen.Dir, "post-counts.json"))
	require.NoError(t, err)
	var all map[string]rec
	require.NoError(t, json.Unmarshal(b, &all))
	for _, name := range append(vectors[:len(vectors):len(vectors)], vectors8MiB...) {
		b, err := os.ReadFile(filepath.Join(refgen.Dir, vectorSet(name), name, "meta.json"))
		require.NoError(t, err)
		var m struct {
			RegisteredProof string `json:"registered_proof"`
			rec
		}
		require.NoError(t, json.Unmarshal(b, &m))
		all[m.RegisteredProof] = m.rec
	}
	require.GreaterOrEqual(t, len(all), 10)
	for name, want := range all {
		s, ok := ShapeByName(name)
		require.True(t, ok, name)
		require.Equal(t, want.CircuitIdentifier, s.CircuitIdentifier(), name)
		require.Equal(t, want.OfficialParamsFile, s.ParamsName()+".params", name)
	}
	// V1 and V1_2 Window proofs of a size share their parameters.
	v1, _ := ShapeByName("StackedDrgWindow32GiBV1")
	v12, _ := ShapeByName("StackedDrgWindow32GiBV1_2")
	require.Equal(t, v1.ParamsName(), v12.ParamsName())
}
