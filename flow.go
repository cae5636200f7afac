package c2

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/paramdigest"
	"github.com/sealc2/c2/internal/route"
	"github.com/sealc2/c2/internal/stage"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// This file holds the steps every proof kind takes between its native
// checks and its verified proofs: finding a parameter file by its official
// name, reading the key, recording the R1CS beside it, and proving
// partitions as their witnesses are synthesized, each proof verified.

// findParamsFile resolves path for the official parameter base name: path
// itself when it is a file, else in the directory path the official file
// (name+ext) or, failing that, the development one (DevParamsPrefix +
// name+ext). dev reports a file named as a development one. Errors wrap
// ErrNoParams.
func findParamsFile(path, name, ext string) (file string, dev bool, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", false, fmt.Errorf("%w: %v", ErrNoParams, err)
	}
	if !st.IsDir() {
		return path, strings.HasPrefix(filepath.Base(path), DevParamsPrefix), nil
	}
	for _, n := range []string{name + ext, DevParamsPrefix + name + ext} {
		q := filepath.Join(path, n)
		if _, err := os.Stat(q); err == nil {
			return q, n != name+ext, nil
		}
	}
	return "", false, fmt.Errorf("%w: no %s%s (or %s…) in %s", ErrNoParams, name, ext, DevParamsPrefix, path)
}

// readKey opens the proving key in the file find resolves (its verifying
// key decoded, its bases read later by the devices that load it; see
// route.Keys) and checks that it has numInputs public inputs, ONE included.
// label names the shape in logs and errors.
func (p *Prover) readKey(ctx context.Context, label string, numInputs int, find func() (string, bool, error)) (*groth16.ProvingKey, error) {
	path, _, err := find()
	if err != nil {
		return nil, err
	}
	var opts []groth16.ReadOption
	if p.cfg.TrustParams {
		opts = append(opts, groth16.TrustedFile())
	} else if want, ok := paramdigest.Published(filepath.Base(path)); ok {
		// A file under a published name is checked as paramfetch checks
		// it, by its digest, which pins every byte; its points then need
		// no subgroup checks.
		t0 := time.Now()
		err := paramdigest.Check(ctx, path, want)
		p.log.Debug("c2: parameter file digest checked", "shape", label, "file", path, "duration", time.Since(t0), "err", err)
		var me *paramdigest.MismatchError
		if errors.As(err, &me) {
			return nil, fmt.Errorf("%w: %w", ErrParamsDigest, err)
		}
		if err != nil {
			return nil, err
		}
		opts = append(opts, groth16.TrustedFile())
	}
	t0 := time.Now()
	pk, err := p.keys.Open(ctx, path, opts...)
	p.log.Debug("c2: parameters read", "shape", label, "file", path, "duration", time.Since(t0), "err", err)
	if err != nil {
		return nil, err
	}
	if pk.VK.NumInputs() != numInputs {
		p.keys.Release(pk)
		return nil, fmt.Errorf("c2: %s: key for %d public inputs, %s has %d", path, pk.VK.NumInputs(), label, numInputs)
	}
	return pk, nil
}

// recordSystem runs record, which returns a finalized system, logs how
// long it took (label names the circuit), and keeps the system's
// constraints only: the recording's own values (32 bytes per variable)
// serve no one, as partitions bring their witnesses.
func (p *Prover) recordSystem(label string, record func() (*r1cs.System, error)) (*r1cs.System, error) {
	t0 := time.Now()
	sys, err := record()
	n := 0
	if sys != nil {
		n = sys.NumConstraints()
	}
	p.log.Debug("c2: R1CS recorded", "shape", label, "constraints", n, "duration", time.Since(t0), "err", err)
	if err != nil {
		return nil, err
	}
	return sys.Unassigned()
}

// keyAndSystem returns the shape's cached key and R1CS, building both side
// by side on a first call. The parameter file is looked up first (find),
// unless the key is cached, so that a missing one fails at once rather
// than after the recording. A failure of one stops this call's wait for
// the other; ctx's error is returned once ctx ends.
func (p *Prover) keyAndSystem(ctx context.Context, c *shapeCache, find func() (string, bool, error),
	key func(context.Context) (*groth16.ProvingKey, error), record func(context.Context) (*r1cs.System, error)) (*groth16.ProvingKey, *r1cs.System, error) {
	if _, cached := c.pk.Peek(); !cached {
		if _, _, err := find(); err != nil {
			return nil, nil, err
		}
	}
	var (
		pk  *groth16.ProvingKey
		rec *r1cs.System
	)
	eg, ectx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) { pk, err = c.pk.GetCtx(ectx, key); return err })
	eg.Go(func() (err error) { rec, err = c.sys.GetCtx(ectx, record); return err })
	if err := eg.Wait(); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c.recordWith(record)
	return pk, rec, nil
}

