package update

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/r1cs"
)

// refgenUpdate is the part of update-2k/meta.json the tests compare with.
type refgenUpdate struct {
	RegisteredProof    string `json:"registered_proof"`
	SectorSize         uint64 `json:"sector_size"`
	H                  int    `json:"h"`
	CircuitIdentifier  string `json:"circuit_identifier"`
	OfficialParamsFile string `json:"official_params_file"`
	CommROld           string `json:"comm_r_old"`
	CommRNew           string `json:"comm_r_new"`
	CommDNew           string `json:"comm_d_new"`
	PublicParams       struct {
		SectorNodes     uint64 `json:"sector_nodes"`
		ChallengeCount  int    `json:"challenge_count"`
		ChallengeBitLen int    `json:"challenge_bit_len"`
		PartitionCount  int    `json:"partition_count"`
		PartitionBitLen int    `json:"partition_bit_len"`
		ApexLeafCount   int    `json:"apex_leaf_count"`
		ApexLeafBitLen  int    `json:"apex_leaf_bit_len"`
	} `json:"public_params"`
	VanillaJSON    *string  `json:"vanilla_json"`
	VanillaBincode []string `json:"vanilla_bincode"`
	Partitions     []struct {
		Challenges []uint64 `json:"challenges"`
		refgen.Partition
	} `json:"partitions"`
}

func loadUpdate(t testing.TB) (refgenUpdate, string) { return loadUpdateDir(t, "update-2k") }

func loadUpdateDir(t testing.TB, name string) (refgenUpdate, string) {
	var m refgenUpdate
	refgen.ReadJSON(t, &m, name, "meta.json")
	return m, filepath.Join(refgen.Dir, name)
}

// refgenVector returns the shape, public inputs and decoded vanilla
// proofs of the 2 KiB vector.
func refgenVector(t testing.TB) (refgenUpdate, string, Shape, PublicInputs, []PartitionProof) {
	return refgenVectorDir(t, "update-2k")
}

// refgenVectorDir is refgenVector for the vector in refgen.Dir/name: the
// proofs come from vanilla.json where the vector has one, else from the
// bincode files.
func refgenVectorDir(t testing.TB, name string) (refgenUpdate, string, Shape, PublicInputs, []PartitionProof) {
	m, dir := loadUpdateDir(t, name)
	s, ok := ShapeByName(m.RegisteredProof)
	require.True(t, ok, m.RegisteredProof)
	pub := PublicInputs{CommROld: refgen.HexElement(t, m.CommROld), CommDNew: refgen.HexElement(t, m.CommDNew),
		CommRNew: refgen.HexElement(t, m.CommRNew), H: m.H}
	var proofs []PartitionProof
	if m.VanillaJSON != nil {
		vb, err := os.ReadFile(filepath.Join(dir, *m.VanillaJSON))
		require.NoError(t, err)
		proofs, err = decodePartitionProofsJSON(vb)
		require.NoError(t, err)
	} else {
		for _, f := range m.VanillaBincode {
			b := refgen.ReadFile(t, filepath.Join(dir, f))
			p, err := DecodePartitionProof(b)
			require.NoError(t, err)
			proofs = append(proofs, *p)
		}
	}
	return m, dir, s, pub, proofs
}

