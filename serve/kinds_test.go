package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/devparams"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/post"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

const (
	postVectors   = "../testdata/refgen/out/post-2k"
	updateVectors = "../testdata/refgen/out/update-2k"
)

// vector is a refgen PoSt or SnapDeals case as the tests use it: the
// vanilla proofs as filecoin-ffi hands them over (bincode, and the same as
// serde JSON objects), the request values and the public inputs Rust
// computed, per partition.
type vector struct {
	proof      string // registered proof name
	randomness []byte
	comms      c2.UpdateCommitments
	bincode    map[string][]byte // by file name, e.g. "vanilla-5003.bin"
	order      []string          // bincode file names in the vector's order
	json       [][]byte
	inputs     [][]fr.Element
}

func loadVector(t *testing.T, elem ...string) vector {
	t.Helper()
	r := refgen.ReadVanilla(t, elem...)
	v := vector{
		proof: r.Proof, randomness: r.Randomness,
		comms:   c2.UpdateCommitments{CommROld: r.CommROld, CommRNew: r.CommRNew, CommDNew: r.CommDNew},
		bincode: map[string][]byte{}, order: r.Files, json: r.JSON, inputs: r.Inputs,
	}
	for i, f := range r.Files {
		v.bincode[f] = r.Bincode[i]
	}
	return v
}

// files returns the bincode vanilla proofs named, in order.
func (v vector) files(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = v.bincode[n]
	}
	return out
}

// The requests as Curio's WindowPoStCuzk, WinningPoStCuzk and
// ProveUpdateCuzk build them (registered proofs by their abi numbers).
func windowReq(id string, v vector, rp uint64, partition uint32, vanilla [][]byte) *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{
		RequestId: id, ProofKind: pb.ProofKind_WINDOW_POST_PARTITION, SectorSize: 2048,
		RegisteredProof: rp, Priority: pb.Priority_HIGH, VanillaProofs: vanilla,
		MinerId: 1000, Randomness: v.randomness, PartitionIndex: partition,
	}
}

func winningReq(id string, v vector, vanilla [][]byte) *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{
		RequestId: id, ProofKind: pb.ProofKind_WINNING_POST, SectorSize: 2048,
		RegisteredProof: 0, Priority: pb.Priority_CRITICAL, VanillaProofs: vanilla,
		MinerId: 1000, Randomness: v.randomness,
	}
}

func snapReq(id string, v vector, vanilla [][]byte) *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{
		RequestId: id, ProofKind: pb.ProofKind_SNAP_DEALS_UPDATE, SectorSize: 2048,
		RegisteredProof: 0, Priority: pb.Priority_NORMAL, VanillaProofs: vanilla,
		SectorNumber: 6001, MinerId: 1000,
		CommROld: v.comms.CommROld[:], CommRNew: v.comms.CommRNew[:], CommDNew: v.comms.CommDNew[:],
	}
}

// kindCall is one call a kindFake received.
type kindCall struct {
	method     string
	proof      string
	partition  int
	randomness [32]byte
	comms      c2.UpdateCommitments
	vanilla    [][]byte
}

// kindFake is a fakeProver that also proves PoSt and SnapDeals: it records
// each call and returns "proof:" + the method's name, after block is closed
// (or its context ends) when block is set.
type kindFake struct {
	*fakeProver
	block chan struct{}
	mu    sync.Mutex
	kcs   []kindCall
}

func newKindFake() *kindFake { return &kindFake{fakeProver: newFake()} }

func (f *kindFake) record(ctx context.Context, c kindCall) ([]byte, error) {
	f.mu.Lock()
	f.kcs = append(f.kcs, c)
	f.mu.Unlock()
	f.started <- c.method
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return []byte("proof:" + c.method), nil
}

func (f *kindFake) ProveWindowPoSt(ctx context.Context, proof string, rnd [32]byte, vanilla [][]byte) ([]byte, error) {
	return f.record(ctx, kindCall{method: "window", proof: proof, randomness: rnd, vanilla: vanilla})
}

func (f *kindFake) ProveWinningPoSt(ctx context.Context, proof string, rnd [32]byte, vanilla [][]byte) ([]byte, error) {
	return f.record(ctx, kindCall{method: "winning", proof: proof, randomness: rnd, vanilla: vanilla})
}

func (f *kindFake) ProveUpdate(ctx context.Context, proof string, comms c2.UpdateCommitments, vanilla [][]byte) ([]byte, error) {
	return f.record(ctx, kindCall{method: "update", proof: proof, comms: comms, vanilla: vanilla})
}

func (f *kindFake) calls() []kindCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]kindCall(nil), f.kcs...)
}

