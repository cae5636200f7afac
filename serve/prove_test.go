package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/devparams"
	"github.com/sealc2/c2/porep"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

const c1Path2KiB = "../testdata/refgen/out/porep-2k/c1.json"

// shared holds the development parameters and the one Prover of the tests
// that prove for real.
var shared struct {
	once sync.Once
	dir  string // parameter directory
	p    *c2.Prover
	err  error
}

func cleanupShared() {
	if shared.p != nil {
		shared.p.Close()
	}
}

// sharedProver returns a CPU Prover over development parameters for the
// 2 KiB shape, and their directory (devparams.Dir: $C2_TEST_PARAMS, else
// the cache `c2 demo` shares, generated there once).
func sharedProver(t *testing.T) (*c2.Prover, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("proves a 2^22-constraint circuit")
	}
	shared.once.Do(func() {
		shared.dir, shared.err = devparams.Dir()
		if shared.err == nil {
			shared.p, shared.err = c2.New(c2.Config{Backend: c2.BackendCPU, Params: shared.dir, TrustParams: true})
		}
	})
	require.NoError(t, shared.err)
	return shared.p, shared.dir
}

// curioWrap wraps a C1 output as Curio's PoRepSnarkCuzk does before putting
// it in vanilla_proof: Go's JSON of {SectorNum, Phase1Out, SectorSize},
// Phase1Out base64.
func curioWrap(t *testing.T, c1 []byte, sector uint64, size uint64) []byte {
	t.Helper()
	b, err := json.Marshal(struct {
		SectorNum  int64  `json:"SectorNum"`
		Phase1Out  []byte `json:"Phase1Out"`
		SectorSize uint64 `json:"SectorSize"`
	}{int64(sector), c1, size})
	require.NoError(t, err)
	return b
}

// verifyC1Proof checks proof against the verifying key in dir and public
// inputs derived from the C1's commitments, seed and replica id.
func verifyC1Proof(t *testing.T, dir string, c1 []byte, proof []byte) {
	t.Helper()
	out, err := porep.DecodeC1(c1)
	require.NoError(t, err)
	pub, _, err := out.PublicInputs()
	require.NoError(t, err)
	var vk *groth16.VerifyingKey
	if f, _, err := c2.FindParams(dir, porep.Shape2KiB, ".vk"); err == nil {
		vk, err = groth16.ReadVerifyingKey(f)
		require.NoError(t, err)
	} else {
		f, _, err := c2.FindParams(dir, porep.Shape2KiB, ".params")
		require.NoError(t, err)
		pk, err := groth16.ReadParams(f, groth16.TrustedFile())
		require.NoError(t, err)
		vk = &pk.VK
	}
	proofs, err := groth16.ReadProofs(proof)
	require.NoError(t, err)
	require.NoError(t, groth16.VerifyBatch(vk, proofs, pub))
}

