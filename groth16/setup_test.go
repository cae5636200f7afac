package groth16_test

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/ntt"
	"github.com/sealc2/c2/r1cs"
)

// naiveScalars evaluates the setup's scalars the straightforward way, one
// element at a time on one goroutine: every Lagrange polynomial at τ by its
// own inversion, and every matrix term added into its variable.
func naiveScalars(t *testing.T, sys *r1cs.System, tw groth16.ToxicWaste) *groth16.SetupScalars {
	t.Helper()
	n, err := ntt.DomainSize(sys.NumConstraints())
	require.NoError(t, err)
	dom, err := ntt.NewDomain(n)
	require.NoError(t, err)
	omega := dom.Generator()
	var zt, one, nn fr.Element
	one.SetOne()
	zt.Exp(tw.Tau, big.NewInt(int64(n)))
	zt.Sub(&zt, &one)
	nn.SetUint64(uint64(n))
	lag := make([]fr.Element, n)
	var w fr.Element
	w.SetOne()
	for j := range lag {
		var d fr.Element
		d.Sub(&tw.Tau, &w).Mul(&d, &nn)
		d.Inverse(&d)
		lag[j].Mul(&zt, &w).Mul(&lag[j], &d)
		w.Mul(&w, &omega)
	}
	ni, na := sys.NumInputs(), sys.NumAux()
	var ev [3][]fr.Element
	for k, m := range []*r1cs.Matrix{sys.A(), sys.B(), sys.C()} {
		ev[k] = make([]fr.Element, ni+na)
		for j := 0; j+1 < len(m.RowStart); j++ {
			for x := m.RowStart[j]; x < m.RowStart[j+1]; x++ {
				col := m.Vars[x].Index()
				if m.Vars[x].IsAux() {
					col += ni
				}
				var p fr.Element
				p.Mul(&sys.Coeffs()[m.CoeffIdx[x]], &lag[j])
				ev[k][col].Add(&ev[k][col], &p)
			}
		}
	}
	s := &groth16.SetupScalars{Alpha: tw.Alpha, Beta: tw.Beta, Gamma: tw.Gamma, Delta: tw.Delta}
	for i := 0; i < ni+na; i++ {
		var x, y fr.Element
		x.Mul(&tw.Beta, &ev[0][i])
		y.Mul(&tw.Alpha, &ev[1][i])
		x.Add(&x, &y).Add(&x, &ev[2][i])
		if i < ni {
			x.Div(&x, &tw.Gamma)
			s.IC = append(s.IC, x)
		} else {
			x.Div(&x, &tw.Delta)
			s.L = append(s.L, x)
		}
		if !ev[0][i].IsZero() {
			s.A = append(s.A, ev[0][i])
		}
		if !ev[1][i].IsZero() {
			s.BG = append(s.BG, ev[1][i])
		}
	}
	for i := 0; i < n-1; i++ {
		var p fr.Element
		p.Exp(tw.Tau, big.NewInt(int64(i)))
		p.Mul(&p, &zt).Div(&p, &tw.Delta)
		s.H = append(s.H, p)
	}
	return s
}

func synthSystem(t testing.TB, logSize int, inB bool, seed uint64) *r1cs.System {
	t.Helper()
	sys, _, err := synth.System(synth.Shape{LogSize: logSize, InputsB: inB, Seed: seed})
	require.NoError(t, err)
	return sys
}

// The parallel scalar stage equals the straightforward evaluation, with
// more goroutines than this machine has cores (so that the variable ranges,
// the Lagrange blocks and the compaction are split), and with one.
func TestSetupScalarsMatchNaive(t *testing.T) {
	for _, procs := range []int{1, 7} {
		for _, k := range []int{8, 12} {
			t.Run(fmt.Sprintf("2^%d/procs=%d", k, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				sys := synthSystem(t, k, true, uint64(k))
				tw, err := groth16.NewToxicWaste(newRNG(byte(k)))
				require.NoError(t, err)
				got, err := groth16.ComputeSetupScalars(sys, tw)
				require.NoError(t, err)
				want := naiveScalars(t, sys, tw)
				require.Equal(t, want, got)
				require.Equal(t, groth16.Sizes{H: 1<<k - 1, L: sys.NumAux(), A: len(want.A), BG1: len(want.BG),
					BG2: len(want.BG)}, scalarSizes(got))
			})
		}
	}
}

// scalarSizes returns the number of points of each query of the key s
// describes.
func scalarSizes(s *groth16.SetupScalars) groth16.Sizes {
	return groth16.Sizes{H: len(s.H), L: len(s.L), A: len(s.A), BG1: len(s.BG), BG2: len(s.BG)}
}

