package post

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/r1cs"
)

// refgenPoSt is the part of a post-2k or post-8m meta.json the tests compare with.
type refgenPoSt struct {
	RegisteredProof string              `json:"registered_proof"`
	Randomness      string              `json:"randomness"`
	SectorIDs       []uint64            `json:"sector_ids"`
	Challenges      map[string][]uint64 `json:"challenges"`
	Circuit         struct {
		SectorCount    int `json:"sector_count"`
		ChallengeCount int `json:"challenge_count"`
	} `json:"circuit"`
	VanillaBincode []string           `json:"vanilla_bincode"`
	Partitions     []refgen.Partition `json:"partitions"`
}

func loadPoSt(t testing.TB, name string) (refgenPoSt, string) {
	var m refgenPoSt
	refgen.ReadJSON(t, &m, vectorSet(name), name, "meta.json")
	return m, filepath.Join(refgen.Dir, vectorSet(name), name)
}

// vectors names the committed 2 KiB PoSt vectors (out/post-2k), and
// vectors8MiB the 8 MiB ones (out/post-8m), made the same way.
var (
	vectors     = []string{"window-2k-v1_2", "window-2k-v1", "winning-2k-v1"}
	vectors8MiB = []string{"window-8m-v1_2", "window-8m-v1", "winning-8m-v1"}
	// vectorSets are the directories under out/ holding them.
	vectorSets = []string{"post-2k", "post-8m"}
)

// vectorSet is the directory under out/ holding the named vector: its
// name carries the size, as in window-8m-v1_2.
func vectorSet(name string) string {
	if strings.Contains(name, "-8m-") {
		return "post-8m"
	}
	return "post-2k"
}

// vector is a committed PoSt vector with its vanilla proofs decoded (from
// vanilla.json, checked against the bincode files) and partitioned.
type vector struct {
	meta  refgenPoSt
	dir   string
	shape Shape
	rnd   [32]byte
	parts []*Partition
	pub   []PublicSector
}

func loadVector(t *testing.T, name string) vector {
	t.Helper()
	m, dir := loadPoSt(t, name)
	s, ok := ShapeByName(m.RegisteredProof)
	require.True(t, ok, m.RegisteredProof)
	require.Equal(t, m.Circuit.SectorCount, s.Sectors)
	require.Equal(t, m.Circuit.ChallengeCount, s.Challenges)

	vb, err := os.ReadFile(filepath.Join(dir, "vanilla.json"))
	require.NoError(t, err)
	proofs, err := decodeSectorProofsJSON(vb)
	require.NoError(t, err)
	// The bincode bytes filecoin-ffi hands over decode to the same proofs.
	require.Len(t, m.VanillaBincode, len(proofs))
	for i, f := range m.VanillaBincode {
		b := refgen.ReadFile(t, filepath.Join(dir, f))
		p, err := DecodeSectorProof(b)
		require.NoError(t, err)
		require.Equal(t, proofs[i], *p, f)
	}

	parts, pub, err := Partitions(s, proofs)
	require.NoError(t, err)
	require.Len(t, parts, len(m.Partitions))
	require.Equal(t, s.Partitions(len(proofs)), len(parts))
	var rnd [32]byte
	_, err = hex.Decode(rnd[:], []byte(m.Randomness))
	require.NoError(t, err)
	return vector{meta: m, dir: dir, shape: s, rnd: rnd, parts: parts, pub: pub}
}

// TestWinningSectorChallenge: refgen's Winning vectors (2 KiB and 8 MiB)
// prove the sector generate_winning_post_sector_challenge picked among the
// three sealed.
func TestWinningSectorChallenge(t *testing.T) {
	for _, set := range vectorSets {
		winning := "winning-" + strings.TrimPrefix(set, "post-") + "-v1"
		t.Run(set, func(t *testing.T) { checkWinningSectorChallenge(t, set, winning) })
	}
}

func checkWinningSectorChallenge(t *testing.T, set, winning string) {
	b, err := os.ReadFile(filepath.Join(refgen.Dir, set, "sectors.json"))
	require.NoError(t, err)
	var all struct {
		ProverID   string `json:"prover_id"`
		Randomness string `json:"randomness"`
		Sectors    []struct {
			ID uint64 `json:"sector_id"`
		} `json:"sectors"`
	}
	require.NoError(t, json.Unmarshal(b, &all))
	var pid, rnd [32]byte
	_, err = hex.Decode(pid[:], []byte(all.ProverID))
	require.NoError(t, err)
	_, err = hex.Decode(rnd[:], []byte(all.Randomness))
	require.NoError(t, err)
	i, err := winningSectorChallenge(pid, rnd, 0, uint64(len(all.Sectors)))
	require.NoError(t, err)
	m, _ := loadPoSt(t, winning)
	require.Equal(t, m.SectorIDs, []uint64{all.Sectors[i].ID})
	_, err = winningSectorChallenge(pid, rnd, 0, 0)
	require.Error(t, err)
}

