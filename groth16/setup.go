package groth16

import (
	"errors"
	"fmt"
	"io"
	"math/big"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/ntt"
	"github.com/sealc2/c2/r1cs"
)

// Setup generates development parameters for the finalized system sys, in
// the layout bellperson's generate_random_parameters produces: the same
// domain, the same queries in the same order, with points at infinity left
// out of A, BG1 and BG2.
//
// INSECURE: whoever knows rng's output knows the trapdoor (τ, α, β, γ, δ)
// and can forge proofs for any statement. Development parameters are for
// tests, benchmarks and demos only; a chain accepts proofs only under the
// parameters of a trusted-setup ceremony.
func Setup(sys *r1cs.System, rng io.Reader) (*ProvingKey, error) {
	if !sys.Finalized() {
		return nil, errors.New("groth16: Setup needs a finalized system")
	}
	var tw [5]fr.Element // τ, α, β, γ, δ
	for i := range tw {
		if err := randomNonZero(rng, &tw[i]); err != nil {
			return nil, fmt.Errorf("groth16: setup randomness: %w", err)
		}
	}
	return setupWith(sys, tw[0], tw[1], tw[2], tw[3], tw[4])
}

func randomNonZero(rng io.Reader, e *fr.Element) error {
	var b [48]byte // 384 bits reduced mod r: bias below 2^-128
	for {
		if _, err := io.ReadFull(rng, b[:]); err != nil {
			return err
		}
		e.SetBytes(b[:])
		if !e.IsZero() {
			return nil
		}
	}
}

func setupWith(sys *r1cs.System, tau, alpha, beta, gamma, delta fr.Element) (*ProvingKey, error) {
	n, err := ntt.DomainSize(sys.NumConstraints())
	if err != nil {
		return nil, err
	}
	dom, err := ntt.NewDomain(n)
	if err != nil {
		return nil, err
	}
	omega := dom.Generator()

	// Lagrange basis at τ: L_j(τ) = (τⁿ−1)/n · ωʲ/(τ−ωʲ).
	var zt, one, nInv fr.Element
	one.SetOne()
	zt.Exp(tau, new(big.Int).SetUint64(uint64(n)))
	zt.Sub(&zt, &one)
	if zt.IsZero() {
		return nil, errors.New("groth16: degenerate τ (a root of unity)")
	}
	nInv.SetUint64(uint64(n))
	nInv.Inverse(&nInv)
	lag := make([]fr.Element, n)
	wj := make([]fr.Element, n)
	wj[0].SetOne()
	for j := 1; j < n; j++ {
		wj[j].Mul(&wj[j-1], &omega)
	}
	for j := range lag {
		lag[j].Sub(&tau, &wj[j])
	}
	lag = fr.BatchInvert(lag)
	var scale fr.Element
	scale.Mul(&zt, &nInv)
	for j := range lag {
		lag[j].Mul(&lag[j], &wj[j])
		lag[j].Mul(&lag[j], &scale)
	}

	// Evaluate every variable's A, B, C polynomial at τ.
	ni, na := sys.NumInputs(), sys.NumAux()
	at := make([]fr.Element, ni+na)
	bt := make([]fr.Element, ni+na)
	ct := make([]fr.Element, ni+na)
	coeffs := sys.Coeffs()
	for k, m := range []*r1cs.Matrix{sys.A(), sys.B(), sys.C()} {
		dst := [][]fr.Element{at, bt, ct}[k]
		for j := 0; j+1 < len(m.RowStart); j++ {
			for t := m.RowStart[j]; t < m.RowStart[j+1]; t++ {
				col := m.Vars[t].Index()
				if m.Vars[t].IsAux() {
					col += ni
				}
				var x fr.Element
				x.Mul(&coeffs[m.CoeffIdx[t]], &lag[j])
				dst[col].Add(&dst[col], &x)
			}
		}
	}

	// IC and L: (β·A_i + α·B_i + C_i)/γ for inputs, /δ for aux.
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&gamma)
	deltaInv.Inverse(&delta)
	ic := make([]fr.Element, ni)
	l := make([]fr.Element, na)
	for i := 0; i < ni+na; i++ {
		var x, y fr.Element
		x.Mul(&beta, &at[i])
		y.Mul(&alpha, &bt[i])
		x.Add(&x, &y)
		x.Add(&x, &ct[i])
		if i < ni {
			ic[i].Mul(&x, &gammaInv)
		} else {
			l[i-ni].Mul(&x, &deltaInv)
		}
	}

	// H: τ^i·Z(τ)/δ for i < n−1.
	h := make([]fr.Element, n-1)
	var p fr.Element
	p.Mul(&zt, &deltaInv)
	for i := range h {
		h[i] = p
		p.Mul(&p, &tau)
	}

	// A and B queries without the zero evaluations (points at infinity).
	// bellperson filters by the point; the prover selects by density. The
	// two agree unless τ hits a root of some variable's polynomial, which we
	// detect and refuse.
	aq := nonZero(at)
	bq := nonZero(bt)
	if want := ni + sys.ADensity().Count(); len(aq) != want {
		return nil, fmt.Errorf("groth16: degenerate τ: A query has %d points, density says %d", len(aq), want)
	}
	if want := sys.BInputDensity().Count() + sys.BAuxDensity().Count(); len(bq) != want {
		return nil, fmt.Errorf("groth16: degenerate τ: B query has %d points, density says %d", len(bq), want)
	}

	_, _, g1, g2 := bls.Generators()
	// A 16-bit G1 table (1 M points to build) pays off from about a million
	// G1 points; small keys use 8-bit tables.
	c1 := uint(8)
	if len(h)+len(l)+2*len(aq)+len(bq) > 1<<20 {
		c1 = 16
	}
	t1, t2 := msm.NewFixedBaseG1(&g1, c1), msm.NewFixedBaseG2(&g2, 8)
	pk := &ProvingKey{
		H:   t1.Mul(h),
		L:   t1.Mul(l),
		A:   t1.Mul(aq),
		BG1: t1.Mul(bq),
		BG2: t2.Mul(bq),
	}
	vk := &pk.VK
	g1s := t1.Mul([]fr.Element{alpha, beta, delta})
	g2s := t2.Mul([]fr.Element{beta, gamma, delta})
	vk.AlphaG1, vk.BetaG1, vk.DeltaG1 = g1s[0], g1s[1], g1s[2]
	vk.BetaG2, vk.GammaG2, vk.DeltaG2 = g2s[0], g2s[1], g2s[2]
	vk.IC = t1.Mul(ic)
	return pk, nil
}

func nonZero(v []fr.Element) []fr.Element {
	out := make([]fr.Element, 0, len(v))
	for i := range v {
		if !v[i].IsZero() {
			out = append(out, v[i])
		}
	}
	return out
}