// TestKindRequests: each kind's request, as Curio fills it, reaches the
// Prover method of its kind with the registered proof named as c2 names
// it, the randomness or commitments and the vanilla proofs unchanged;
// JSON vanilla proofs are accepted too; status and metrics count per kind.
func TestKindRequests(t *testing.T) {
	win := loadVector(t, "post-2k", "window-2k-v1_2")
	winV1 := loadVector(t, "post-2k", "window-2k-v1")
	winning := loadVector(t, "post-2k", "winning-2k-v1")
	snap := loadVector(t, "update-2k")
	forEachTransport(t, func(t *testing.T, tr string) {
		f := newKindFake()
		ts := startServer(t, tr, f, Options{MaxConcurrent: 1})
		ctx := context.Background()
		prove := func(req *pb.SubmitProofRequest) *pb.AwaitProofResponse {
			t.Helper()
			r, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: req})
			require.NoError(t, err)
			require.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Result.Status, r.Result.ErrorMessage)
			return r.Result
		}
		p1 := win.files("vanilla-5003.bin")
		assert.Equal(t, "proof:window", string(prove(windowReq("wdpost-1000-1", win, 10, 1, p1)).Proof))
		prove(windowReq("wdpost-1000-0-json", winV1, 5, 0, winV1.json[:2]))
		assert.Equal(t, "proof:winning", string(prove(winningReq("winpost-1000", winning, winning.files("vanilla-5002.bin"))).Proof))
		assert.Equal(t, "proof:update", string(prove(snapReq("snap-1000-6001", snap, snap.files("vanilla-p0.bin"))).Proof))

		calls := f.calls()
		require.Len(t, calls, 4)
		var rnd [32]byte
		copy(rnd[:], win.randomness)
		assert.Equal(t, kindCall{method: "window", proof: "StackedDrgWindow2KiBV1_2", randomness: rnd, vanilla: p1}, calls[0])
		assert.Equal(t, "StackedDrgWindow2KiBV1", calls[1].proof, "abi 5 is V1")
		assert.Equal(t, winV1.json[:2], calls[1].vanilla)
		assert.Equal(t, "StackedDrgWinning2KiBV1", calls[2].proof)
		assert.Equal(t, kindCall{method: "update", proof: "StackedDrg2KiBV1", comms: snap.comms, vanilla: snap.files("vanilla-p0.bin")}, calls[3])

		st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
		require.NoError(t, err)
		var kinds []string
		for _, q := range st.Queues {
			kinds = append(kinds, q.ProofKind)
		}
		assert.Equal(t, []string{"POREP_SEAL_COMMIT", "SNAP_DEALS_UPDATE", "WINDOW_POST_PARTITION", "WINNING_POST"}, kinds)
		assert.EqualValues(t, 4, st.TotalProofsCompleted)
		text, err := ts.srv.Engine.MetricsText()
		require.NoError(t, err)
		for _, want := range []string{
			`c2_serve_proofs_total{kind="WINDOW_POST_PARTITION",outcome="completed"} 2`,
			`c2_serve_proofs_total{kind="WINNING_POST",outcome="completed"} 1`,
			`c2_serve_proofs_total{kind="SNAP_DEALS_UPDATE",outcome="completed"} 1`,
			`c2_serve_queue_pending{kind="WINNING_POST"} 0`,
		} {
			assert.Contains(t, text, want)
		}
	})
}

// TestKindRefusals: a request that cannot be proved as given is refused
// at submission with InvalidArgument naming its field; kinds the prover
// has no method for, and V1 Window PoSt past partition 0 by a prover
// without ProveWindowPoStPartition, with Unimplemented. Nothing reaches
// the prover.
func TestKindRefusals(t *testing.T) {
	win := loadVector(t, "post-2k", "window-2k-v1_2")
	winV1 := loadVector(t, "post-2k", "window-2k-v1")
	winning := loadVector(t, "post-2k", "winning-2k-v1")
	snap := loadVector(t, "update-2k")
	wv := win.files("vanilla-5001.bin", "vanilla-5002.bin")
	one := winning.files("vanilla-5002.bin")
	sv := snap.files("vanilla-p0.bin")
	ones := bytes.Repeat([]byte{0xff}, 32)
	edit := func(r *pb.SubmitProofRequest, f func(r *pb.SubmitProofRequest)) *pb.SubmitProofRequest {
		f(r)
		return r
	}
	truncated := [][]byte{wv[0][:len(wv[0])-40], wv[1]}
	cases := []struct {
		name  string
		req   *pb.SubmitProofRequest
		code  codes.Code
		field string
	}{
		{"unknown post proof", windowReq("a", win, 15, 0, wv), codes.InvalidArgument, "registered_proof"},
		{"winning proof for window", windowReq("a", win, 0, 0, wv), codes.InvalidArgument, "registered_proof"},
		{"window proof for winning", edit(winningReq("a", winning, one), func(r *pb.SubmitProofRequest) { r.RegisteredProof = 10 }), codes.InvalidArgument, "registered_proof"},
		{"sector size", edit(windowReq("a", win, 10, 0, wv), func(r *pb.SubmitProofRequest) { r.SectorSize = 8 << 20 }), codes.InvalidArgument, "sector_size"},
		{"short randomness", edit(windowReq("a", win, 10, 0, wv), func(r *pb.SubmitProofRequest) { r.Randomness = r.Randomness[:31] }), codes.InvalidArgument, "randomness"},
		{"randomness not a scalar", edit(winningReq("a", winning, one), func(r *pb.SubmitProofRequest) { r.Randomness = ones }), codes.InvalidArgument, "randomness"},
		{"no vanilla", windowReq("a", win, 10, 0, nil), codes.InvalidArgument, "vanilla_proofs"},
		{"more sectors than a partition", windowReq("a", win, 10, 0, win.files(win.order...)), codes.InvalidArgument, "vanilla_proofs"},
		{"two winning sectors", winningReq("a", winning, append(one, one[0])), codes.InvalidArgument, "vanilla_proofs"},
		{"empty vanilla", windowReq("a", win, 10, 0, [][]byte{wv[0], {}}), codes.InvalidArgument, "vanilla_proofs[1]"},
		{"oversized vanilla", windowReq("a", win, 10, 0, [][]byte{make([]byte, post.MaxSectorProofSize+1)}), codes.InvalidArgument, "vanilla_proofs[0]"},
		{"truncated vanilla", windowReq("a", win, 10, 0, truncated), codes.InvalidArgument, "vanilla_proofs[0]"},
		{"winning vanilla for window", windowReq("a", win, 10, 0, one), codes.InvalidArgument, "vanilla_proofs"},
		{"V1 past partition 0", windowReq("a", winV1, 5, 1, winV1.files("vanilla-5003.bin")), codes.Unimplemented, "V1"},
		{"unknown update proof", edit(snapReq("a", snap, sv), func(r *pb.SubmitProofRequest) { r.RegisteredProof = 5 }), codes.InvalidArgument, "registered_proof"},
		{"update sector size", edit(snapReq("a", snap, sv), func(r *pb.SubmitProofRequest) { r.SectorSize = 32 << 30 }), codes.InvalidArgument, "sector_size"},
		{"comm_r_old CID", edit(snapReq("a", snap, sv), func(r *pb.SubmitProofRequest) { r.CommROld = append([]byte{1, 2, 3, 4, 5, 6, 7, 8}, r.CommROld...) }), codes.InvalidArgument, "comm_r_old"},
		{"comm_r_new missing", edit(snapReq("a", snap, sv), func(r *pb.SubmitProofRequest) { r.CommRNew = nil }), codes.InvalidArgument, "comm_r_new"},
		{"comm_d_new not a scalar", edit(snapReq("a", snap, sv), func(r *pb.SubmitProofRequest) { r.CommDNew = ones }), codes.InvalidArgument, "comm_d_new"},
		{"partition count", snapReq("a", snap, append(sv, sv[0])), codes.InvalidArgument, "vanilla_proofs"},
		{"garbled update vanilla", snapReq("a", snap, [][]byte{sv[0][:100]}), codes.InvalidArgument, "vanilla_proofs[0]"},
		{"post vanilla for update", snapReq("a", snap, wv[:1]), codes.InvalidArgument, "vanilla_proofs[0]"},
	}
	f := newKindFake()
	ts := startServer(t, "unix", f, Options{})
	ctx := context.Background()
	for _, c := range cases {
		_, err := ts.client.SubmitProof(ctx, c.req)
		assert.Equal(t, c.code, status.Code(err), "%s: %v", c.name, err)
		assert.Contains(t, status.Convert(err).Message(), c.field, c.name)
		_, err = ts.client.Prove(ctx, &pb.ProveRequest{Submit: c.req})
		assert.Equal(t, c.code, status.Code(err), "%s (Prove): %v", c.name, err)
	}
	assert.Empty(t, f.calls())
	t.Logf("e.g. %v", func() error {
		_, err := ts.client.SubmitProof(ctx, windowReq("a", win, 10, 0, truncated))
		return err
	}())

	// A prover with Prove only proves PoRep.
	plain := startServer(t, "unix", newFake(), Options{})
	for _, req := range []*pb.SubmitProofRequest{windowReq("a", win, 10, 0, wv), winningReq("b", winning, one), snapReq("c", snap, sv)} {
		_, err := plain.client.SubmitProof(ctx, req)
		assert.Equal(t, codes.Unimplemented, status.Code(err), req.ProofKind.String())
	}
	st, err := plain.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.Queues, 1)
}

