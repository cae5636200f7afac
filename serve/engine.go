// Package serve runs a c2 Prover as a daemon that speaks the cuzk.v1 gRPC
// protocol (service cuzk.v1.ProvingEngine), so that Curio, configured with
// the daemon's address, proves through c2 instead of cuzk: PoRep C2
// (POREP_SEAL_COMMIT), SnapDeals (SNAP_DEALS_UPDATE), one Window PoSt
// partition (WINDOW_POST_PARTITION) and Winning PoSt (WINNING_POST), each
// request's fields read as Curio's client fills them (see kinds.go).
//
// Requests are checked when submitted: a field that cannot be proved as
// given (registered proof, sector size, randomness or commitments that are
// not 32-byte canonical scalars, too many, too large or undecodable vanilla
// proofs) is refused with InvalidArgument naming the field; a kind the
// Prover has no method for with Unimplemented. What the vanilla proofs
// prove is checked by the Prover when the job runs (a mismatch ends the
// job FAILED with the place named). Options.Timeouts bounds each kind's
// jobs from submission.
//
// Jobs wait in a priority queue (CRITICAL, HIGH, NORMAL, LOW; first come
// first served within a priority) and run at most Options.MaxConcurrent at a
// time on one shared Prover, and at most Options.KindLimits of one kind (one
// PoRep C2 at a time by default). A request_id names its job: submitting it again
// while the job waits, runs or has completed returns that job; after a
// failure or a cancellation it queues a new attempt. Metrics are exported
// in Prometheus format by Handler and GetMetrics.
//
// Timing fields of AwaitProofResponse: queue_wait_ms and total_ms are
// measured by the engine. With a Prover that times its calls of the job's
// kind (ProveTimed, ProveUpdateTimed, ProveWindowPoStPartitionTimed,
// ProveWinningPoStTimed, as *c2.Prover has) the others are the job's own
// call's (c2.ProveTimes): srs_load_ms its wait for the circuit's proving
// key and recorded R1CS (their read and recording on the circuit's first
// job, near zero once loaded), synthesis_ms its witness synthesis,
// gpu_compute_ms the rest of the wall time of its partitions' proving
// (Prove − Synthesis: preparation, device stages, the key's upload to a
// device on first use, verification; the synthesis of partition k+1
// overlaps the proving of k, and counts once, as synthesis); they are
// filled for failed and cancelled jobs too, as far as the job got. With
// another Prover srs_load_ms and synthesis_ms are 0 and gpu_compute_ms is
// the Prover's device stages summed over the job's partitions when the job
// ran alone (its counters are process-wide), else 0.
//
// PreloadSRS and EvictSRS act on one circuit ("porep-32g", "snap-32g",
// "wpost-32g", "winning-32g", as cuzk names them) through a Prover that
// loads and drops the circuits of its kind (Preload and Evict for PoRep,
// PreloadUpdate and EvictUpdate, PreloadPoSt and EvictPoSt, as *c2.Prover
// has); see Engine.Preload and Engine.Evict for other Provers, whose
// circuits a job marks HOT once it has proved on them.
package serve

