//go:build !unix

package groth16

import (
	"io"
	"os"
)

// mapReadOnly reads the first size bytes of f into memory where mmap is
// not available.
func mapReadOnly(f *os.File, size int) (*mapped, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return &mapped{data: b}, nil
}

// release does nothing: the bytes were read into memory, not mapped.
func (m *mapped) release(off, n int64) {}