// TestJobTimeout: a kind's job timeout ends a running job (its Prove call
// cancelled) and a queued one (never started) FAILED; the request id then
// starts a new attempt; other kinds are not limited.
func TestJobTimeout(t *testing.T) {
	winning := loadVector(t, "post-2k", "winning-2k-v1")
	one := winning.files("vanilla-5002.bin")
	f := newKindFake()
	f.block = make(chan struct{})
	ts := startServer(t, "unix", f, Options{MaxConcurrent: 1, Timeouts: map[pb.ProofKind]time.Duration{
		pb.ProofKind_WINNING_POST: 300 * time.Millisecond,
	}})
	ctx := context.Background()

	t0 := time.Now()
	r, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: winningReq("winpost-1", winning, one)})
	require.NoError(t, err)
	assert.Equal(t, pb.AwaitProofResponse_FAILED, r.Result.Status)
	assert.Contains(t, r.Result.ErrorMessage, "deadline exceeded")
	assert.Less(t, time.Since(t0), 5*time.Second)
	assert.Len(t, f.calls(), 1, "it ran, and was cancelled")

	// Queued behind an unlimited PoRep job, a winning job times out unrun.
	ts.submit(ctx, t, porepReq("porep", "block-porep", pb.Priority_LOW))
	f.waitStart(t, "block-porep")
	r, err = ts.client.Prove(ctx, &pb.ProveRequest{Submit: winningReq("winpost-2", winning, one)})
	require.NoError(t, err)
	assert.Equal(t, pb.AwaitProofResponse_FAILED, r.Result.Status)
	assert.Contains(t, r.Result.ErrorMessage, "deadline exceeded")
	assert.Len(t, f.calls(), 1, "never started")
	time.Sleep(400 * time.Millisecond)
	close(f.release) // the PoRep job had no limit: it completes
	ar := ts.await(ctx, t, "porep")
	assert.Equal(t, pb.AwaitProofResponse_COMPLETED, ar.Status)

	// The same request id tries again, and completes in time.
	close(f.block)
	r, err = ts.client.Prove(ctx, &pb.ProveRequest{Submit: winningReq("winpost-2", winning, one)})
	require.NoError(t, err)
	assert.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Result.Status, r.Result.ErrorMessage)

	text, err := ts.srv.Engine.MetricsText()
	require.NoError(t, err)
	assert.Contains(t, text, `c2_serve_proofs_total{kind="WINNING_POST",outcome="timed_out"} 2`)
	st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.EqualValues(t, 2, st.TotalProofsFailed)
}

