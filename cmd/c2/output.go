package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// output is a file that long work will write, checked before the work
// starts: its destination is absent or a regular file, and a temporary
// file already exists beside it (so the directory exists and is writable).
// commit writes the temporary file and renames it onto the destination, so
// that a partial file never carries the final name.
type output struct {
	path string
	tmp  *os.File
}

// createOutput checks path as a destination and creates its temporary file.
func createOutput(path string) (*output, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return nil, fmt.Errorf("output %s is a directory; name a file", path)
	case err == nil && !st.Mode().IsRegular():
		return nil, fmt.Errorf("output %s is not a regular file (%v)", path, st.Mode().Type())
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	return &output{path: path, tmp: tmp}, nil
}

// optionalOutput is createOutput for an optional destination: for an
// empty path it returns a nil *output, which writeResult takes for
// standard output and whose abort does nothing.
func optionalOutput(path string) (*output, error) {
	if path == "" {
		return nil, nil
	}
	return createOutput(path)
}

// commit writes the content with write through a buffer and renames the
// temporary file onto the destination. On error nothing carries the
// destination's name that was not there before.
func (o *output) commit(write func(w io.Writer) (int64, error)) error {
	bw := bufio.NewWriterSize(o.tmp, 1<<20)
	_, err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = o.tmp.Chmod(0o644)
	}
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.tmp.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	return nil
}

// abort removes the temporary file; after commit, or on a nil *output, it
// does nothing.
func (o *output) abort() {
	if o == nil {
		return
	}
	if o.tmp.Close() == nil { // not yet committed
		os.Remove(o.tmp.Name())
	}
}

// bytesWriter adapts a byte slice to commit's write function.
func bytesWriter(b []byte) func(w io.Writer) (int64, error) {
	return func(w io.Writer) (int64, error) {
		n, err := w.Write(b)
		return int64(n), err
	}
}

// writeResult writes b to dst, or to standard output when dst is nil, and
// returns where it went, for the summary line.
func writeResult(dst *output, b []byte) (string, error) {
	if dst == nil {
		_, err := os.Stdout.Write(b)
		return "standard output", err
	}
	return dst.path, dst.commit(bytesWriter(b))
}
