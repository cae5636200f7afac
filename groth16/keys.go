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
	"errors"

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
//
// A key made by [KeyWithoutBases] has the verifying key and the query sizes
// but no bases in host memory: its bases live elsewhere (in a device's
// memory, or in a file not read into memory), and code that needs them
// checks [ProvingKey.HostBases] first.
type ProvingKey struct {
	VK  VerifyingKey
	H   []bls.G1Affine
	L   []bls.G1Affine
	A   []bls.G1Affine
	BG1 []bls.G1Affine
	BG2 []bls.G2Affine

	sizes *Sizes // set by KeyWithoutBases
}

// Sizes counts the bases of each query of a proving key.
type Sizes struct {
	H, L, A, BG1, BG2 int
}

// Sizes returns the number of bases in each query.
func (pk *ProvingKey) Sizes() Sizes {
	if pk.sizes != nil {
		return *pk.sizes
	}
	return Sizes{H: len(pk.H), L: len(pk.L), A: len(pk.A), BG1: len(pk.BG1), BG2: len(pk.BG2)}
}

// HostBases reports whether the key's bases are in host memory (every key
// except those made by [KeyWithoutBases]).
func (pk *ProvingKey) HostBases() bool { return pk.sizes == nil }

// KeyWithoutBases returns a proving key with vk and the given query sizes
// and no bases: a handle for a key whose bases live on a device or in a
// file. Its sections are nil; [ProvingKey.Sizes] and
// [ProvingKey.DomainSize] report s.
func KeyWithoutBases(vk VerifyingKey, s Sizes) *ProvingKey {
	return &ProvingKey{VK: vk, sizes: &s}
}

// ErrNoHostBases is returned by operations that need a key's bases in host
// memory when given a key made by [KeyWithoutBases].
var ErrNoHostBases = errors.New("groth16: the proving key's bases are not in host memory")

// NumInputs returns the number of public inputs the key was made for,
// including ONE.
func (vk *VerifyingKey) NumInputs() int { return len(vk.IC) }

// DomainSize returns the evaluation-domain size n the key was made for
// (the size of H plus one).
func (pk *ProvingKey) DomainSize() int { return pk.Sizes().H + 1 }
