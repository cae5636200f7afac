package post

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
)

// TestCheckRoots: rust-fil-proofs' vanilla proofs pass; one root changed
// is named.
func TestCheckRoots(t *testing.T) {
	for _, name := range []string{"window-2k-v1_2", "winning-2k-v1", "window-8m-v1_2", "winning-8m-v1"} {
		b, err := os.ReadFile(filepath.Join(refgen.Dir, vectorSet(name), name, "vanilla.json"))
		require.NoError(t, err)
		proofs, err := decodeSectorProofsJSON(b)
		require.NoError(t, err)
		require.NoError(t, CheckRoots(proofs), name)
		last := len(proofs) - 1
		proofs[last].Sectors[0].InclusionProofs[3].Root[5] ^= 1
		var ie *InputError
		require.ErrorAs(t, CheckRoots(proofs), &ie, name)
		require.Equal(t, "["+string(rune('0'+last))+"].vanilla_proof.sectors[0].inclusion_proofs[3].root", ie.Field)
	}
}