// writePoStParams writes insecure development parameters of the PoSt
// shapes named into dir, under the names FindPoStParams looks for.
func writePoStParams(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		s, ok := post.ShapeByName(n)
		require.True(t, ok, n)
		require.NoError(t, devparams.GeneratePoSt(dir, s))
	}
}

// verifyPartitions checks proof, one Groth16 proof per partition, against
// the verifying key file vk and Rust's public inputs.
func verifyPartitions(t *testing.T, vk string, proof []byte, inputs ...[]fr.Element) {
	t.Helper()
	key, err := groth16.ReadVerifyingKey(vk)
	require.NoError(t, err)
	ps, err := groth16.ReadProofs(proof)
	require.NoError(t, err)
	require.Len(t, ps, len(inputs))
	for k := range ps {
		require.NoError(t, groth16.Verify(key, &ps[k], inputs[k]), "partition %d", k)
	}
}

// provePoStDaemon serves a CPU Prover over development parameters of the
// 2 KiB Window and Winning PoSt circuits, made here.
func provePoStDaemon(t *testing.T) (*testServer, string) {
	t.Helper()
	dir := t.TempDir()
	t0 := time.Now()
	writePoStParams(t, dir, "StackedDrgWindow2KiBV1_2", "StackedDrgWinning2KiBV1")
	t.Logf("PoSt dev parameters in %v", time.Since(t0).Round(time.Millisecond))
	p, err := c2.New(c2.Config{Backend: c2.BackendCPU, Params: dir, TrustParams: true})
	require.NoError(t, err)
	ts := startServer(t, "unix", p, Options{Params: dir, MaxConcurrent: 2})
	t.Cleanup(func() { ts.stop(t); p.Close() })
	return ts, dir
}

func postVK(t *testing.T, dir, name string) string {
	s, _ := post.ShapeByName(name)
	f, _, err := c2.FindPoStParams(dir, s, ".vk")
	require.NoError(t, err)
	return f
}

// TestRealPoSt proves, through the daemon, both partitions of refgen's
// 2 KiB Window PoSt (V1_1 in Curio's numbering: partition 0 over sectors
// 5001 and 5002, partition 1 over 5003 alone, as Curio sends them), V1's
// partition 1 (its challenges depend on the partition's place) and the
// Winning PoSt, on a CPU Prover; each proof verifies under the public
// inputs rust-fil-proofs computed for the whole PoSt. PreloadSRS loads the
// Window circuit into the prover ahead (its jobs wait for no parameters),
// each job reports its call's times, and EvictSRS drops the circuit. A
// vanilla proof for another randomness fails the job with the place named.
func TestRealPoSt(t *testing.T) {
	if testing.Short() {
		t.Skip("dev setup of the 2 KiB Window and Winning circuits and three proofs")
	}
	win := loadVector(t, "post-2k", "window-2k-v1_2")
	winning := loadVector(t, "post-2k", "winning-2k-v1")
	ts, dir := provePoStDaemon(t)
	ctx := context.Background()
	pre, err := ts.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "wpost-2k"})
	require.NoError(t, err)
	assert.False(t, pre.AlreadyLoaded)
	t.Logf("wpost-2k preloaded in %d ms", pre.LoadTimeMs)

	type job struct {
		req    *pb.SubmitProofRequest
		vk     string
		inputs []fr.Element
	}
	winV1 := loadVector(t, "post-2k", "window-2k-v1")
	jobs := []job{
		{windowReq("wdpost-1000-0", win, 10, 0, win.files("vanilla-5001.bin", "vanilla-5002.bin")), postVK(t, dir, win.proof), win.inputs[0]},
		{windowReq("wdpost-1000-1", win, 10, 1, win.files("vanilla-5003.bin")), postVK(t, dir, win.proof), win.inputs[1]},
		{windowReq("wdpost-v1-1000-1", winV1, 5, 1, winV1.files("vanilla-5003.bin")), postVK(t, dir, win.proof), winV1.inputs[1]},
		{winningReq("winpost-1000", winning, winning.files("vanilla-5002.bin")), postVK(t, dir, winning.proof), winning.inputs[0]},
	}
	for _, j := range jobs {
		ts.submit(ctx, t, j.req)
	}
	for _, j := range jobs {
		r := ts.await(ctx, t, j.req.RequestId)
		require.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Status, "%s: %s", j.req.RequestId, r.ErrorMessage)
		require.Len(t, r.Proof, groth16.ProofSize)
		verifyPartitions(t, j.vk, r.Proof, j.inputs)
		t.Logf("%s: %d ms (queue %d ms, srs_load %d ms, synthesis %d ms, gpu_compute %d ms)",
			j.req.RequestId, r.TotalMs, r.QueueWaitMs, r.SrsLoadMs, r.SynthesisMs, r.GpuComputeMs)
		assert.Positive(t, r.GpuComputeMs, "the job's own call is timed")
		assert.GreaterOrEqual(t, r.TotalMs, r.QueueWaitMs+r.SrsLoadMs+r.SynthesisMs+r.GpuComputeMs)
		if j.req.ProofKind == pb.ProofKind_WINDOW_POST_PARTITION {
			assert.Less(t, r.SrsLoadMs, pre.LoadTimeMs/2+1, "the preloaded circuit is used")
		}
	}

	// Another randomness: the vanilla proof's leaves are not the challenged ones.
	bad := winningReq("winpost-other", winning, winning.files("vanilla-5002.bin"))
	bad.Randomness = append([]byte(nil), bad.Randomness...)
	bad.Randomness[0] ^= 1
	r, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: bad})
	require.NoError(t, err)
	assert.Equal(t, pb.AwaitProofResponse_FAILED, r.Result.Status)
	assert.Contains(t, r.Result.ErrorMessage, "paths[0]")

	st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	var hot []string
	for _, s := range st.LoadedSrs {
		if s.Tier == pb.SRSStatus_HOT {
			hot = append(hot, s.CircuitId)
		}
	}
	assert.Equal(t, []string{"winning-2k", "wpost-2k"}, hot)
	for _, s := range st.LoadedSrs {
		assert.Positive(t, s.SizeBytes, s.CircuitId)
	}
	assert.EqualValues(t, 4, st.TotalProofsCompleted)
	assert.EqualValues(t, 1, st.TotalProofsFailed)

	e, err := ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "wpost-2k"})
	require.NoError(t, err)
	assert.True(t, e.WasLoaded)
	assert.Positive(t, e.FreedBytes)
	st, err = ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.LoadedSrs, 1)
	assert.Equal(t, "winning-2k", st.LoadedSrs[0].CircuitId)
}

