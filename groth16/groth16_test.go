package groth16_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/r1cs"
)

// newRNG returns a deterministic io.Reader for development setups in tests.
func newRNG(seed byte) *rand.ChaCha8 { return rand.NewChaCha8([32]byte{seed}) }

type fixture struct {
	sys    *r1cs.System
	pk     *groth16.ProvingKey
	inputs []fr.Element // public inputs without ONE
}

func newFixture(t testing.TB, logSize int, inB bool, seed uint64) *fixture {
	t.Helper()
	sys, inputs, err := synth.System(synth.Shape{LogSize: logSize, InputsB: inB, Seed: seed})
	require.NoError(t, err)
	pk, err := groth16.Setup(sys, newRNG(byte(seed)))
	require.NoError(t, err)
	return &fixture{sys, pk, inputs}
}

func TestProveVerify(t *testing.T) {
	sizes := []int{10, 12, 14} // 2^16 and 2^18 prove and verify in BenchmarkProve
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, k := range sizes {
		for _, inB := range []bool{false, true} {
			t.Run(fmt.Sprintf("2^%d/inputsInB=%v", k, inB), func(t *testing.T) {
				f := newFixture(t, k, inB, uint64(k))
				require.Equal(t, 1<<k, f.pk.DomainSize())
				p, err := groth16.Prove(f.pk, f.sys)
				require.NoError(t, err)
				require.NoError(t, groth16.Verify(&f.pk.VK, p, f.inputs))

				// Wrong public input.
				bad := append([]fr.Element(nil), f.inputs...)
				bad[len(bad)-1].Add(&bad[len(bad)-1], new(fr.Element).SetOne())
				require.ErrorIs(t, groth16.Verify(&f.pk.VK, p, bad), groth16.ErrInvalidProof)
				// Wrong number of inputs: an argument error, not "invalid".
				err = groth16.Verify(&f.pk.VK, p, f.inputs[1:])
				require.Error(t, err)
				require.NotErrorIs(t, err, groth16.ErrInvalidProof)
			})
		}
	}
}

func TestProofIsDeterministicGivenRS(t *testing.T) {
	f := newFixture(t, 10, true, 1)
	var r, s fr.Element
	r.SetUint64(12345)
	s.SetUint64(67890)
	p1, _, err := groth16.ProveWith(f.pk, f.sys, r, s)
	require.NoError(t, err)
	p2, _, err := groth16.ProveWith(f.pk, f.sys, r, s)
	require.NoError(t, err)
	require.Equal(t, p1.Bytes(), p2.Bytes())
	s.SetUint64(67891)
	p3, _, err := groth16.ProveWith(f.pk, f.sys, r, s)
	require.NoError(t, err)
	require.NotEqual(t, p1.Bytes(), p3.Bytes())
	require.NoError(t, groth16.Verify(&f.pk.VK, p3, f.inputs))
}

func TestTamperedProofAndWrongKeyFail(t *testing.T) {
	f := newFixture(t, 10, false, 2)
	p, err := groth16.Prove(f.pk, f.sys)
	require.NoError(t, err)
	vk := &f.pk.VK

	// Each point replaced by another valid point.
	_, _, g1, g2 := bls.Generators()
	for name, mut := range map[string]func(q *groth16.Proof){
		"A":    func(q *groth16.Proof) { q.A.Add(&q.A, &g1) },
		"B":    func(q *groth16.Proof) { q.B.Add(&q.B, &g2) },
		"C":    func(q *groth16.Proof) { q.C.Add(&q.C, &g1) },
		"swap": func(q *groth16.Proof) { q.A, q.C = q.C, q.A },
	} {
		q := *p
		mut(&q)
		require.ErrorIs(t, groth16.Verify(vk, &q, f.inputs), groth16.ErrInvalidProof, name)
	}

	// A key for another circuit with the same input count.
	other := newFixture(t, 10, false, 3)
	require.ErrorIs(t, groth16.Verify(&other.pk.VK, p, f.inputs), groth16.ErrInvalidProof)

	// Flipped bits in the encoding either fail to decode or fail to verify.
	enc := p.Bytes()
	for bit := 0; bit < groth16.ProofSize*8; bit += 37 {
		b := enc
		b[bit/8] ^= 1 << (bit % 8)
		q, err := groth16.ReadProof(b[:])
		if err != nil {
			var pe *groth16.ProofError
			require.True(t, errors.As(err, &pe), "bit %d: %v", bit, err)
			continue
		}
		require.ErrorIs(t, groth16.Verify(vk, q, f.inputs), groth16.ErrInvalidProof, "bit %d", bit)
	}
}

