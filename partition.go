package c2

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// One partition's stages: host preparation, the device stages, the B_G2
// tail on the CPU when the device leaves it, and the epilogue.

// prepared is one partition after the CPU preparation stage. The
// classification (l, A, B) may still be running: it is valid once
// classified is closed, and classErr is nil. For the device's witness pass
// there are no a, b, c (buf is nil): the witness goes as l's split.
type prepared struct {
	buf        *pool.Buffer
	a, b, c    []fr.Element
	l, A, B    *split
	classified chan struct{}
	classErr   error
	// lDone is closed once l is classified (before A and B may be), with
	// lErr its error: the witness pass can start then.
	lDone chan struct{}
	lErr  error
}

// release waits for the classification and returns the host buffer.
func (pr *prepared) release() {
	<-pr.classified
	pr.freeABC()
}

func (pr *prepared) freeABC() {
	if pr.buf != nil {
		pr.buf.Release()
	}
}

// witness is the partition's assignment as the device takes it: L's
// classification covers every aux value, in order.
func (pr *prepared) witness(sys *r1cs.System) *gpu.Witness {
	return &gpu.Witness{Inputs: sys.Inputs(), NumAux: sys.NumAux(), Ones: pr.l.Ones, TailIdx: pr.l.TailIdx, Tail: pr.l.Tail}
}

// hostSatisfied checks sys's constraints on the host, on a rebuilt system
// when ls has given the witness back (it waits for the classification,
// after which that no longer changes).
func hostSatisfied(ctx context.Context, sys *r1cs.System, ls *lease, pr *prepared) error {
	<-pr.classified
	if ls.gone() {
		var err error
		if sys, err = ls.rebuild(ctx); err != nil {
			return err
		}
	}
	return sys.IsSatisfied()
}

// split is the classification of one MSM's scalars, or, when too few of
// them are 0 or 1 for splitting to pay, the dense scalar vector.
type split struct {
	*msm.Split
	full []fr.Element // non-nil: run one full MSM over these
}

// lease lends a partition's witness buffer to its stages. release gives it
// back, once, as soon as the device has everything it needs in its own
// form (the witness pass: L, A and B classified); sys's aux must not be
// read after that, and a stage that needs the values again (a retry, a
// check of the device's word) proves or checks a system rebuild
// synthesizes anew. A nil *lease lends nothing: the caller keeps the
// witness until the partition is done.
type lease struct {
	once     sync.Once
	released atomic.Bool
	give     func()
	rebuild  func(context.Context) (*r1cs.System, error)
}

// release gives the buffer back (once).
func (l *lease) release() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		l.released.Store(true)
		l.give()
	})
}

// gone reports whether the buffer was given back.
func (l *lease) gone() bool { return l != nil && l.released.Load() }

