package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/porep"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cleanupShared()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// fakeProver records the inputs it is asked to prove, in call order. A call
// whose input starts with "block" waits until released (or cancelled); one
// starting with "bad" fails; others return "proof:" + input.
type fakeProver struct {
	mu      sync.Mutex
	calls   []string
	started chan string // receives each input as its call starts
	early   []string    // starts waitStart read while it waited for another (test goroutine only)
	release chan struct{}
	closed  bool
}

func newFake() *fakeProver {
	return &fakeProver{started: make(chan string, 64), release: make(chan struct{})}
}

func (f *fakeProver) Prove(ctx context.Context, c1 []byte) ([]byte, error) {
	in := string(c1)
	f.mu.Lock()
	f.calls = append(f.calls, in)
	f.mu.Unlock()
	f.started <- in
	switch {
	case strings.HasPrefix(in, "block"):
		select {
		case <-f.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case strings.HasPrefix(in, "bad"):
		return nil, errors.New("porep: C1 output: comm_r: bad")
	}
	return []byte("proof:" + in), nil
}

func (f *fakeProver) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}

func (f *fakeProver) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// waitStart waits for the call proving in to start (or finds it among the
// starts an earlier waitStart read and kept).
func (f *fakeProver) waitStart(t *testing.T, in string) {
	t.Helper()
	if i := slices.Index(f.early, in); i >= 0 {
		f.early = slices.Delete(f.early, i, i+1)
		return
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-f.started:
			if got == in {
				return
			}
			// Calls submitted together start in any order: this start is
			// kept for the waitStart that asks for it.
			f.early = append(f.early, got)
		case <-timeout:
			t.Fatalf("%q never started", in)
		}
	}
}

// testServer is a Server with a connected gRPC client.
type testServer struct {
	srv    *Server
	client pb.ProvingEngineClient
	conn   *grpc.ClientConn
	addr   string
	done   chan error
}

// transports are the listeners every test runs over: a unix socket and
// loopback TCP, addressed as Curio addresses them.
var transports = []string{"unix", "tcp"}

func startServer(t *testing.T, transport string, p Prover, opts Options) *testServer {
	t.Helper()
	var addr string
	switch transport {
	case "unix":
		// Socket paths are short (108 bytes): not under t.TempDir's long name.
		dir, err := os.MkdirTemp("", "c2s")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		addr = "unix://" + filepath.Join(dir, "c2.sock")
	default:
		addr = "127.0.0.1:0"
	}
	lis, err := Listen(addr)
	require.NoError(t, err)
	if transport == "tcp" {
		addr = lis.Addr().String()
	}
	ts := &testServer{srv: NewServer(p, opts), addr: addr, done: make(chan error, 1)}
	go func() { ts.done <- ts.srv.Serve(lis) }()
	ts.conn, err = grpc.NewClient(dialTarget(addr), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	require.NoError(t, err)
	ts.client = pb.NewProvingEngineClient(ts.conn)
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// dialTarget turns a daemon address into a gRPC target as Curio's client
// does: unix URLs as they are, host:port through the dns resolver.
func dialTarget(addr string) string {
	if strings.HasPrefix(addr, "unix:") {
		return addr
	}
	return "dns:///" + addr
}

// submit submits req, failing t if the call fails.
func (ts *testServer) submit(ctx context.Context, t *testing.T, req *pb.SubmitProofRequest) {
	t.Helper()
	_, err := ts.client.SubmitProof(ctx, req)
	require.NoError(t, err)
}

// await waits for job id's result, failing t if the call fails.
func (ts *testServer) await(ctx context.Context, t *testing.T, id string) *pb.AwaitProofResponse {
	t.Helper()
	r, err := ts.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: id})
	require.NoError(t, err)
	return r
}

func (ts *testServer) stop(t *testing.T) {
	if ts.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = ts.srv.Shutdown(ctx)
	require.NoError(t, <-ts.done)
	require.NoError(t, ts.conn.Close())
	ts.conn = nil
}

func porepReq(id, input string, prio pb.Priority) *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{
		RequestId: id, ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: 2048,
		RegisteredProof: 5, Priority: prio, VanillaProof: []byte(input),
	}
}

func forEachTransport(t *testing.T, f func(t *testing.T, transport string)) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) { f(t, tr) })
	}
}

