package stage

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/parallel"
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
// classification covers every aux value, in order; a dense L's is the aux
// values themselves.
func (pr *prepared) witness(sys *r1cs.System) *gpu.Witness {
	if pr.l.Witness {
		return &gpu.Witness{Inputs: sys.Inputs(), NumAux: sys.NumAux(), Tail: sys.Aux()}
	}
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
	sys, err := sys.Matrices(ctx) // recorded again if the host released them
	if err != nil {
		return err
	}
	return sys.IsSatisfied()
}

// Split is the classification of one MSM's scalars, or, when too few of
// them are 0 or 1 for splitting to pay, the dense scalar vector.
type Split struct {
	*msm.Split
	Full []fr.Element // non-nil: run one full MSM over these
	// Witness: run one full MSM over the variables Sel selects (nil: every
	// aux value) of the witness the device holds, as gpu.WitnessSlot's
	// MSMs take them; the split holds N alone.
	Witness bool
	Sel     []uint64
}

// dense reports whether s is one full MSM rather than a batch addition and
// a tail.
func (s *Split) dense() bool { return s.Full != nil || s.Witness }

// prepare, when abc is set, evaluates a, b, c into one host buffer
// (zero-padded to the domain) and checks that the constraints hold (else
// the device does both from the witness, and with witnessMSM its dense
// queries' MSMs read that witness on the device); then it classifies the
// scalars of L, A and B in the background (so that H can start on the
// device meanwhile), releases ls once all three are classified unless L is
// dense (its MSM, or the device's copy of the witness, reads it), and
// calls done when everything is finished or failed.
func (r *Runner) prepare(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System, abc, witnessMSM bool, ls *Lease, done func()) (*prepared, error) {
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
		full, err := sys.Matrices(ctx) // recorded again if the host released them
		if err != nil {
			return fail(err)
		}
		if err := full.EvaluateCheckedContext(ctx, pr.a, pr.b, pr.c, r.o.Threads); err != nil {
			return fail(err) // names the failing constraint
		}
		for _, x := range [][]fr.Element{pr.a, pr.b, pr.c} {
			clear(x[m:])
		}
	}

	q := queries{inputs: sys.Inputs(), aux: sys.Aux(), bInputs: sys.BInputDensity(), aAux: sys.ADensity(), bAux: sys.BAuxDensity()}
	if witnessMSM {
		// The slot's a‖b‖c scratch takes a selected query's scalars.
		q.onDevice = 3 * pk.DomainSize()
	}
	go func() {
		defer done()
		defer close(pr.classified)
		// pr.l is set once, before lDone closes: the witness pass reads it then.
		_, pr.A, pr.B, pr.classErr = q.classify(ctx, func(l *Split, err error) {
			pr.l, pr.lErr = l, err
			close(pr.lDone)
		})
		if pr.classErr == nil && !pr.l.dense() {
			// Before classified closes: final once it is. A dense L's
			// scalars are the witness itself, kept until the device has
			// it, or to the partition's end.
			ls.Release()
		}
		r.o.Times.Add(&r.o.Times.Prep, time.Since(t0))
		r.o.Log.Debug("c2: partition prepared", "evaluated_on_host", abc, "duration", time.Since(t0), "err", pr.classErr)
	}()
	if r.o.Serial {
		<-pr.classified
	}
	return pr, nil
}

// queries are the values and densities of a partition's L, A and B MSMs:
// L takes every aux value, A the inputs and the aux values aAux selects, B
// the inputs bInputs selects and the aux values bAux selects. onDevice,
// when positive, says that the device holds the witness and can select
// up to that many of its values for one dense query.
type queries struct {
	inputs, aux         []fr.Element
	bInputs, aAux, bAux *r1cs.Density
	onDevice            int
}

// classify classifies L's scalars, calls lReady with the result (the
// device's witness pass can start then), and selects A's and B's from L's
// classification (their inputs are classified afresh). A query stays dense
// when more than half of its bases would go to the tail (SupraSeal's rule:
// splitting then saves less than the gathering costs): a dense L's scalars
// are aux itself, which the caller then keeps until L's MSM is done; a
// dense A or B holds a copy of its scalars and N alone, no split. With
// onDevice the device reads dense queries from its witness instead: L is
// judged from a sample first (a PoSt's witness is not classified at all)
// and, when dense, A and B are too; a dense A or B holds its selection.
// It returns ctx's error within about a millisecond of ctx's end.
func (q *queries) classify(ctx context.Context, lReady func(*Split, error)) (l, A, B *Split, err error) {
	if q.onDevice > 0 {
		other, err := mostlyOther(ctx, q.aux)
		if err != nil {
			lReady(nil, err)
			return nil, nil, nil, err
		}
		if other {
			l = &Split{Split: &msm.Split{N: len(q.aux)}, Witness: true}
			lReady(l, nil)
			if A, err = q.witnessQuery(ctx, nil, q.aAux); err == nil {
				B, err = q.witnessQuery(ctx, q.bInputs, q.bAux)
			}
			if err != nil {
				return nil, nil, nil, err
			}
			return l, A, B, nil
		}
	}
	sp, err := msm.NewSplitContext(ctx, msm.Segment{Scalars: q.aux})
	if err == nil {
		l = &Split{Split: sp}
		if 2*len(sp.Tail) > sp.N {
			l.Full = q.aux
		}
	}
	lReady(l, err)
	if err != nil {
		return nil, nil, nil, err
	}
	var errs [2]error
	var wg sync.WaitGroup
	for i, x := range []struct {
		dst  **Split
		head []msm.Segment
		d    *r1cs.Density
	}{{&A, []msm.Segment{{Scalars: q.inputs}}, q.aAux}, {&B, []msm.Segment{{Scalars: q.inputs, Density: q.bInputs}}, q.bAux}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			*x.dst, errs[i] = q.selectQuery(ctx, l.Split, x.head, x.d)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, nil, nil, err
	}
	return l, A, B, nil
}

