// Package groth16 implements Groth16 over BLS12-381 compatible with
// bellperson: its parameter (.params) and verifying-key (.vk) files, its
// 192-byte proofs, verification, development key generation and a CPU
// reference prover.
//
// Notation follows the Groth16 paper and bellperson: α, β, γ, δ are the
// trapdoor's scalars; a query point at index i is [A_i(τ)]₁ and so on.
// All points are gnark-crypto affine points (Montgomery form in memory,
// (0,0) for infinity).
package groth16

import (
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// VerifyingKey is bellperson's VerifyingKey.
//
// IC[i] = [(β·A_i(τ) + α·B_i(τ) + C_i(τ))/γ]₁ for every input i, ONE included.
type VerifyingKey struct {
	AlphaG1 bls.G1Affine
	BetaG1  bls.G1Affine
	BetaG2  bls.G2Affine
	GammaG2 bls.G2Affine
	DeltaG1 bls.G1Affine
	DeltaG2 bls.G2Affine
	IC      []bls.G1Affine
}

// ProvingKey is bellperson's Parameters: the verifying key and five queries.
//
//   - H[i] = [τ^i·(τⁿ−1)/δ]₁ for i < n−1, n the domain size (natural order).
//   - L[i] = [(β·A_j(τ) + α·B_j(τ) + C_j(τ))/δ]₁ for every aux variable j.
//   - A holds [A_i(τ)]₁ for every input, then for each aux variable dense in A.
//   - BG1 and BG2 hold [B_i(τ)]₁ and [B_i(τ)]₂ for each input dense in B, then
//     each aux variable dense in B.
//
// Points at infinity are left out of A, BG1 and BG2, which is why provers
// select assignment entries by density.
type ProvingKey struct {
	VK  VerifyingKey
	H   []bls.G1Affine
	L   []bls.G1Affine
	A   []bls.G1Affine
	BG1 []bls.G1Affine
	BG2 []bls.G2Affine
}

// NumInputs returns the number of public inputs the key was made for,
// including ONE.
func (vk *VerifyingKey) NumInputs() int { return len(vk.IC) }

// DomainSize returns the evaluation-domain size n the key was made for
// (len(H)+1).
func (pk *ProvingKey) DomainSize() int { return len(pk.H) + 1 }