func TestUnsatisfiedWitnessIsRefused(t *testing.T) {
	f := newFixture(t, 10, false, 4)
	// Corrupt one bit of the witness: the first constraint using it fails.
	aux := f.sys.Aux()
	for i := range aux {
		if aux[i].IsOne() {
			aux[i].SetZero()
			break
		}
	}
	_, err := groth16.Prove(f.pk, f.sys)
	var ue *r1cs.UnsatisfiedError
	require.True(t, errors.As(err, &ue), "got %v", err)
	require.Contains(t, err.Error(), fmt.Sprintf("constraint %d", ue.Index))
}

func TestKeyShapeIsChecked(t *testing.T) {
	f := newFixture(t, 10, false, 5)
	other := newFixture(t, 11, false, 5)
	_, err := groth16.Prove(other.pk, f.sys)
	var se *groth16.ShapeError
	require.True(t, errors.As(err, &se), "got %v", err)
}

func TestProofEncoding(t *testing.T) {
	f := newFixture(t, 10, true, 6)
	var ps []groth16.Proof
	var ins [][]fr.Element
	for range 3 {
		p, err := groth16.Prove(f.pk, f.sys)
		require.NoError(t, err)
		ps = append(ps, *p)
		ins = append(ins, f.inputs)
	}
	enc := groth16.MarshalProofs(ps)
	require.Len(t, enc, 3*groth16.ProofSize)
	back, err := groth16.ReadProofs(enc)
	require.NoError(t, err)
	require.Equal(t, ps, back)
	require.True(t, bytes.Equal(enc, groth16.MarshalProofs(back)))
	require.NoError(t, groth16.VerifyBatch(&f.pk.VK, back, ins))

	// Batch with one wrong statement names it.
	bad := make([][]fr.Element, 3)
	copy(bad, ins)
	bad[1] = append([]fr.Element(nil), ins[1]...)
	bad[1][0].SetUint64(1)
	err = groth16.VerifyBatch(&f.pk.VK, back, bad)
	var ve *groth16.VerifyError
	require.True(t, errors.As(err, &ve), "got %v", err)
	require.Equal(t, 1, ve.Index)
	require.ErrorIs(t, err, groth16.ErrInvalidProof)

	// Lengths.
	_, err = groth16.ReadProofs(enc[:len(enc)-1])
	require.Error(t, err)
	_, err = groth16.ReadProofs(nil)
	require.Error(t, err)
	_, err = groth16.ReadProof(enc[:groth16.ProofSize+1])
	require.Error(t, err)

	// Infinity, uncompressed flag, and garbage in the second proof's C.
	for name, mut := range map[string]func(b []byte){
		"infinity":     func(b []byte) { clear(b[:48]); b[0] = 0xc0 },
		"uncompressed": func(b []byte) { b[0] &^= 0x80 },
		"not on curve": func(b []byte) { b[47] ^= 0x01; b[20] ^= 0x55 },
	} {
		b := bytes.Clone(enc)
		off := groth16.ProofSize + 144
		mut(b[off:])
		_, err := groth16.ReadProofs(b)
		var pe *groth16.ProofError
		require.True(t, errors.As(err, &pe), "%s: %v", name, err)
		require.Equal(t, 1, pe.Index, name)
		require.Equal(t, "C", pe.Field, name)
		require.Equal(t, off, pe.Offset, name)
	}
}

func TestKeyWithoutBases(t *testing.T) {
	pk := &groth16.ProvingKey{H: make([]bls.G1Affine, 7), L: make([]bls.G1Affine, 3), A: make([]bls.G1Affine, 2),
		BG1: make([]bls.G1Affine, 1), BG2: make([]bls.G2Affine, 1)}
	pk.VK.IC = make([]bls.G1Affine, 2)
	if !pk.HostBases() || pk.Sizes() != (groth16.Sizes{7, 3, 2, 1, 1}) {
		t.Fatalf("full key: HostBases %v, Sizes %+v", pk.HostBases(), pk.Sizes())
	}
	k := groth16.KeyWithoutBases(pk.VK, pk.Sizes())
	if k.HostBases() || k.Sizes() != pk.Sizes() || k.DomainSize() != 8 || k.H != nil {
		t.Fatalf("key without bases: HostBases %v, Sizes %+v, DomainSize %d", k.HostBases(), k.Sizes(), k.DomainSize())
	}
	if _, err := k.WriteTo(io.Discard); !errors.Is(err, groth16.ErrNoHostBases) {
		t.Fatalf("WriteTo: %v, want ErrNoHostBases", err)
	}
}