// TestRefgenPoSt2KiB rebuilds every partition of the 2 KiB Window (V1 and
// V1_2, three sectors: two partitions, the second padded) and Winning PoSt
// vectors from the vanilla proofs rust-fil-proofs made, and compares with
// what bellperson recorded: counts, canonical R1CS digest, witness digest
// (sequential and concurrent) and public inputs, which are also derived
// natively from the randomness and the sectors.
func TestRefgenPoSt2KiB(t *testing.T) {
	for _, name := range vectors {
		t.Run(name, func(t *testing.T) { checkRefgenPoSt(t, name) })
	}
}

// TestRefgenPoSt8MiB makes the same checks on the 8 MiB vectors
// (out/post-8m: Window V1_2 and V1 of three sectors in two partitions,
// Winning V1 of one), whose trees are six octary levels deep instead of
// two.
func TestRefgenPoSt8MiB(t *testing.T) {
	for _, name := range vectors8MiB {
		t.Run(name, func(t *testing.T) { checkRefgenPoSt(t, name) })
	}
}

// checkRefgenPoSt rebuilds every partition of one committed vector and
// compares it with the recording.
func checkRefgenPoSt(t *testing.T, name string) {
	v := loadVector(t, name)
	m, s, parts, rnd := v.meta, v.shape, v.parts, v.rnd
	// The challenged leaves the API derived are the ones our LeafChallenge derives.
	for i, id := range m.SectorIDs {
		want := m.Challenges[strconv.FormatUint(id, 10)]
		for n, c := range want {
			// generate_fallback_sector_challenges: Winning's one sector has 66 challenges.
			idx := ChallengeIndex(s.Version, i, len(want), n)
			require.Equal(t, c, LeafChallenge(s, rnd, id, idx), "sector %d challenge %d", id, n)
		}
	}

	for k, want := range m.Partitions {
		p := parts[k]
		cnt := r1cs.NewCounter()
		require.NoError(t, Synthesize(cnt, s, p))
		cnt.Finalize()
		require.Equal(t, want.Counts.R1CS(), cnt.Counts(), "partition %d counts", k)
		require.Equal(t, s.NumInputs(), want.Counts["inputs"])

		sys := r1cs.NewSystem()
		require.NoError(t, Synthesize(sys, s, p))
		sys.Finalize()
		require.NoError(t, sys.IsSatisfied())
		dig, err := sys.CanonicalDigest()
		require.NoError(t, err)
		require.Equal(t, want.R1CSSHA256, hex.EncodeToString(dig[:]), "partition %d R1CS", k)

		w := r1cs.NewWitness(0, 0)
		require.NoError(t, Synthesize(w, s, p))
		d := r1cs.WitnessDigest(w.Inputs, w.Aux)
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "partition %d witness", k)
		pw, err := WitnessContext(context.Background(), s, p, 0, nil)
		require.NoError(t, err)
		d = r1cs.WitnessDigest(pw.Inputs, pw.Aux)
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "partition %d concurrent witness", k)
		// into a reused buffer whose old values are garbage
		buf := make([]fr.Element, len(pw.Aux)+3)
		for i := range buf {
			buf[i].SetUint64(uint64(i) + 12345)
		}
		bw, err := WitnessContext(context.Background(), s, p, 0, buf)
		require.NoError(t, err)
		require.Same(t, &buf[0], &bw.Aux[0], "partition %d: the witness is written into the buffer", k)
		d = r1cs.WitnessDigest(bw.Inputs, bw.Aux)
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "partition %d witness in a reused buffer", k)

		native, err := publicInputs(s, rnd, v.pub, k)
		require.NoError(t, err)
		require.Equal(t, native, pw.Inputs[1:], "partition %d native public inputs", k)
		require.Len(t, want.PublicInputs, len(native))
		b, err := os.ReadFile(filepath.Join(v.dir, want.PublicInputsFile))
		require.NoError(t, err)
		require.Len(t, b, 32*len(native))
		for i := range native {
			var e [32]byte
			fr.LittleEndian.PutElement(&e, native[i])
			require.Equal(t, want.PublicInputs[i], hex.EncodeToString(e[:]), "partition %d input %d", k, i)
			require.Equal(t, b[32*i:32*i+32], e[:], "partition %d input file %d", k, i)
		}
	}
}

