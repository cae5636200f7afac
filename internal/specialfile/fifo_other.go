//go:build !unix

package specialfile

import "errors"

// mkfifo fails: FIFOs are made only on Unix systems.
func mkfifo(string) error { return errors.ErrUnsupported }