// selectQuery classifies the query of head's segments (the inputs)
// followed by the aux values d selects, from l, the classification of
// every aux value. When it goes dense it gathers only the scalars, or on
// the device its selection (its Split holds N alone): the split's bitmap
// and tail would go unused.
func (q *queries) selectQuery(ctx context.Context, l *msm.Split, head []msm.Segment, d *r1cs.Density) (*Split, error) {
	hs, err := msm.NewSplitContext(ctx, head...)
	if err != nil {
		return nil, err
	}
	tail, err := l.SelectedTail(ctx, d)
	if err != nil {
		return nil, err
	}
	if n := hs.N + d.Count(); 2*(len(hs.Tail)+tail) > n {
		if n <= q.onDevice {
			return &Split{Split: &msm.Split{N: n}, Witness: true, Sel: selection(len(q.inputs), head[0].Density, d)}, nil
		}
		full, err := gather(ctx, append(head, msm.Segment{Scalars: q.aux, Density: d}), n)
		if err != nil {
			return nil, err
		}
		return &Split{Split: &msm.Split{N: n}, Full: full}, nil
	}
	sp, err := msm.NewSplitSelect(ctx, head, l, d)
	if err != nil {
		return nil, err
	}
	return &Split{Split: sp}, nil
}

// gather returns the n scalars of segs in query order, copied in pieces on
// all cores.
func gather(ctx context.Context, segs []msm.Segment, n int) ([]fr.Element, error) {
	const piece = 1 << 16 // scalars (a multiple of 64) gathered between checks of ctx
	full := make([]fr.Element, n)
	off := 0
	for _, s := range segs {
		m := len(s.Scalars)
		pieces := (m + piece - 1) / piece
		if s.Density == nil {
			err := parallel.Each(ctx, pieces, func(k int) {
				lo := k * piece
				copy(full[off+lo:], s.Scalars[lo:min(m, lo+piece)])
			})
			if err != nil {
				return nil, err
			}
			off += m
			continue
		}
		// first[k]: the selected values before piece k
		words := s.Density.Words()
		first := make([]int, pieces+1)
		for k := range pieces {
			c := 0
			for _, w := range words[k*piece/64 : min(len(words), (k+1)*piece/64)] {
				c += bits.OnesCount64(w)
			}
			first[k+1] = first[k] + c
		}
		err := parallel.Each(ctx, pieces, func(k int) {
			o := off + first[k]
			for w := k * piece / 64; w < min(len(words), (k+1)*piece/64); w++ {
				for word := words[w]; word != 0; word &= word - 1 {
					full[o] = s.Scalars[w<<6+bits.TrailingZeros64(word)]
					o++
				}
			}
		})
		if err != nil {
			return nil, err
		}
		off += first[pieces]
	}
	if off != n {
		return nil, fmt.Errorf("stage: gathered %d scalars for a query of %d", off, n)
	}
	return full, nil
}

// witnessQuery is the dense query of the inputs in (nil: every input) and
// the aux values aux selects: the device's selection from its witness when
// it fits there, else its scalars gathered on the host.
func (q *queries) witnessQuery(ctx context.Context, in, aux *r1cs.Density) (*Split, error) {
	n := len(q.inputs) + aux.Count()
	if in != nil {
		n = in.Count() + aux.Count()
	}
	if n <= q.onDevice {
		return &Split{Split: &msm.Split{N: n}, Witness: true, Sel: selection(len(q.inputs), in, aux)}, nil
	}
	full, err := gather(ctx, []msm.Segment{{Scalars: q.inputs, Density: in}, {Scalars: q.aux, Density: aux}}, n)
	if err != nil {
		return nil, err
	}
	return &Split{Split: &msm.Split{N: n}, Full: full}, nil
}

// selection returns the bitmap over w = inputs ‖ aux (nIn inputs, bit i of
// word i/64 for variable i) that selects the inputs in selects (nil: every
// input) and the aux values aux selects.
func selection(nIn int, in, aux *r1cs.Density) []uint64 {
	out := make([]uint64, (nIn+aux.Len()+63)/64)
	for i := range nIn {
		if in == nil || in.Get(i) {
			out[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	base, sh := nIn>>6, uint(nIn)&63
	for j, x := range aux.Words() {
		out[base+j] |= x << sh
		if sh != 0 && base+j+1 < len(out) {
			out[base+j+1] |= x >> (64 - sh)
		}
	}
	return out
}

// mostlyOther estimates whether more than half of v is neither 0 nor 1,
// from one piece of 4,096 values in every 32 (all of v when it is short):
// the device's dense rule for L, decided without classifying (a PoSt's
// witness is ~95 % other values, a PoRep's ~1 %).
func mostlyOther(ctx context.Context, v []fr.Element) (bool, error) {
	const piece, every = 1 << 12, 32
	pieces := (len(v) + piece - 1) / piece
	sampled := (pieces + every - 1) / every
	if pieces < 4*every {
		sampled = pieces
	}
	step := pieces / max(sampled, 1)
	var seen, other atomic.Int64
	err := parallel.Each(ctx, sampled, func(k int) {
		lo := k * step * piece
		c := 0
		one := fr.One()
		for _, x := range v[lo:min(len(v), lo+piece)] {
			if !x.IsZero() && x != one {
				c++
			}
		}
		seen.Add(int64(min(len(v), lo+piece) - lo))
		other.Add(int64(c))
	})
	return 2*other.Load() > seen.Load(), err
}
