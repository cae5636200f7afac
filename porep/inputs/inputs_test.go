package inputs

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/porep/graph"
)

func TestProofNames(t *testing.T) {
	for p := range numProofs {
		q, err := ParseProof(p.String())
		require.NoError(t, err)
		require.Equal(t, p, q)
	}
	_, err := ParseProof("StackedDrg4KiBV1_1")
	require.ErrorIs(t, err, ErrUnknownProof)
	assert.Equal(t, "StackedDrg32GiBV1_1", StackedDrg32GiBV1_1.String())
	assert.Equal(t, "StackedDrg64GiBV1_2_Feat_NonInteractivePoRep", StackedDrg64GiBV1_2_Feat_NonInteractivePoRep.String())
	assert.Equal(t, graph.V1_0_0, StackedDrg64GiBV1.apiVersion())
	assert.Equal(t, graph.V1_1_0, StackedDrg2KiBV1_1.apiVersion())
	assert.Equal(t, graph.V1_2_0, StackedDrg2KiBV1_1_Feat_SyntheticPoRep.apiVersion())
	for p, want := range map[Proof]struct {
		d          Derivation
		partitions int
	}{
		StackedDrg2KiBV1: {Interactive, 1}, StackedDrg32GiBV1_1: {Interactive, 10},
		StackedDrg2KiBV1_1_Feat_SyntheticPoRep: {Synthetic, 1}, StackedDrg64GiBV1_1_Feat_SyntheticPoRep: {Synthetic, 10},
		StackedDrg8MiBV1_2_Feat_NonInteractivePoRep: {NonInteractive, 13}, StackedDrg32GiBV1_2_Feat_NonInteractivePoRep: {NonInteractive, 126},
	} {
		s, err := p.Shape()
		require.NoError(t, err)
		assert.Equal(t, want.d, s.Derivation, p)
		assert.Equal(t, want.partitions, s.Partitions, p)
		assert.Equal(t, shapes[p%5].ChallengesPerPartition, s.ChallengesPerPartition, "%v proves with the interactive parameters", p)
	}
	_, err = numProofs.Shape()
	require.ErrorIs(t, err, ErrUnknownProof)
}

// The public-input counts (plus ONE) are the vk ic lengths of the published
// parameters: 40 for the small sizes, 328 for 32/64 GiB (porep-circuit.md §2.3).
func TestShapes(t *testing.T) {
	want := map[Proof]struct {
		size uint64
		ic   int
	}{
		StackedDrg2KiBV1_1: {2048, 40}, StackedDrg8MiBV1_1: {8 << 20, 40}, StackedDrg512MiBV1_1: {512 << 20, 40},
		StackedDrg32GiBV1_1: {32 << 30, 328}, StackedDrg64GiBV1_1: {64 << 30, 328},
	}
	for p, w := range want {
		s, err := p.Shape()
		require.NoError(t, err)
		assert.Equal(t, w.size, s.SectorSize, p)
		assert.Equal(t, w.size/32, s.Nodes, p)
		assert.Equal(t, w.ic, 1+s.NumInputs(), p)
		assert.Equal(t, graph.V1_1_0, s.APIVersion, p)
	}
}