// assignedSystem pairs a witness-only assignment with the recorded R1CS
// after checking its public inputs (ONE excluded) against want; mismatch
// builds the error for the first input i (1-based) that differs.
func assignedSystem(rec *r1cs.System, w *r1cs.Witness, want []fr.Element, k int, mismatch func(i int) error) (*r1cs.System, error) {
	if len(w.Inputs) != len(want)+1 {
		return nil, &PartitionError{Index: k, Err: fmt.Errorf("witness has %d public inputs, the proof type %d", len(w.Inputs)-1, len(want))}
	}
	for i := range want {
		if w.Inputs[i+1] != want[i] {
			return nil, mismatch(i + 1)
		}
	}
	sys, err := rec.WithAssignment(w.Inputs, w.Aux)
	if err != nil {
		return nil, &PartitionError{Index: k, Err: err}
	}
	return sys, nil
}

// loadCircuit returns the key and recorded R1CS of a circuit proved from
// vanilla proofs, from its cache c (see keyAndSystem): the key from the
// file find resolves, checked for numInputs public inputs, the R1CS
// recorded by record. The read and the recording stop, as PoRep's do, once
// no caller waits for them (ctx of every waiting call done): a sequential
// recording within 4096 constraints (r1cs.BuildContext), a parallel one
// (PoSt's by sector, SnapDeals' by challenge) before its next segment. label names the circuit in
// logs and errors.
func (p *Prover) loadCircuit(ctx context.Context, c *shapeCache, label string, numInputs int, find func() (string, bool, error),
	record func(context.Context) (*r1cs.System, error)) (*groth16.ProvingKey, *r1cs.System, error) {
	return p.keyAndSystem(ctx, c, find,
		func(ctx context.Context) (*groth16.ProvingKey, error) { return p.readKey(ctx, label, numInputs, find) },
		p.recordCircuit(label, record))
}

// recordCircuit returns the recording of a circuit proved from vanilla
// proofs (see loadCircuit), as its cache's R1CS loader takes it.
func (p *Prover) recordCircuit(label string, record func(context.Context) (*r1cs.System, error)) func(context.Context) (*r1cs.System, error) {
	return func(ctx context.Context) (*r1cs.System, error) {
		return p.recordSystem(label, func() (*r1cs.System, error) { return record(ctx) })
	}
}

// proveCircuit is the flow shared by the circuits proved from vanilla
// proofs: c's key and R1CS from its cache (see loadCircuit), held until the
// call returns, then for each partition k its witness (written into an idle
// buffer of the cache's when there is one), checked against
// want[k] — mismatch builds the error for a differing public input i —
// proved in groups, verified and serialized. tm receives the wait for the
// key and R1CS (ParamsLoad) and proveStream's times, on error those of the
// stages that ran. Errors: ErrClosed after Close, and those of loadCircuit
// and proveStream.
func (p *Prover) proveCircuit(ctx context.Context, c vanillaCircuit, witness func(ctx context.Context, k, workers int, aux []fr.Element) (*r1cs.Witness, error),
	want [][]fr.Element, mismatch func(k, i int) error, tm *ProveTimes) ([]byte, error) {
	cache, done := p.useCache(c.cache)
	defer done()
	if p.isClosed() {
		return nil, ErrClosed
	}
	t0 := time.Now()
	pk, rec, err := p.loadCircuit(ctx, cache, c.label, c.numInputs, c.find, c.record)
	tm.ParamsLoad = time.Since(t0)
	if err != nil {
		return nil, err
	}
	out, err := p.proveStream(ctx, &cache.witnesses.bufferPool, nil, pk, rec, want, tm, func(ctx context.Context, k int, buf []fr.Element) (*r1cs.System, error) {
		w, err := witness(ctx, k, 0, buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, &PartitionError{Index: k, Err: err}
		}
		return assignedSystem(rec, w, want[k], k, func(i int) error { return mismatch(k, i) })
	})
	if err != nil {
		return nil, err
	}
	return groth16.MarshalProofs(out), nil
}

