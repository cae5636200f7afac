//go:build !unix

package main

import "time"

// processCPU reports no CPU time outside Unix.
func processCPU() (time.Duration, bool) { return 0, false }