// TestPartitionInputs derives the public inputs of every partition of the
// committed vectors from that partition's own sectors alone, as a prover
// of one partition (filecoin-ffi's generate_single_window_post_with_vanilla)
// has them, and compares with the inputs rust-fil-proofs computed for that
// partition of the whole PoSt (inputs-p{k}.bin); each partition passes
// VerifyPartition with its own sectors. V1 counts positions: partition 1's
// sector placed as partition 0 gets other inputs, and fails the check.
func TestPartitionInputs(t *testing.T) {
	for _, name := range append(vectors[:len(vectors):len(vectors)], vectors8MiB...) {
		v := loadVector(t, name)
		s := v.shape
		for k, part := range v.parts {
			own := v.pub
			if s.Kind == Window {
				own = v.pub[k*s.Sectors : min(len(v.pub), (k+1)*s.Sectors)]
			}
			picked, err := s.PartitionSectors(v.pub, k)
			require.NoError(t, err)
			require.Equal(t, own, picked, "%s partition %d sectors", name, k)

			got, err := PartitionInputs(s, v.rnd, own, k)
			require.NoError(t, err)
			want := refgen.ReadScalars(t, filepath.Join(v.dir, v.meta.Partitions[k].PublicInputsFile))
			require.Equal(t, want, got, "%s partition %d", name, k)
			require.NoError(t, s.VerifyPartition(v.rnd, own, part, k), "%s partition %d", name, k)

			if k > 0 {
				other, err := PartitionInputs(s, v.rnd, own, 0)
				require.NoError(t, err)
				err = s.VerifyPartition(v.rnd, own, part, 0)
				if s.Version == V1_0_0 {
					require.NotEqual(t, want, other, "%s: partition %d's sectors as partition 0", name, k)
					var ie *InputError
					require.ErrorAs(t, err, &ie)
					require.Regexp(t, `^partition 0: sectors\[0\]\.paths\[`, ie.Field)
				} else {
					require.Equal(t, want, other, "%s: V1_2 inputs do not depend on the position", name)
					require.NoError(t, err)
				}
			}
		}
	}
}

// TestPartitionInputsRefuses: the sectors and partition index a partition
// cannot have are refused, named.
func TestPartitionInputsRefuses(t *testing.T) {
	win := loadVector(t, "window-2k-v1")
	winning := loadVector(t, "winning-2k-v1")
	two := []PublicSector{winning.pub[0], winning.pub[0]}
	for _, tc := range []struct {
		name    string
		v       vector
		sectors []PublicSector
		k       int
		field   string
	}{
		{"no sector", win, nil, 0, "sectors"},
		{"more than a partition holds", win, win.pub, 0, "sectors"},
		{"negative partition", win, win.pub[:1], -1, "partition"},
		{"challenge indices overflow", win, win.pub[:1], math.MaxInt64 / 20, "partition"},
		{"Winning of two sectors", winning, two, 0, "sectors"},
		{"Winning past partition 0", winning, winning.pub, 1, "partition"},
	} {
		_, err := PartitionInputs(tc.v.shape, tc.v.rnd, tc.sectors, tc.k)
		var ie *InputError
		require.ErrorAs(t, err, &ie, tc.name)
		require.Equal(t, tc.field, ie.Field, tc.name)
	}
	// The last partition index whose challenge indices fit: accepted.
	_, err := PartitionInputs(win.shape, win.rnd, win.pub[:1], math.MaxInt64/20-1)
	require.NoError(t, err)

	// A randomness that is not a canonical scalar.
	rnd := win.rnd
	rnd[31] = 0xff
	_, err = PartitionInputs(win.shape, rnd, win.pub[:1], 0)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "randomness", ie.Field)

	// PartitionSectors: no partition k of the sectors.
	for _, k := range []int{-1, 2, math.MaxInt} {
		_, err = win.shape.PartitionSectors(win.pub, k)
		require.ErrorAs(t, err, &ie, "partition %d", k)
		require.Equal(t, "partition", ie.Field)
	}
	_, err = win.shape.PartitionSectors(nil, 0)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "sectors", ie.Field)
}

// publicInputs returns the public inputs (without ONE) of partition k of a
// PoSt over sectors with the given randomness: [PartitionInputs] of the
// sectors [Shape.PartitionSectors] picks for partition k.
func publicInputs(s Shape, randomness [32]byte, sectors []PublicSector, k int) ([]fr.Element, error) {
	own, err := s.PartitionSectors(sectors, k)
	if err != nil {
		return nil, err
	}
	return PartitionInputs(s, randomness, own, k)
}

// winningSectorChallenge returns the index, in 0..setLen, of the sector
// challenge n of a Winning PoSt picks among the miner's setLen sectors: the
// first 8 bytes, little-endian, of SHA-256(proverID ‖ randomness ‖ n as 8
// little-endian bytes), modulo setLen (generate_sector_challenge; Winning
// PoSt asks for n = 0 only). setLen must not be zero.
func winningSectorChallenge(proverID, randomness [32]byte, n, setLen uint64) (uint64, error) {
	if setLen == 0 {
		return 0, &InputError{"sector_set_len", "empty sector set"}
	}
	var buf [72]byte
	copy(buf[:], proverID[:])
	copy(buf[32:], randomness[:])
	binary.LittleEndian.PutUint64(buf[64:], n)
	h := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(h[:8]) % setLen, nil
}
