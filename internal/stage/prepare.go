package stage

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// prepared is one partition after the CPU preparation stage. The
// classification (l, A, B) may still be running: it is valid once
// classified is closed, and classErr is nil. For the device's witness pass
// there are no a, b, c (buf is nil): the witness goes as l's split.
type prepared struct {
	buf        *pool.Buffer
	a, b, c    []fr.Element
	l, A, B    *Split
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
func hostSatisfied(ctx context.Context, sys *r1cs.System, ls *Lease, pr *prepared) error {
	<-pr.classified
	if ls.Gone() {
		var err error
		if sys, err = ls.Rebuild(ctx); err != nil {
			return err
		}
	}
	return sys.IsSatisfied()
}

// Split is the classification of one MSM's scalars, or, when too few of
// them are 0 or 1 for splitting to pay, the dense scalar vector.
type Split struct {
	*msm.Split
	Full []fr.Element // non-nil: run one full MSM over these
}

// prepare, when abc is set, evaluates a, b, c into one host buffer
// (zero-padded to the domain) and checks that the constraints hold (else the
// device does both from the witness); then it classifies the scalars of L,
// A and B in the background (so that H can start on the device meanwhile),
// releases ls once all three are classified, and calls done when
// everything is finished or failed.
func (r *Runner) prepare(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System, abc bool, ls *Lease, done func()) (*prepared, error) {
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
		buf, v, err := pool.GetSlice[fr.Element](ctx, r.host, 3*n)
		if err != nil {
			return fail(err)
		}
		pr.buf, pr.a, pr.b, pr.c = buf, v[:n:n], v[n:2*n:2*n], v[2*n:]
		m := sys.NumConstraints()
		if err := sys.EvaluateCheckedContext(ctx, pr.a, pr.b, pr.c, r.o.Threads); err != nil {
			return fail(err) // names the failing constraint
		}
		for _, x := range [][]fr.Element{pr.a, pr.b, pr.c} {
			clear(x[m:])
		}
	}

	segL := []msm.Segment{{Scalars: sys.Aux()}}
	headA := []msm.Segment{{Scalars: sys.Inputs()}}
	headB := []msm.Segment{{Scalars: sys.Inputs(), Density: sys.BInputDensity()}}
	go func() {
		defer done()
		defer close(pr.classified)
		// L classifies every aux value; A and B select theirs from L's
		// classification (their inputs are classified afresh).
		var errs [3]error
		pr.l, errs[0] = classifyContext(ctx, segL)
		pr.lErr = errs[0]
		close(pr.lDone)
		if errs[0] == nil {
			var wg sync.WaitGroup
			for i, x := range []struct {
				dst  **Split
				head []msm.Segment
				d    *r1cs.Density
			}{{&pr.A, headA, sys.ADensity()}, {&pr.B, headB, sys.BAuxDensity()}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sp, err := msm.NewSplitSelect(ctx, x.head, pr.l.Split, x.d)
					if err == nil {
						*x.dst, err = densify(ctx, sp, append(x.head, msm.Segment{Scalars: sys.Aux(), Density: x.d}))
					}
					errs[i+1] = err
				}()
			}
			wg.Wait()
		}
		pr.classErr = errors.Join(errs[:]...)
		if pr.classErr == nil {
			ls.Release() // before classified closes: final once it is
		}
		r.o.Times.Add(&r.o.Times.Prep, time.Since(t0))
		r.o.Log.Debug("c2: partition prepared", "evaluated_on_host", abc, "duration", time.Since(t0), "err", pr.classErr)
	}()
	if r.o.Serial {
		<-pr.classified
	}
	return pr, nil
}

// classifyContext splits one MSM's scalars, or keeps them dense when more
// than half of the bases would go to the tail (SupraSeal's rule: splitting
// then saves less than the gathering costs). It returns ctx's error within
// about a millisecond of ctx's end.
func classifyContext(ctx context.Context, segs []msm.Segment) (*Split, error) {
	sp, err := msm.NewSplitContext(ctx, segs...)
	if err != nil {
		return nil, err
	}
	return densify(ctx, sp, segs)
}

// densify returns sp, the classification of segs, as a Split: with the
// dense scalar vector too when more than half of the bases are in sp's
// tail.
func densify(ctx context.Context, sp *msm.Split, segs []msm.Segment) (*Split, error) {
	if 2*len(sp.Tail) <= sp.N {
		return &Split{Split: sp}, nil
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
	return &Split{Split: sp, Full: full}, nil
}
