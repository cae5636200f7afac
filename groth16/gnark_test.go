package groth16_test

// gnark is our independent CPU reference: it verifies our proofs with its
// own verifier, and proves the same synthetic circuit for the benchmark
// comparison in BENCHMARKS.md. gnark is a test-only dependency.

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	gnarkgroth16 "github.com/consensys/gnark/backend/groth16"
	gnarkbls "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
)

func toGnarkVK(t testing.TB, vk *groth16.VerifyingKey) *gnarkbls.VerifyingKey {
	var g gnarkbls.VerifyingKey
	g.G1.Alpha, g.G1.Beta, g.G1.Delta = vk.AlphaG1, vk.BetaG1, vk.DeltaG1
	g.G1.K = vk.IC
	g.G2.Beta, g.G2.Gamma, g.G2.Delta = vk.BetaG2, vk.GammaG2, vk.DeltaG2
	require.NoError(t, g.Precompute())
	return &g
}

func toGnarkProof(p *groth16.Proof) *gnarkbls.Proof {
	return &gnarkbls.Proof{Ar: p.A, Bs: p.B, Krs: p.C}
}

func TestGnarkVerifiesOurProofs(t *testing.T) {
	for _, inB := range []bool{false, true} {
		f := newFixture(t, 11, inB, 21)
		p, err := groth16.Prove(f.pk, f.sys)
		require.NoError(t, err)
		gvk := toGnarkVK(t, &f.pk.VK)
		require.NoError(t, gnarkbls.Verify(toGnarkProof(p), gvk, f.inputs))

		bad := *p
		_, _, g1, _ := bls.Generators()
		bad.C.Add(&bad.C, &g1)
		require.Error(t, gnarkbls.Verify(toGnarkProof(&bad), gvk, f.inputs))
		wrong := append([]fr.Element(nil), f.inputs...)
		wrong[0].SetUint64(42)
		require.Error(t, gnarkbls.Verify(toGnarkProof(p), gvk, wrong))
	}
}

// gnarkSynth replays a synth program with gnark's frontend: one gnark
// constraint per op except Pack, which gnark keeps linear (free).
type gnarkSynth struct {
	Bits   []frontend.Variable
	Inputs []frontend.Variable `gnark:",public"`
	ops    []synth.Op
}

func (c *gnarkSynth) Define(api frontend.API) error {
	vars := make([]frontend.Variable, 0, len(c.ops))
	nb := 0
	for _, op := range c.ops {
		switch op.Kind {
		case synth.NewBit:
			api.AssertIsBoolean(c.Bits[nb])
			vars = append(vars, c.Bits[nb])
			nb++
		case synth.And, synth.Mul:
			vars = append(vars, api.Mul(vars[op.X], vars[op.Y]))
		case synth.Xor:
			xy := api.Mul(vars[op.X], vars[op.Y])
			vars = append(vars, api.Sub(api.Add(vars[op.X], vars[op.Y]), api.Mul(xy, 2)))
		case synth.Pack:
			acc := frontend.Variable(0)
			for i, b := range op.Bits {
				acc = api.Add(acc, api.Mul(vars[b], new(big.Int).Lsh(big.NewInt(1), uint(i))))
			}
			vars = append(vars, acc)
		case synth.InputMul:
			vars = append(vars, api.Mul(vars[op.X], c.Inputs[op.Y]))
		case synth.InputCheck:
			api.AssertIsEqual(vars[op.Z], c.Inputs[op.Y])
		}
	}
	return nil
}

func gnarkAssignment(ops []synth.Op, inputs []fr.Element) *gnarkSynth {
	a := &gnarkSynth{}
	for _, op := range ops {
		if op.Kind == synth.NewBit {
			var b big.Int
			op.Value.BigInt(&b)
			a.Bits = append(a.Bits, &b)
		}
	}
	for i := range inputs {
		var b big.Int
		inputs[i].BigInt(&b)
		a.Inputs = append(a.Inputs, &b)
	}
	return a
}

// BenchmarkGnarkProve proves the synthetic circuits of BenchmarkProve with
// gnark (real Setup, solve included; solve-ms is the solver alone), for the
// comparison in BENCHMARKS.md.
func BenchmarkGnarkProve(b *testing.B) {
	for _, k := range []int{16, 18} {
		b.Run(fmt.Sprintf("2^%d", k), func(b *testing.B) {
			ops, inputs, err := synth.Program(synth.Shape{LogSize: k, InputsB: true, Seed: uint64(k)})
			require.NoError(b, err)
			circuit := gnarkAssignment(ops, inputs)
			circuit.ops = ops
			ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, circuit)
			require.NoError(b, err)
			pk, vk, err := gnarkgroth16.Setup(ccs)
			require.NoError(b, err)
			w, err := frontend.NewWitness(gnarkAssignment(ops, inputs), ecc.BLS12_381.ScalarField())
			require.NoError(b, err)
			pub, err := w.Public()
			require.NoError(b, err)
			// gnark's Prove solves the circuit first; c2's prover is handed a
			// solved witness. Time the solver alone, to be subtracted.
			var solve time.Duration
			for range 3 {
				t0 := time.Now()
				_, err := ccs.Solve(w)
				require.NoError(b, err)
				solve += time.Since(t0)
			}
			b.ResetTimer() // (it also drops metrics reported so far)
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				c0 := cpuTime()
				p, err := gnarkgroth16.Prove(ccs, pk, w)
				cpu += cpuTime() - c0
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := gnarkgroth16.Verify(p, vk, pub); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(solve.Milliseconds())/3, "solve-ms")
			b.ReportMetric(float64(ccs.GetNbConstraints()), "constraints")
		})
	}
}