// TestRealProof serves a real Prover on a unix socket and on loopback TCP
// at once: over the socket a proof is cancelled mid-way and a corrupt C1
// fails; over TCP the C1, wrapped as Curio wraps it, is proved, the proof
// verifies and the job's timings are the call's own; a repeated request id
// returns it without proving again; EvictSRS drops the circuit from the
// prover and PreloadSRS loads it back (HOT).
func TestRealProof(t *testing.T) {
	p, dir := sharedProver(t)
	raw, err := os.ReadFile(c1Path2KiB)
	require.NoError(t, err)

	srv := NewServer(p, Options{Params: dir, MaxConcurrent: 1})
	sockDir, err := os.MkdirTemp("", "c2s")
	require.NoError(t, err)
	defer os.RemoveAll(sockDir)
	unixAddr := "unix://" + filepath.Join(sockDir, "c2.sock")
	lu, err := Listen(unixAddr)
	require.NoError(t, err)
	lt, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 2)
	go func() { served <- srv.Serve(lu) }()
	go func() { served <- srv.Serve(lt) }()
	dial := func(addr string) pb.ProvingEngineClient {
		conn, err := grpc.NewClient(dialTarget(addr), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		return pb.NewProvingEngineClient(conn)
	}
	overUnix, overTCP := dial(unixAddr), dial(lt.Addr().String())
	ctx := context.Background()
	req := func(id string, c1 []byte) *pb.SubmitProofRequest {
		return &pb.SubmitProofRequest{
			RequestId: id, ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: 2048,
			RegisteredProof: 5, Priority: pb.Priority_NORMAL, VanillaProof: curioWrap(t, c1, 7, 2048),
			SectorNumber: 7, MinerId: 1000,
		}
	}

	// Cancel mid-proof: the job ends CANCELLED promptly and frees its slot.
	_, err = overUnix.SubmitProof(ctx, req("porep-1000-7-cancel", raw))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := overUnix.GetStatus(ctx, &pb.GetStatusRequest{})
		return err == nil && st.Queues[0].InProgress == 1
	}, 10*time.Second, 20*time.Millisecond)
	time.Sleep(time.Second)
	c, err := overUnix.CancelProof(ctx, &pb.CancelProofRequest{JobId: "porep-1000-7-cancel"})
	require.NoError(t, err)
	assert.True(t, c.WasRunning)
	t0 := time.Now()
	r, err := overUnix.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: "porep-1000-7-cancel"})
	require.NoError(t, err)
	assert.Equal(t, pb.AwaitProofResponse_CANCELLED, r.Status, r.ErrorMessage)
	assert.Less(t, time.Since(t0), 10*time.Second, "cancellation reaches Prove")
	st, err := overUnix.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.EqualValues(t, 0, st.Queues[0].InProgress)

	// A corrupt C1 fails with the field named.
	bad := []byte(strings.Replace(string(raw), `"registered_proof":"StackedDrg2KiBV1_1"`, `"registered_proof":"StackedDrg2KiBV9"`, 1))
	require.NotEqual(t, raw, bad)
	pr, err := overUnix.Prove(ctx, &pb.ProveRequest{Submit: req("porep-1000-8", bad)})
	require.NoError(t, err)
	assert.Equal(t, pb.AwaitProofResponse_FAILED, pr.Result.Status)
	assert.Contains(t, pr.Result.ErrorMessage, "registered_proof")

	// The proof itself, over TCP, with nothing cached: the cancel may have
	// come during the loads (which then stop) or after them, so the shape is
	// evicted once the cancelled job's loads have let go of it.
	require.Eventually(t, func() bool { return p.Evict("StackedDrg2KiBV1_1") == nil }, 30*time.Second, 20*time.Millisecond)
	pr, err = overTCP.Prove(ctx, &pb.ProveRequest{Submit: req("porep-1000-7", raw)})
	require.NoError(t, err)
	res := pr.Result
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, res.Status, res.ErrorMessage)
	require.Len(t, res.Proof, groth16.ProofSize)
	verifyC1Proof(t, dir, raw, res.Proof)
	// The shape was evicted before this job: it read the key and recorded
	// the R1CS itself, and says so.
	assert.Positive(t, res.SrsLoadMs, "key read and R1CS recorded")
	assert.Positive(t, res.SynthesisMs, "witness synthesis")
	assert.Positive(t, res.GpuComputeMs, "partitions proved")
	assert.GreaterOrEqual(t, res.TotalMs, res.QueueWaitMs+res.SrsLoadMs+res.SynthesisMs+res.GpuComputeMs)
	t.Logf("proved in %d ms (queue %d ms, parameters %d ms, synthesis %d ms, proving %d ms)",
		res.TotalMs, res.QueueWaitMs, res.SrsLoadMs, res.SynthesisMs, res.GpuComputeMs)

	// The same request id over the other transport: the same job, not a
	// second proof.
	t0 = time.Now()
	again, err := overUnix.Prove(ctx, &pb.ProveRequest{Submit: req("porep-1000-7", raw)})
	require.NoError(t, err)
	assert.Equal(t, res.Proof, again.Result.Proof)
	assert.Less(t, time.Since(t0), 2*time.Second)

	st, err = overTCP.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.EqualValues(t, 1, st.TotalProofsCompleted)
	assert.EqualValues(t, 1, st.TotalProofsFailed)
	require.NotEmpty(t, st.Gpus)
	require.Len(t, st.LoadedSrs, 1)
	assert.Equal(t, "porep-2k", st.LoadedSrs[0].CircuitId)
	assert.Equal(t, pb.SRSStatus_HOT, st.LoadedSrs[0].Tier)

	// Evict drops the circuit from the prover (not the prover: no Reopen
	// here); a Preload loads it again, taking as long as a load does.
	ev, err := overUnix.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.True(t, ev.WasLoaded)
	assert.Positive(t, ev.FreedBytes)
	st, err = overUnix.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.Empty(t, st.LoadedSrs)
	pl, err := overUnix.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.False(t, pl.AlreadyLoaded)
	assert.Greater(t, pl.LoadTimeMs, uint64(100), "the evicted key is read again")
	t.Logf("PreloadSRS after EvictSRS: %d ms", pl.LoadTimeMs)
	st, err = overUnix.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.LoadedSrs, 1)
	assert.Equal(t, pb.SRSStatus_HOT, st.LoadedSrs[0].Tier)
	pl, err = overUnix.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.True(t, pl.AlreadyLoaded)

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(sctx))
	require.NoError(t, <-served)
	require.NoError(t, <-served)
}

// rss returns the resident set size of this process (Linux), 0 elsewhere.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res int64
	if _, err := fmt.Sscan(string(b), &size, &res); err != nil {
		return 0
	}
	return res * int64(os.Getpagesize())
}

// TestMemoryFlat proves the 2 KiB C1 $C2_SERVE_SOAK times in sequence
// through the daemon over a unix socket and logs the process's resident
// memory after each proof; it fails when the last third grows past the
// first proof's level by more than 10 %. Skipped unless the variable is set.
func TestMemoryFlat(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("C2_SERVE_SOAK"))
	if n <= 0 {
		t.Skip("set C2_SERVE_SOAK=N to prove N times and watch memory")
	}
	p, dir := sharedProver(t)
	raw, err := os.ReadFile(c1Path2KiB)
	require.NoError(t, err)
	ts := startServer(t, "unix", p, Options{Params: dir, MaxConcurrent: 1})
	ctx := context.Background()
	var first int64
	t0 := time.Now()
	for i := range n {
		r, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: &pb.SubmitProofRequest{
			RequestId: fmt.Sprintf("soak-%d", i), ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: 2048,
			VanillaProof: curioWrap(t, raw, uint64(i), 2048),
		}})
		require.NoError(t, err)
		require.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Result.Status, r.Result.ErrorMessage)
		runtime.GC()
		m := rss()
		if i == 0 {
			first = m
		}
		t.Logf("proof %d: %d ms, RSS %.1f MiB", i+1, r.Result.TotalMs, float64(m)/(1<<20))
		if i >= 2*n/3 && first > 0 {
			assert.LessOrEqual(t, m, first+first/10, "proof %d: RSS %d, after the first %d", i+1, m, first)
		}
	}
	t.Logf("%d proofs in %s", n, time.Since(t0).Round(time.Second))
}