// TestRealSnap proves refgen's 2 KiB SnapDeals update through the daemon
// on a CPU Prover over the shared development parameters, with the request
// as Curio's ProveUpdateCuzk fills it; the proof verifies under the public
// inputs rust-fil-proofs computed, and the job reports its call's times. Skipped under -short (a 1.7 M-constraint
// proof) unless C2_UPDATE_E2E is set.
func TestRealSnap(t *testing.T) {
	if testing.Short() && os.Getenv("C2_UPDATE_E2E") == "" {
		t.Skip("2 KiB SnapDeals: dev parameters (cached after the first run) and a 1.7 M-constraint proof")
	}
	snap := loadVector(t, "update-2k")
	p, err := devparams.UpdateDir()
	require.NoError(t, err)
	prover, err := c2.New(c2.Config{Backend: c2.BackendCPU, Params: p, TrustParams: true})
	require.NoError(t, err)
	ts := startServer(t, "tcp", prover, Options{Params: p})
	t.Cleanup(func() { ts.stop(t); prover.Close() })

	r, err := ts.client.Prove(context.Background(), &pb.ProveRequest{Submit: snapReq("snap-1000-6001", snap, snap.files(snap.order...))})
	require.NoError(t, err)
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Result.Status, r.Result.ErrorMessage)
	_, vk := devparams.UpdatePaths(p)
	verifyPartitions(t, vk, r.Result.Proof, snap.inputs...)
	res := r.Result
	t.Logf("snap: %d ms (srs_load %d ms, synthesis %d ms, gpu_compute %d ms)", res.TotalMs, res.SrsLoadMs, res.SynthesisMs, res.GpuComputeMs)
	assert.Positive(t, res.SrsLoadMs, "the first job reads the key and records the R1CS")
	assert.Positive(t, res.SynthesisMs)
	assert.Positive(t, res.GpuComputeMs)
	assert.GreaterOrEqual(t, res.TotalMs, res.QueueWaitMs+res.SrsLoadMs+res.SynthesisMs+res.GpuComputeMs)

	st, err := ts.client.GetStatus(context.Background(), &pb.GetStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.LoadedSrs, 1)
	assert.Equal(t, "snap-2k", st.LoadedSrs[0].CircuitId)
	assert.Equal(t, pb.SRSStatus_HOT, st.LoadedSrs[0].Tier)
	assert.True(t, strings.Contains(fmt.Sprint(st.Queues), "SNAP_DEALS_UPDATE"))
}

// shapeKindFake proves every kind and loads and drops PoRep circuits only
// (as a Prover other than *c2.Prover may); it records the Preload and
// Evict calls.
type shapeKindFake struct {
	*kindFake
	mu    sync.Mutex
	names []string
}

func (f *shapeKindFake) Preload(_ context.Context, proof string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names = append(f.names, "preload "+proof)
	return nil
}

func (f *shapeKindFake) Evict(proof string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names = append(f.names, "evict "+proof)
	return nil
}

// TestPreloadEvictPoSt: with a prover that loads PoRep circuits only,
// PreloadSRS of a PoSt circuit reads its parameter file into the page
// cache (WARM); a proof makes it HOT; EvictSRS cannot free it without a
// reopen (FailedPrecondition). PoRep circuits still go through the prover.
func TestPreloadEvictPoSt(t *testing.T) {
	dir := t.TempDir()
	s, _ := post.ShapeByName("StackedDrgWindow2KiBV1_2")
	require.NoError(t, os.WriteFile(filepath.Join(dir, c2.DevParamsPrefix+s.ParamsName()+".params"), make([]byte, 1<<20), 0o644))
	f := &shapeKindFake{kindFake: newKindFake()}
	ts := startServer(t, "unix", f, Options{Params: dir})
	ctx := context.Background()

	_, err := ts.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "winning-2k"})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "no parameter file")
	_, err = ts.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "wpost-3g"})
	assert.Equal(t, codes.NotFound, status.Code(err))
	r, err := ts.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "wpost-2k"})
	require.NoError(t, err)
	assert.False(t, r.AlreadyLoaded)
	st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.LoadedSrs, 1)
	assert.Equal(t, &pb.SRSStatus{CircuitId: "wpost-2k", Tier: pb.SRSStatus_WARM, SizeBytes: 1 << 20}, st.LoadedSrs[0])

	win := loadVector(t, "post-2k", "window-2k-v1_2")
	p, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: windowReq("w", win, 10, 0, win.files("vanilla-5001.bin"))})
	require.NoError(t, err)
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, p.Result.Status)
	st, err = ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.Equal(t, pb.SRSStatus_HOT, st.LoadedSrs[0].Tier)
	_, err = ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "wpost-2k"})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))

	_, err = ts.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	_, err = ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Equal(t, []string{"preload StackedDrg2KiBV1_1", "evict StackedDrg2KiBV1_1"}, f.names)
}

