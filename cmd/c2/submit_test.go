package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/serve"
)

// submitFake is a daemon's prover for c2 submit's tests: it records what
// each call was given and answers "proof:" and the call's kind, or fails a
// C1 of fewer than 100 bytes and a PoSt of zero randomness.
type submitFake struct {
	mu    sync.Mutex
	calls []string
	rnd   [32]byte
	n     int // vanilla proofs of the last PoSt call
}

func (f *submitFake) note(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *submitFake) Prove(_ context.Context, c1 []byte) ([]byte, error) {
	f.note("porep")
	if len(c1) < 100 {
		return nil, errors.New("porep: C1 output: too short")
	}
	return []byte("proof:porep"), nil
}

func (f *submitFake) post(kind string, rnd [32]byte, vanilla [][]byte) ([]byte, error) {
	f.note(kind)
	f.mu.Lock()
	f.rnd, f.n = rnd, len(vanilla)
	f.mu.Unlock()
	if rnd == ([32]byte{}) {
		return nil, errors.New("post: randomness: zero")
	}
	return []byte("proof:" + kind), nil
}

func (f *submitFake) ProveWindowPoSt(_ context.Context, _ string, rnd [32]byte, vanilla [][]byte) ([]byte, error) {
	return f.post("wpost", rnd, vanilla)
}

func (f *submitFake) ProveWinningPoSt(_ context.Context, _ string, rnd [32]byte, vanilla [][]byte) ([]byte, error) {
	return f.post("winning", rnd, vanilla)
}

// stdoutOf runs f with os.Stdout going to a file and returns what f wrote.
func stdoutOf(t *testing.T, f func()) []byte {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	require.NoError(t, err)
	defer out.Close()
	stdout := os.Stdout
	os.Stdout = out
	defer func() { os.Stdout = stdout }()
	f()
	_, err = out.Seek(0, io.SeekStart)
	require.NoError(t, err)
	b, err := io.ReadAll(out)
	require.NoError(t, err)
	return b
}

// c2 submit sends a PoRep C1 and a Winning PoSt (the JSON array form of
// its vanilla proof) to a daemon, prints each answer as a JSON line and
// writes the proof; a job that fails is an error naming its status; bad
// flags are refused before anything is sent.
func TestSubmit(t *testing.T) {
	f := &submitFake{}
	srv := serve.NewServer(f, serve.Options{})
	dir, err := os.MkdirTemp("", "c2sub") // socket paths are short
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	addr := "unix://" + filepath.Join(dir, "c2.sock")
	lis, err := serve.Listen(addr)
	require.NoError(t, err)
	go srv.Serve(lis)
	defer srv.Shutdown(context.Background())

	out := filepath.Join(t.TempDir(), "proof")
	var res submitResult
	line := stdoutOf(t, func() {
		require.NoError(t, run(t, "submit", "--addr", addr, "--kind", "porep", "--c1", porepRefgen+"c1.json", "--id", "p1", "--out", out))
	})
	require.NoError(t, json.Unmarshal(line, &res), "%s", line)
	assert.Equal(t, "p1", res.ID)
	assert.Equal(t, "porep", res.Kind)
	assert.Equal(t, "COMPLETED", res.Status)
	assert.Equal(t, len("proof:porep"), res.ProofBytes)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "proof:porep", string(got))

	const rnd = "44434a5158676e757c7b0209101f262d34333ac1c8d7dee5ecebf2f9808f961d"
	line = stdoutOf(t, func() {
		require.NoError(t, run(t, "submit", "--addr", addr, "--kind", "winning", "--proof", "StackedDrgWinning2KiBV1",
			"--vanilla", postRefgen+"winning-2k-v1/vanilla.json", "--randomness", rnd, "--priority", "high"))
	})
	require.NoError(t, json.Unmarshal(line, &res), "%s", line)
	assert.Equal(t, "winning", res.Kind)
	assert.Equal(t, "COMPLETED", res.Status)
	r, _ := hex32(rnd)
	f.mu.Lock()
	assert.Equal(t, r, f.rnd)
	assert.Equal(t, 1, f.n)
	f.mu.Unlock()

	zero := string(bytes.Repeat([]byte("0"), 64))
	failed := filepath.Join(t.TempDir(), "failed.proof")
	line = stdoutOf(t, func() {
		err = run(t, "submit", "--addr", addr, "--kind", "winning", "--proof", "StackedDrgWinning2KiBV1",
			"--vanilla", postRefgen+"winning-2k-v1/vanilla.json", "--randomness", zero, "--out", failed)
	})
	require.ErrorContains(t, err, "failed")
	require.ErrorContains(t, err, "randomness: zero")
	require.NoError(t, json.Unmarshal(line, &res), "%s", line)
	assert.Equal(t, "FAILED", res.Status)
	require.NoFileExists(t, failed)

	short := filepath.Join(t.TempDir(), "short.json")
	require.NoError(t, os.WriteFile(short, bytes.Repeat([]byte(" "), 10), 0o644))
	stdoutOf(t, func() {
		err = run(t, "submit", "--addr", addr, "--kind", "winning", "--proof", "StackedDrgWindow2KiBV1_2",
			"--vanilla", postRefgen+"winning-2k-v1/vanilla.json", "--randomness", rnd, "--out", failed)
	})
	require.ErrorContains(t, err, "registered_proof", "a Window proof named for a Winning job, refused before sending")
	require.NoFileExists(t, failed)

	for _, args := range [][]string{
		{"--kind", "seal"},
		{"--kind", "porep"},
		{"--kind", "porep", "--c1", porepRefgen + "c1.json", "--vanilla", short},
		{"--kind", "winning", "--proof", "StackedDrgWinning2KiBV1", "--vanilla", postRefgen + "winning-2k-v1/vanilla.json", "--randomness", "12"},
		{"--kind", "winning", "--proof", "StackedDrgWinning2KiBV1", "--vanilla", postRefgen + "winning-2k-v1/vanilla.json", "--randomness", rnd, "--partition", "1"},
		{"--kind", "porep", "--c1", porepRefgen + "c1.json", "--priority", "urgent"},
		{"--kind", "porep", "--c1", short},
	} {
		require.Error(t, run(t, "submit", append([]string{"--addr", addr}, args...)...), "%q", args)
	}
	f.mu.Lock()
	assert.Equal(t, []string{"porep", "winning", "winning"}, f.calls, "nothing sent for refused flags")
	f.mu.Unlock()
}