// The streamed scalar stage hands every query over in order, chunk after
// chunk at contiguous offsets, H first, in slabs of any size (the inputs
// with the first), and collected it is the straightforward evaluation;
// emit's error ends it.
func TestStreamSetupScalars(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	sys := synthSystem(t, 10, true, 4)
	tw, err := groth16.NewToxicWaste(newRNG(9))
	require.NoError(t, err)
	want := naiveScalars(t, sys, tw)
	for _, slab := range []int{1, 7, 100, sys.NumAux() - 1, 1 << 20} {
		t.Run(fmt.Sprint(slab), func(t *testing.T) {
			var sizes groth16.Sizes
			got := map[groth16.ParamsSection][]fr.Element{}
			var order []groth16.ParamsSection
			s, err := groth16.StreamSetupScalars(sys, tw, slab, func(q groth16.ParamsSection, offset int, v []fr.Element) error {
				require.Equal(t, len(got[q]), offset, "query %d: offsets follow each other", q)
				require.NotEmpty(t, v)
				require.LessOrEqual(t, len(v), max(slab, sys.NumInputs()))
				got[q] = append(got[q], v...)
				if len(order) == 0 || order[len(order)-1] != q {
					order = append(order, q)
				}
				return nil
			}, &sizes)
			require.NoError(t, err)
			require.Equal(t, scalarSizes(want), sizes)
			require.Equal(t, want.H, got[groth16.ParamsH])
			require.Equal(t, want.A, got[groth16.ParamsA])
			require.Equal(t, want.BG, got[groth16.ParamsBG1])
			require.Equal(t, want.L, got[groth16.ParamsL])
			require.Equal(t, want.IC, s.IC)
			require.Equal(t, groth16.ParamsH, order[0])
			for _, q := range order[1:] {
				require.NotEqual(t, groth16.ParamsH, q, "H is handed over first, whole")
			}
		})
	}
	boom := errors.New("boom")
	calls := 0
	_, err = groth16.StreamSetupScalars(sys, tw, 64, func(q groth16.ParamsSection, _ int, _ []fr.Element) error {
		if calls++; q == groth16.ParamsL {
			return boom
		}
		return nil
	}, nil)
	require.ErrorIs(t, err, boom)
	_, err = groth16.StreamSetupScalars(sys, tw, 0, func(groth16.ParamsSection, int, []fr.Element) error { return nil }, nil)
	require.Error(t, err, "a slab of no variables")
}

// Setup is the scalar stage followed by the point stage: the key's points
// are the generators times the scalars (checked on samples with gnark-crypto's
// own scalar multiplication), and Setup(rng) equals SetupWithWaste with the
// waste drawn from the same bytes.
func TestSetupIsScalarsTimesGenerators(t *testing.T) {
	sys := synthSystem(t, 10, true, 5)
	pk, err := groth16.Setup(sys, newRNG(9))
	require.NoError(t, err)
	tw, err := groth16.NewToxicWaste(newRNG(9))
	require.NoError(t, err)
	pk2, err := groth16.SetupWithWaste(sys, tw)
	require.NoError(t, err)
	require.Equal(t, pk, pk2)
	s, err := groth16.ComputeSetupScalars(sys, tw)
	require.NoError(t, err)
	require.Equal(t, s.VerifyingKey(), pk.VK)

	g1 := func(k fr.Element) bls.G1Affine {
		var p bls.G1Affine
		var b big.Int
		p.ScalarMultiplicationBase(k.BigInt(&b))
		return p
	}
	g2 := func(k fr.Element) bls.G2Affine {
		var p bls.G2Affine
		var b big.Int
		p.ScalarMultiplicationBase(k.BigInt(&b))
		return p
	}
	for _, q := range []struct {
		pts []bls.G1Affine
		sc  []fr.Element
	}{{pk.H, s.H}, {pk.L, s.L}, {pk.A, s.A}, {pk.BG1, s.BG}, {pk.VK.IC, s.IC}} {
		require.Equal(t, len(q.sc), len(q.pts))
		for i := 0; i < len(q.sc); i += 1 + len(q.sc)/17 {
			require.Equal(t, g1(q.sc[i]), q.pts[i], "point %d", i)
		}
	}
	require.Equal(t, len(s.BG), len(pk.BG2))
	for i := 0; i < len(s.BG); i += 1 + len(s.BG)/11 {
		require.Equal(t, g2(s.BG[i]), pk.BG2[i], "B_G2 point %d", i)
	}
	require.Equal(t, g1(tw.Alpha), pk.VK.AlphaG1)
	require.Equal(t, g2(tw.Delta), pk.VK.DeltaG2)
}

// A τ that is a root of unity of the domain is refused.
func TestSetupRefusesRootOfUnity(t *testing.T) {
	sys := synthSystem(t, 8, false, 1)
	tw, err := groth16.NewToxicWaste(newRNG(1))
	require.NoError(t, err)
	tw.Tau.SetOne()
	_, err = groth16.ComputeSetupScalars(sys, tw)
	require.ErrorContains(t, err, "degenerate")
}

// BenchmarkSetupScalars times the scalar stage alone (C2_SETUP_BENCH_LOG
// picks the size, default 2^18).
func BenchmarkSetupScalars(b *testing.B) {
	k := 18
	if v := os.Getenv("C2_SETUP_BENCH_LOG"); v != "" {
		fmt.Sscan(v, &k)
	}
	sys := synthSystem(b, k, true, 1)
	tw, err := groth16.NewToxicWaste(newRNG(1))
	require.NoError(b, err)
	b.ResetTimer()
	for range b.N {
		if _, err := groth16.ComputeSetupScalars(sys, tw); err != nil {
			b.Fatal(err)
		}
	}
}
