package ffi

import (
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/devparams"
	"github.com/sealc2/c2/porep/c1gen"
	"github.com/sealc2/c2/porep/inputs"
)

func TestProverID(t *testing.T) {
	// The payload of ID address f01000 is the varint of 1000: e8 07.
	id := ProverID(1000)
	assert.Equal(t, []byte{0xe8, 0x07}, id[:2])
	assert.Equal(t, make([]byte, 30), id[2:])
}

func commCID(t *testing.T, codec, mh uint64, comm [32]byte) cid.Cid {
	t.Helper()
	h, err := multihash.Encode(comm[:], mh)
	require.NoError(t, err)
	return cid.NewCidV1(codec, h)
}

// TestSealCommitPhase2 proves a generated 2 KiB C1 of miner 1000, sector 7
// through the process-wide Prover, checks the proof against the key and
// inputs c2 prove's callers use, and has VerifySeal accept it and reject
// it with a bit flipped or another sector number.
func TestSealCommitPhase2(t *testing.T) {
	dir := useDevParams(t, "proves a 2^22-constraint circuit", devparams.Dir)

	const miner, sector = abi.ActorID(1000), abi.SectorNumber(7)
	pid, sid := ProverID(miner), uint64(sector)
	var seed [32]byte
	seed[0] = 42
	sec, err := c1gen.Generate(inputs.StackedDrg2KiBV1_1, seed, &c1gen.Options{ProverID: &pid, SectorID: &sid})
	require.NoError(t, err)
	c1, err := sec.JSON()
	require.NoError(t, err)

	_, err = SealCommitPhase2(c1, sector+1, miner)
	var rm *ReplicaMismatchError
	require.ErrorAs(t, err, &rm, "a C1 of another sector is refused before proving")

	prf, err := SealCommitPhase2(c1, sector, miner)
	require.NoError(t, err)
	require.Len(t, prf, groth16.ProofSize)

	info := proof.SealVerifyInfo{
		SealProof:             abi.RegisteredSealProof_StackedDrg2KiBV1_1,
		SectorID:              abi.SectorID{Miner: miner, Number: sector},
		Randomness:            sec.C1.Ticket[:],
		InteractiveRandomness: sec.C1.Seed[:],
		Proof:                 prf,
		SealedCID:             commCID(t, codecSealedV1, mhPoseidonFC1, sec.C1.CommR),
		UnsealedCID:           commCID(t, codecUnsealedV1, mhSHA256Trunc, sec.C1.CommD),
	}
	requireVerifies(t, prf, func(p []byte) (bool, error) {
		i := info
		i.Proof = p
		return VerifySeal(i)
	})
	other := info
	other.Number++
	ok, err := VerifySeal(other)
	require.NoError(t, err)
	assert.False(t, ok, "another sector's inputs")

	// The same proof through the library call that `c2 prove` makes.
	p, err := c2.New(c2.Config{Backend: c2.BackendCPU, Params: dir, TrustParams: true})
	require.NoError(t, err)
	defer p.Close()
	vk, err := verifyingKey(2048)
	require.NoError(t, err)
	ps, err := groth16.ReadProofs(prf)
	require.NoError(t, err)
	rp := inputs.StackedDrg2KiBV1_1
	is, err := rp.Shape()
	require.NoError(t, err)
	pub, err := inputs.Partition(is, sec.C1.ReplicaID, sec.C1.CommD, sec.C1.CommR, sec.C1.Seed, rp.PoRepID(), 0)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(vk, &ps[0], pub))
}

// requireVerifies checks that verify accepts prf and rejects it with one
// bit of its first proof's A, B or C flipped, without an error.
func requireVerifies(t *testing.T, prf []byte, verify func(proof []byte) (bool, error)) {
	t.Helper()
	ok, err := verify(prf)
	require.NoError(t, err)
	assert.True(t, ok)
	for _, bit := range []int{0, 8*96 + 3, 8*191 + 7} { // A, B, C
		bad := append([]byte(nil), prf...)
		bad[bit/8] ^= 1 << (bit % 8)
		ok, err := verify(bad)
		require.NoError(t, err)
		assert.False(t, ok, "bit %d flipped", bit)
	}
}

// An NI-PoRep C1 is refused before anything is proved or any parameter is
// looked for: filecoin-ffi's seal proof for it is an aggregate.
func TestSealCommitPhase2RefusesNIPoRep(t *testing.T) {
	const miner, sector = abi.ActorID(1000), abi.SectorNumber(7)
	pid, sid := ProverID(miner), uint64(sector)
	sec, err := c1gen.Generate(inputs.StackedDrg2KiBV1_2_Feat_NonInteractivePoRep, [32]byte{7}, &c1gen.Options{ProverID: &pid, SectorID: &sid})
	require.NoError(t, err)
	c1, err := sec.JSON()
	require.NoError(t, err)
	_, err = SealCommitPhase2(c1, sector, miner)
	require.ErrorIs(t, err, ErrAggregated)
}

func TestVerifySealRejectsMalformed(t *testing.T) {
	good := commCID(t, codecSealedV1, mhPoseidonFC1, [32]byte{1})
	d := commCID(t, codecUnsealedV1, mhSHA256Trunc, [32]byte{2})
	base := proof.SealVerifyInfo{
		SealProof: abi.RegisteredSealProof_StackedDrg2KiBV1_1, Randomness: make([]byte, 32),
		InteractiveRandomness: make([]byte, 32), Proof: make([]byte, 192), SealedCID: good, UnsealedCID: d,
	}
	for name, mod := range map[string]func(*proof.SealVerifyInfo){
		"sealed CID with the unsealed codec": func(i *proof.SealVerifyInfo) { i.SealedCID = d },
		"undefined unsealed CID":             func(i *proof.SealVerifyInfo) { i.UnsealedCID = cid.Undef },
		"short ticket":                       func(i *proof.SealVerifyInfo) { i.Randomness = i.Randomness[:31] },
		"proof of two partitions":            func(i *proof.SealVerifyInfo) { i.Proof = make([]byte, 384) },
		"NI-PoRep (an aggregate)": func(i *proof.SealVerifyInfo) {
			i.SealProof = abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep
		},
	} {
		info := base
		mod(&info)
		ok, err := VerifySeal(info)
		assert.Error(t, err, name)
		assert.False(t, ok, name)
	}
}
