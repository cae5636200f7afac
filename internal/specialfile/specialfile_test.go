package specialfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records a failure instead of stopping
// the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              {}
func (r *recorder) Helper()               {}

func TestRequireRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		fail bool
	}{
		{"refused", errors.New("x is not a regular file"), false},
		{"another error", errors.New("permission denied"), true},
		{"accepted", nil, true},
	} {
		r := &recorder{TB: t}
		RequireRefused(r, c.name, "not a regular file", func() error { return c.err })
		if r.failed != c.fail {
			t.Errorf("%s: failed %v, want %v", c.name, r.failed, c.fail)
		}
	}
}

func TestFIFO(t *testing.T) {
	dir, fifo := FIFO(t)
	if filepath.Dir(fifo) != dir {
		t.Fatalf("FIFO %s is not in %s", fifo, dir)
	}
	fi, err := os.Stat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s: mode %v, not a FIFO", fifo, fi.Mode())
	}
}