func TestPriorityOrder(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		f, ts := startBusy(t, tr, "first", pb.Priority_LOW)
		ctx := context.Background()

		order := []struct {
			id   string
			prio pb.Priority
			pos  uint32
		}{
			{"low", pb.Priority_LOW, 0},
			{"normal", pb.Priority_NORMAL, 0},
			{"high", pb.Priority_HIGH, 0},
			{"critical", pb.Priority_CRITICAL, 0},
			{"normal2", pb.Priority_PRIORITY_UNSPECIFIED, 3}, // unspecified is NORMAL: after critical, high, normal
		}
		for _, o := range order {
			r, err := ts.client.SubmitProof(ctx, porepReq(o.id, o.id, o.prio))
			require.NoError(t, err)
			assert.Equal(t, o.id, r.JobId)
			assert.Equal(t, o.pos, r.QueuePosition, o.id)
		}
		st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
		require.NoError(t, err)
		require.Len(t, st.Queues, 1)
		assert.Equal(t, "POREP_SEAL_COMMIT", st.Queues[0].ProofKind)
		assert.EqualValues(t, 5, st.Queues[0].Pending)
		assert.EqualValues(t, 1, st.Queues[0].InProgress)

		close(f.release)
		for _, id := range []string{"low", "normal2"} {
			r := ts.await(ctx, t, id)
			require.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Status)
			assert.Equal(t, "proof:"+id, string(r.Proof))
		}
		assert.Equal(t, []string{"block-first", "critical", "high", "normal", "normal2", "low"}, f.callList())

		st, err = ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
		require.NoError(t, err)
		assert.EqualValues(t, 0, st.Queues[0].Pending)
		assert.EqualValues(t, 0, st.Queues[0].InProgress)
		assert.EqualValues(t, 6, st.TotalProofsCompleted)
	})
}

func TestConcurrentSubmissions(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		ts := startServer(t, tr, newFake(), Options{MaxConcurrent: 3})
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("job-%d", i)
				r, err := ts.client.Prove(context.Background(), &pb.ProveRequest{Submit: porepReq(id, id, pb.Priority_NORMAL)})
				switch {
				case err != nil:
					errs[i] = err
				case r.Result.Status != pb.AwaitProofResponse_COMPLETED || string(r.Result.Proof) != "proof:"+id:
					errs[i] = fmt.Errorf("%s: %v %q", id, r.Result.Status, r.Result.Proof)
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			assert.NoError(t, err)
		}
	})
}

func TestIdempotentRequestID(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		f := newFake()
		ts := startServer(t, tr, f, Options{})
		ctx := context.Background()
		a, err := ts.client.SubmitProof(ctx, porepReq("porep-1000-7", "block-a", pb.Priority_NORMAL))
		require.NoError(t, err)
		f.waitStart(t, "block-a")
		b, err := ts.client.SubmitProof(ctx, porepReq("porep-1000-7", "block-a", pb.Priority_NORMAL))
		require.NoError(t, err)
		assert.Equal(t, a.JobId, b.JobId)
		close(f.release)
		r, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: porepReq("porep-1000-7", "block-a", pb.Priority_NORMAL)})
		require.NoError(t, err)
		assert.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Result.Status)
		assert.Equal(t, "proof:block-a", string(r.Result.Proof))
		assert.Equal(t, []string{"block-a"}, f.callList(), "one request id, one proof")

		// A failed job is retried under the same id: a new attempt.
		r, err = ts.client.Prove(ctx, &pb.ProveRequest{Submit: porepReq("retry", "bad-1", pb.Priority_NORMAL)})
		require.NoError(t, err)
		assert.Equal(t, pb.AwaitProofResponse_FAILED, r.Result.Status)
		assert.Contains(t, r.Result.ErrorMessage, "comm_r")
		r, err = ts.client.Prove(ctx, &pb.ProveRequest{Submit: porepReq("retry", "good", pb.Priority_NORMAL)})
		require.NoError(t, err)
		assert.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Result.Status)

		// Without a request id every submission is a job of its own.
		x, err := ts.client.SubmitProof(ctx, porepReq("", "anon", pb.Priority_NORMAL))
		require.NoError(t, err)
		y, err := ts.client.SubmitProof(ctx, porepReq("", "anon", pb.Priority_NORMAL))
		require.NoError(t, err)
		assert.NotEqual(t, x.JobId, y.JobId)
	})
}

