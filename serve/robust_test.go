package serve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sealc2/c2/internal/fuzzpatch"
	"github.com/sealc2/c2/internal/specialfile"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sealc2/c2/porep"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

// A C1 over porep.MaxC1Size is refused at submission, naming the field,
// instead of waiting in the queue for a job that DecodeC1 refuses.
func TestParseRefusesOversizedC1(t *testing.T) {
	req := porepReq("big", "", pb.Priority_NORMAL)
	req.VanillaProof = make([]byte, porep.MaxC1Size+1)
	_, err := parse(req, newFake())
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "vanilla_proof", fe.Field)
	require.Equal(t, codes.InvalidArgument, status.Code(grpcError(err)))

	req.VanillaProof = req.VanillaProof[:porep.MaxC1Size]
	_, err = parse(req, newFake())
	require.NoError(t, err, "the cap itself is allowed")
}

// The configuration file and the parameter files the daemon warms are read
// only as regular files: a FIFO used to block (LoadConfig forever,
// readThrough past its context), and /dev/zero as a configuration filled
// memory.
func TestSpecialFiles(t *testing.T) {
	dir, fifo := specialfile.FIFO(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"LoadConfig FIFO", func() error { _, err := LoadConfig(fifo); return err }},
		{"LoadConfig /dev/zero", func() error { _, err := LoadConfig("/dev/zero"); return err }},
		{"LoadConfig DIR", func() error { _, err := LoadConfig(dir); return err }},
		{"readThrough FIFO", func() error { return readThrough(ctx, fifo) }},
		{"readThrough DIR", func() error { return readThrough(ctx, dir) }},
	} {
		specialfile.RequireRefused(t, c.name, "not a regular file", c.read)
	}

	big := filepath.Join(dir, "big.toml")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxConfigFile+1)) // sparse
	require.NoError(t, f.Close())
	_, err = LoadConfig(big)
	require.ErrorContains(t, err, "larger than")

	small := filepath.Join(dir, "c.toml")
	require.NoError(t, os.WriteFile(small, []byte("max_pending = 7\n"), 0o644))
	c, err := LoadConfig(small)
	require.NoError(t, err)
	require.Equal(t, 7, c.MaxPending)
	require.NoError(t, readThrough(ctx, small))
}

// ParseBytes refuses NaN, which used to become -2^63 bytes (refused later
// as "must not be negative", naming no value), and overflowing counts.
func TestParseBytesRefusesNaN(t *testing.T) {
	for _, s := range []string{"NaN", "nan GiB", "inf", "-1", "1e400", "4194305TiB"} {
		_, err := ParseBytes(s)
		require.ErrorContains(t, err, "byte count", s)
	}
	n, err := ParseBytes("1.5KiB")
	require.NoError(t, err)
	require.EqualValues(t, 1536, n)
}

// FuzzSubmitRequest checks requests as SubmitProof does (parse). Nothing
// panics; every refusal is a *FieldError (InvalidArgument) or wraps
// ErrUnsupportedKind (Unimplemented); an accepted request's task holds
// what its kind's Prover method needs. The fuzzer sets the scalar fields
// and picks one of four vanilla proofs (Window and Winning PoSt, SnapDeals,
// a C1 stand-in), repeated count%4 times, the first edited by patch
// (applyPatch): whole requests as inputs would have it minimize 15 kB
// inputs instead of fuzzing.
func FuzzSubmitRequest(f *testing.F) {
	read := func(dir, name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	bases := [][]byte{
		read(filepath.Join(postVectors, "window-2k-v1_2"), "vanilla-5001.bin"),
		read(filepath.Join(postVectors, "winning-2k-v1"), "vanilla-5002.bin"),
		read(updateVectors, "vanilla-p0.bin"),
		[]byte("{}"),
	}
	zero := make([]byte, 32)
	f.Add(uint8(pb.ProofKind_WINDOW_POST_PARTITION), uint64(10), uint64(2048), uint32(1), zero, zero, uint8(0), uint8(2), []byte{})
	f.Add(uint8(pb.ProofKind_WINNING_POST), uint64(0), uint64(0), uint32(0), zero, zero, uint8(1), uint8(1), []byte{})
	f.Add(uint8(pb.ProofKind_SNAP_DEALS_UPDATE), uint64(0), uint64(2048), uint32(0), zero, zero, uint8(2), uint8(1), []byte{})
	f.Add(uint8(pb.ProofKind_POREP_SEAL_COMMIT), uint64(5), uint64(2048), uint32(0), zero, zero, uint8(3), uint8(1), []byte{})
	p := newKindFake()
	f.Fuzz(func(t *testing.T, kind uint8, rp, size uint64, partition uint32, randomness, comm []byte, base, count uint8, patch []byte) {
		if len(patch) > maxPatch {
			t.Skip()
		}
		v := applyPatch(bases[int(base)%len(bases)], patch)
		req := pb.SubmitProofRequest{
			RequestId: "f", ProofKind: pb.ProofKind(kind % 6), RegisteredProof: rp, SectorSize: size,
			PartitionIndex: partition, Randomness: randomness, CommROld: comm, CommRNew: comm, CommDNew: comm,
			VanillaProof: v,
		}
		for i := range int(count % 4) {
			if i == 0 {
				req.VanillaProofs = append(req.VanillaProofs, v)
			} else {
				req.VanillaProofs = append(req.VanillaProofs, bases[int(base)%len(bases)])
			}
		}
		task, err := parse(&req, p)
		if err != nil {
			var fe *FieldError
			code := status.Code(grpcError(err))
			switch {
			case errors.As(err, &fe):
				if code != codes.InvalidArgument || fe.Field == "" {
					t.Fatalf("%v: code %v, field %q", err, code, fe.Field)
				}
			case errors.Is(err, ErrUnsupportedKind):
				if code != codes.Unimplemented {
					t.Fatalf("%v: code %v", err, code)
				}
			default:
				t.Fatalf("refusal %T: %v", err, err)
			}
			return
		}
		if task.kind != req.GetProofKind() {
			t.Fatalf("task of kind %v for a %v request", task.kind, req.GetProofKind())
		}
		switch task.kind {
		case pb.ProofKind_POREP_SEAL_COMMIT:
			if n := len(task.c1); n == 0 || n > porep.MaxC1Size {
				t.Fatalf("accepted a %d-byte C1", n)
			}
		case pb.ProofKind_WINNING_POST, pb.ProofKind_WINDOW_POST_PARTITION, pb.ProofKind_SNAP_DEALS_UPDATE:
			if task.proof == "" || len(task.vanilla) == 0 {
				t.Fatalf("accepted %v without a registered proof or vanilla proofs", task.kind)
			}
			for i, v := range task.vanilla {
				if len(v) == 0 {
					t.Fatalf("accepted an empty vanilla_proofs[%d]", i)
				}
			}
		default:
			t.Fatalf("accepted proof kind %v", task.kind)
		}
	})
}

// maxPatch bounds the edit list of one fuzz input.
var maxPatch = fuzzpatch.Binary.Max()

// applyPatch edits a vanilla proof by a fuzz input's edit list (fuzzpatch.Binary).
func applyPatch(base, patch []byte) []byte { return fuzzpatch.Binary.Apply(base, patch) }