// proveOn runs the stages of one partition with d as its device; ls lends
// sys's witness buffer (may be nil).
func (p *Prover) proveOn(ctx context.Context, d *device, pk *groth16.ProvingKey, sys *r1cs.System, ls *lease) (groth16.Proof, error) {
	if p.cfg.DisableOverlap {
		p.serial.Lock()
		defer p.serial.Unlock()
	}
	key, err := p.key(ctx, d, pk, sys)
	if err != nil {
		return groth16.Proof{}, err
	}
	sk, ok := key.(gpu.ShapeKey)
	onDevice := ok && sk.Records(sys) // the device evaluates a, b, c

	// Look ahead by at most PrepWorkers partitions per device.
	select {
	case d.ahead <- struct{}{}:
	case <-ctx.Done():
		return groth16.Proof{}, ctx.Err()
	}
	var once sync.Once
	admitted := func() { once.Do(func() { <-d.ahead }) }
	defer admitted()

	select {
	case p.prep <- struct{}{}:
	case <-ctx.Done():
		return groth16.Proof{}, ctx.Err()
	}
	if !onDevice {
		ls = nil // the host evaluates a, b, c from the witness: kept to the end
	}
	pr, err := p.prepare(ctx, pk, sys, !onDevice, ls, func() { <-p.prep })
	if err != nil {
		return groth16.Proof{}, err
	}
	defer pr.release()

	// B_G2's tail on the CPU, when the device leaves it to us: started as
	// soon as the witness is classified, so it runs while the partition
	// waits for and uses the device (after the device stages without
	// overlap).
	var g2 *g2Job
	if !d.Info().G2 {
		g2 = &g2Job{done: make(chan struct{})}
		run := func() { p.runG2(ctx, key.ProvingKey(), pr, g2) }
		if p.cfg.DisableOverlap {
			g2.start = run
		} else {
			go run()
		}
		defer g2.join()
	}
	sums, err := p.deviceStages(ctx, d, key, pk, sys, ls, pr, onDevice, admitted, g2)
	if err != nil {
		return groth16.Proof{}, err
	}

	t0 := time.Now()
	var r, s fr.Element
	if err := randomNonZero(&r); err != nil {
		return groth16.Proof{}, err
	}
	if err := randomNonZero(&s); err != nil {
		return groth16.Proof{}, err
	}
	proof := groth16.Assemble(&pk.VK, sums, r, s)
	p.st.add(&p.st.epilogue, time.Since(t0))
	d.done.Add(1)
	return proof, nil
}

func randomNonZero(e *fr.Element) error {
	for {
		if _, err := e.SetRandom(); err != nil {
			return fmt.Errorf("c2: randomness: %w", err)
		}
		if !e.IsZero() {
			return nil
		}
	}
}

// prepare, when abc is set, evaluates a, b, c into one host buffer
// (zero-padded to the domain) and checks that the constraints hold (else the
// device does both from the witness); then it classifies the scalars of L,
// A and B in the background (so that H can start on the device meanwhile),
// releases ls once all three are classified, and calls done when
// everything is finished or failed.
func (p *Prover) prepare(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System, abc bool, ls *lease, done func()) (*prepared, error) {
	t0 := time.Now()
	pr := &prepared{classified: make(chan struct{}), lDone: make(chan struct{})}
	fail := func(err error) (*prepared, error) {
		close(pr.lDone)
		close(pr.classified)
		pr.release()
		done()
		return nil, err
	}
	if sys.Inputs()[0] != fr.One() {
		return fail(errors.New("input 0 (ONE) is not 1"))
	}
	if abc {
		n := pk.DomainSize()
		// One reservation for the three vectors: no hold-and-wait between them.
		buf, v, err := pool.GetSlice[fr.Element](ctx, p.host, 3*n)
		if err != nil {
			return fail(err)
		}
		pr.buf, pr.a, pr.b, pr.c = buf, v[:n:n], v[n:2*n:2*n], v[2*n:]
		m := sys.NumConstraints()
		if err := sys.EvaluateCheckedContext(ctx, pr.a, pr.b, pr.c, p.cfg.Threads); err != nil {
			return fail(err) // names the failing constraint
		}
		for _, x := range [][]fr.Element{pr.a, pr.b, pr.c} {
			clear(x[m:])
		}
	}

	segL := []msm.Segment{{Scalars: sys.Aux()}}
	segA := []msm.Segment{{Scalars: sys.Inputs()}, {Scalars: sys.Aux(), Density: sys.ADensity()}}
	segB := []msm.Segment{{Scalars: sys.Inputs(), Density: sys.BInputDensity()}, {Scalars: sys.Aux(), Density: sys.BAuxDensity()}}
	go func() {
		defer done()
		defer close(pr.classified)
		var wg sync.WaitGroup
		var errs [3]error
		for i, x := range []struct {
			dst  **split
			segs []msm.Segment
		}{{&pr.l, segL}, {&pr.A, segA}, {&pr.B, segB}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				*x.dst, errs[i] = classifyContext(ctx, x.segs)
				if i == 0 {
					pr.lErr = errs[0]
					close(pr.lDone)
				}
			}()
		}
		wg.Wait()
		pr.classErr = errors.Join(errs[:]...)
		if pr.classErr == nil {
			ls.release() // before classified closes: final once it is
		}
		p.st.add(&p.st.prep, time.Since(t0))
		p.log.Debug("c2: partition prepared", "evaluated_on_host", abc, "duration", time.Since(t0), "err", pr.classErr)
	}()
	if p.cfg.DisableOverlap {
		<-pr.classified
	}
	return pr, nil
}

