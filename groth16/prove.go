package groth16

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/ntt"
	"github.com/sealc2/c2/r1cs"
)

// Sums are the query sums one proof needs, before randomization:
// H = Σ h_i·H_i, L = Σ w_i·L_i over aux, A = Σ w_i·A_i, BG1/BG2 = Σ w_i·B_i
// over the dense variables.
type Sums struct {
	H, L, A, BG1 bls.G1Jac
	BG2          bls.G2Jac
}

// Assemble returns the proof for the given sums and randomizers:
//
//	A = α + ΣA + r·δ
//	B = β + ΣB + s·δ (in G2)
//	C = s·A + r·(β + ΣB + s·δ) − r·s·δ + H + L (in G1)
func Assemble(vk *VerifyingKey, sums *Sums, r, s fr.Element) Proof {
	var rb, sb, rsb big.Int
	var rs fr.Element
	rs.Mul(&r, &s)
	r.BigInt(&rb)
	s.BigInt(&sb)
	rs.BigInt(&rsb)

	var a, b1, c, t bls.G1Jac
	var b2, t2 bls.G2Jac
	a.FromAffine(&vk.DeltaG1)
	a.ScalarMultiplication(&a, &rb)
	t.FromAffine(&vk.AlphaG1)
	a.AddAssign(&t)
	a.AddAssign(&sums.A)

	b1.FromAffine(&vk.DeltaG1)
	b1.ScalarMultiplication(&b1, &sb)
	t.FromAffine(&vk.BetaG1)
	b1.AddAssign(&t)
	b1.AddAssign(&sums.BG1)

	b2.FromAffine(&vk.DeltaG2)
	b2.ScalarMultiplication(&b2, &sb)
	t2.FromAffine(&vk.BetaG2)
	b2.AddAssign(&t2)
	b2.AddAssign(&sums.BG2)

	c.ScalarMultiplication(&a, &sb)
	t.ScalarMultiplication(&b1, &rb)
	c.AddAssign(&t)
	t.FromAffine(&vk.DeltaG1)
	t.ScalarMultiplication(&t, &rsb)
	c.SubAssign(&t)
	c.AddAssign(&sums.H)
	c.AddAssign(&sums.L)

	var p Proof
	p.A.FromJacobian(&a)
	p.B.FromJacobian(&b2)
	p.C.FromJacobian(&c)
	return p
}

// ShapeError reports a proving key that does not fit a constraint system.
type ShapeError struct {
	Query     string // "IC", "H", "L", "A", "B_G1", "B_G2"
	Got, Want int
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("groth16: proving key's %s query has %d points, the circuit needs %d", e.Query, e.Got, e.Want)
}

// CheckShape verifies that pk's query lengths fit the finalized system sys.
func CheckShape(pk *ProvingKey, sys *r1cs.System) error {
	n, err := ntt.DomainSize(sys.NumConstraints())
	if err != nil {
		return err
	}
	nb := sys.BInputDensity().Count() + sys.BAuxDensity().Count()
	sz := pk.Sizes()
	for _, c := range []ShapeError{
		{"IC", len(pk.VK.IC), sys.NumInputs()},
		{"H", sz.H, n - 1},
		{"L", sz.L, sys.NumAux()},
		{"A", sz.A, sys.NumInputs() + sys.ADensity().Count()},
		{"B_G1", sz.BG1, nb},
		{"B_G2", sz.BG2, nb},
	} {
		if c.Got != c.Want {
			return &c
		}
	}
	return nil
}

// Timings records where a CPU proof spent its time.
type Timings struct {
	Evaluate, H, Split, MSM, Assemble time.Duration
}

// Prove computes a proof for the finalized, satisfied system sys with fresh
// randomizers from crypto/rand.
func Prove(pk *ProvingKey, sys *r1cs.System) (*Proof, error) {
	var r, s fr.Element
	if err := randomNonZero(rand.Reader, &r); err != nil {
		return nil, err
	}
	if err := randomNonZero(rand.Reader, &s); err != nil {
		return nil, err
	}
	p, _, err := ProveWith(pk, sys, r, s)
	return p, err
}

// ProveWith is the CPU reference prover: given r and s the proof is
// deterministic. It refuses a system that is not satisfied, naming the first
// failing constraint (*r1cs.UnsatisfiedError), and a key of the wrong shape
// (*ShapeError).
func ProveWith(pk *ProvingKey, sys *r1cs.System, r, s fr.Element) (*Proof, Timings, error) {
	var tm Timings
	if !sys.Finalized() {
		return nil, tm, errors.New("groth16: Prove needs a finalized system")
	}
	if err := CheckShape(pk, sys); err != nil {
		return nil, tm, err
	}
	if !pk.HostBases() {
		return nil, tm, ErrNoHostBases
	}
	n := pk.DomainSize()
	dom, err := ntt.NewDomain(n)
	if err != nil {
		return nil, tm, err
	}

	t0 := time.Now()
	a := make([]fr.Element, n)
	b := make([]fr.Element, n)
	c := make([]fr.Element, n)
	if err := sys.EvaluateChecked(a, b, c, runtime.GOMAXPROCS(0)); err != nil {
		return nil, tm, err
	}
	tm.Evaluate = time.Since(t0)

	t0 = time.Now()
	if err := dom.ComputeH(a, b, c); err != nil {
		return nil, tm, err
	}
	h := a[:n-1]
	b, c = nil, nil
	tm.H = time.Since(t0)

	t0 = time.Now()
	// L classifies every aux value; A and B select theirs from it.
	spL, err := msm.NewSplit(msm.Segment{Scalars: sys.Aux()})
	if err != nil {
		return nil, tm, err
	}
	var spA, spB *msm.Split
	var g errgroup.Group
	g.Go(func() (err error) {
		spA, err = msm.NewSplitSelect(context.Background(), []msm.Segment{{Scalars: sys.Inputs()}}, spL, sys.ADensity())
		return
	})
	g.Go(func() (err error) {
		spB, err = msm.NewSplitSelect(context.Background(),
			[]msm.Segment{{Scalars: sys.Inputs(), Density: sys.BInputDensity()}}, spL, sys.BAuxDensity())
		return
	})
	if err := g.Wait(); err != nil {
		return nil, tm, err
	}
	tm.Split = time.Since(t0)

	t0 = time.Now()
	var sums Sums
	g.Go(func() (err error) { sums.H, err = msm.DenseG1(pk.H, h, 0); return })
	g.Go(func() (err error) { sums.L, err = msm.G1(pk.L, spL, 0); return })
	g.Go(func() (err error) { sums.A, err = msm.G1(pk.A, spA, 0); return })
	g.Go(func() (err error) { sums.BG1, err = msm.G1(pk.BG1, spB, 0); return })
	g.Go(func() (err error) { sums.BG2, err = msm.G2(pk.BG2, spB, 0); return })
	if err := g.Wait(); err != nil {
		return nil, tm, err
	}
	tm.MSM = time.Since(t0)

	t0 = time.Now()
	p := Assemble(&pk.VK, &sums, r, s)
	tm.Assemble = time.Since(t0)
	return &p, tm, nil
}
