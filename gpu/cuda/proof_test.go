package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/r1cs"
)

// gpuProve is groth16.ProveWith with H, the batch additions and the MSMs on
// the device.
func gpuProve(t *testing.T, d *Device, pk *groth16.ProvingKey, sys *r1cs.System, r, s fr.Element) groth16.Proof {
	n := pk.DomainSize()
	a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
	require.NoError(t, sys.Evaluate(a, b, c))
	require.NoError(t, d.ComputeH(a, b, c))
	h := a[:n-1]
	spL, err := msm.NewSplit(msm.Segment{Scalars: sys.Aux()})
	require.NoError(t, err)
	spA, err := msm.NewSplit(msm.Segment{Scalars: sys.Inputs()},
		msm.Segment{Scalars: sys.Aux(), Density: sys.ADensity()})
	require.NoError(t, err)
	spB, err := msm.NewSplit(msm.Segment{Scalars: sys.Inputs(), Density: sys.BInputDensity()},
		msm.Segment{Scalars: sys.Aux(), Density: sys.BAuxDensity()})
	require.NoError(t, err)
	var sums groth16.Sums
	sums.H, err = d.MSMG1(pk.H, h)
	require.NoError(t, err)
	sums.L = testG1.split(t, d, pk.L, spL)
	sums.A = testG1.split(t, d, pk.A, spA)
	sums.BG1 = testG1.split(t, d, pk.BG1, spB)
	sums.BG2 = testG2.split(t, d, pk.BG2, spB)
	return groth16.Assemble(&pk.VK, &sums, r, s)
}

func TestGPUProofEqualsCPU(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	for _, k := range []int{8, 12, 15} {
		for _, inB := range []bool{false, true} {
			t.Run(fmt.Sprintf("2^%d/inputsInB=%v", k, inB), func(t *testing.T) {
				sys := r1cs.NewSystem()
				_, err := synth.Build(sys, synth.Shape{LogSize: k, InputsB: inB, Seed: rng.Uint64()})
				require.NoError(t, err)
				sys.Finalize()
				var seed [32]byte
				for i := range seed {
					seed[i] = byte(rng.Uint32())
				}
				pk, err := groth16.Setup(sys, rand.NewChaCha8(seed))
				require.NoError(t, err)
				var r, s fr.Element
				r.SetRandom()
				s.SetRandom()
				want, _, err := groth16.ProveWith(pk, sys, r, s)
				require.NoError(t, err)
				got := gpuProve(t, d, pk, sys, r, s)
				require.Equal(t, want.Bytes(), got.Bytes())
			})
		}
	}
}
