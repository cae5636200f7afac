//go:build race

package c2_test

// raceDetector reports a -race build: its instrumented code runs several
// times slower, which timing bounds in tests allow for.
const raceDetector = true