// loaderFake proves every kind, times its calls (times, for every kind)
// and loads and drops the circuits of every kind, as *c2.Prover does; it
// records the loader calls.
type loaderFake struct {
	*shapeKindFake
	times c2.ProveTimes
}

func (f *loaderFake) note(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names = append(f.names, s)
	return nil
}

func (f *loaderFake) PreloadUpdate(_ context.Context, proof string) error {
	return f.note("preload-update " + proof)
}
func (f *loaderFake) EvictUpdate(proof string) error { return f.note("evict-update " + proof) }
func (f *loaderFake) PreloadPoSt(_ context.Context, proof string) error {
	return f.note("preload-post " + proof)
}
func (f *loaderFake) EvictPoSt(proof string) error { return f.note("evict-post " + proof) }

func (f *loaderFake) ProveWindowPoStPartitionTimed(ctx context.Context, proof string, rnd [32]byte, partition int, vanilla [][]byte) ([]byte, c2.ProveTimes, error) {
	out, err := f.record(ctx, kindCall{method: "partition-timed", proof: proof, partition: partition, randomness: rnd, vanilla: vanilla})
	return out, f.times, err
}

// ProveWindowPoStPartition makes loaderFake a partitionProver (the engine
// prefers the timed variant).
func (f *loaderFake) ProveWindowPoStPartition(ctx context.Context, proof string, rnd [32]byte, partition int, vanilla [][]byte) ([]byte, error) {
	return f.record(ctx, kindCall{method: "partition", proof: proof, partition: partition, randomness: rnd, vanilla: vanilla})
}

func (f *loaderFake) ProveWindowPoStTimed(ctx context.Context, proof string, rnd [32]byte, vanilla [][]byte) ([]byte, c2.ProveTimes, error) {
	out, err := f.record(ctx, kindCall{method: "window-timed", proof: proof, randomness: rnd, vanilla: vanilla})
	return out, f.times, err
}

func (f *loaderFake) ProveWinningPoStTimed(ctx context.Context, proof string, rnd [32]byte, vanilla [][]byte) ([]byte, c2.ProveTimes, error) {
	out, err := f.record(ctx, kindCall{method: "winning-timed", proof: proof, randomness: rnd, vanilla: vanilla})
	return out, f.times, err
}

func (f *loaderFake) ProveUpdateTimed(ctx context.Context, proof string, comms c2.UpdateCommitments, vanilla [][]byte) ([]byte, c2.ProveTimes, error) {
	out, err := f.record(ctx, kindCall{method: "update-timed", proof: proof, comms: comms, vanilla: vanilla})
	return out, f.times, err
}

