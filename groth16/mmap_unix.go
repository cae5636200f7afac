//go:build unix

package groth16

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapReadOnly maps the first size bytes of f read-only; size > 0.
func mapReadOnly(f *os.File, size int) (*mapped, error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return &mapped{data: b, unmap: func() error { return unix.Munmap(b) }}, nil
}
