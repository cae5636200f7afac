package regfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// Read returns a regular file's contents up to its limit and refuses a
// larger file, one the file system reports larger unread; Open and Read
// refuse what is not a regular file. (The callers' tests check that FIFOs
// and devices are refused without blocking.)
func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("0123456789"), 0o600))
	b, err := Read(path, 10)
	require.NoError(t, err)
	require.Equal(t, "0123456789", string(b))
	f, size, err := Open(path)
	require.NoError(t, err)
	require.EqualValues(t, 10, size)
	require.NoError(t, f.Close())

	_, err = Read(path, 9)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	require.Equal(t, TooLargeError{Path: path, Limit: 9}, *tl)
	require.EqualError(t, err, path+": larger than 9 bytes")

	_, err = Read(filepath.Join(dir, "missing"), 9)
	require.ErrorIs(t, err, os.ErrNotExist)

	var nr *NotRegularError
	_, err = Read(dir, 9)
	require.ErrorAs(t, err, &nr)
	require.EqualError(t, err, dir+" is a directory, not a regular file")
	if runtime.GOOS != "linux" {
		return
	}
	// /proc files report size 0: the size is what reading returns.
	b, err = Read("/proc/self/status", 1<<20)
	require.NoError(t, err)
	require.NotEmpty(t, b)
	_, err = Read("/proc/self/status", 8)
	require.ErrorAs(t, err, &tl)
}
