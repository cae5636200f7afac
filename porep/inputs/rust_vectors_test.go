package inputs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// testdata/rust-inputs.json holds, for 2 KiB V1, 512 MiB V1_1, 32 GiB V1/V1_1
// and 64 GiB V1/V1_1, StackedCompound::generate_public_inputs of every
// partition from rust-fil-proofs 19.1 on made-up (but well-formed) prover id,
// ticket, comm_d, comm_r and seed: the SHA-256 of each partition's inputs as
// concatenated 32-byte little-endian scalars, and partition 0 in full. The
// replica id is Rust's generate_replica_id. Made by gen-rust-vectors.rs.
func TestPartitionMatchesRust(t *testing.T) {
	b, err := os.ReadFile("testdata/rust-inputs.json")
	require.NoError(t, err)
	var cases []struct {
		sealValues
		PartitionSHA256 []string `json:"partition_sha256"`
		PartitionCounts []int    `json:"partition_counts"`
		P0              []string `json:"public_inputs_p0"`
	}
	require.NoError(t, json.Unmarshal(b, &cases))
	require.Len(t, cases, 6)
	for _, c := range cases {
		t.Run(c.RegisteredProof, func(t *testing.T) {
			v := c.derive(t)
			s := v.shape
			require.Len(t, c.PartitionSHA256, s.Partitions)
			for k := range s.Partitions {
				got, err := Partition(s, v.rid, v.commD, v.commR, v.seed, v.porepID, k)
				require.NoError(t, err)
				require.Len(t, got, c.PartitionCounts[k])
				h := sha256.New()
				for i, e := range got {
					var b [32]byte
					fr.LittleEndian.PutElement(&b, e)
					h.Write(b[:])
					if k == 0 {
						require.Equal(t, c.P0[i], hex.EncodeToString(b[:]), "input %d", i)
					}
				}
				require.Equal(t, c.PartitionSHA256[k], hex.EncodeToString(h.Sum(nil)), "partition %d", k)
			}
		})
	}
}