func TestCancel(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		f, ts := startBusy(t, tr, "running", pb.Priority_NORMAL)
		ctx := context.Background()
		ts.submit(ctx, t, porepReq("queued", "queued", pb.Priority_NORMAL))
		ts.submit(ctx, t, porepReq("next", "next", pb.Priority_LOW))

		c, err := ts.client.CancelProof(ctx, &pb.CancelProofRequest{JobId: "queued"})
		require.NoError(t, err)
		assert.False(t, c.WasRunning)
		c, err = ts.client.CancelProof(ctx, &pb.CancelProofRequest{JobId: "running"})
		require.NoError(t, err)
		assert.True(t, c.WasRunning)
		for _, id := range []string{"running", "queued"} {
			r := ts.await(ctx, t, id)
			assert.Equal(t, pb.AwaitProofResponse_CANCELLED, r.Status, id)
			assert.Empty(t, r.Proof)
		}
		// The slot is free: the next job runs; the cancelled queued one never did.
		r := ts.await(ctx, t, "next")
		assert.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Status)
		assert.Equal(t, []string{"block-running", "next"}, f.callList())

		_, err = ts.client.CancelProof(ctx, &pb.CancelProofRequest{JobId: "nope"})
		assert.Equal(t, codes.NotFound, status.Code(err))
		_, err = ts.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: "nope"})
		assert.Equal(t, codes.NotFound, status.Code(err))
	})
}

func TestRejections(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		f := newFake()
		ts := startServer(t, tr, f, Options{MaxConcurrent: 1, MaxPending: 1})
		ctx := context.Background()
		for _, k := range []pb.ProofKind{pb.ProofKind_SNAP_DEALS_UPDATE, pb.ProofKind_WINDOW_POST_PARTITION, pb.ProofKind_WINNING_POST} {
			req := porepReq("k", "x", pb.Priority_HIGH)
			req.ProofKind = k
			_, err := ts.client.SubmitProof(ctx, req)
			assert.Equal(t, codes.Unimplemented, status.Code(err), k.String())
			_, err = ts.client.Prove(ctx, &pb.ProveRequest{Submit: req})
			assert.Equal(t, codes.Unimplemented, status.Code(err), k.String())
		}
		req := porepReq("u", "x", pb.Priority_HIGH)
		req.ProofKind = pb.ProofKind_PROOF_KIND_UNSPECIFIED
		_, err := ts.client.SubmitProof(ctx, req)
		assert.Equal(t, codes.InvalidArgument, status.Code(err))
		_, err = ts.client.SubmitProof(ctx, porepReq("empty", "", pb.Priority_HIGH))
		assert.Equal(t, codes.InvalidArgument, status.Code(err))
		_, err = ts.client.Prove(ctx, &pb.ProveRequest{})
		assert.Equal(t, codes.InvalidArgument, status.Code(err))

		// Backpressure: one running, one pending, the next is refused.
		ts.submit(ctx, t, porepReq("a", "block-a", pb.Priority_NORMAL))
		f.waitStart(t, "block-a")
		ts.submit(ctx, t, porepReq("b", "b", pb.Priority_NORMAL))
		_, err = ts.client.SubmitProof(ctx, porepReq("c", "c", pb.Priority_NORMAL))
		assert.Equal(t, codes.ResourceExhausted, status.Code(err))

		r, err := ts.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: "b", TimeoutMs: 50})
		require.NoError(t, err)
		assert.Equal(t, pb.AwaitProofResponse_TIMEOUT, r.Status)
		close(f.release)
	})
}

func TestTimings(t *testing.T) {
	f, ts := startQueued(t, "unix")
	ctx := context.Background()
	time.Sleep(120 * time.Millisecond)
	close(f.release)
	r := ts.await(ctx, t, "b")
	assert.GreaterOrEqual(t, r.QueueWaitMs, uint64(100))
	assert.GreaterOrEqual(t, r.TotalMs, r.QueueWaitMs)
}

