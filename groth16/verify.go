package groth16

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ErrInvalidProof is returned (wrapped) when a proof does not verify.
var ErrInvalidProof = errors.New("groth16: invalid proof")

// VerifyError names the proof of a batch that failed.
type VerifyError struct {
	Index int // position in the batch
	Err   error
}

func (e *VerifyError) Error() string { return fmt.Sprintf("groth16: proof %d: %v", e.Index, e.Err) }
func (e *VerifyError) Unwrap() error { return e.Err }

// inputsPoint returns IC[0] + Σ IC[i+1]·inputs[i].
func (vk *VerifyingKey) inputsPoint(inputs []fr.Element) (bls.G1Jac, error) {
	var acc bls.G1Jac
	if len(vk.IC) == 0 {
		return acc, errors.New("groth16: verifying key has no IC")
	}
	if len(inputs) != len(vk.IC)-1 {
		return acc, fmt.Errorf("groth16: %d public inputs, key expects %d", len(inputs), len(vk.IC)-1)
	}
	acc.FromAffine(&vk.IC[0])
	if len(inputs) > 0 {
		var s bls.G1Jac
		if _, err := s.MultiExp(vk.IC[1:], inputs, ecc.MultiExpConfig{NbTasks: 1}); err != nil {
			return acc, err
		}
		acc.AddAssign(&s)
	}
	return acc, nil
}

func checkProofPoints(p *Proof) error {
	switch {
	case p.A.IsInfinity() || p.B.IsInfinity() || p.C.IsInfinity():
		return ErrInfinity
	case !p.A.IsInSubGroup() || !p.C.IsInSubGroup() || !p.B.IsInSubGroup():
		return errors.New("proof point not in the prime-order subgroup")
	}
	return nil
}

// Verify checks e(A, B) = e(α, β)·e(Σ IC_i·x_i, γ)·e(C, δ), where x_0 = 1 and
// publicInputs are x_1… (ONE excluded). It returns nil for a valid proof, an
// error wrapping ErrInvalidProof for an invalid one, and another error when
// the arguments do not fit the key.
func Verify(vk *VerifyingKey, p *Proof, publicInputs []fr.Element) error {
	acc, err := vk.inputsPoint(publicInputs)
	if err != nil {
		return err
	}
	if err := checkProofPoints(p); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidProof, err)
	}
	var accAff, negAlpha, negC bls.G1Affine
	accAff.FromJacobian(&acc)
	accAff.Neg(&accAff)
	negAlpha.Neg(&vk.AlphaG1)
	negC.Neg(&p.C)
	ok, err := bls.PairingCheck(
		[]bls.G1Affine{p.A, negAlpha, accAff, negC},
		[]bls.G2Affine{p.B, vk.BetaG2, vk.GammaG2, vk.DeltaG2})
	if err != nil {
		return err
	}
	if !ok {
		return ErrInvalidProof
	}
	return nil
}

// VerifyBatch verifies many proofs under one key with a random linear
// combination, as bellperson's verify_proofs_batch does: with 128-bit random
// z_i it checks Π e(z_i·A_i, B_i) = e(Σz_i·α, β)·e(Σ z_i·acc_i, γ)·e(Σ z_i·C_i, δ),
// one Miller loop of n+3 pairs. When the batch fails it verifies the proofs
// one by one and returns a *VerifyError naming the first invalid one.
func VerifyBatch(vk *VerifyingKey, proofs []Proof, publicInputs [][]fr.Element) error {
	if len(proofs) != len(publicInputs) {
		return fmt.Errorf("groth16: %d proofs but %d public-input vectors", len(proofs), len(publicInputs))
	}
	if len(proofs) == 0 {
		return nil
	}
	if len(proofs) == 1 {
		if err := Verify(vk, &proofs[0], publicInputs[0]); err != nil {
			return &VerifyError{Index: 0, Err: err}
		}
		return nil
	}
	n := len(proofs)
	g1 := make([]bls.G1Affine, 0, n+3)
	g2 := make([]bls.G2Affine, 0, n+3)
	var sumZ fr.Element
	var sumAcc, sumC bls.G1Jac
	zb := make([]byte, 16)
	for i := range proofs {
		acc, err := vk.inputsPoint(publicInputs[i])
		if err != nil {
			return &VerifyError{Index: i, Err: err}
		}
		if err := checkProofPoints(&proofs[i]); err != nil {
			return &VerifyError{Index: i, Err: fmt.Errorf("%w: %v", ErrInvalidProof, err)}
		}
		if _, err := rand.Read(zb); err != nil {
			return err
		}
		z := new(big.Int).SetBytes(zb)
		var zf fr.Element
		zf.SetBigInt(z)
		sumZ.Add(&sumZ, &zf)

		var t bls.G1Jac
		t.ScalarMultiplication(&acc, z)
		sumAcc.AddAssign(&t)
		var c bls.G1Jac
		c.FromAffine(&proofs[i].C)
		t.ScalarMultiplication(&c, z)
		sumC.AddAssign(&t)

		var za bls.G1Affine
		za.ScalarMultiplication(&proofs[i].A, z)
		g1 = append(g1, za)
		g2 = append(g2, proofs[i].B)
	}
	var alpha bls.G1Jac
	alpha.FromAffine(&vk.AlphaG1)
	var zBig big.Int
	alpha.ScalarMultiplication(&alpha, sumZ.BigInt(&zBig))
	var negAlpha, negAcc, negC bls.G1Affine
	negAlpha.FromJacobian(&alpha)
	negAlpha.Neg(&negAlpha)
	negAcc.FromJacobian(&sumAcc)
	negAcc.Neg(&negAcc)
	negC.FromJacobian(&sumC)
	negC.Neg(&negC)
	g1 = append(g1, negAlpha, negAcc, negC)
	g2 = append(g2, vk.BetaG2, vk.GammaG2, vk.DeltaG2)
	ok, err := bls.PairingCheck(g1, g2)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	for i := range proofs {
		if err := Verify(vk, &proofs[i], publicInputs[i]); err != nil {
			return &VerifyError{Index: i, Err: err}
		}
	}
	// The batch failed but every proof verifies alone: only possible with
	// negligible probability; report it rather than accept.
	return fmt.Errorf("%w: batch check failed", ErrInvalidProof)
}