// classify splits one MSM's scalars, or keeps them dense when more than half
// of the bases would go to the tail (SupraSeal's rule: splitting then saves
// less than the gathering costs).
func classify(segs []msm.Segment) (*split, error) {
	return classifyContext(context.Background(), segs)
}

// classifyContext is classify returning ctx's error within about a
// millisecond of ctx's end.
func classifyContext(ctx context.Context, segs []msm.Segment) (*split, error) {
	sp, err := msm.NewSplitContext(ctx, segs...)
	if err != nil {
		return nil, err
	}
	if 2*len(sp.Tail) <= sp.N {
		return &split{Split: sp}, nil
	}
	const piece = 1 << 16 // scalars gathered between checks of ctx
	full := make([]fr.Element, 0, sp.N)
	for _, s := range segs {
		for lo := 0; lo < len(s.Scalars); lo += piece {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			hi := min(len(s.Scalars), lo+piece)
			if s.Density == nil {
				full = append(full, s.Scalars[lo:hi]...)
				continue
			}
			for i := lo; i < hi; i++ {
				if s.Density.Get(i) {
					full = append(full, s.Scalars[i])
				}
			}
		}
	}
	return &split{Split: sp, full: full}, nil
}

// deviceStages acquires a slot on d and runs H, the batch additions and the
// tail MSMs there; the B_G2 tail runs on the CPU meanwhile unless d does G2.
// With onDevice, H starts from the witness on the device once it is
// classified; otherwise from the prepared a, b, c.
func (p *Prover) deviceStages(ctx context.Context, d *device, key gpu.Key, pk *groth16.ProvingKey, sys *r1cs.System, ls *lease, pr *prepared, onDevice bool, admitted func(), g2 *g2Job) (*groth16.Sums, error) {
	slot, err := d.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	defer slot.Release()
	admitted()

	var sums groth16.Sums
	stage := func(acc *atomic.Int64, f func() error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.busy.start()
		t0 := time.Now()
		err := f()
		dt := time.Since(t0)
		p.st.add(acc, dt)
		d.busy.stop()
		p.log.Debug("c2: device stage", "device", d.name, "stage", p.st.name(acc), "duration", dt, "err", err)
		return err
	}
	classified := func() error {
		select {
		case <-pr.classified:
		case <-ctx.Done():
			return ctx.Err()
		}
		return pr.classErr
	}
	if onDevice {
		ws, ok := slot.(gpu.WitnessSlot)
		if !ok {
			return nil, &gpu.Error{Device: d.name, Stage: gpu.StageH, Err: fmt.Errorf("%w: slot of a shape key cannot take a witness", gpu.ErrBadArgument)}
		}
		// The handoff is L's classification: H starts as soon as it is
		// ready, A's and B's follow meanwhile.
		select {
		case <-pr.lDone:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if pr.lErr != nil {
			return nil, pr.lErr
		}
		if err := stage(&p.st.h, func() (err error) { sums.H, err = ws.ComputeHWitness(ctx, pr.witness(sys)); return }); err != nil {
			var ue *r1cs.UnsatisfiedError
			if errors.As(err, &ue) && hostSatisfied(ctx, sys, ls, pr) == nil {
				// The host finds every constraint satisfied: the device erred.
				err = &gpu.Error{Device: d.name, Stage: gpu.StageH, Section: gpu.SectionH,
					Err: fmt.Errorf("%w: device found constraint %d unsatisfied, the host finds it satisfied", gpu.ErrKernel, ue.Index)}
			}
			return nil, err
		}
		if err := classified(); err != nil {
			return nil, err
		}
	} else {
		if err := stage(&p.st.h, func() (err error) { sums.H, err = slot.ComputeH(ctx, pr.a, pr.b, pr.c); return }); err != nil {
			return nil, err
		}
		pr.freeABC() // a, b, c are spent: let the next partition have them
		// H needs only a, b, c; the rest waits for the classification.
		if err := classified(); err != nil {
			return nil, err
		}
	}
	g2idx, g2scalars := pr.B.g2Scalars()
	g2cpu := !d.Info().G2

	g1 := []struct {
		sec gpu.Section
		sp  *split
		dst *bls.G1Jac
	}{{gpu.SectionL, pr.l, &sums.L}, {gpu.SectionA, pr.A, &sums.A}, {gpu.SectionBG1, pr.B, &sums.BG1}}
	ones := make([]bls.G1Jac, len(g1))
	var ones2 bls.G2Jac
	for i, q := range g1 {
		if q.sp.full != nil {
			continue
		}
		if err := stage(&p.st.batch, func() (err error) { ones[i], err = slot.BatchAddG1(ctx, q.sec, q.sp.Ones); return }); err != nil {
			return nil, err
		}
	}
	if pr.B.full == nil {
		if err := stage(&p.st.batch, func() (err error) { ones2, err = slot.BatchAddG2(ctx, pr.B.Ones); return }); err != nil {
			return nil, err
		}
	}
	for i, q := range g1 {
		var idx []uint32
		scalars := q.sp.full
		if scalars == nil {
			idx, scalars = q.sp.TailIdx, q.sp.Tail
		}
		if err := stage(&p.st.tail, func() (err error) { *q.dst, err = slot.TailG1(ctx, q.sec, idx, scalars); return }); err != nil {
			return nil, err
		}
		q.dst.AddAssign(&ones[i])
	}
	if g2cpu {
		// The device is done: free its slot for the next partition before
		// joining the CPU's B_G2 work.
		slot.Release()
		if err := g2.wait(ctx); err != nil {
			return nil, err
		}
		sums.BG2 = g2.sum
	} else if err := stage(&p.st.tail, func() (err error) { sums.BG2, err = slot.TailG2(ctx, g2idx, g2scalars); return }); err != nil {
		return nil, err
	}
	sums.BG2.AddAssign(&ones2)
	return &sums, nil
}

// g2Job is the CPU's B_G2 tail MSM for one partition.
type g2Job struct {
	start func() // non-nil until started, when it runs on demand (no overlap)
	done  chan struct{}
	sum   bls.G2Jac
	err   error
}

// wait runs the job if it was deferred, then waits for it.
func (g *g2Job) wait(ctx context.Context) error {
	if g.start != nil {
		f := g.start
		g.start = nil
		f()
	}
	select {
	case <-g.done:
		return g.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// join waits for a started job to end (no goroutine outlives its partition).
func (g *g2Job) join() {
	if g.start == nil {
		<-g.done
	}
}

// runG2 computes B_G2's tail on the CPU once the classification is known.
func (p *Prover) runG2(ctx context.Context, pk *groth16.ProvingKey, pr *prepared, g *g2Job) {
	defer close(g.done)
	<-pr.classified
	if pr.classErr != nil {
		g.err = pr.classErr
		return
	}
	if g.err = ctx.Err(); g.err != nil {
		return
	}
	t0 := time.Now()
	idx, scalars := pr.B.g2Scalars()
	g.sum, g.err = gpu.TailG2CPU(ctx, pk.BG2, idx, scalars, p.cfg.Threads)
	p.st.add(&p.st.bg2, time.Since(t0))
}

// g2Scalars returns what B_G2's MSM beyond the batch addition takes: the
// tail, or every scalar when the split was not worth it.
func (s *split) g2Scalars() ([]uint32, []fr.Element) {
	if s.full != nil {
		return nil, s.full
	}
	return s.TailIdx, s.Tail
}
