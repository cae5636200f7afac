package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/regfile"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
)

func runVerify(fs *flag.FlagSet, args []string) error {
	keyPath := fs.String("vk", "", "verifying key: a .vk or .params file, or (with --c1) a directory of parameters (required)")
	proofPath := fs.String("proof", "", "proof file: 192-byte proofs, one per partition, concatenated (required)")
	c1Path := fs.String("c1", "", "derive the public inputs from this C1 output's commitments and seed, as a verifier does")
	inputsPath := fs.String("inputs", "", "public inputs: 32-byte little-endian field elements without ONE, all partitions concatenated")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *keyPath == "" || *proofPath == "" || (*c1Path == "") == (*inputsPath == "") {
		fs.Usage()
		return errors.New("--vk, --proof and one of --c1 or --inputs are required")
	}

	var pub [][]fr.Element
	key := *keyPath
	if *c1Path == "" {
		if st, err := os.Stat(key); err == nil && st.IsDir() {
			return fmt.Errorf("--vk %s is a directory: with --inputs name the .vk or .params file (a directory needs --c1, which gives the sector shape)", key)
		}
	}
	if *c1Path != "" {
		b, err := porep.ReadC1(*c1Path)
		if err != nil {
			return err
		}
		c1, err := porep.DecodeC1(b)
		if err != nil {
			return inC1(*c1Path, err)
		}
		var is inputs.Shape
		if pub, is, err = c1.PublicInputs(); err != nil {
			return fmt.Errorf("%s: %w", *c1Path, err)
		}
		if shape, ok := porep.ShapeBySize(is.SectorSize); ok {
			if st, err := os.Stat(key); err == nil && st.IsDir() {
				if key, _, err = findParams(key, shape, ".vk"); err != nil {
					if key, _, err = findParams(*keyPath, shape, ".params"); err != nil {
						return err
					}
				}
			}
		}
	}
	vk, err := readVK(key)
	if err != nil {
		return err
	}
	if strings.HasPrefix(baseName(key), devPrefix) {
		fmt.Println("note: development (insecure) key")
	}

	pb, err := regfile.Read(*proofPath, maxSmallInput)
	if err != nil {
		return err
	}
	proofs, err := groth16.ReadProofs(pb)
	if err != nil {
		return err
	}
	if *inputsPath != "" {
		b, err := regfile.Read(*inputsPath, maxSmallInput)
		if err != nil {
			return err
		}
		n := vk.NumInputs() - 1
		if len(proofs) == 0 || len(b) != 32*n*len(proofs) {
			return fmt.Errorf("%s: %d bytes, want %d (%d proofs × %d inputs × 32)", *inputsPath, len(b), 32*n*len(proofs), len(proofs), n)
		}
		for k := range proofs {
			in := make([]fr.Element, n)
			for i := range in {
				var e [32]byte
				copy(e[:], b[32*(k*n+i):])
				if in[i], err = fr.LittleEndian.Element(&e); err != nil {
					return fmt.Errorf("%s: input %d of proof %d: %w", *inputsPath, i, k, err)
				}
			}
			pub = append(pub, in)
		}
	}
	if len(pub) != len(proofs) {
		return fmt.Errorf("%d proofs for %d partitions", len(proofs), len(pub))
	}
	if err := groth16.VerifyBatch(vk, proofs, pub); err != nil {
		return err
	}
	fmt.Printf("ok: %d proofs valid\n", len(proofs))
	return nil
}

// readVK reads a .vk file, or the verifying key at the start of a .params
// file (without reading the rest).
func readVK(path string) (*groth16.VerifyingKey, error) {
	if strings.HasSuffix(path, ".params") {
		return groth16.ReadParamsVerifyingKey(path)
	}
	return groth16.ReadVerifyingKey(path)
}

// maxSmallInput bounds the proof and inputs files verify reads: 1 MiB is
// thousands of partitions' proofs or public inputs (a 64 GiB sector has
// 10 of 192 and 328·32 bytes).
const maxSmallInput = 1 << 20

func baseName(p string) string { return p[strings.LastIndexAny(p, `/\`)+1:] }