import (
	"container/heap"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sealc2/c2"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

// Prover computes PoRep C2 proofs; *c2.Prover is one. Prove must return
// promptly once ctx is cancelled. The engine also uses, when a Prover has
// them, the methods of *c2.Prover of the same signatures: ProveUpdate
// (SNAP_DEALS_UPDATE), ProveWindowPoSt and ProveWinningPoSt
// (WINDOW_POST_PARTITION, WINNING_POST; without them those kinds are
// refused with Unimplemented), ProveWindowPoStPartition (a Window PoSt
// partition at its partition_index, used instead of ProveWindowPoSt),
// Stats (GetStatus, metrics), ProveTimed, ProveUpdateTimed,
// ProveWindowPoStPartitionTimed, ProveWindowPoStTimed and
// ProveWinningPoStTimed (a job's timings, used instead of the untimed
// method), and
// Preload and Evict, PreloadUpdate and EvictUpdate, PreloadPoSt and
// EvictPoSt (PreloadSRS, EvictSRS); test doubles may leave them out.
type Prover interface {
	Prove(ctx context.Context, c1 []byte) ([]byte, error)
}

// statsProver is implemented by provers that report counters, as *c2.Prover
// does; GetStatus and the metrics use them when present.
type statsProver interface {
	Stats() c2.Stats
}

// timedProver is implemented by provers that time one call's stages, as
// *c2.Prover does; the engine then proves with ProveTimed and fills the
// srs_load_ms, synthesis_ms and gpu_compute_ms of AwaitProofResponse.
type timedProver interface {
	ProveTimed(ctx context.Context, c1 []byte) ([]byte, c2.ProveTimes, error)
}

// shapeProver is implemented by provers that load and drop the parameters
// of one PoRep circuit, named by a registered proof such as
// "StackedDrg32GiBV1_1", as *c2.Prover does; PreloadSRS and EvictSRS then
// use them.
type shapeProver interface {
	Preload(ctx context.Context, proof string) error
	Evict(proof string) error
}

// updateShapeProver is shapeProver for SnapDeals circuits, named by a
// registered update proof such as "StackedDrg32GiBV1".
type updateShapeProver interface {
	PreloadUpdate(ctx context.Context, proof string) error
	EvictUpdate(proof string) error
}

// postShapeProver is shapeProver for PoSt circuits, named by a registered
// PoSt proof such as "StackedDrgWindow32GiBV1_2".
type postShapeProver interface {
	PreloadPoSt(ctx context.Context, proof string) error
	EvictPoSt(proof string) error
}

// Errors of Submit, mapped to gRPC codes by the service.
var (
	// ErrQueueFull: Options.MaxPending jobs already wait.
	ErrQueueFull = errors.New("serve: queue full")
	// ErrClosed: the engine is shutting down and accepts no new jobs.
	ErrClosed = errors.New("serve: shutting down")
	// ErrUnknownJob: no job has this id (or it ended longer ago than
	// Options.Retain).
	ErrUnknownJob = errors.New("serve: unknown job")
	// ErrUnsupportedKind: the Prover has no method for the proof kind, or
	// c2 does not prove this variant of it.
	ErrUnsupportedKind = errors.New("serve: proof kind not implemented")
)

// Options configure an Engine. Zero values take the defaults noted.
type Options struct {
	// MaxConcurrent bounds the Prove calls running at once; 0 means 3
	// (two C2s, whose syntheses and device stages overlap, and a PoSt or
	// SnapDeals job beside them).
	MaxConcurrent int
	// KindLimits bounds, per proof kind, the jobs of that kind running at
	// once, within MaxConcurrent; a kind absent or at 0 has no bound of its
	// own. A job whose kind is at its bound waits, and jobs of other kinds
	// behind it in the queue start first. nil means DefaultKindLimits().
	KindLimits map[pb.ProofKind]int
	// MaxPending bounds the jobs waiting to start; 0 means 256.
	MaxPending int
	// Retain is how long an ended job stays answerable by AwaitProof and
	// by its request_id; 0 means 30 minutes.
	Retain time.Duration
	// Params is the parameter directory (or file), used to report
	// parameter sizes and by PreloadSRS of a Prover without Preload;
	// empty disables both.
	Params string
	// HostMemory is the Prover's host memory budget, reported by
	// GetStatus as pinned_memory_limit_bytes; 0 reports nothing.
	HostMemory int64
	// Reopen, when set, makes EvictSRS able to free the parameters of a
	// Prover without Evict: with no job running, the engine closes its
	// Prover (when it is an io.Closer) and continues with the one Reopen
	// returns.
	Reopen func() (Prover, error)
	// Timeouts bounds the jobs of a proof kind: one not ended this long
	// after its submission is taken from the queue, or has its Prove call
	// cancelled, and ends FAILED ("deadline exceeded"). Kinds absent or 0
	// have no limit.
	Timeouts map[pb.ProofKind]time.Duration
}

// DefaultKindLimits returns a new map that runs two PoRep C2s at a time, so
// that with the default MaxConcurrent of 3 a PoSt or SnapDeals job always
// starts beside them. Two C2s in flight keep the devices busier than one
// (one's first partitions are synthesized while the other's last are
// proved; both share the shape's witnesses, older first), and a PoSt
// proves between their partitions: 32 GiB sectors through `c2 serve` on
// one H200, 11.9 s a C2 against 12.2 s one at a time, and a Winning PoSt
// answered in 2.9–3.9 s beside them (0.12–0.15 s alone; BENCHMARKS.md).
func DefaultKindLimits() map[pb.ProofKind]int {
	return map[pb.ProofKind]int{pb.ProofKind_POREP_SEAL_COMMIT: 2}
}

func (o Options) withDefaults() Options {
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 3
	}
	if o.KindLimits == nil {
		o.KindLimits = DefaultKindLimits()
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 256
	}
	if o.Retain <= 0 {
		o.Retain = 30 * time.Minute
	}
	return o
}