// TestPreloadEvictCircuits: with a prover that loads and drops the
// circuits of every kind, PreloadSRS of a SnapDeals or PoSt circuit loads
// it into the prover (HOT; Window through its V1_2 name, the circuit V1
// shares), once; jobs prove through the Timed methods (a Window partition
// at its partition_index, V1 past partition 0 included) and report their
// times as PoRep jobs do; EvictSRS drops one circuit through the prover,
// not while a job of it runs, and keeps the prover.
func TestPreloadEvictCircuits(t *testing.T) {
	dir := t.TempDir()
	sizes := map[string]int{"snap-2k": 1 << 20, "wpost-2k": 2 << 20, "winning-2k": 3 << 20}
	for _, w := range []struct {
		circuit, name string
	}{
		{"snap-2k", func() string { s, _ := updateShapeOf(0); return s.ParamsName() }()},
		{"wpost-2k", func() string { s, _ := postShapeOf(10); return s.ParamsName() }()},
		{"winning-2k", func() string { s, _ := postShapeOf(0); return s.ParamsName() }()},
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, c2.DevParamsPrefix+w.name+".params"), make([]byte, sizes[w.circuit]), 0o644))
	}
	f := &loaderFake{shapeKindFake: &shapeKindFake{kindFake: newKindFake()}, times: c2.ProveTimes{
		Checks: 400 * time.Millisecond, ParamsLoad: 1200 * time.Millisecond, Synthesis: 300 * time.Millisecond, Prove: 2300 * time.Millisecond, Verify: 5 * time.Millisecond}}
	f.block = make(chan struct{})
	ts := startServer(t, "unix", f, Options{Params: dir})
	ctx := context.Background()
	tiers := func() map[string]pb.SRSStatus_Tier {
		st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
		require.NoError(t, err)
		m := map[string]pb.SRSStatus_Tier{}
		for _, s := range st.LoadedSrs {
			m[s.CircuitId] = s.Tier
			assert.EqualValues(t, sizes[s.CircuitId], s.SizeBytes, s.CircuitId)
		}
		return m
	}

	for _, c := range []string{"snap-2k", "wpost-2k", "winning-2k", "wpost-2k"} {
		_, err := ts.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: c})
		require.NoError(t, err, c)
	}
	assert.Equal(t, map[string]pb.SRSStatus_Tier{"snap-2k": pb.SRSStatus_HOT, "wpost-2k": pb.SRSStatus_HOT, "winning-2k": pb.SRSStatus_HOT}, tiers())
	f.mu.Lock()
	assert.Equal(t, []string{"preload-update StackedDrg2KiBV1", "preload-post StackedDrgWindow2KiBV1_2", "preload-post StackedDrgWinning2KiBV1"},
		f.names, "each circuit loaded once")
	f.names = nil
	f.mu.Unlock()

	// A V1 Window job of partition 1 (proved at its place in the whole
	// proof) runs on wpost-2k: EvictSRS waits for it.
	winV1 := loadVector(t, "post-2k", "window-2k-v1")
	ts.submit(ctx, t, windowReq("w", winV1, 5, 1, winV1.files("vanilla-5003.bin")))
	f.waitStart(t, "partition-timed")
	_, err := ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "wpost-2k"})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	close(f.block)
	r := ts.await(ctx, t, "w")
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Status, r.ErrorMessage)
	assert.EqualValues(t, 1200, r.SrsLoadMs)
	assert.EqualValues(t, 300, r.SynthesisMs)
	assert.EqualValues(t, 2000, r.GpuComputeMs, "Prove − Synthesis")

	winning := loadVector(t, "post-2k", "winning-2k-v1")
	snap := loadVector(t, "update-2k")
	for _, req := range []*pb.SubmitProofRequest{winningReq("n", winning, winning.files("vanilla-5002.bin")), snapReq("s", snap, snap.files("vanilla-p0.bin"))} {
		p, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: req})
		require.NoError(t, err)
		require.Equal(t, pb.AwaitProofResponse_COMPLETED, p.Result.Status, p.Result.ErrorMessage)
		assert.EqualValues(t, 1200, p.Result.SrsLoadMs, req.ProofKind)
		assert.EqualValues(t, 300, p.Result.SynthesisMs, req.ProofKind)
		assert.EqualValues(t, 2000, p.Result.GpuComputeMs, req.ProofKind)
	}
	calls := f.calls()
	var methods []string
	for _, c := range calls {
		methods = append(methods, c.method)
	}
	assert.Equal(t, []string{"partition-timed", "winning-timed", "update-timed"}, methods, "the Timed methods only")
	assert.Equal(t, "StackedDrgWindow2KiBV1", calls[0].proof)
	assert.Equal(t, 1, calls[0].partition)
	// More sectors before the partition than c2 proves.
	_, err = ts.client.SubmitProof(ctx, windowReq("far", winV1, 5, c2.MaxPoStOffset/2+1, winV1.files("vanilla-5003.bin")))
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "partition_index")

	e, err := ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "wpost-2k"})
	require.NoError(t, err)
	assert.True(t, e.WasLoaded)
	assert.EqualValues(t, sizes["wpost-2k"], e.FreedBytes)
	e, err = ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "snap-2k"})
	require.NoError(t, err)
	assert.True(t, e.WasLoaded)
	assert.Equal(t, map[string]pb.SRSStatus_Tier{"winning-2k": pb.SRSStatus_HOT}, tiers())
	f.mu.Lock()
	assert.Equal(t, []string{"evict-post StackedDrgWindow2KiBV1_2", "evict-update StackedDrg2KiBV1"}, f.names)
	f.mu.Unlock()
	assert.False(t, f.closed, "the prover stays")

	text, err := ts.srv.Engine.MetricsText()
	require.NoError(t, err)
	for _, k := range []string{"WINDOW_POST_PARTITION", "WINNING_POST", "SNAP_DEALS_UPDATE"} {
		assert.Contains(t, text, `c2_serve_stage_seconds_count{kind="`+k+`",stage="srs_load"} 1`)
		assert.Contains(t, text, `c2_serve_stage_seconds_sum{kind="`+k+`",stage="checks"} 0.4`)
		assert.Contains(t, text, `c2_serve_stage_seconds_sum{kind="`+k+`",stage="gpu_compute"} 2`)
	}
}

// TestKindLimits: by default two PoRep C2s prove at a time: a third C2
// waits while a Winning PoSt submitted after it starts beside the two, and
// the third starts when the first ends. With porep lifted (0), C2s fill
// every slot.
func TestKindLimits(t *testing.T) {
	winning := loadVector(t, "post-2k", "winning-2k-v1")
	one := winning.files("vanilla-5002.bin")
	f := newKindFake()
	ts := startServer(t, "unix", f, Options{})
	ctx := context.Background()

	ts.submit(ctx, t, porepReq("c2-a", "block-a", pb.Priority_NORMAL))
	f.waitStart(t, "block-a")
	ts.submit(ctx, t, porepReq("c2-b", "block-b", pb.Priority_NORMAL))
	f.waitStart(t, "block-b")
	ts.submit(ctx, t, porepReq("c2-c", "block-c", pb.Priority_HIGH))
	r, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: winningReq("winpost", winning, one)})
	require.NoError(t, err)
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Result.Status, r.Result.ErrorMessage)
	st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	var porep *pb.QueueStatus
	for _, q := range st.Queues {
		if q.ProofKind == "POREP_SEAL_COMMIT" {
			porep = q
		}
	}
	require.NotNil(t, porep)
	assert.EqualValues(t, 2, porep.InProgress, "two C2s at a time")
	assert.EqualValues(t, 1, porep.Pending, "the third C2 waits, though a slot is free")
	assert.Equal(t, []string{"block-a", "block-b"}, f.callList(), "C2s started")
	require.Len(t, f.calls(), 1)
	assert.Equal(t, "winning", f.calls()[0].method)

	f.release <- struct{}{} // c2-a or c2-b ends; c2-c starts
	f.waitStart(t, "block-c")
	close(f.release)
	for _, id := range []string{"c2-a", "c2-b", "c2-c"} {
		require.Equal(t, pb.AwaitProofResponse_COMPLETED, ts.await(ctx, t, id).Status, id)
	}

	g := newFake()
	ts2 := startServer(t, "unix", g, Options{MaxConcurrent: 2, KindLimits: map[pb.ProofKind]int{pb.ProofKind_POREP_SEAL_COMMIT: 0}})
	ts2.submit(ctx, t, porepReq("c2-c", "block-c", pb.Priority_NORMAL))
	ts2.submit(ctx, t, porepReq("c2-d", "block-d", pb.Priority_NORMAL))
	g.waitStart(t, "block-c")
	g.waitStart(t, "block-d") // both run before either is released
	close(g.release)
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, ts2.await(ctx, t, "c2-c").Status)
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, ts2.await(ctx, t, "c2-d").Status)
}

