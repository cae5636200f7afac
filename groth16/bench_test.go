package groth16_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
)

func BenchmarkSetup(b *testing.B) {
	for _, k := range []int{14} {
		sys, _, err := synth.System(synth.Shape{LogSize: k, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("2^%d", k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := groth16.Setup(sys, newRNG(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuTime returns the CPU time this process has used (user + system). On
// a shared machine it measures our work where wall time would not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkProve proves PoRep-shaped synthetic circuits with the CPU
// reference prover and verifies every proof.
func BenchmarkProve(b *testing.B) {
	for _, k := range []int{16, 18} {
		b.Run(fmt.Sprintf("2^%d", k), func(b *testing.B) {
			f := newFixture(b, k, true, uint64(k))
			var r, s fr.Element
			b.ResetTimer()
			var tm groth16.Timings
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				r.SetUint64(uint64(i) + 1)
				s.SetUint64(uint64(i) + 2)
				c0 := cpuTime()
				p, t, err := groth16.ProveWith(f.pk, f.sys, r, s)
				cpu += cpuTime() - c0
				if err != nil {
					b.Fatal(err)
				}
				tm = t
				b.StopTimer()
				if err := groth16.Verify(&f.pk.VK, p, f.inputs); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(tm.H.Milliseconds()), "H-ms")
			b.ReportMetric(float64(tm.MSM.Milliseconds()), "msm-ms")
		})
	}
}