type jobState int

const (
	statePending jobState = iota
	stateRunning
	stateDone
)

// job is one proof request. Fields after mu-protected ones are written by
// the engine under Engine.mu; result and the times are final once done is
// closed.
type job struct {
	id      string
	kind    pb.ProofKind
	prio    pb.Priority
	seq     uint64
	task    *task         // nil once ended
	circuit string        // e.g. "porep-32g", "wpost-32g"; "" when the sector size is unknown
	timer   *time.Timer   // Options.Timeouts of its kind, nil without
	expired time.Duration // set when the timeout ended it

	ctx    context.Context
	cancel context.CancelFunc

	state     jobState
	index     int // in the queue heap, -1 when not queued
	cancelled bool
	submitted time.Time
	started   time.Time
	ended     time.Time

	done   chan struct{}
	result *pb.AwaitProofResponse
}

// queue is a heap of pending jobs: higher priority first, then older.
type queue []*job

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio > q[j].prio
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *queue) Push(x any) {
	j := x.(*job)
	j.index = len(*q)
	*q = append(*q, j)
}
func (q *queue) Pop() any {
	old := *q
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	j.index = -1
	return j
}

// srsEntry is what the engine knows of one circuit's parameters.
type srsEntry struct {
	tier pb.SRSStatus_Tier
	size uint64
	gen  uint64 // evictions so far, so that a Preload racing one does not mark HOT
}

// Engine queues proof jobs and runs them on a Prover. Its methods are safe
// for concurrent use.
type Engine struct {
	opts    Options
	metrics *metrics
	start   time.Time

	mu       sync.Mutex
	cond     *sync.Cond // signalled when a job is queued, a slot frees or the engine closes
	prover   Prover
	pending  queue
	jobs     map[string]*job
	ended    []*job // in end order, for expiry
	seq      uint64
	running  map[*job]struct{}
	starts   uint64 // jobs started so far
	closed   bool
	paused   bool // EvictSRS is replacing the prover
	srs      map[string]*srsEntry
	complete uint64
	failed   uint64

	workers sync.WaitGroup
}

// NewEngine starts an engine proving on p. Stop it with Shutdown.
func NewEngine(p Prover, opts Options) *Engine {
	e := &Engine{
		opts:    opts.withDefaults(),
		start:   time.Now(),
		prover:  p,
		jobs:    make(map[string]*job),
		running: make(map[*job]struct{}),
		srs:     make(map[string]*srsEntry),
	}
	e.cond = sync.NewCond(&e.mu)
	e.metrics = newMetrics(e)
	for range e.opts.MaxConcurrent {
		e.workers.Add(1)
		go e.work()
	}
	return e
}