func TestChallengesRange(t *testing.T) {
	for _, d := range []Derivation{Interactive, Synthetic, NonInteractive} {
		s, err := StackedDrg2KiBV1_1.Shape()
		require.NoError(t, err)
		s.Derivation = d
		s.ChallengesPerPartition = 2000
		var rid, commR, seed [32]byte
		seed[0], commR[0] = 1, 2
		c, err := Challenges(s, rid, commR, seed, 0)
		require.NoError(t, err)
		seen := map[uint64]bool{}
		for _, x := range c {
			require.GreaterOrEqual(t, x, uint64(1), d)
			require.Less(t, x, s.Nodes, d)
			seen[x] = true
		}
		if d == Synthetic {
			// The 2000 draw from the sector's 64 synthetic challenges
			// (min(nodes, 2^18)) and cover them all.
			key, err := synthKey(synthGenKey, rid, commR)
			require.NoError(t, err)
			gen, err := synthStream(key, 0)
			require.NoError(t, err)
			want := map[uint64]bool{}
			for range s.Nodes {
				var x [32]byte
				gen.XORKeyStream(x[:], x[:])
				want[toNode(x, s.Nodes)] = true
			}
			require.Equal(t, want, seen)
		} else {
			require.Len(t, seen, int(s.Nodes-1), "%v: 2000 draws cover all 63 non-zero nodes", d)
		}

		// Partition k's challenges are the k-th slice of one long partition.
		s32, err := StackedDrg32GiBV1_1.Shape()
		require.NoError(t, err)
		s32.Derivation = d
		all := s32
		all.ChallengesPerPartition *= all.Partitions
		all.Partitions = 1
		long, err := Challenges(all, rid, commR, seed, 0)
		require.NoError(t, err)
		for k := range s32.Partitions {
			c, err := Challenges(s32, rid, commR, seed, k)
			require.NoError(t, err)
			require.Equal(t, long[k*s32.ChallengesPerPartition:(k+1)*s32.ChallengesPerPartition], c, d)
		}

		// What each derivation depends on.
		other := func(f func(rid, commR, seed *[32]byte)) bool {
			r, cr, sd := rid, commR, seed
			f(&r, &cr, &sd)
			c2, err := Challenges(s32, r, cr, sd, 3)
			require.NoError(t, err)
			c, err := Challenges(s32, rid, commR, seed, 3)
			require.NoError(t, err)
			return !slices.Equal(c, c2)
		}
		assert.True(t, other(func(r, _, _ *[32]byte) { r[5] ^= 1 }), "%v depends on the replica id", d)
		assert.Equal(t, d != Interactive, other(func(_, cr, _ *[32]byte) { cr[5] ^= 1 }), "%v and comm_r", d)
		assert.Equal(t, d != NonInteractive, other(func(_, _, sd *[32]byte) { sd[5] ^= 1 }), "%v and the seed", d)
	}
}

func TestErrors(t *testing.T) {
	s, err := StackedDrg2KiBV1_1.Shape()
	require.NoError(t, err)
	var z [32]byte
	_, err = Partition(s, z, z, z, z, StackedDrg2KiBV1_1.PoRepID(), 1)
	require.ErrorIs(t, err, ErrPartition)
	_, err = Partition(s, z, z, z, z, StackedDrg2KiBV1_1.PoRepID(), -1)
	require.ErrorIs(t, err, ErrPartition)
	_, err = Partition(Shape{}, z, z, z, z, z, 0)
	require.ErrorIs(t, err, ErrShape)
	bad := z
	for i := range bad {
		bad[i] = 0xff
	}
	for i, name := range []string{"replica_id", "comm_d", "comm_r"} {
		args := [3][32]byte{}
		args[i] = bad
		_, err := Partition(s, args[0], args[1], args[2], z, z, 0)
		var fe *FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, name, fe.Field)
	}
}

// ---- refgen vectors: rust-fil-proofs 19.1 seals (testdata/refgen) ----

func unhex32(t *testing.T, s string) [32]byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, 32)
	return [32]byte(b)
}

// sealValues are a sealed sector's values, in hex, as refgen's meta.json
// and testdata/rust-inputs.json record them.
type sealValues struct {
	RegisteredProof string `json:"registered_proof"`
	PoRepID         string `json:"porep_id"`
	ProverID        string `json:"prover_id"`
	SectorID        uint64 `json:"sector_id"`
	Ticket          string `json:"ticket"`
	Seed            string `json:"seed"`
	CommR           string `json:"comm_r"`
	CommD           string `json:"comm_d"`
	ReplicaID       string `json:"replica_id"`
}

// sealed is what public inputs derive from.
type sealed struct {
	shape                            Shape
	porepID, rid, commD, commR, seed [32]byte
}

// derive parses v's registered proof and checks that the porep id and the
// replica id derived here are v's.
func (v sealValues) derive(t *testing.T) sealed {
	t.Helper()
	p, err := ParseProof(v.RegisteredProof)
	require.NoError(t, err)
	s := sealed{porepID: p.PoRepID(), commD: unhex32(t, v.CommD), commR: unhex32(t, v.CommR), seed: unhex32(t, v.Seed)}
	s.shape, err = p.Shape()
	require.NoError(t, err)
	require.Equal(t, unhex32(t, v.PoRepID), s.porepID)
	s.rid = ReplicaID(unhex32(t, v.ProverID), v.SectorID, unhex32(t, v.Ticket), s.commD, s.porepID)
	require.Equal(t, unhex32(t, v.ReplicaID), s.rid)
	return s
}

