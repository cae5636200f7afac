// Package regfile opens and reads files that must be regular files
// (parameters, C1 outputs, vanilla proofs, configuration). It opens a path
// non-blocking and examines the open file before any read, so that a FIFO
// is refused instead of waiting for a writer, a device instead of filling
// memory, and the check and the reads see the same file.
package regfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is the error of a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, kind(e.Mode))
}

// kind names the type of a file mode that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a " + m.Type().String() + " file"
}

// TooLargeError is the error of [Read] for a file of more than Limit
// bytes.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %d bytes", e.Path, e.Limit)
}

// Open opens the regular file at path for reading and returns it with the
// size the file system reports for it (0 for /proc files). Errors: the
// open's or stat's (*fs.PathError), or a *NotRegularError.
func Open(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return f, st.Size(), nil
}

// Read returns the contents of the regular file at path, of at most limit
// bytes. A file whose reported size is over limit is refused unread;
// otherwise the size is that of what reading returns. Errors: [Open]'s, a
// read error (wrapped, naming path), or a *TooLargeError.
func Read(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}
