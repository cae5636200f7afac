// Package paramdigest checks Groth16 parameter files against the digests
// Filecoin publishes for them (rust-fil-proofs' parameters.json, the table
// Lotus' and Curio's paramfetch check downloads against): the hex of the
// first 16 bytes of the file's BLAKE2b-512 digest. A file whose digest
// matches is byte for byte the published one, so its points need no
// subgroup checks, which take minutes for the largest files.
package paramdigest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/blake2b"

	"github.com/sealc2/c2/internal/regfile"
)

// chunk is how many bytes Check hashes between looks at its context.
const chunk = 8 << 20

// Published returns the published digest of the file called name (a base
// name such as "v28-stacked-proof-of-replication-…-….params"), and
// whether Filecoin publishes a file of that name.
func Published(name string) (digest string, ok bool) {
	digest, ok = published[name]
	return digest, ok
}

// MismatchError is the error of a file whose digest differs from the one
// published for its name: the file is damaged, incomplete or not
// Filecoin's.
type MismatchError struct {
	Path      string
	Got, Want string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: BLAKE2b digest %s, Filecoin publishes %s for this file name (damaged, incomplete or not the published file; fetch it again)",
		e.Path, e.Got, e.Want)
}

// Sum returns the digest of the regular file at path in parameters.json's
// form. It reads the whole file and stops with ctx's error once ctx ends.
func Sum(ctx context.Context, path string) (string, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h, err := blake2b.New512(nil)
	if err != nil {
		return "", err
	}
	buf := make([]byte, chunk)
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := io.ReadFull(f, buf)
		h.Write(buf[:n])
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// Check compares the digest of the file at path with want and returns a
// *MismatchError when they differ.
func Check(ctx context.Context, path, want string) error {
	got, err := Sum(ctx, path)
	if err != nil {
		return err
	}
	if got != want {
		return &MismatchError{Path: path, Got: got, Want: want}
	}
	return nil
}
