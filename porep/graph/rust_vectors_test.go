package graph

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdata/rust-parents.json holds StackedBucketGraph::parents from
// rust-fil-proofs 19.1 (storage-proofs-porep) for sampled nodes of the
// 2 KiB V1, 512 MiB V1_1, 32 GiB V1/V1_1 and 64 GiB V1/V1_1 graphs; each row
// is [node, 14 parents]. Made by porep/inputs/testdata/gen-rust-vectors.rs.
func TestParentsMatchRust(t *testing.T) {
	b, err := os.ReadFile("testdata/rust-parents.json")
	require.NoError(t, err)
	var cases []struct {
		RegisteredProof string     `json:"registered_proof"`
		PoRepID         string     `json:"porep_id"`
		Nodes           uint64     `json:"nodes"`
		Parents         [][]uint64 `json:"parents"`
	}
	require.NoError(t, json.Unmarshal(b, &cases))
	require.Len(t, cases, 6)
	for _, c := range cases {
		t.Run(c.RegisteredProof, func(t *testing.T) {
			id, err := hex.DecodeString(c.PoRepID)
			require.NoError(t, err)
			v := V1_0_0
			if strings.HasSuffix(c.RegisteredProof, "V1_1") {
				v = V1_1_0
			}
			g, err := New(c.Nodes, [32]byte(id), v)
			require.NoError(t, err)
			require.NotEmpty(t, c.Parents)
			var got [Degree]uint32
			for _, row := range c.Parents {
				require.Len(t, row, 1+Degree)
				require.NoError(t, g.Parents(row[0], got[:]))
				for i, p := range row[1:] {
					require.Equal(t, uint32(p), got[i], "node %d parent %d", row[0], i)
				}
			}
		})
	}
}
