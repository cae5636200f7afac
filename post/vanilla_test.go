package post

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/vanilla"
	"github.com/sealc2/c2/porep"
)

// loadVanilla returns a refgen case's shape, vanilla JSON bytes, decoded
// proofs and randomness.
func loadVanilla(t testing.TB, name string) (Shape, []byte, []SectorProof, [32]byte) {
	m, dir := loadPoSt(t, name)
	s, ok := ShapeByName(m.RegisteredProof)
	require.True(t, ok)
	b, err := os.ReadFile(filepath.Join(dir, "vanilla.json"))
	require.NoError(t, err)
	proofs, err := decodeSectorProofsJSON(b)
	require.NoError(t, err)
	var rnd [32]byte
	_, err = hex.Decode(rnd[:], []byte(m.Randomness))
	require.NoError(t, err)
	return s, b, proofs, rnd
}

func TestVerifyRefgen(t *testing.T) {
	for _, name := range []string{"window-2k-v1_2", "window-2k-v1", "winning-2k-v1"} {
		s, _, proofs, rnd := loadVanilla(t, name)
		parts, pub, err := Partitions(s, proofs)
		require.NoError(t, err)
		for k, p := range parts {
			require.NoError(t, s.verify(rnd, pub, p, k), "%s partition %d", name, k)
		}
	}
}

// TestVerifyRejects changes one value at a time and expects Verify to name
// what no longer holds.
func TestVerifyRejects(t *testing.T) {
	s, _, proofs, rnd := loadVanilla(t, "window-2k-v1_2")
	for _, tc := range []struct {
		name, want string
		mut        func(p *Partition, pub []PublicSector, rnd *[32]byte)
	}{
		{"comm_c", "comm_r ≠ Poseidon", func(p *Partition, _ []PublicSector, _ *[32]byte) { p.Sectors[1].CommC.SetUint64(7) }},
		{"comm_r", "sectors[0].comm_r", func(p *Partition, _ []PublicSector, _ *[32]byte) { p.Sectors[0].CommR.SetUint64(7) }},
		{"sibling", "does not lead to comm_r_last", func(p *Partition, _ []PublicSector, _ *[32]byte) {
			p.Sectors[0].Paths[4][1].Siblings[2].SetUint64(7)
		}},
		{"leaf", "does not lead to comm_r_last", func(p *Partition, _ []PublicSector, _ *[32]byte) { p.Sectors[1].Leaves[9].SetUint64(7) }},
		{"swapped paths", "paths[0]: proves leaf", func(p *Partition, _ []PublicSector, _ *[32]byte) {
			sec := &p.Sectors[0]
			sec.Paths[0], sec.Paths[1] = sec.Paths[1], sec.Paths[0]
			sec.Leaves[0], sec.Leaves[1] = sec.Leaves[1], sec.Leaves[0]
		}},
		{"randomness", "proves leaf", func(_ *Partition, _ []PublicSector, r *[32]byte) { r[0] ^= 1 }},
		{"sector id", "sectors[1].paths[0]: proves leaf", func(_ *Partition, pub []PublicSector, _ *[32]byte) { pub[1].ID++ }},
	} {
		parts, pub, err := Partitions(s, proofs)
		require.NoError(t, err)
		r := rnd
		tc.mut(parts[0], pub, &r)
		err = s.verify(r, pub, parts[0], 0)
		var ie *InputError
		require.ErrorAs(t, err, &ie, tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
}

func TestDecodeJSONErrors(t *testing.T) {
	_, b, _, _ := loadVanilla(t, "window-2k-v1_2")
	for _, tc := range []struct {
		name, old, new, field string
		target                error
	}{
		{"unknown field", `"sector_id":5002,`, `"sector_id":5002,"x":1,`, "[1]", nil},
		{"missing comm_c", `,"comm_c":[`, `,"comm_d":[`, "[0]", nil},
		{"missing vanilla_proof", `"vanilla_proof":`, `"vanilla_prooff":`, "[0]", nil},
		{"leaf too short", `"leaf":[84,`, `"leaf":[`, "[0].vanilla_proof.sectors[0].inclusion_proofs[0].data.Single.leaf", nil},
		{"bad variant", `{"data":{"Single"`, `{"data":{"Double"`, "[0].vanilla_proof.sectors[0].inclusion_proofs[0].data", nil},
		{"missing path", `"path":{"path"`, `"pathx":{"path"`, "[0].vanilla_proof.sectors[0].inclusion_proofs[0].data.Single", porep.ErrUnknownField},
	} {
		bad := bytes.Replace(b, []byte(tc.old), []byte(tc.new), 1)
		require.NotEqual(t, b, bad, tc.name)
		_, err := decodeSectorProofsJSON(bad)
		var ve *VanillaError
		require.ErrorAs(t, err, &ve, tc.name)
		require.True(t, strings.HasPrefix(ve.Field, tc.field), "%s: field %q, want prefix %q (%v)", tc.name, ve.Field, tc.field, err)
		if tc.target != nil {
			require.ErrorIs(t, err, tc.target, tc.name)
		}
	}
	_, err := decodeSectorProofsJSON([]byte(`[{"sector_id":1,"comm_r":[` + strings.Repeat("0,", 31) + `0]}]`))
	var ve *VanillaError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "[0].vanilla_proof", ve.Field)
	require.ErrorIs(t, err, porep.ErrMissingField)
}

func TestDecodeBincodeErrors(t *testing.T) {
	m, dir := loadPoSt(t, "winning-2k-v1")
	b, err := os.ReadFile(filepath.Join(dir, m.VanillaBincode[0]))
	require.NoError(t, err)
	// Every truncation fails with ErrTruncated (or an over-long length), never panics.
	for n := 0; n < len(b); n += 7 {
		_, err := DecodeSectorProof(b[:n])
		var ve *VanillaError
		require.ErrorAs(t, err, &ve, "%d bytes", n)
	}
	_, err = DecodeSectorProof(b[:30]) // inside comm_r
	require.ErrorIs(t, err, vanilla.ErrTruncated)
	_, err = DecodeSectorProof(append(append([]byte{}, b...), 0))
	require.ErrorContains(t, err, "1 trailing bytes")

	bad := append([]byte{}, b...)
	bad[8+32+8+8] = 5 // the first inclusion proof's variant tag
	_, err = DecodeSectorProof(bad)
	var ve *VanillaError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "vanilla_proof.sectors[0].inclusion_proofs[0].data", ve.Field)

	bad = append([]byte{}, b...)
	bad[8+32+7] = 0x7f // vanilla_proof.sectors length ≈ 2^62
	_, err = DecodeSectorProof(bad)
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "vanilla_proof.sectors", ve.Field)
}