func TestShutdownDrains(t *testing.T) {
	f, ts := startQueued(t, "tcp")
	ctx := context.Background()
	results := awaitAll(ts, "a", "b")

	stopped := make(chan error, 1)
	go func() { stopped <- ts.srv.Shutdown(context.Background()) }()
	// Submit only once the engine is draining: a submission that wins the
	// race with Shutdown is queued, and resubmitting its id answers with
	// that job rather than an error.
	e := ts.srv.Engine
	require.Eventually(t, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.closed
	}, 5*time.Second, time.Millisecond, "the engine starts draining")
	_, err := ts.client.SubmitProof(ctx, porepReq("late", "late", pb.Priority_NORMAL))
	assert.Equal(t, codes.Unavailable, status.Code(err), "new jobs are refused while draining")
	// Calls are still answered while the queue drains.
	st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.EqualValues(t, 1, st.Queues[0].Pending)
	assert.EqualValues(t, 1, st.Queues[0].InProgress)
	close(f.release)
	for range 2 {
		r := <-results
		assert.Equal(t, pb.AwaitProofResponse_COMPLETED, r.Status, "%s: %s", r.JobId, r.ErrorMessage)
	}
	require.NoError(t, <-stopped)
	assert.Equal(t, []string{"block-a", "b"}, f.callList())
}

// startBusy starts a server running one job at a time over transport,
// with job id of priority prio running: its input is "block-"+id, held in
// f until f.release closes.
func startBusy(t *testing.T, transport, id string, prio pb.Priority) (*fakeProver, *testServer) {
	t.Helper()
	f := newFake()
	ts := startServer(t, transport, f, Options{MaxConcurrent: 1})
	ts.submit(context.Background(), t, porepReq(id, "block-"+id, prio))
	f.waitStart(t, "block-"+id)
	return f, ts
}

// startQueued is startBusy with job "a" running and job "b" queued behind
// it.
func startQueued(t *testing.T, transport string) (*fakeProver, *testServer) {
	t.Helper()
	f, ts := startBusy(t, transport, "a", pb.Priority_NORMAL)
	ts.submit(context.Background(), t, porepReq("b", "b", pb.Priority_NORMAL))
	return f, ts
}

// awaitAll starts an AwaitProof call per id and returns their results as
// they come; a failed call yields a response carrying its error.
func awaitAll(ts *testServer, ids ...string) <-chan *pb.AwaitProofResponse {
	results := make(chan *pb.AwaitProofResponse, len(ids))
	var started sync.WaitGroup
	for _, id := range ids {
		started.Add(1)
		go func() {
			started.Done()
			r, err := ts.client.AwaitProof(context.Background(), &pb.AwaitProofRequest{JobId: id})
			if err != nil {
				r = &pb.AwaitProofResponse{JobId: id, ErrorMessage: err.Error()}
			}
			results <- r
		}()
	}
	started.Wait()
	time.Sleep(50 * time.Millisecond) // the calls have reached the server
	return results
}

func TestShutdownCancelsAtDeadline(t *testing.T) {
	f, ts := startQueued(t, "unix")
	ctx := context.Background()
	results := awaitAll(ts, "a", "b")
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, ts.srv.Shutdown(sctx), context.DeadlineExceeded)
	for range 2 {
		r := <-results
		assert.Equal(t, pb.AwaitProofResponse_CANCELLED, r.Status, "%s: %s", r.JobId, r.ErrorMessage)
	}
	assert.Equal(t, []string{"block-a"}, f.callList())
}