// proveStream proves the partitions of one call under pk, whose R1CS is
// rec, and verifies each proof against want[k] (its public inputs, ONE
// excluded) as it comes back, never against the witness's inputs alone.
// build(ctx, k, buf) synthesizes partition k on all cores and returns its
// assigned system, writing the witness into buf when it can (bufs, when not
// nil, keeps those buffers between partitions and calls). Partitions are
// built one after the other, and each goes to the devices as soon as it is
// built, so that the synthesis of partition k+1 overlaps the proving of
// partition k. At most p.inflight witnesses exist at once, over all the
// calls sharing slots (one call's alone when slots is nil), the older calls
// served first (see witnessSlots): each is lent to its partition's stages
// (see stage.Lease) until the device holds the values in its own form (the
// witness pass, or classified beside a key that sums its streamed batch
// additions itself) or, on the host path, until the proof is verified.
// tm receives the summed synthesis and verification times and the wall
// time of the whole. Errors: build's, a *PartitionError, ctx's error.
func (p *Prover) proveStream(ctx context.Context, bufs *bufferPool, slots *witnessSlots, pk *groth16.ProvingKey, rec *r1cs.System, want [][]fr.Element,
	tm *ProveTimes, build func(ctx context.Context, k int, buf []fr.Element) (*r1cs.System, error)) ([]groth16.Proof, error) {
	end, err := p.begin()
	if err != nil {
		return nil, err
	}
	defer end()
	if err := groth16.CheckShape(pk, rec); err != nil {
		return nil, err
	}
	if err := p.hostEvaluationFits(ctx, pk, rec); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inflight := p.inflight(pk, rec)
	if slots == nil {
		slots = &witnessSlots{}
	}
	rank := slots.rank()
	proofs := make([]groth16.Proof, len(want))
	errs := make([]error, len(want))
	var verify atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	for k := range want {
		if slots.acquire(ctx, rank, inflight) != nil {
			break
		}
		ts := time.Now()
		sys, err := build(ctx, k, bufs.get(rec.NumAux()))
		tm.Synthesis += time.Since(ts)
		if err != nil {
			errs[k] = err
			slots.release(inflight)
			cancel()
			break
		}
		ls := stage.NewLease(func() {
			bufs.put(sys.Aux(), inflight)
			slots.release(inflight)
		}, func(ctx context.Context) (*r1cs.System, error) { return build(ctx, k, nil) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ls.Release()
			proof, d, err := p.proveVerified(ctx, pk, sys, ls, want[k], &verify)
			if err != nil {
				pe := &PartitionError{Index: k, Err: err}
				if d != nil {
					pe.Device = d.Name
				}
				errs[k] = pe
				cancel()
				return
			}
			proofs[k] = proof
		}()
	}
	wg.Wait()
	tm.Prove = time.Since(t0)
	tm.Verify = time.Duration(verify.Load())
	if err := firstError(ctx, errs); err != nil {
		return nil, err
	}
	return proofs, nil
}

// hostEvaluationFits refuses a call whose partitions would have a, b and c
// evaluated in host memory — no live device holds the circuit's R1CS (a
// CPU device, or a CUDA one without room for it beside the keys it holds)
// — when the host budget cannot hold those three domain-sized vectors, so
// that the refusal comes before the first witness is synthesized rather
// than after it. It looks only when the budget is that small, loading the
// key on the devices as the first partition would; a load that fails is
// left to the partitions, which report it.
func (p *Prover) hostEvaluationFits(ctx context.Context, pk *groth16.ProvingKey, rec *r1cs.System) error {
	need := 3 * 32 * int64(pk.DomainSize())
	if need <= p.cfg.HostMemory {
		return nil
	}
	for _, d := range p.rot.Devices() {
		if !d.Live() {
			continue
		}
		key, err := p.keys.Load(ctx, d, pk, rec)
		if err != nil {
			return nil
		}
		if sk, ok := key.(gpu.ShapeKey); ok && sk.Records(rec) {
			return nil
		}
	}
	return fmt.Errorf("c2: no device holds the circuit's R1CS, so each partition's a, b and c (%d bytes) would be evaluated in host memory: %w",
		need, &pool.OverBudgetError{Budget: "host", Requested: need, Total: p.cfg.HostMemory})
}

// inflight is the number of witnesses a call keeps at once. Each costs 32
// bytes per aux variable and, unless the devices evaluate the constraints
// themselves, a, b and c (three domain-sized vectors) while its partition
// is proved; together they stay within Config.HostMemory. With the
// devices' witness pass a witness goes back as soon as it is classified,
// so two keep the devices fed (one synthesized while the other is
// classified); otherwise at most PrepWorkers+1. At least 1.
func (p *Prover) inflight(pk *groth16.ProvingKey, rec *r1cs.System) int {
	perPart := 32 * int64(rec.NumAux())
	most := int64(2)
	if !p.evaluatesOnDevice() {
		perPart += 3 * 32 * int64(pk.DomainSize())
		most = int64(p.cfg.PrepWorkers + 1)
	}
	return int(max(1, min(most, p.cfg.HostMemory/max(perPart, 1))))
}

// evaluatesOnDevice reports whether a live device evaluates a recorded
// system's constraints itself (gpu.ShapeLoader): its partitions need no
// host a, b, c.
func (p *Prover) evaluatesOnDevice() bool {
	for _, d := range p.rot.Devices() {
		if _, ok := d.Device.(gpu.ShapeLoader); ok && d.Live() {
			return true
		}
	}
	return false
}

// proveVerified proves one partition (ls lends its witness buffer, may be
// nil) and verifies the proof against
// inputs (ONE excluded), adding the verification time to verify. A proof
// that fails verification comes from a faulty device (the witness was
// checked): the device leaves the rotation and the partition is proved
// again elsewhere, while devices remain. It returns the device that made
// the proof or failed.
func (p *Prover) proveVerified(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System, ls *stage.Lease, inputs []fr.Element, verify *atomic.Int64) (groth16.Proof, *route.Device, error) {
	exclude := make(map[*route.Device]bool)
	for {
		proof, d, err := p.provePartition(ctx, pk, sys, ls, exclude)
		if err != nil {
			return proof, d, err
		}
		t0 := time.Now()
		err = groth16.Verify(&pk.VK, &proof, inputs)
		dt := time.Since(t0)
		verify.Add(int64(dt))
		p.st.Add(&p.st.Verify, dt)
		if err == nil {
			return proof, d, nil
		}
		if !errors.Is(err, groth16.ErrInvalidProof) || p.rot.IsFallback(d) || exclude[d] {
			return groth16.Proof{}, d, err
		}
		p.rot.Retire(d, errors.New("a proof failed verification"))
		exclude[d] = true
	}
}

// witnessBuffers keeps a circuit's idle witness buffers for reuse by later
// partitions (a 32 GiB partition's witness is 4.2 GB, and a new one per
// partition would leave the garbage collector gigabytes behind, and the
// zeroing of each new one to do) and the slots that bound the witnesses
// its calls hold at once (PoRep's; each call of a circuit proved from
// vanilla proofs bounds its own). The cache holding it drops it on Evict
// and Close.
type witnessBuffers struct {
	bufferPool
	slots witnessSlots
}

// bufferPool holds idle witness buffers.
type bufferPool struct {
	mu   sync.Mutex
	idle [][]fr.Element
}

// witnessSlots grants the right to hold a witness, to at most n holders at
// once (n given by each call; the calls of one shape give the same), in the
// order of the callers' ranks, then of their requests: a call ranked
// before another is served first whenever both wait. A call takes its rank
// when it starts proving, so that a proof started while another is proving
// synthesizes its partitions only with the slots the older one leaves free:
// its first partitions are built while the older proof's last ones are on
// the devices, and the older proof is not slowed by the younger one's
// witnesses. The zero value has no holder.
type witnessSlots struct {
	mu      sync.Mutex
	held    int
	next    uint64
	waiting []*slotWaiter // by rank, then arrival
}

type slotWaiter struct {
	rank    uint64
	granted chan struct{}
}

// rank returns the next caller rank, later than every rank returned before.
func (s *witnessSlots) rank() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.next
	s.next++
	return r
}