func TestPartitionsErrors(t *testing.T) {
	win, _, wproofs, _ := loadVanilla(t, "winning-2k-v1")
	window, _, proofs, _ := loadVanilla(t, "window-2k-v1_2")

	_, _, err := Partitions(win, append(wproofs, wproofs...))
	var ve *VanillaError
	require.ErrorAs(t, err, &ve)

	short := wproofs[0]
	short.Sectors = []VanillaSector{short.Sectors[0]}
	short.Sectors[0].InclusionProofs = short.Sectors[0].InclusionProofs[:65]
	_, _, err = Partitions(win, []SectorProof{short})
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "[0].vanilla_proof.sectors[0].inclusion_proofs", ve.Field)

	// A Window sector with 9 challenges fails the shape check.
	p := proofs[1]
	p.Sectors = []VanillaSector{p.Sectors[0]}
	p.Sectors[0].InclusionProofs = p.Sectors[0].InclusionProofs[:9]
	_, _, err = Partitions(window, []SectorProof{proofs[0], p})
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "sectors[1]", ie.Field)

	// A non-canonical comm_c is named by its vanilla path.
	p = proofs[0]
	p.Sectors = []VanillaSector{p.Sectors[0]}
	for i := range p.Sectors[0].CommC {
		p.Sectors[0].CommC[i] = 0xff
	}
	_, _, err = Partitions(window, []SectorProof{p})
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "[0].vanilla_proof.sectors[0].comm_c", ve.Field)

	_, _, err = Partitions(window, nil)
	require.True(t, errors.As(err, &ve))
}

// decodeSectorProofsJSON decodes a JSON array of FallbackPoStSectorProof
// (serde_json of Vec<FallbackPoStSectorProof>). Decoding is strict: every
// field must be present and unknown fields are rejected. Errors are
// *VanillaError values naming the JSON path.
func decodeSectorProofsJSON(b []byte) ([]SectorProof, error) {
	out, err := vanilla.Array(b, (*SectorProof).decodeJSON)
	return out, placed(err)
}

// verify checks natively, without the circuit, that partition k of a PoSt
// over pub (as [Partitions] returns them) with the given randomness proves
// what its circuit proves: [Shape.VerifyPartition] with the sectors
// [Shape.PartitionSectors] picks for partition k.
func (s Shape) verify(randomness [32]byte, pub []PublicSector, p *Partition, k int) error {
	own, err := s.PartitionSectors(pub, k)
	if err != nil {
		return err
	}
	return s.VerifyPartition(randomness, own, p, k)
}

// MarshalJSON writes what DecodeSectorProofJSON reads back unchanged, for
// the Rust crates' vanilla proofs.
func TestMarshalJSONRoundTrip(t *testing.T) {
	for _, name := range []string{"window-2k-v1_2", "winning-2k-v1"} {
		_, _, proofs, _ := loadVanilla(t, name)
		for i := range proofs {
			b, err := proofs[i].MarshalJSON()
			require.NoError(t, err)
			back, err := DecodeSectorProofJSON(b)
			require.NoError(t, err, "%s [%d]", name, i)
			require.Equal(t, proofs[i], *back, "%s [%d]", name, i)
		}
	}
}
