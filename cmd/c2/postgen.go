package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/post/postgen"
)

func runPoStgen(fs *flag.FlagSet, args []string) error {
	name := fs.String("proof", "", "registered PoSt proof, e.g. StackedDrgWindow32GiBV1_2 or StackedDrgWinning32GiBV1 (required)")
	rnd := fs.String("randomness", "", "the PoSt randomness: 64 hex digits, a canonical scalar's 32 bytes (default: derived from the seed)")
	sectors := fs.Int("sectors", 0, "sectors to prove (default: one full Window partition, e.g. 2349 at 32 GiB; Winning: 1)")
	firstID := fs.Uint64("first-id", 1, "number of the first sector; the others follow")
	g := addGenFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" {
		fs.Usage()
		return errors.New("--proof is required")
	}
	shape, err := postShape(*name)
	if err != nil {
		return err
	}
	seed, err := parseSeed(*g.seed)
	if err != nil {
		return err
	}
	randomness := postgenRandomness(seed)
	if *rnd != "" {
		if randomness, err = postRandomness(*rnd); err != nil {
			return err
		}
	}
	n := *sectors
	if n == 0 {
		n = shape.Sectors
		if shape.Kind == post.Winning {
			n = 1
		}
	}

	dst, err := optionalOutput(*g.out)
	if err != nil {
		return err
	}
	defer dst.abort()
	t0 := time.Now()
	proofs, err := postgen.Generate(context.Background(), shape, seed, randomness, *firstID, n)
	if err != nil {
		return err
	}
	b, err := json.Marshal(proofs)
	if err != nil {
		return err
	}
	dest, err := writeResult(dst, b)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d vanilla proofs (%d partitions), %d bytes to %s in %v\n  randomness %s\n",
		shape.Name, n, shape.Partitions(n), len(b), dest, time.Since(t0).Round(time.Millisecond), hex.EncodeToString(randomness[:]))
	return nil
}

// postgenRandomness is the default randomness of a seed: SHA-256 of a tag
// and the seed, the top two bits cleared (a canonical scalar).
func postgenRandomness(seed [32]byte) [32]byte {
	r := sha256.Sum256(append([]byte("c2 postgen randomness\x00"), seed[:]...))
	r[31] &= 0x3f
	return r
}
