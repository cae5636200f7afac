package main

import (
	"runtime/metrics"
	"time"
)

// gcCPU returns the runtime's estimate of the CPU time its garbage
// collector has used so far (all its phases and assists).
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}