// Submit queues a job for req, or returns the job its request_id already
// names (see the package documentation). It returns the job id and the
// number of jobs queued ahead of it (a job whose kind is at its
// Options.KindLimits bound may be overtaken by those behind it).
func (e *Engine) Submit(req *pb.SubmitProofRequest) (id string, position int, err error) {
	prio := req.GetPriority()
	if prio == pb.Priority_PRIORITY_UNSPECIFIED {
		prio = pb.Priority_NORMAL
	}
	id = req.GetRequestId()
	if id == "" {
		var b [12]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", 0, err
		}
		id = "c2-" + hex.EncodeToString(b[:])
	}

	// A request id naming a live job answers with it before the request is
	// parsed again (Curio resubmits after a lost connection).
	e.mu.Lock()
	e.expire(time.Now())
	if j, ok := e.jobs[id]; ok && !j.retryable() {
		defer e.mu.Unlock()
		return id, e.position(j), nil
	}
	p := e.prover
	e.mu.Unlock()

	t, err := parse(req, p)
	if err != nil {
		return "", 0, err
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if j, ok := e.jobs[id]; ok && !j.retryable() {
		return id, e.position(j), nil
	}
	if e.closed {
		return "", 0, ErrClosed
	}
	if e.pending.Len() >= e.opts.MaxPending {
		return "", 0, fmt.Errorf("%w: %d jobs pending", ErrQueueFull, e.pending.Len())
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.seq++
	j := &job{
		id: id, kind: t.kind, prio: prio, seq: e.seq, task: t, circuit: t.circuit,
		ctx: ctx, cancel: cancel, submitted: time.Now(), done: make(chan struct{}),
	}
	if d := e.opts.timeoutOf(t.kind); d > 0 {
		j.timer = time.AfterFunc(d, func() { e.timeout(j, d) })
	}
	e.jobs[id] = j
	heap.Push(&e.pending, j)
	e.cond.Signal()
	return id, e.position(j), nil
}

// timeout ends job j, d after its submission, unless it has ended: a
// pending job leaves the queue, a running one has its Prove context
// cancelled; either ends FAILED.
func (e *Engine) timeout(j *job, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch j.state {
	case statePending:
		j.expired = d
		heap.Remove(&e.pending, j.index)
		e.finish(j, nil, nil, nil, nil)
	case stateRunning:
		if !j.cancelled {
			j.expired = d
			j.cancel()
		}
	}
}

// retryable reports whether a resubmission of j's request_id starts over:
// after a failure or a cancellation. e.mu is held.
func (j *job) retryable() bool {
	if j.state != stateDone {
		return false
	}
	s := j.result.GetStatus()
	return s == pb.AwaitProofResponse_FAILED || s == pb.AwaitProofResponse_CANCELLED
}

// position counts the jobs queued ahead of j in priority and submission
// order. Running and ended jobs are at position 0. e.mu is held.
func (e *Engine) position(j *job) int {
	if j.state != statePending {
		return 0
	}
	n := 0
	for _, o := range e.pending {
		if o.prio > j.prio || (o.prio == j.prio && o.seq < j.seq) {
			n++
		}
	}
	return n
}

// expire forgets jobs that ended more than Retain ago. e.mu is held.
func (e *Engine) expire(now time.Time) {
	n := 0
	for n < len(e.ended) && now.Sub(e.ended[n].ended) > e.opts.Retain {
		if e.jobs[e.ended[n].id] == e.ended[n] {
			delete(e.jobs, e.ended[n].id)
		}
		e.ended[n] = nil
		n++
	}
	e.ended = e.ended[n:]
}

// work runs jobs until the engine closes and the queue is empty.
func (e *Engine) work() {
	defer e.workers.Done()
	for {
		e.mu.Lock()
		var j *job
		for {
			if e.closed && e.pending.Len() == 0 {
				e.mu.Unlock()
				return
			}
			if !e.paused {
				if j = e.next(); j != nil {
					break
				}
			}
			e.cond.Wait()
		}
		j.state = stateRunning
		j.started = time.Now()
		e.running[j] = struct{}{}
		p := e.prover
		var before c2.Stats
		sp, hasStats := p.(statsProver)
		if hasStats {
			before = sp.Stats()
		}
		e.starts++
		startNo := e.starts
		alone := len(e.running) == 1
		e.mu.Unlock()

		proof, times, err := j.task.prove(j.ctx, p)

		var after c2.Stats
		if hasStats {
			after = sp.Stats()
		}
		e.mu.Lock()
		// Stage counters are process-wide: attributable to j only when no
		// other job ran at any time during its call.
		alone = alone && len(e.running) == 1 && e.starts == startNo
		delete(e.running, j)
		var stages *c2.StageTimes
		if hasStats && alone {
			d := stageDelta(before.Stages, after.Stages)
			stages = &d
		}
		e.finish(j, proof, err, times, stages)
		e.cond.Broadcast()
		e.mu.Unlock()
	}
}

// next removes from the queue and returns its first job, in priority then
// submission order, whose kind is below its Options.KindLimits bound, or
// nil when there is none. e.mu is held.
func (e *Engine) next() *job {
	var skipped []*job
	var j *job
	for e.pending.Len() > 0 {
		c := heap.Pop(&e.pending).(*job)
		if e.kindHasRoom(c.kind) {
			j = c
			break
		}
		skipped = append(skipped, c)
	}
	for _, c := range skipped {
		heap.Push(&e.pending, c)
	}
	return j
}

// kindHasRoom reports whether one more job of kind may start. e.mu is held.
func (e *Engine) kindHasRoom(kind pb.ProofKind) bool {
	limit := e.opts.KindLimits[kind]
	if limit <= 0 {
		return true
	}
	n := 0
	for r := range e.running {
		if r.kind == kind {
			n++
		}
	}
	return n < limit
}

// finish records j's outcome and wakes its waiters. times are the Prove
// call's own stage times, stages the prover's counters over the call when
// no other job ran meanwhile; either may be nil. e.mu is held.
func (e *Engine) finish(j *job, proof []byte, err error, times *c2.ProveTimes, stages *c2.StageTimes) {
	j.ended = time.Now()
	j.state = stateDone
	r := &pb.AwaitProofResponse{JobId: j.id, TotalMs: ms(j.ended.Sub(j.submitted))}
	if !j.started.IsZero() {
		r.QueueWaitMs = ms(j.started.Sub(j.submitted))
	} else {
		r.QueueWaitMs = r.TotalMs
	}
	if times != nil {
		r.SrsLoadMs = ms(times.ParamsLoad)
		r.SynthesisMs = ms(times.Synthesis)
		r.GpuComputeMs = ms(gpuCompute(times))
	}
	if j.timer != nil {
		j.timer.Stop()
	}
	switch {
	case j.expired > 0 && !j.cancelled:
		r.Status = pb.AwaitProofResponse_FAILED
		r.ErrorMessage = fmt.Sprintf("serve: deadline exceeded: not proved within %s of submission (the %s job timeout)", j.expired, kindKey(j.kind))
		e.failed++
	case j.cancelled:
		r.Status = pb.AwaitProofResponse_CANCELLED
		r.ErrorMessage = "cancelled"
		if err != nil && !errors.Is(err, context.Canceled) {
			r.ErrorMessage = "cancelled: " + err.Error()
		}
	case err != nil:
		r.Status = pb.AwaitProofResponse_FAILED
		r.ErrorMessage = err.Error()
		e.failed++
	default:
		r.Status = pb.AwaitProofResponse_COMPLETED
		r.Proof = proof
		e.complete++
		if times == nil && stages != nil {
			r.GpuComputeMs = ms(stages.H + stages.BatchAdd + stages.Tail)
		}
		if j.circuit != "" {
			s := e.srsEntry(j.circuit)
			s.tier = pb.SRSStatus_HOT
		}
	}
	j.result = r
	j.task = nil
	j.cancel()
	close(j.done)
	e.ended = append(e.ended, j)
	e.metrics.observe(j, r, times, stages)
}

func (e *Engine) srsEntry(circuit string) *srsEntry {
	s, ok := e.srs[circuit]
	if !ok {
		s = &srsEntry{tier: pb.SRSStatus_COLD, size: e.paramsSize(circuit)}
		e.srs[circuit] = s
	}
	return s
}

// gpuCompute is a timed call's gpu_compute: its proving span less the
// synthesis inside it (partition k+1 is synthesized while k is proved).
func gpuCompute(tm *c2.ProveTimes) time.Duration { return max(0, tm.Prove-tm.Synthesis) }

func stageDelta(a, b c2.StageTimes) c2.StageTimes {
	return c2.StageTimes{
		Prep: b.Prep - a.Prep, H: b.H - a.H, BatchAdd: b.BatchAdd - a.BatchAdd, Tail: b.Tail - a.Tail,
		BG2: b.BG2 - a.BG2, BG2Wait: b.BG2Wait - a.BG2Wait, Epilogue: b.Epilogue - a.Epilogue, Verify: b.Verify - a.Verify,
	}
}

func ms(d time.Duration) uint64 { return uint64(max(d, 0) / time.Millisecond) }

// Await waits until job id ends, timeout passes (0: no limit) or ctx is
// done. On timeout the response has status TIMEOUT and the job goes on.
func (e *Engine) Await(ctx context.Context, id string, timeout time.Duration) (*pb.AwaitProofResponse, error) {
	e.mu.Lock()
	j, ok := e.jobs[id]
	e.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownJob, id)
	}
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-j.done:
		return j.result, nil
	case <-expired:
		return &pb.AwaitProofResponse{JobId: id, Status: pb.AwaitProofResponse_TIMEOUT, ErrorMessage: "still " + j.stateName(e)}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (j *job) stateName(e *Engine) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if j.state == stateRunning {
		return "running"
	}
	return "pending"
}

