// Package specialfile checks, for tests, that a reader refuses a special
// file (a FIFO, a device, a directory) at once instead of blocking on it.
package specialfile

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FIFO returns a new temporary folder of t and the path of a FIFO made in
// it, skipping t anywhere but on Linux (where the tests also read
// /dev/zero).
func FIFO(t testing.TB) (dir, fifo string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("FIFOs and /dev/zero")
	}
	dir = t.TempDir()
	fifo = filepath.Join(dir, "fifo")
	require.NoError(t, mkfifo(fifo))
	return dir, fifo
}

// Wait bounds how long RequireRefused waits for read to return.
const Wait = 5 * time.Second

// RequireRefused runs read and requires it to return, within Wait, an
// error whose message contains want; name labels the failures. A read
// that blocks is left running.
func RequireRefused(t testing.TB, name, want string, read func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- read() }()
	select {
	case err := <-done:
		require.ErrorContains(t, err, want, name)
	case <-time.After(Wait):
		t.Fatalf("%s: blocked", name)
	}
}