// devKeyFake is loaderFake that also makes development keys, as *c2.Prover
// does; it records the calls, and fails one for the proof named in fail.
type devKeyFake struct {
	*loaderFake
	fail string
}

func (f *devKeyFake) dev(what, proof string) (*groth16.VerifyingKey, error) {
	f.note(what + " " + proof)
	if proof == f.fail {
		return nil, c2.ErrNoKeyMaker
	}
	return &groth16.VerifyingKey{}, nil
}

func (f *devKeyFake) DevSetupProof(_ context.Context, proof string, _ io.Reader) (*groth16.VerifyingKey, error) {
	return f.dev("dev-porep", proof)
}
func (f *devKeyFake) DevSetupPoSt(_ context.Context, proof string, _ io.Reader) (*groth16.VerifyingKey, error) {
	return f.dev("dev-post", proof)
}
func (f *devKeyFake) DevSetupUpdate(_ context.Context, proof string, _ io.Reader) (*groth16.VerifyingKey, error) {
	return f.dev("dev-update", proof)
}

// TestDevSetup: Engine.DevSetup makes each kind's circuit key through the
// prover's method of that kind, by its registered proof, and marks the
// circuit HOT; a prover's failure leaves it COLD, and unknown circuits
// and provers without development keys are refused.
func TestDevSetup(t *testing.T) {
	f := &devKeyFake{loaderFake: &loaderFake{shapeKindFake: &shapeKindFake{kindFake: newKindFake()}}, fail: "StackedDrg8MiBV1_1"}
	e := NewEngine(f, Options{})
	defer e.Shutdown(context.Background())
	ctx := context.Background()
	for _, c := range []string{"porep-32g", "winning-32g", "wpost-2k", "snap-64g"} {
		vk, _, err := e.DevSetup(ctx, c)
		require.NoError(t, err, c)
		require.NotNil(t, vk, c)
	}
	_, _, err := e.DevSetup(ctx, "porep-32g")
	require.ErrorContains(t, err, "loaded already")
	_, _, err = e.DevSetup(ctx, "porep-8m")
	require.ErrorIs(t, err, c2.ErrNoKeyMaker)
	_, _, err = e.DevSetup(ctx, "porep-16g")
	require.ErrorIs(t, err, ErrUnknownCircuit)
	f.mu.Lock()
	assert.Equal(t, []string{"dev-porep StackedDrg32GiBV1_1", "dev-post StackedDrgWinning32GiBV1", "dev-post StackedDrgWindow2KiBV1_2",
		"dev-update StackedDrg64GiBV1", "dev-porep StackedDrg8MiBV1_1"}, f.names)
	f.mu.Unlock()
	tiers := map[string]pb.SRSStatus_Tier{}
	for _, s := range e.Status().LoadedSrs {
		tiers[s.CircuitId] = s.Tier
	}
	assert.Equal(t, map[string]pb.SRSStatus_Tier{"porep-32g": pb.SRSStatus_HOT, "winning-32g": pb.SRSStatus_HOT,
		"wpost-2k": pb.SRSStatus_HOT, "snap-64g": pb.SRSStatus_HOT}, tiers)

	plain := NewEngine(newFake(), Options{})
	defer plain.Shutdown(context.Background())
	_, _, err = plain.DevSetup(ctx, "porep-2k")
	require.ErrorIs(t, err, ErrNoDevKeys)
}

// RegisteredProof is the inverse of the request's registered_proof
// mapping, kind by kind.
func TestRegisteredProof(t *testing.T) {
	for v := uint64(0); v < 15; v++ {
		s, ok := postShapeOf(v)
		require.True(t, ok)
		kind := pb.ProofKind_WINDOW_POST_PARTITION
		if s.Kind == post.Winning {
			kind = pb.ProofKind_WINNING_POST
		}
		got, err := RegisteredProof(kind, s.Name)
		require.NoError(t, err, s.Name)
		assert.Equal(t, v, got, s.Name)
	}
	for v := uint64(0); v < 5; v++ {
		s, _ := updateShapeOf(v)
		got, err := RegisteredProof(pb.ProofKind_SNAP_DEALS_UPDATE, s.Name)
		require.NoError(t, err, s.Name)
		assert.Equal(t, v, got, s.Name)
	}
	var fe *FieldError
	for _, c := range []struct {
		kind pb.ProofKind
		name string
	}{
		{pb.ProofKind_WINNING_POST, "StackedDrgWindow32GiBV1_2"},
		{pb.ProofKind_WINDOW_POST_PARTITION, "StackedDrgWinning32GiBV1"},
		{pb.ProofKind_SNAP_DEALS_UPDATE, "StackedDrg32GiBV1_1"},
		{pb.ProofKind_POREP_SEAL_COMMIT, "StackedDrg32GiBV1_1"},
	} {
		_, err := RegisteredProof(c.kind, c.name)
		require.ErrorAs(t, err, &fe, "%v %s", c.kind, c.name)
		assert.Equal(t, "registered_proof", fe.Field)
	}
}