// Cancel stops job id: a pending job leaves the queue, a running one has
// its Prove context cancelled and ends as soon as Prove returns. wasRunning
// reports whether it had started; cancelling an ended job changes nothing.
func (e *Engine) Cancel(id string) (wasRunning bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, ok := e.jobs[id]
	if !ok {
		return false, fmt.Errorf("%w: %q", ErrUnknownJob, id)
	}
	switch j.state {
	case statePending:
		heap.Remove(&e.pending, j.index)
		j.cancelled = true
		e.finish(j, nil, nil, nil, nil)
		return false, nil
	case stateRunning:
		j.cancelled = true
		j.cancel()
		return true, nil
	}
	return false, nil
}

// kindCounts is the queue of one proof kind.
type kindCounts struct{ pending, running int }

// counts returns pending and running jobs per kind, with every kind the
// prover proves present. e.mu is held.
func (e *Engine) counts() map[pb.ProofKind]kindCounts {
	m := map[pb.ProofKind]kindCounts{}
	for _, k := range allKinds {
		if supports(e.prover, k) {
			m[k] = kindCounts{}
		}
	}
	for _, j := range e.pending {
		c := m[j.kind]
		c.pending++
		m[j.kind] = c
	}
	for j := range e.running {
		c := m[j.kind]
		c.running++
		m[j.kind] = c
	}
	return m
}

