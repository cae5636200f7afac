package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/serve"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

// submitResult is the JSON line `c2 submit` prints for its job: the
// daemon's answer and timings (milliseconds), and the client's own wall
// time from submission to answer.
type submitResult struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	Status       string `json:"status"`
	Error        string `json:"error,omitempty"`
	ProofBytes   int    `json:"proof_bytes"`
	QueueWaitMs  uint64 `json:"queue_wait_ms"`
	SRSLoadMs    uint64 `json:"srs_load_ms"`
	SynthesisMs  uint64 `json:"synthesis_ms"`
	GPUComputeMs uint64 `json:"gpu_compute_ms"`
	TotalMs      uint64 `json:"total_ms"`
	WallMs       int64  `json:"wall_ms"`
}

// submitKinds are the --kind values, by the protocol's proof kinds.
var submitKinds = map[string]pb.ProofKind{
	"porep": pb.ProofKind_POREP_SEAL_COMMIT, "snap": pb.ProofKind_SNAP_DEALS_UPDATE,
	"wpost": pb.ProofKind_WINDOW_POST_PARTITION, "winning": pb.ProofKind_WINNING_POST,
}

// runSubmit implements `c2 submit`: one job sent to a cuzk.v1 daemon
// (`c2 serve`, or cuzk), awaited, its answer printed as a JSON line on
// standard output. The exit status is 1 unless the job completed.
func runSubmit(fs *flag.FlagSet, args []string) error {
	addr := fs.String("addr", "127.0.0.1:9820", `daemon address: "host:port" or "unix:///path"`)
	kindName := fs.String("kind", "", "porep, snap, wpost or winning (required)")
	c1 := fs.String("c1", "", "porep: the C1 output file (JSON, or its Commit2In wrapper)")
	name := fs.String("proof", "", "snap, wpost, winning: the registered proof, e.g. StackedDrgWinning32GiBV1")
	var vanilla filesFlag
	fs.Var(&vanilla, "vanilla", "snap, wpost, winning: a vanilla proof file (bincode or a JSON object), or a JSON array of them as c2 postgen writes; repeat in order")
	rnd := fs.String("randomness", "", "wpost, winning: 64 hex digits")
	partition := fs.Uint("partition", 0, "wpost: the partition's index in the whole proof")
	rOld := fs.String("comm-r-old", "", "snap: the sector key's comm_r, 64 hex digits")
	rNew := fs.String("comm-r-new", "", "snap: the updated replica's comm_r, 64 hex digits")
	dNew := fs.String("comm-d-new", "", "snap: the new data's comm_d, 64 hex digits")
	id := fs.String("id", "", "request id (default: the kind and the time)")
	priority := fs.String("priority", "normal", "low, normal, high or critical")
	out := fs.String("out", "", "write the proof bytes to this file")
	connect := fs.Duration("connect-timeout", 30*time.Second, "how long to wait for the daemon to take the job (it may still be starting)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	kind, ok := submitKinds[*kindName]
	if !ok {
		fs.Usage()
		return fmt.Errorf("--kind %q: want porep, snap, wpost or winning", *kindName)
	}
	req := &pb.SubmitProofRequest{RequestId: *id, ProofKind: kind, PartitionIndex: uint32(*partition)}
	if req.RequestId == "" {
		req.RequestId = fmt.Sprintf("%s-%d", *kindName, time.Now().UnixNano())
	}
	p, ok := pb.Priority_value[strings.ToUpper(*priority)]
	if !ok || p == 0 {
		return fmt.Errorf("--priority %q: want low, normal, high or critical", *priority)
	}
	req.Priority = pb.Priority(p)
	err := fillRequest(req, *c1, *name, vanilla, *rnd, [3]string{*rOld, *rNew, *dNew})
	if err != nil {
		return err
	}
	if *partition > 0 && kind != pb.ProofKind_WINDOW_POST_PARTITION {
		return errors.New("--partition is for --kind wpost")
	}
	// Created before the job, so that a path that cannot be written fails
	// before the proving.
	dst, err := optionalOutput(*out)
	if err != nil {
		return err
	}
	defer dst.abort()
	res, proof, err := submit(*addr, req, *connect)
	if err != nil {
		return err
	}
	if dst != nil && len(proof) > 0 {
		if _, err := writeResult(dst, proof); err != nil {
			return err
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return err
	}
	if res.Status != pb.AwaitProofResponse_COMPLETED.String() {
		return fmt.Errorf("job %s %s: %s", res.ID, strings.ToLower(res.Status), res.Error)
	}
	return nil
}

// fillRequest sets the fields of req's kind from the flags: the C1 file
// (porep), or the registered proof, vanilla proof files and public values.
func fillRequest(req *pb.SubmitProofRequest, c1, name string, vanilla []string, rnd string, comms [3]string) error {
	if req.ProofKind == pb.ProofKind_POREP_SEAL_COMMIT {
		if c1 == "" || name != "" || len(vanilla) > 0 {
			return errors.New("--kind porep takes --c1 FILE (and no --proof or --vanilla)")
		}
		b, err := porep.ReadC1(c1)
		if err != nil {
			return err
		}
		c, err := porep.DecodeC1(b)
		if err != nil {
			return fmt.Errorf("%s: %w", c1, err)
		}
		proof, err := inputs.ParseProof(c.RegisteredProof)
		if err != nil {
			return fmt.Errorf("%s: %w", c1, err)
		}
		shape, err := proof.Shape()
		if err != nil {
			return fmt.Errorf("%s: %w", c1, err)
		}
		req.VanillaProof, req.SectorSize = b, shape.SectorSize
		return nil
	}
	if c1 != "" || name == "" || len(vanilla) == 0 {
		return fmt.Errorf("--kind %s takes --proof NAME and --vanilla FILE (and no --c1)", kindKeyOf(req.ProofKind))
	}
	v, err := serve.RegisteredProof(req.ProofKind, name)
	if err != nil {
		return fmt.Errorf("--proof %q: %w", name, err)
	}
	req.RegisteredProof = v
	if req.VanillaProofs, _, err = readVanilla(vanilla); err != nil {
		return err
	}
	if req.ProofKind == pb.ProofKind_SNAP_DEALS_UPDATE {
		dst := []*[]byte{&req.CommROld, &req.CommRNew, &req.CommDNew}
		for i, f := range []string{"--comm-r-old", "--comm-r-new", "--comm-d-new"} {
			b, ok := hex32(comms[i])
			if !ok {
				return fmt.Errorf("%s %q: want 64 hex digits", f, comms[i])
			}
			*dst[i] = b[:]
		}
		return nil
	}
	r, ok := hex32(rnd)
	if !ok {
		return fmt.Errorf("--randomness %q: want 64 hex digits", rnd)
	}
	req.Randomness = r[:]
	return nil
}

// kindKeyOf is the --kind name of a proof kind.
func kindKeyOf(k pb.ProofKind) string {
	for name, v := range submitKinds {
		if v == k {
			return name
		}
	}
	return k.String()
}

// submit sends req to the daemon at addr, waiting up to connect for the
// daemon to take it, then waits for the job to end. It returns the job's
// answer and proof; a job that did not complete is a result, not an error.
func submit(addr string, req *pb.SubmitProofRequest, connect time.Duration) (submitResult, []byte, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30), grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		return submitResult{}, nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	defer conn.Close()
	client := pb.NewProvingEngineClient(conn)
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), connect)
	sub, err := client.SubmitProof(ctx, req, grpc.WaitForReady(true))
	cancel()
	if err != nil {
		return submitResult{}, nil, fmt.Errorf("submitting %s to %s: %w", req.RequestId, addr, err)
	}
	r, err := client.AwaitProof(context.Background(), &pb.AwaitProofRequest{JobId: sub.JobId})
	if err != nil {
		return submitResult{}, nil, fmt.Errorf("awaiting %s: %w", sub.JobId, err)
	}
	return submitResult{
		ID: req.RequestId, Kind: kindKeyOf(req.ProofKind), Status: r.Status.String(), Error: r.ErrorMessage,
		ProofBytes: len(r.Proof), QueueWaitMs: r.QueueWaitMs, SRSLoadMs: r.SrsLoadMs, SynthesisMs: r.SynthesisMs,
		GPUComputeMs: r.GpuComputeMs, TotalMs: r.TotalMs, WallMs: time.Since(t0).Milliseconds(),
	}, r.Proof, nil
}
