package stage

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/route"
	"github.com/sealc2/c2/r1cs"
)

// deviceStages acquires a slot on d and runs H, the batch additions and the
// tail MSMs there; the B_G2 tail runs on the CPU meanwhile unless d does G2,
// and otherwise its share of sh's bases (g2 non-nil) does. A partition that
// finds sh empty fills it at the end. The batch additions of the sections
// that key streams ([gpu.StreamedKey]) run after the slot is released, so
// that the next partition's H runs while the bus carries their bases.
// With onDevice, H starts from the witness on the device once it is
// classified; otherwise from the prepared a, b, c.
func (r *Runner) deviceStages(ctx context.Context, d *route.Device, key gpu.Key, sys *r1cs.System, ls *Lease, pr *prepared, onDevice bool, admitted func(), g2 *g2Job, sh *g2Share) (*groth16.Sums, error) {
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
		dt, err := d.Stage(f)
		r.o.Times.Add(acc, dt)
		r.o.Log.Debug("c2: device stage", "device", d.Name, "stage", r.o.Times.name(acc), "duration", dt, "err", err)
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
			return nil, &gpu.Error{Device: d.Name, Stage: gpu.StageH, Err: fmt.Errorf("%w: slot of a shape key cannot take a witness", gpu.ErrBadArgument)}
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
		err := stage(&r.o.Times.H, func() (err error) { sums.H, err = ws.ComputeHWitness(ctx, pr.witness(sys)); return })
		if err == nil && pr.l.Witness {
			ls.Release() // the device holds the witness now
		}
		if err != nil {
			var ue *r1cs.UnsatisfiedError
			if errors.As(err, &ue) && hostSatisfied(ctx, sys, ls, pr) == nil {
				// The host finds every constraint satisfied: the device erred.
				err = &gpu.Error{Device: d.Name, Stage: gpu.StageH, Section: gpu.SectionH,
					Err: fmt.Errorf("%w: device found constraint %d unsatisfied, the host finds it satisfied", gpu.ErrKernel, ue.Index)}
			}
			return nil, err
		}
		if err := classified(); err != nil {
			return nil, err
		}
	} else {
		if err := stage(&r.o.Times.H, func() (err error) { sums.H, err = slot.ComputeH(ctx, pr.a, pr.b, pr.c); return }); err != nil {
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
	sk, _ := key.(gpu.StreamedKey)
	streamed := func(sec gpu.Section) bool { return sk != nil && sk.Streams(sec) }

	g1 := []struct {
		sec gpu.Section
		sp  *Split
		dst *bls.G1Jac
	}{{gpu.SectionL, pr.l, &sums.L}, {gpu.SectionA, pr.A, &sums.A}, {gpu.SectionBG1, pr.B, &sums.BG1}}
	ones := make([]bls.G1Jac, len(g1))
	var ones2 bls.G2Jac
	for i, q := range g1 {
		if q.sp.dense() || streamed(q.sec) {
			continue
		}
		if err := stage(&r.o.Times.Batch, func() (err error) { ones[i], err = slot.BatchAddG1(ctx, q.sec, q.sp.Ones); return }); err != nil {
			return nil, err
		}
	}
	if !pr.B.dense() && !streamed(gpu.SectionBG2) {
		if err := stage(&r.o.Times.Batch, func() (err error) { ones2, err = slot.BatchAddG2(ctx, pr.B.Ones); return }); err != nil {
			return nil, err
		}
	}
	for i, q := range g1 {
		var idx []uint32
		scalars := q.sp.Full
		if scalars == nil {
			idx, scalars = q.sp.TailIdx, q.sp.Tail
		}
		tail := func() (err error) { *q.dst, err = slot.TailG1(ctx, q.sec, idx, scalars); return }
		if q.sp.Witness {
			tail = func() (err error) { *q.dst, err = slot.(gpu.WitnessSlot).MSMWitnessG1(ctx, q.sec, q.sp.Sel); return }
		}
		if err := stage(&r.o.Times.Tail, tail); err != nil {
			return nil, err
		}
		q.dst.AddAssign(&ones[i])
	}
	switch {
	case g2cpu:
	case pr.B.Witness:
		if err := stage(&r.o.Times.Tail, func() (err error) { sums.BG2, err = slot.(gpu.WitnessSlot).MSMWitnessG2(ctx, pr.B.Sel); return }); err != nil {
			return nil, err
		}
	default:
		if g2 != nil {
			if err := g2.waitSplit(ctx); err != nil {
				return nil, err
			}
			if g2.shared {
				g2idx, g2scalars = g2.restIdx, g2.rest
			}
		}
		if g2 == nil || !g2.shared || len(g2idx) > 0 {
			if err := stage(&r.o.Times.Tail, func() (err error) { sums.BG2, err = slot.TailG2(ctx, g2idx, g2scalars); return }); err != nil {
				return nil, err
			}
		}
		if sh != nil && !pr.B.dense() && sh.claim() {
			// Counted as the device's: the copy runs on it, once a key.
			dt, _ := d.Stage(func() error { r.fill(ctx, sh, slot, pr.B.TailIdx, d.Info().HostG2); return nil })
			r.o.Times.Add(&r.o.Times.Tail, dt)
		}
	}
	// The slot is done: the next partition may have it while this one's
	// streamed batch additions and the host's B_G2 work finish.
	slot.Release()
	for i, q := range g1 {
		if q.sp.dense() || !streamed(q.sec) {
			continue
		}
		if err := stage(&r.o.Times.Batch, func() (err error) { ones[i], err = sk.BatchAddG1(ctx, q.sec, q.sp.Ones); return }); err != nil {
			return nil, err
		}
		q.dst.AddAssign(&ones[i])
	}
	if !pr.B.dense() && streamed(gpu.SectionBG2) {
		if err := stage(&r.o.Times.Batch, func() (err error) { ones2, err = sk.BatchAddG2(ctx, pr.B.Ones); return }); err != nil {
			return nil, err
		}
	}
	switch {
	case g2cpu:
		if err := g2.wait(ctx); err != nil {
			return nil, err
		}
		sums.BG2 = g2.sum
	case g2 != nil && !pr.B.Witness:
		// The host's share. The time the partition waits for it now sizes
		// the next shares.
		t0 := time.Now()
		if err := g2.wait(ctx); err != nil {
			return nil, err
		}
		if g2.shared && sh != nil {
			waited := time.Since(t0)
			r.o.Times.Add(&r.o.Times.BG2Wait, waited)
			sh.adapt(waited > lateTolerance)
		}
		sums.BG2.AddAssign(&g2.sum)
	}
	sums.BG2.AddAssign(&ones2)
	return &sums, nil
}

// g2Job is the CPU's B_G2 tail MSM for one partition: all of it, or the
// host's share beside a device that runs G2 (runShare).
type g2Job struct {
	start func() // non-nil until started, when it runs on demand (no overlap)
	done  chan struct{}
	sum   bls.G2Jac
	err   error

	// A share's split, final once split closes: with shared, the device's
	// MSM takes restIdx and rest instead of the whole tail.
	split   chan struct{}
	shared  bool
	restIdx []uint32
	rest    []fr.Element
}

// waitSplit waits until a share's job has split the tail.
func (g *g2Job) waitSplit(ctx context.Context) error {
	select {
	case <-g.split:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
func (r *Runner) runG2(ctx context.Context, pk *groth16.ProvingKey, pr *prepared, g *g2Job) {
	defer close(g.done)
	<-pr.classified
	if pr.classErr != nil {
		g.err = pr.classErr
		return
	}
	if g.err = ctx.Err(); g.err != nil {
		return
	}
	if pr.B.Witness {
		g.err = errors.New("stage: B_G2 on the CPU for a query the device selects from its witness")
		return
	}
	t0 := time.Now()
	idx, scalars := pr.B.g2Scalars()
	g.sum, g.err = gpu.TailG2CPU(ctx, pk.BG2, idx, scalars, r.o.Threads)
	r.o.Times.Add(&r.o.Times.BG2, time.Since(t0))
}

// g2Scalars returns what B_G2's MSM beyond the batch addition takes: the
// tail, or every scalar when the split was not worth it.
func (s *Split) g2Scalars() ([]uint32, []fr.Element) {
	if s.Full != nil {
		return nil, s.Full
	}
	return s.TailIdx, s.Tail
}
