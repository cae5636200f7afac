package update

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/vanilla"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// editJSON decodes the vector's vanilla.json generically, applies f, and
// re-encodes it.
func editJSON(t *testing.T, f func(v []any)) []byte {
	_, dir := loadUpdate(t)
	b, err := os.ReadFile(filepath.Join(dir, "vanilla.json"))
	require.NoError(t, err)
	var v []any
	require.NoError(t, json.Unmarshal(b, &v))
	f(v)
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}

func obj(v any) map[string]any { return v.(map[string]any) }

func TestDecodeErrors(t *testing.T) {
	var ve *VanillaError
	// A missing field is named by its path.
	b := editJSON(t, func(v []any) { delete(obj(v[0]), "comm_c") })
	_, err := decodePartitionProofsJSON(b)
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "[0].comm_c", ve.Field)
	require.ErrorIs(t, err, porep.ErrMissingField)

	b = editJSON(t, func(v []any) {
		delete(obj(obj(v[0])["challenge_proofs"].([]any)[2]), "proof_d_new")
	})
	_, err = decodePartitionProofsJSON(b)
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "[0].challenge_proofs[2].proof_d_new", ve.Field)

	// A byte out of range inside a Merkle proof.
	b = editJSON(t, func(v []any) {
		cp := obj(obj(v[0])["challenge_proofs"].([]any)[1])
		leaf := obj(obj(obj(cp["proof_r_new"])["data"])["Single"])["leaf"].([]any)
		leaf[3] = 256
	})
	_, err = decodePartitionProofsJSON(b)
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "[0].challenge_proofs[1].proof_r_new.data.Single.leaf[3]", ve.Field)

	// Unknown fields and trailing data are refused.
	b = editJSON(t, func(v []any) { obj(v[0])["extra"] = 1 })
	_, err = decodePartitionProofsJSON(b)
	require.ErrorAs(t, err, &ve)
	_, err = decodePartitionProofsJSON(append(editJSON(t, func([]any) {}), []byte(" []")...))
	require.ErrorAs(t, err, &ve)

	// One object decodes as a one-partition list.
	one := editJSON(t, func([]any) {})
	one = bytes.TrimSuffix(bytes.TrimPrefix(one, []byte("[")), []byte("]"))
	ps, err := decodePartitionProofsJSON(one)
	require.NoError(t, err)
	require.Len(t, ps, 1)

	// Bincode: truncation anywhere names a field; trailing bytes are refused.
	m, dir := loadUpdate(t)
	raw, err := os.ReadFile(filepath.Join(dir, m.VanillaBincode[0]))
	require.NoError(t, err)
	for _, n := range []int{0, 31, 40, 100, 5000, len(raw) - 1} {
		_, err := DecodePartitionProof(raw[:n])
		require.ErrorAs(t, err, &ve, "%d bytes", n)
		require.NotEmpty(t, ve.Field)
		if n == 0 || n == 31 || n == len(raw)-1 {
			require.ErrorIs(t, err, vanilla.ErrTruncated) // else a length the rest cannot hold
		}
	}
	_, err = DecodePartitionProof(append(append([]byte(nil), raw...), 0))
	require.ErrorAs(t, err, &ve)
	bad := append([]byte(nil), raw...)
	bad[32+8+8*32+8] = 9 // challenge 0's proof_r_old variant tag
	_, err = DecodePartitionProof(bad)
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "challenge_proofs[0].proof_r_old.data", ve.Field)
	// A length larger than the input is refused before allocating.
	bad = append([]byte(nil), raw...)
	bad[32+7] = 0x7f
	_, err = DecodePartitionProof(bad)
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "apex_leafs", ve.Field)
}

// TestChallengeNodesBuckets: every challenge of every registered shape
// lies in its partition's chunk of nodes (storage-proofs-update
// test_challenge_bucketing); the 2 KiB vector's challenges are compared
// with rust-fil-proofs' in TestRefgenUpdate2KiB.
func TestChallengeNodesBuckets(t *testing.T) {
	var comm fr.Element
	comm.SetUint64(0x1234567)
	for _, s := range Shapes {
		chunk := s.Nodes() / uint64(s.Partitions)
		for _, k := range []int{0, s.Partitions - 1} {
			nodes, err := s.ChallengeNodes(comm, k)
			require.NoError(t, err)
			require.Len(t, nodes, s.Challenges)
			for _, c := range nodes {
				require.Equal(t, uint64(k), c/chunk, "%s partition %d node %d", s.Name, k, c)
			}
		}
		_, err := s.ChallengeNodes(comm, s.Partitions)
		require.Error(t, err)
	}
}