// acquire waits for a slot for a caller of rank r, with at most n held. It
// returns ctx's error, holding nothing, when ctx is done first.
func (s *witnessSlots) acquire(ctx context.Context, r uint64, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.held < n && (len(s.waiting) == 0 || s.waiting[0].rank > r) {
		s.held++
		s.mu.Unlock()
		return nil
	}
	w := &slotWaiter{rank: r, granted: make(chan struct{})}
	i := len(s.waiting)
	for i > 0 && s.waiting[i-1].rank > r {
		i--
	}
	s.waiting = append(s.waiting, nil)
	copy(s.waiting[i+1:], s.waiting[i:])
	s.waiting[i] = w
	s.mu.Unlock()
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	for j, x := range s.waiting {
		if x == w {
			s.waiting = append(s.waiting[:j], s.waiting[j+1:]...)
			s.mu.Unlock()
			return ctx.Err()
		}
	}
	s.mu.Unlock()
	// granted meanwhile: pass the slot on
	s.release(n)
	return ctx.Err()
}

// release gives back a slot acquired with at most n held, granting it to
// the first waiter.
func (s *witnessSlots) release(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held--
	for s.held < n && len(s.waiting) > 0 {
		w := s.waiting[0]
		s.waiting = s.waiting[1:]
		s.held++
		close(w.granted)
	}
}

// get returns an idle buffer of at least n elements, or nil (also for a
// nil w).
func (w *bufferPool) get(n int) []fr.Element {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, b := range w.idle {
		if cap(b) >= n {
			w.idle = append(w.idle[:i], w.idle[i+1:]...)
			return b
		}
	}
	return nil
}

// put keeps b for reuse, with at most keep buffers idle.
func (w *bufferPool) put(b []fr.Element, keep int) {
	if w == nil || cap(b) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.idle) < keep {
		w.idle = append(w.idle, b[:0])
	}
}