// Shutdown stops accepting jobs and lets queued and running ones finish
// until ctx is done; then it cancels what is left and waits for the workers
// to return. It returns ctx's error when work had to be cancelled.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.cond.Broadcast()
	e.mu.Unlock()
	idle := make(chan struct{})
	go func() {
		e.workers.Wait()
		close(idle)
	}()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
	}
	e.mu.Lock()
	for e.pending.Len() > 0 {
		j := heap.Pop(&e.pending).(*job)
		j.cancelled = true
		e.finish(j, nil, nil, nil, nil)
	}
	for j := range e.running {
		j.cancelled = true
		j.cancel()
	}
	e.cond.Broadcast()
	e.mu.Unlock()
	<-idle
	return ctx.Err()
}

// replaceProver implements EvictSRS's freeing: with no job running it
// closes the current prover and installs a fresh one from Options.Reopen.
// It returns the circuits that were loaded.
func (e *Engine) replaceProver() (freed map[string]*srsEntry, err error) {
	e.mu.Lock()
	if e.opts.Reopen == nil {
		e.mu.Unlock()
		return nil, errors.New("serve: the prover keeps parameters for its lifetime and no reopen is configured")
	}
	if len(e.running) > 0 || e.paused {
		e.mu.Unlock()
		return nil, errors.New("serve: jobs are running on these parameters; evict when the engine is idle")
	}
	e.paused = true
	old := e.prover
	e.mu.Unlock()

	if c, ok := old.(io.Closer); ok {
		err = c.Close()
	}
	var p Prover
	if err == nil {
		p, err = e.opts.Reopen()
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	e.paused = false
	e.cond.Broadcast()
	if err != nil {
		// Without a working prover every later job fails with this error.
		e.prover = brokenProver{err}
		return nil, fmt.Errorf("serve: reopening the prover: %w", err)
	}
	e.prover = p
	freed = e.srs
	e.srs = make(map[string]*srsEntry)
	return freed, nil
}

// brokenProver fails every job after a failed reopen.
type brokenProver struct{ err error }

func (b brokenProver) Prove(context.Context, []byte) ([]byte, error) { return nil, b.fail() }

func (b brokenProver) ProveWindowPoSt(context.Context, string, [32]byte, [][]byte) ([]byte, error) {
	return nil, b.fail()
}

func (b brokenProver) ProveWinningPoSt(context.Context, string, [32]byte, [][]byte) ([]byte, error) {
	return nil, b.fail()
}

func (b brokenProver) ProveUpdate(context.Context, string, c2.UpdateCommitments, [][]byte) ([]byte, error) {
	return nil, b.fail()
}

func (b brokenProver) fail() error { return fmt.Errorf("serve: no prover: %w", b.err) }
