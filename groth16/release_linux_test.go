package groth16

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/stretchr/testify/require"
)

// mappingRSS returns the resident kB of the mapping that starts at addr, as
// /proc/self/smaps reports it.
func mappingRSS(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	start := fmt.Sprintf("%x-", addr)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasPrefix(line, start)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			require.NoError(t, err)
			return kb
		}
	}
	require.NoError(t, sc.Err())
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}

// The pages of a parameter file that a ReadG1 decoded leave the process's
// resident memory (a device load of a 32 GiB key reads 44 GiB through the
// mapping); a second read of them maps them again and decodes the same
// points.
func TestParamsFileReleasesPages(t *testing.T) {
	_, _, g1, g2 := bls.Generators()
	const n = 1 << 16 // 6 MiB of H
	h := make([]bls.G1Affine, n)
	for i := range h {
		h[i] = g1
	}
	one := []bls.G1Affine{g1}
	pk := &ProvingKey{
		VK: VerifyingKey{AlphaG1: g1, BetaG1: g1, BetaG2: g2, GammaG2: g2, DeltaG1: g1, DeltaG2: g2, IC: one},
		H:  h, L: one, A: one, BG1: one, BG2: []bls.G2Affine{g2},
	}
	path := filepath.Join(t.TempDir(), "k.params")
	require.NoError(t, os.WriteFile(path, encode(t, pk), 0o644))
	ctx := context.Background()
	f, err := OpenParams(ctx, path, TrustedFile())
	require.NoError(t, err)
	defer f.Close()
	data := f.m.data
	addr := uintptr(unsafe.Pointer(&data[0]))

	touched := 0
	for i := 0; i < len(data); i += 1024 {
		touched += int(data[i])
	}
	before := mappingRSS(t, addr)
	require.GreaterOrEqual(t, before, n*96/1024*9/10, "every page touched is resident (%d)", touched)

	lay := f.Layout()
	for range 2 {
		dst := make([]bls.G1Affine, n)
		require.NoError(t, f.ReadG1(ctx, lay.H, 0, dst))
		require.Equal(t, h, dst)
		after := mappingRSS(t, addr)
		t.Logf("mapping resident: %d kB before the read, %d kB after", before, after)
		require.Less(t, after, 64, "H's pages left resident memory")
	}

	// ReadAll leaves none of the file resident: the key is on the heap.
	for i := 0; i < len(data); i += 1024 {
		touched += int(data[i])
	}
	require.GreaterOrEqual(t, mappingRSS(t, addr), n*96/1024*9/10, "touched again (%d)", touched)
	all, err := f.ReadAll(ctx)
	require.NoError(t, err)
	require.Equal(t, h, all.H)
	require.Less(t, mappingRSS(t, addr), 16)
}