type refgenMeta struct {
	sealValues
	Partitions   int        `json:"partitions"`
	Challenges   int        `json:"challenges_per_partition"`
	PublicInputs [][]string `json:"public_inputs"`
	InputFiles   []string   `json:"public_inputs_files"`
}

type refgenC1 struct {
	RegisteredProof string `json:"registered_proof"`
	VanillaProofs   map[string][][]struct {
		Labeling []struct {
			Node uint64 `json:"node"`
		} `json:"labeling_proofs"`
	} `json:"vanilla_proofs"`
	CommR     [32]byte `json:"comm_r"`
	CommD     [32]byte `json:"comm_d"`
	ReplicaID [32]byte `json:"replica_id"`
	Seed      [32]byte `json:"seed"`
	Ticket    [32]byte `json:"ticket"`
}

// TestPartitionMatchesRefgen derives every partition's public inputs from
// prover id, sector id, ticket, seed, comm_d, comm_r and the registered proof
// alone, and compares them with what rust-fil-proofs'
// StackedCompound::generate_public_inputs wrote for the same sector.
func TestPartitionMatchesRefgen(t *testing.T) {
	for _, dir := range []string{"porep-2k", "porep-8m", "porep-2k-synth", "porep-2k-ni"} {
		t.Run(dir, func(t *testing.T) {
			base := filepath.Join(refgen.Dir, dir)
			var m refgenMeta
			refgen.ReadJSONIfPresent(t, &m, dir, "meta.json")
			var c1 refgenC1
			refgen.ReadJSON(t, &c1, dir, "c1.json")

			require.Equal(t, m.RegisteredProof, c1.RegisteredProof)
			sec := m.derive(t)
			s := sec.shape
			require.Equal(t, m.Partitions, s.Partitions)
			require.Equal(t, m.Challenges, s.ChallengesPerPartition)
			require.Equal(t, c1.CommD, sec.commD)
			require.Equal(t, c1.CommR, sec.commR)
			require.Equal(t, c1.Seed, sec.seed)
			require.Equal(t, c1.Ticket, unhex32(t, m.Ticket))
			require.Equal(t, c1.ReplicaID, sec.rid)

			require.Len(t, c1.VanillaProofs, 1)
			var vanilla [][]uint64
			for _, parts := range c1.VanillaProofs {
				for _, part := range parts {
					var cs []uint64
					for _, v := range part {
						require.NotEmpty(t, v.Labeling)
						cs = append(cs, v.Labeling[0].Node)
					}
					vanilla = append(vanilla, cs)
				}
			}
			require.Len(t, vanilla, s.Partitions)
			require.Len(t, m.PublicInputs, s.Partitions)
			require.Len(t, m.InputFiles, s.Partitions)

			for k := range s.Partitions {
				ch, err := Challenges(s, sec.rid, sec.commR, sec.seed, k)
				require.NoError(t, err)
				require.Equal(t, vanilla[k], ch, "partition %d challenges", k)

				got, err := Partition(s, sec.rid, sec.commD, sec.commR, sec.seed, sec.porepID, k)
				require.NoError(t, err)
				require.Len(t, got, s.NumInputs())
				raw, err := os.ReadFile(filepath.Join(base, m.InputFiles[k]))
				require.NoError(t, err)
				require.Len(t, raw, 32*len(got))
				require.Len(t, m.PublicInputs[k], len(got))
				for i, e := range got {
					var b [32]byte
					fr.LittleEndian.PutElement(&b, e)
					require.Equal(t, raw[32*i:32*i+32], b[:], "partition %d input %d", k, i)
					require.Equal(t, m.PublicInputs[k][i], hex.EncodeToString(b[:]), "partition %d input %d", k, i)
				}

				// The inputs depend on the seed, except NI-PoRep's.
				seed2 := sec.seed
				seed2[0] ^= 1
				other, err := Partition(s, sec.rid, sec.commD, sec.commR, seed2, sec.porepID, k)
				require.NoError(t, err)
				require.Equal(t, s.Derivation == NonInteractive, fmt.Sprint(got) == fmt.Sprint(other))
			}
		})
	}
}

func BenchmarkPartition32GiB(b *testing.B) {
	s, err := StackedDrg32GiBV1_1.Shape()
	require.NoError(b, err)
	var rid, commD, commR, seed [32]byte
	for b.Loop() {
		_, err := Partition(s, rid, commD, commR, seed, StackedDrg32GiBV1_1.PoRepID(), 3)
		require.NoError(b, err)
	}
}
