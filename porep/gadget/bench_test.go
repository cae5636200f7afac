package gadget

import (
	"syscall"
	"testing"
	"time"

	"github.com/sealc2/c2/r1cs"
)

// cpuTime returns the process's user + system CPU time. Benchmarks report it
// per operation ("cpu-ns/op") next to wall time, because the development
// machine is shared and wall time there includes waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureCPU runs f b.N times and reports CPU time per call.
func measureCPU(b *testing.B, f func()) {
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		f()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSHA256CompressionCounter is one compression in counting mode,
// where every linear combination is built and merged (the cost of shape and
// key-generation passes).
func BenchmarkSHA256CompressionCounter(b *testing.B) {
	c := r1cs.NewCounter()
	cs := New(c)
	block := make([]byte, 64)
	in := allocBytes(cs, block)
	iv := SHA256IV()
	measureCPU(b, func() { cs.SHA256Compress(in, &iv) })
}
