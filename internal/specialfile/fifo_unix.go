//go:build unix

package specialfile

import "syscall"

// mkfifo makes a FIFO at path, readable and writable by its owner.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