// TestRefgenUpdate2KiB rebuilds the 2 KiB SnapDeals partition from the
// vanilla proof rust-fil-proofs made and compares with what bellperson
// recorded: shape parameters, parameter file name, challenges, counts,
// canonical R1CS digest, witness digest and public inputs (derived here
// from the commitments).
func TestRefgenUpdate2KiB(t *testing.T) {
	m, dir, s, pub, proofs := refgenVector(t)
	pp := m.PublicParams
	require.Equal(t, m.SectorSize, s.SectorSize)
	require.Equal(t, pp.SectorNodes, s.Nodes())
	require.Equal(t, pp.ChallengeCount, s.Challenges)
	require.Equal(t, pp.ChallengeBitLen, s.ChallengeBits())
	require.Equal(t, pp.PartitionCount, s.Partitions)
	require.Equal(t, pp.PartitionBitLen, s.PartitionBits())
	require.Equal(t, pp.ApexLeafCount, s.ApexLeaves)
	require.Equal(t, pp.ApexLeafBitLen, s.ApexBits())
	require.Equal(t, m.H, s.HDefault())
	require.Equal(t, m.CircuitIdentifier, s.CircuitIdentifier())
	require.Equal(t, m.OfficialParamsFile, s.ParamsName()+".params")

	// The bincode bytes filecoin-ffi hands over decode to the same proofs.
	require.Len(t, m.VanillaBincode, len(proofs))
	for k, f := range m.VanillaBincode {
		b := refgen.ReadFile(t, filepath.Join(dir, f))
		p, err := DecodePartitionProof(b)
		require.NoError(t, err)
		require.Equal(t, proofs[k], *p, f)
		p, err = DecodeVanilla(b)
		require.NoError(t, err)
		require.Equal(t, proofs[k], *p, f)

		// Bincode whose first byte (comm_c's lowest) reads as '{' is
		// bincode still.
		brace := append([]byte(nil), b...)
		brace[0] = '{'
		want, err := DecodePartitionProof(brace)
		require.NoError(t, err)
		p, err = DecodeVanilla(brace)
		require.NoError(t, err, f)
		require.Equal(t, want, p, f)
	}

	parts, err := s.partitionsFromVanilla(proofs)
	require.NoError(t, err)
	require.Len(t, parts, len(m.Partitions))
	for k, want := range m.Partitions {
		require.NoError(t, s.Verify(pub, &proofs[k], k, ""))
		nodes, err := s.ChallengeNodes(pub.CommRNew, k)
		require.NoError(t, err)
		require.Equal(t, want.Challenges, nodes, "partition %d challenges", k)

		p := parts[k]
		cnt := r1cs.NewCounter()
		require.NoError(t, Synthesize(cnt, s, pub, p, k))
		cnt.Finalize()
		require.Equal(t, want.Counts.R1CS(), cnt.Counts(), "partition %d counts", k)
		require.Equal(t, s.NumInputs(), want.Counts["inputs"])

		sys := r1cs.NewSystem()
		require.NoError(t, Synthesize(sys, s, pub, p, k))
		sys.Finalize()
		require.NoError(t, sys.IsSatisfied())
		dig, err := sys.CanonicalDigest()
		require.NoError(t, err)
		require.Equal(t, want.R1CSSHA256, hex.EncodeToString(dig[:]), "partition %d R1CS", k)

		// The recorded system's assignment, a sequential witness-only pass
		// and the concurrent one agree with bellperson's witness.
		d := r1cs.WitnessDigest(sys.Inputs(), sys.Aux())
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "partition %d recorded witness", k)
		seq := r1cs.NewWitness(0, 0)
		require.NoError(t, Synthesize(seq, s, pub, p, k))
		d = r1cs.WitnessDigest(seq.Inputs, seq.Aux)
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "partition %d witness", k)
		w, err := WitnessContext(context.Background(), s, pub, p, k, 3, nil)
		require.NoError(t, err)
		d = r1cs.WitnessDigest(w.Inputs, w.Aux)
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "partition %d concurrent witness", k)

		native, err := s.Inputs(pub, k)
		require.NoError(t, err)
		require.Equal(t, native, w.Inputs[1:], "partition %d native public inputs", k)
		b, err := os.ReadFile(filepath.Join(dir, want.PublicInputsFile))
		require.NoError(t, err)
		require.Len(t, b, 32*len(native))
		require.Len(t, want.PublicInputs, len(native))
		for i := range native {
			var e [32]byte
			fr.LittleEndian.PutElement(&e, native[i])
			require.Equal(t, want.PublicInputs[i], hex.EncodeToString(e[:]), "partition %d input %d", k, i)
			require.Equal(t, b[32*i:32*i+32], e[:], "partition %d input file %d", k, i)
		}

		// The blank partition (parameter generation) has the same R1CS.
		bp, err := BlankPartition(s)
		require.NoError(t, err)
		bsys := r1cs.NewSystem()
		require.NoError(t, Synthesize(bsys, s, BlankInputs(s), bp, k))
		bsys.Finalize()
		bd, err := bsys.CanonicalDigest()
		require.NoError(t, err)
		require.Equal(t, dig, bd, "blank partition R1CS")
	}
}