func TestShapes(t *testing.T) {
	want := map[string][4]int{ // partitions, challenges, apex leaves, h
		"StackedDrg2KiBV1": {1, 10, 8, 1}, "StackedDrg8MiBV1": {4, 10, 128, 10},
		"StackedDrg512MiBV1": {16, 86, 128, 10}, "StackedDrg32GiBV1": {16, 86, 128, 10}, "StackedDrg64GiBV1": {16, 86, 128, 10},
	}
	require.Len(t, Shapes, len(want))
	for _, s := range Shapes {
		require.NoError(t, s.Validate())
		w := want[s.Name]
		require.Equal(t, w, [4]int{s.Partitions, s.Challenges, s.ApexLeaves, s.HDefault()}, s.Name)
		kh, err := s.KAndHSelect(s.Partitions-1, s.HDefault())
		require.NoError(t, err)
		hsel := uint64(8) // hs[3] = 10
		if s.HDefault() == 1 {
			hsel = 1 // hs = [1; 6]: the first match
		}
		require.Equal(t, uint64(s.Partitions-1)|hsel<<s.PartitionBits(), kh)
		_, err = s.KAndHSelect(0, 13)
		require.Error(t, err)
	}
	s, _ := ShapeByName("StackedDrg32GiBV1")
	require.Equal(t, "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18", s.ParamsName())
	bad := s
	bad.ApexLeaves = 3
	require.Error(t, bad.Validate())
}

// TestVerifyRejects: tampered vanilla proofs fail the native checks with a
// located error; the circuit of a partition whose sibling was changed
// behind Verify's back is unsatisfied.
func TestVerifyRejects(t *testing.T) {
	_, _, s, pub, proofs := refgenVector(t)
	require.NoError(t, s.Verify(pub, &proofs[0], 0, ""))
	// clone copies what the cases change (domains are arrays, copied by value).
	clone := func() *PartitionProof {
		p := proofs[0]
		p.ApexLeafs = append([]porep.Domain(nil), p.ApexLeafs...)
		p.ChallengeProofs = append([]ChallengeProof(nil), p.ChallengeProofs...)
		return &p
	}
	var ve *VanillaError
	var ie *InputError

	p := clone()
	p.ApexLeafs[3][0] ^= 1
	err := s.Verify(pub, p, 0, "[0]")
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "[0].apex_leafs", ve.Field)

	p = clone()
	p.CommC[1] ^= 1
	require.ErrorAs(t, s.Verify(pub, p, 0, ""), &ve)

	p = clone()
	c := p.ChallengeProofs[4]
	c.ProofRNew.Leaf[0] ^= 1
	p.ChallengeProofs[4] = c
	err = s.Verify(pub, p, 0, "")
	require.ErrorAs(t, err, &ie)
	require.True(t, strings.HasPrefix(ie.Field, "challenge_proofs[4]"), ie.Field)

	p = clone()
	p.ChallengeProofs[2], p.ChallengeProofs[3] = p.ChallengeProofs[3], p.ChallengeProofs[2]
	require.Error(t, s.Verify(pub, p, 0, ""))

	p = clone()
	p.ChallengeProofs = p.ChallengeProofs[1:]
	require.ErrorAs(t, s.Verify(pub, p, 0, ""), &ve)

	wrong := pub
	wrong.H = 2
	require.Error(t, s.Verify(wrong, &proofs[0], 0, ""))
	require.Error(t, s.Verify(pub, &proofs[0], 1, ""))
	wrong = pub
	wrong.CommDNew.SetUint64(7)
	require.Error(t, s.Verify(wrong, &proofs[0], 0, ""))

	// A sibling changed in the circuit's own input: Check passes, the
	// circuit is unsatisfied.
	part, err := s.FromVanilla(&proofs[0], "")
	require.NoError(t, err)
	sib := part.Challenges[5].PathROld[1]
	part.Challenges[5].PathROld[1] = append([]fr.Element(nil), sib...)
	part.Challenges[5].PathROld[1][2].SetUint64(99)
	require.NoError(t, s.Check(pub, part, 0))
	sys := r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, s, pub, part, 0))
	sys.Finalize()
	require.Error(t, sys.IsSatisfied())
	require.ErrorAs(t, s.Check(pub, nil, 0), &ie)
}

// decodePartitionProofsJSON decodes a JSON array of PartitionProof
// (serde_json of Vec<PartitionProof>, one per partition in order), or a
// single PartitionProof object, which it returns as a one-element slice.
// Decoding is strict: every field must be present and unknown fields are
// rejected. Errors are *VanillaError values naming the JSON path
// ("[k]…" inside an array).
func decodePartitionProofsJSON(b []byte) ([]PartitionProof, error) {
	if vanilla.IsJSONObject(b) {
		one, err := DecodePartitionProofJSON(b)
		if err != nil {
			return nil, err
		}
		return []PartitionProof{*one}, nil
	}
	proofs, err := vanilla.Array(b, (*PartitionProof).decodeJSON)
	return proofs, placed(err)
}
