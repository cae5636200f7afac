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
	return &mapped{data: b, unmap: func() error { return unix.Munmap(b) }, mapped: true}, nil
}

// release drops the process's mappings of the whole pages inside
// data[off:off+n] (MADV_DONTNEED): their bytes stay in the page cache, a
// later read maps them again, and the process's resident size no longer
// counts them. Errors are ignored: the pages then merely stay resident.
func (m *mapped) release(off, n int64) {
	if !m.mapped {
		return
	}
	page := int64(unix.Getpagesize())
	lo := (off + page - 1) / page * page
	hi := (off + n) / page * page
	if hi > int64(len(m.data)) {
		hi = int64(len(m.data)) / page * page
	}
	if lo < hi {
		_ = unix.Madvise(m.data[lo:hi], unix.MADV_DONTNEED)
	}
}
