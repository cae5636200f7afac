package c1gen_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/c1gen"
	"github.com/sealc2/c2/porep/inputs"
)

// TestRefgenSealC2 is the 2 KiB bellperson round trip of a synthetic C1
// (testdata/refgen/README.md, "Recorded runs"): filecoin-proofs'
// seal_commit_phase2 proves the generated C1 with the on-demand parameters of
// `refgen porep-params` and its verify_seal accepts the proof (`refgen
// seal-c2`); c2 proves the same C1 (Commit2In form) with the same parameters
// and verify_seal accepts that proof too; each side verifies the other's
// proof. Needs REFGEN_CACHE holding porep-2k.params and porep-2k.vk, and the
// refgen binary (REFGEN_BIN, default testdata/refgen/target/release/refgen).
// About 5 minutes on 2 cores.
func TestRefgenSealC2(t *testing.T) {
	cache, paramsPath := refgen.Cached(t, "porep-2k.params", "porep-params")
	bin := os.Getenv("REFGEN_BIN")
	if bin == "" {
		bin = "../../testdata/refgen/target/release/refgen"
	}
	bin, err := filepath.Abs(bin)
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no refgen binary at %s (cargo build --release in testdata/refgen, or set REFGEN_BIN)", bin)
	}

	sec, err := c1gen.Generate(inputs.StackedDrg2KiBV1_1, [32]byte{0x5e, 0xa1, 0xc2}, nil)
	require.NoError(t, err)
	plain, err := sec.JSON()
	require.NoError(t, err)
	wrapped, err := sec.Commit2In()
	require.NoError(t, err)
	dir := t.TempDir()
	plainPath, wrappedPath := filepath.Join(dir, "synth.json"), filepath.Join(dir, "synth-c2in.json")
	require.NoError(t, os.WriteFile(plainPath, plain, 0o644))
	require.NoError(t, os.WriteFile(wrappedPath, wrapped, 0o644))
	prover := hex.EncodeToString(sec.ProverID[:])

	runRefgen := func(args ...string) (string, int) {
		t.Helper()
		t0 := time.Now()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), refgen.EnvCache+"="+cache)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			require.True(t, ok, "refgen %v: %v\n%s", args, err, out.String())
			code = ee.ExitCode()
		}
		t.Logf("refgen %v: exit %d in %v\n%s", args, code, time.Since(t0).Round(time.Millisecond), out.String())
		return out.String(), code
	}

	// bellperson (filecoin-proofs seal_commit_phase2) proves the plain C1;
	// verify_seal accepts it and rejects a changed seed and ticket.
	_, code := runRefgen("seal-c2", "--c1", plainPath, "--prover-id", prover, "--sector-id", fmt.Sprint(sec.SectorID), "--out", dir)
	require.Equal(t, 0, code, "seal_commit_phase2 + verify_seal of the synthetic C1")
	vk, rps := refgen.KeyAndProofs(t, filepath.Join(cache, "porep-2k.vk"), filepath.Join(dir, "synth-seal.proof"))
	require.Len(t, rps, 1, "one 192-byte proof")

	// The public inputs filecoin-proofs derives (get_seal_inputs) are the
	// ones c2 derives from the C1.
	c1, err := porep.DecodeC1(plain)
	require.NoError(t, err)
	shape, parts, err := porep.Partitions(c1)
	require.NoError(t, err)
	require.Len(t, parts, 1)
	pub := refgen.ReadScalars(t, filepath.Join(dir, "synth-seal-inputs.bin"))
	require.Len(t, pub, shape.NumInputs()-1)
	require.NoError(t, groth16.Verify(vk, &rps[0], pub), "bellperson's proof of the synthetic C1, verified in Go")

	// c2 proves the Commit2In form with the same parameters; verify_seal
	// accepts its proof.
	p, err := c2.New(c2.Config{Backend: c2.BackendCPU, Params: paramsPath, TrustParams: true})
	require.NoError(t, err)
	defer p.Close()
	t0 := time.Now()
	goProof, err := p.Prove(context.Background(), wrapped)
	require.NoError(t, err)
	t.Logf("c2 proved the Commit2In form in %v", time.Since(t0).Round(time.Millisecond))
	require.Len(t, goProof, 192)
	gp, err := groth16.ReadProof(goProof)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(vk, gp, pub))
	goPath := filepath.Join(dir, "synth-c2.proof")
	require.NoError(t, os.WriteFile(goPath, goProof, 0o644))
	_, code = runRefgen("seal-c2", "--c1", wrappedPath, "--prover-id", prover, "--proof", goPath, "--out", dir)
	require.Equal(t, 0, code, "verify_seal of c2's proof")

	// A proof of another C1 (bellperson's proof of the committed sealed
	// 2 KiB C1, when `refgen porep-params` wrote it) is rejected.
	if other := filepath.Join(cache, "porep-2k-c1.proof"); fileExists(other) {
		_, code = runRefgen("seal-c2", "--c1", plainPath, "--prover-id", prover, "--sector-id", fmt.Sprint(sec.SectorID), "--proof", other, "--out", dir)
		require.Equal(t, 1, code, "verify_seal of another C1's proof")
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