func TestMetrics(t *testing.T) {
	f := newFake()
	ts := startServer(t, "tcp", f, Options{MaxConcurrent: 1, HostMemory: 1 << 30})
	ctx := context.Background()
	for _, in := range []string{"ok1", "ok2", "bad"} {
		_, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: porepReq(in, in, pb.Priority_NORMAL)})
		require.NoError(t, err)
	}
	ts.submit(ctx, t, porepReq("held", "block-held", pb.Priority_NORMAL))
	f.waitStart(t, "block-held")
	ts.submit(ctx, t, porepReq("waiting", "waiting", pb.Priority_NORMAL))

	mlis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	mdone := make(chan error, 1)
	go func() { mdone <- ts.srv.ServeMetrics(mlis) }()
	resp, err := http.Get("http://" + mlis.Addr().String() + "/metrics")
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)

	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		fam, ok := fams[name]
		require.True(t, ok, "no %s", name)
	next:
		for _, m := range fam.Metric {
			for _, l := range m.Label {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
		t.Fatalf("%s%v: not found", name, labels)
		return 0
	}
	porepKind := map[string]string{"kind": "POREP_SEAL_COMMIT"}
	assert.Equal(t, 2.0, value("c2_serve_proofs_total", map[string]string{"kind": "POREP_SEAL_COMMIT", "outcome": "completed"}))
	assert.Equal(t, 1.0, value("c2_serve_proofs_total", map[string]string{"kind": "POREP_SEAL_COMMIT", "outcome": "failed"}))
	assert.Equal(t, 1.0, value("c2_serve_queue_pending", porepKind))
	assert.Equal(t, 1.0, value("c2_serve_queue_running", porepKind))
	assert.Equal(t, 3.0, value("c2_serve_stage_seconds", map[string]string{"kind": "POREP_SEAL_COMMIT", "stage": "total"}))
	assert.Equal(t, float64(1<<30), value("c2_host_memory_budget_bytes", nil))

	// The same figures over gRPC.
	m, err := ts.client.GetMetrics(ctx, &pb.GetMetricsRequest{})
	require.NoError(t, err)
	fams2, err := parser.TextToMetricFamilies(strings.NewReader(m.PrometheusText))
	require.NoError(t, err)
	assert.Contains(t, fams2, "c2_serve_proofs_total")

	close(f.release)
	ts.stop(t)
	require.NoError(t, <-mdone)
}

// preload2KiB asks PreloadSRS for an unknown circuit (NotFound), then twice
// for porep-2k: loaded by the first call, already loaded at the second. It
// returns the one circuit GetStatus lists then.
func preload2KiB(t *testing.T, c pb.ProvingEngineClient) *pb.SRSStatus {
	t.Helper()
	ctx := context.Background()
	_, err := c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-99g"})
	assert.Equal(t, codes.NotFound, status.Code(err))
	r, err := c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.False(t, r.AlreadyLoaded)
	r, err = c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.True(t, r.AlreadyLoaded)
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.LoadedSrs, 1)
	assert.Equal(t, "porep-2k", st.LoadedSrs[0].CircuitId)
	return st.LoadedSrs[0]
}

func TestPreloadEvict(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, c2.DevParamsPrefix+porep.Shape2KiB.ParamsName()+".params")
	require.NoError(t, os.WriteFile(file, make([]byte, 3<<20), 0o644))
	f := newFake()
	var reopened *fakeProver
	ts := startServer(t, "unix", f, Options{Params: dir, Reopen: func() (Prover, error) {
		reopened = newFake()
		return reopened, nil
	}})
	ctx := context.Background()

	_, err := ts.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-8m"})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err), "no parameter file")
	srs := preload2KiB(t, ts.client)
	assert.Equal(t, pb.SRSStatus_WARM, srs.Tier)
	assert.EqualValues(t, 3<<20, srs.SizeBytes)

	// A completed proof leaves the key in the prover: HOT. Evicting it
	// replaces the prover.
	p, err := ts.client.Prove(ctx, &pb.ProveRequest{Submit: porepReq("x", "x", pb.Priority_NORMAL)})
	require.NoError(t, err)
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, p.Result.Status)
	st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
	require.NoError(t, err)
	assert.Equal(t, pb.SRSStatus_HOT, st.LoadedSrs[0].Tier)
	e, err := ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.True(t, e.WasLoaded)
	assert.EqualValues(t, 3<<20, e.FreedBytes)
	assert.True(t, f.closed)
	e, err = ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.False(t, e.WasLoaded)
	p, err = ts.client.Prove(ctx, &pb.ProveRequest{Submit: porepReq("y", "y", pb.Priority_NORMAL)})
	require.NoError(t, err)
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, p.Result.Status)
	assert.Equal(t, []string{"y"}, reopened.callList(), "later jobs run on the new prover")
}

// shapeFake is a fakeProver that also times its calls and loads and drops
// circuits, as *c2.Prover does.
type shapeFake struct {
	*fakeProver
	times    c2.ProveTimes
	mu       sync.Mutex
	preloads []string
	evicts   []string
	evictErr error
}