// TestRefgenUpdate8MiB checks the 8 MiB vector (four partitions, h = 10,
// 128 apex leaves, two partition bits): every partition passes the native
// checks, and its challenges, public inputs and witness digest equal
// rust-fil-proofs'; the R1CS (the same for every partition) is checked
// through partition 0's digest. Under -short only partitions 0 and 3
// are synthesized, and the R1CS digest is skipped (a 10 M-constraint
// recording).
func TestRefgenUpdate8MiB(t *testing.T) {
	m, _, s, pub, proofs := refgenVectorDir(t, "update-8m")
	require.Equal(t, m.SectorSize, s.SectorSize)
	require.Equal(t, m.PublicParams.PartitionCount, s.Partitions)
	require.Equal(t, m.PublicParams.ApexLeafCount, s.ApexLeaves)
	require.Equal(t, m.H, s.HDefault())
	require.Equal(t, m.OfficialParamsFile, s.ParamsName()+".params")
	parts, err := s.partitionsFromVanilla(proofs)
	require.NoError(t, err)
	require.Len(t, m.Partitions, s.Partitions)
	for k, want := range m.Partitions {
		require.NoError(t, s.Verify(pub, &proofs[k], k, ""), "partition %d", k)
		nodes, err := s.ChallengeNodes(pub.CommRNew, k)
		require.NoError(t, err)
		require.Equal(t, want.Challenges, nodes, "partition %d challenges", k)
		native, err := s.Inputs(pub, k)
		require.NoError(t, err)
		for i := range native {
			var e [32]byte
			fr.LittleEndian.PutElement(&e, native[i])
			require.Equal(t, want.PublicInputs[i], hex.EncodeToString(e[:]), "partition %d input %d", k, i)
		}
		require.Equal(t, m.Partitions[0].R1CSSHA256, want.R1CSSHA256, "one R1CS for all partitions")
		if testing.Short() && k != 0 && k != 3 {
			continue
		}
		w, err := WitnessContext(context.Background(), s, pub, parts[k], k, 0, nil)
		require.NoError(t, err)
		require.Equal(t, native, w.Inputs[1:])
		d := r1cs.WitnessDigest(w.Inputs, w.Aux)
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "partition %d witness", k)
		require.Equal(t, want.Counts["aux"], len(w.Aux))
		// into a reused buffer whose old values are garbage
		buf := make([]fr.Element, len(w.Aux))
		for i := range buf {
			buf[i].SetUint64(uint64(i) + 777)
		}
		bw, err := WitnessContext(context.Background(), s, pub, parts[k], k, 0, buf)
		require.NoError(t, err)
		require.Same(t, &buf[0], &bw.Aux[0], "partition %d: the witness is written into the buffer", k)
		d = r1cs.WitnessDigest(bw.Inputs, bw.Aux)
		require.Equal(t, want.WitnessSHA256, hex.EncodeToString(d[:]), "partition %d witness in a reused buffer", k)
	}
	if testing.Short() {
		return
	}
	sys := r1cs.NewSystem()
	require.NoError(t, Synthesize(sys, s, pub, parts[1], 1))
	sys.Finalize()
	require.NoError(t, sys.IsSatisfied())
	require.Equal(t, m.Partitions[1].Counts.R1CS(), sys.Counts())
	dig, err := sys.CanonicalDigest()
	require.NoError(t, err)
	require.Equal(t, m.Partitions[1].R1CSSHA256, hex.EncodeToString(dig[:]))
}

// partitionsFromVanilla converts the vanilla proofs of all
// partitions, in order, with [Shape.FromVanilla] (paths "[k]…").
func (s Shape) partitionsFromVanilla(proofs []PartitionProof) ([]*Partition, error) {
	if len(proofs) != s.Partitions {
		return nil, fieldErr("", "%d partition proofs, want %d", len(proofs), s.Partitions)
	}
	out := make([]*Partition, len(proofs))
	for k := range proofs {
		p, err := s.FromVanilla(&proofs[k], fmt.Sprintf("[%d]", k))
		if err != nil {
			return nil, err
		}
		out[k] = p
	}
	return out, nil
}