func (f *shapeFake) ProveTimed(ctx context.Context, c1 []byte) ([]byte, c2.ProveTimes, error) {
	proof, err := f.Prove(ctx, c1)
	return proof, f.times, err
}

func (f *shapeFake) Preload(_ context.Context, proof string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.preloads = append(f.preloads, proof)
	return nil
}

func (f *shapeFake) Evict(proof string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evicts = append(f.evicts, proof)
	return f.evictErr
}

func (f *shapeFake) lists() (preloads, evicts []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.preloads...), append([]string(nil), f.evicts...)
}

// With a prover that loads and drops circuits, PreloadSRS loads one into it
// (HOT), EvictSRS drops that one only, and not while a job of it runs; a
// job's timings are its ProveTimed's.
func TestPreloadEvictShapes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, c2.DevParamsPrefix+porep.Shape2KiB.ParamsName()+".params")
	require.NoError(t, os.WriteFile(file, make([]byte, 3<<20), 0o644))
	f := &shapeFake{fakeProver: newFake(), times: c2.ProveTimes{
		ParamsLoad: 1500 * time.Millisecond, Synthesis: 2500 * time.Millisecond, Prove: 3500 * time.Millisecond}}
	ts := startServer(t, "unix", f, Options{Params: dir})
	ctx := context.Background()
	loaded := func() []*pb.SRSStatus {
		st, err := ts.client.GetStatus(ctx, &pb.GetStatusRequest{})
		require.NoError(t, err)
		return st.LoadedSrs
	}

	srs := preload2KiB(t, ts.client)
	assert.Equal(t, pb.SRSStatus_HOT, srs.Tier)
	assert.EqualValues(t, 3<<20, srs.SizeBytes)
	preloads, _ := f.lists()
	assert.Equal(t, []string{"StackedDrg2KiBV1_1"}, preloads, "loaded by the first call only")

	// Not while a job of the circuit runs.
	ts.submit(ctx, t, porepReq("a", "block-a", pb.Priority_NORMAL))
	f.waitStart(t, "block-a")
	_, err := ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "porep-2k"})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))
	close(f.release)
	a := ts.await(ctx, t, "a")
	require.Equal(t, pb.AwaitProofResponse_COMPLETED, a.Status)
	assert.EqualValues(t, 1500, a.SrsLoadMs)
	assert.EqualValues(t, 2500, a.SynthesisMs)
	assert.EqualValues(t, 1000, a.GpuComputeMs, "Prove − Synthesis")

	e, err := ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.True(t, e.WasLoaded)
	assert.EqualValues(t, 3<<20, e.FreedBytes)
	_, evicts := f.lists()
	assert.Equal(t, []string{"StackedDrg2KiBV1_1"}, evicts)
	assert.False(t, f.closed, "the prover stays")
	assert.Empty(t, loaded())
	e, err = ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "porep-2k"})
	require.NoError(t, err)
	assert.False(t, e.WasLoaded)

	// The prover's refusal (a call of another request uses the circuit)
	// reaches the client.
	f.mu.Lock()
	f.evictErr = fmt.Errorf("%w: 1 calls are proving or loading StackedDrg2KiBV1", c2.ErrShapeInUse)
	f.mu.Unlock()
	_, err = ts.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "porep-2k"})
	assert.Equal(t, codes.FailedPrecondition, status.Code(err))

	text, err := ts.srv.Engine.MetricsText()
	require.NoError(t, err)
	assert.Contains(t, text, `c2_serve_stage_seconds_count{kind="POREP_SEAL_COMMIT",stage="srs_load"} 1`)
}

func TestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c2.toml")
	require.NoError(t, os.WriteFile(path, []byte(`
listen = "unix:///run/c2/c2.sock"
metrics_listen = ""
param_cache = "/srv/params"
preload = ["porep-32g"]
backend = "cuda"
devices = [0, 2]
host_memory = "96GiB"
memory_limit = "14GiB"
max_pending = 16
max_concurrent = 3
retain = "1h"
shutdown_timeout = "90s"

[max_running]
snap = 1

[job_timeout]
winning = "25s"
wpost = "20m"
`), 0o644))
	c, err := LoadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, "unix:///run/c2/c2.sock", c.Listen)
	assert.Equal(t, "", c.MetricsListen)
	assert.True(t, c.TrustParams, "default kept")
	assert.Equal(t, Bytes(96<<30), c.HostMemory)
	assert.Equal(t, Bytes(14<<30), c.MemoryLimit)
	assert.Zero(t, DefaultConfig().MemoryLimit, "the runtime's own limit by default")
	assert.Equal(t, Duration(90*time.Second), c.ShutdownTimeout)
	pc := c.ProverConfig()
	assert.Equal(t, c2.BackendCUDA, pc.Backend)
	assert.Equal(t, []int{0, 2}, pc.Devices)
	assert.Equal(t, "/srv/params", pc.Params)
	o := c.Options()
	assert.Equal(t, 16, o.MaxPending)
	assert.Equal(t, 3, o.MaxConcurrent)
	assert.Equal(t, time.Hour, o.Retain)
	assert.Equal(t, map[pb.ProofKind]time.Duration{pb.ProofKind_WINNING_POST: 25 * time.Second, pb.ProofKind_WINDOW_POST_PARTITION: 20 * time.Minute}, o.Timeouts)
	assert.Equal(t, map[pb.ProofKind]int{pb.ProofKind_POREP_SEAL_COMMIT: 2, pb.ProofKind_SNAP_DEALS_UPDATE: 1}, o.KindLimits, "the default porep = 2 kept beside snap")
	assert.Equal(t, DefaultKindLimits(), DefaultConfig().Options().KindLimits)

	require.NoError(t, os.WriteFile(path, []byte("host_memory = 1024\nmax_pendng = 3\n"), 0o644))
	_, err = LoadConfig(path)
	assert.ErrorContains(t, err, "max_pendng")
	require.NoError(t, os.WriteFile(path, []byte(`preload = ["porep-1t"]`), 0o644))
	_, err = LoadConfig(path)
	assert.ErrorIs(t, err, ErrUnknownCircuit)
	require.NoError(t, os.WriteFile(path, []byte(`preload = ["wpost-32g", "winning-2k", "snap-64g", "porep-8m"]`), 0o644))
	_, err = LoadConfig(path)
	assert.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte("[job_timeout]\nwindow = \"1m\"\n"), 0o644))
	_, err = LoadConfig(path)
	assert.ErrorContains(t, err, "job_timeout.window")
	require.NoError(t, os.WriteFile(path, []byte("memory_limit = -1\n"), 0o644))
	_, err = LoadConfig(path)
	assert.ErrorContains(t, err, "memory_limit")
	for _, bad := range []string{"[max_running]\nwindow = 1\n", "[max_running]\nporep = -1\n"} {
		require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
		_, err = LoadConfig(path)
		assert.ErrorContains(t, err, "max_running.", bad)
	}
	mr, err := ParseMaxRunning("porep=0, snap=2")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"porep": 0, "snap": 2}, mr)
	for _, bad := range []string{"porep", "post=1", "porep=two", "porep=-1"} {
		_, err := ParseMaxRunning(bad)
		assert.Error(t, err, bad)
	}
	jt, err := ParseJobTimeouts("winning=25s, snap=2h")
	require.NoError(t, err)
	assert.Equal(t, map[string]Duration{"winning": Duration(25 * time.Second), "snap": Duration(2 * time.Hour)}, jt)
	for _, bad := range []string{"winning", "post=1s", "wpost=soon", "wpost=-1s"} {
		_, err := ParseJobTimeouts(bad)
		assert.Error(t, err, bad)
	}

	for in, want := range map[string]int64{"4096": 4096, "512MiB": 512 << 20, "1.5GB": 1.5e9, "2G": 2 << 30} {
		n, err := ParseBytes(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, n, in)
	}
	_, err = ParseBytes("lots")
	assert.Error(t, err)
}

func TestListenUnixStale(t *testing.T) {
	dir, err := os.MkdirTemp("", "c2s")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.sock")
	l1, err := Listen("unix://" + path)
	require.NoError(t, err)
	_, err = Listen("unix://" + path)
	assert.ErrorContains(t, err, "another process")
	// A socket file left behind by a dead process is replaced.
	l1.(*net.UnixListener).SetUnlinkOnClose(false)
	require.NoError(t, l1.Close())
	l2, err := Listen("unix:" + path)
	require.NoError(t, err)
	require.NoError(t, l2.Close())
}
