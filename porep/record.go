package porep

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/r1cs"
)

// RecordContext records the R1CS of partition p of shape s on up to
// workers goroutines (GOMAXPROCS when workers ≤ 0) and returns it
// finalized: the very System that [Synthesize] into an
// [r1cs.NewSystem] followed by Finalize gives (same constraints in the same
// order, variables, coefficient table, densities and assignment), hence the
// same canonical digest.
//
// The challenges are cut into the segments [Witness] uses (tree D, the
// parent columns and the challenge, one per label, the replica), each
// recorded into its own [r1cs.Segment] whose variables are numbered where
// the sequential recording puts them (the segment sizes of a shape are
// learned once, in witness-only mode). Unlike the witness, a segment's
// constraints name the variables of the segments it depends on, so it runs
// after them: the labels of a challenge after its columns segment, whose
// gadgets (rows, challenge bits) they are given, and its replica segment
// after its labels and its tree-D segment. The global prefix is recorded
// first; the segments are joined in sequential order at the end.
//
// Once ctx is done no segment starts (a segment is one label, Merkle proof
// or column batch), those running stop within 4096 constraints, and ctx's
// error is returned.
func RecordContext(ctx context.Context, s Shape, p *Partition, workers int) (*r1cs.System, error) {
	workers, err := s.start(ctx, p, workers)
	if err != nil {
		return nil, err
	}
	sz, err := recordSizes(ctx, s, p, workers)
	if err != nil {
		return nil, err
	}
	nseg := s.Layers + 3
	nIn, nAux := 1+sz.globalIn, sz.globalAux
	for range p.Challenges {
		for k := 0; k < nseg; k++ {
			nIn += sz.in[k]
			nAux += sz.aux[k]
		}
	}
	if nIn != s.NumInputs() {
		return nil, fmt.Errorf("porep: the segments of shape %s allocate %d inputs, the shape has %d", s.Name, nIn, s.NumInputs()) // a circuit bug
	}

	rec := r1cs.NewSegmented(nIn, nAux)
	cs := gadget.New(rec.Segment(sz.globalIn, sz.globalAux))
	g := synthGlobal(cs, p)
	segs := make([]*r1cs.Segment, len(p.Challenges)*nseg)
	for i := range segs {
		segs[i] = rec.Segment(sz.in[i%nseg], sz.aux[i%nseg])
	}
	if err := recordSegments(ctx, s, &g, p.Challenges, segs, workers); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rec.System(ctx, workers)
}

// RecordShapeContext records the constraints of shape s without an
// assignment ([r1cs.System.Unassigned]): the System that RecordContext of
// any partition of s gives, but for its values. A partition's challenges
// are alike, so the first is recorded (its segments on up to workers
// goroutines, GOMAXPROCS when workers ≤ 0) and repeated
// ([r1cs.Segmented.Repeat]) into the others' variables, each copy using
// the partition prefix's variables as the first does and its own in place
// of the first's: a 32 GiB partition costs one challenge's recording and
// the joined System's memory. ctx's error is returned once ctx is done.
func RecordShapeContext(ctx context.Context, s Shape, workers int) (*r1cs.System, error) {
	p, err := SyntheticPartition(s, 1) // the constraints depend only on the shape
	if err != nil {
		return nil, err
	}
	if workers, err = s.start(ctx, p, workers); err != nil {
		return nil, err
	}
	sz, err := recordSizes(ctx, s, p, workers)
	if err != nil {
		return nil, err
	}
	nseg := s.Layers + 3
	perIn, perAux := 0, 0
	for k := range nseg {
		perIn += sz.in[k]
		perAux += sz.aux[k]
	}
	n := len(p.Challenges)
	nIn, nAux := 1+sz.globalIn+n*perIn, sz.globalAux+n*perAux
	if nIn != s.NumInputs() {
		return nil, fmt.Errorf("porep: the segments of shape %s allocate %d inputs, the shape has %d", s.Name, nIn, s.NumInputs()) // a circuit bug
	}
	rec := r1cs.NewSegmentedShape(nIn, nAux)
	prefix := rec.Segment(sz.globalIn, sz.globalAux)
	g := synthGlobal(gadget.New(prefix), p)
	first := make([]*r1cs.Segment, nseg)
	for k := range first {
		first[k] = rec.Segment(sz.in[k], sz.aux[k])
	}
	err = recordSegments(ctx, s, &g, p.Challenges[:1], first, workers)
	for _, seg := range first {
		seg.Done()
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The first challenge's variables start after the prefix's; copy i's
	// are theirs moved by i challenges. The prefix's stay.
	in0, aux0 := 1+sz.globalIn, sz.globalAux
	for i := 1; i < n; i++ {
		moved := func(_ int, v r1cs.Variable) r1cs.Variable {
			switch {
			case v.IsAux() && v.Index() >= aux0:
				return r1cs.AuxVariable(v.Index() + i*perAux)
			case !v.IsAux() && v.Index() >= in0:
				return r1cs.InputVariable(v.Index() + i*perIn)
			}
			return v
		}
		for k, seg := range first {
			if err := rec.Repeat(seg, 1, moved); err != nil {
				return nil, fmt.Errorf("porep: %s: challenge %d, segment %d cannot be repeated: %w", s.Name, i, k, err)
			}
		}
	}
	return rec.System(ctx, workers)
}

// recordSizes returns the numbers of inputs and aux variables the global
// prefix and each segment of a challenge allocate, learned (once per
// shape) by a witness-only run of p's prefix and first challenge.
func recordSizes(ctx context.Context, s Shape, p *Partition, workers int) (segmentSizes, error) {
	nseg := s.Layers + 3
	workers = max(workers, 1)
	if v, ok := segmentVars.get(s); ok {
		return segmentSizes{globalIn: v[0], globalAux: v[1], in: v[2 : 2+nseg], aux: v[2+nseg:]}, nil
	}
	w := r1cs.NewWitness(0, 0)
	g := synthGlobal(gadget.New(w), p)
	segs := make([]r1cs.Witness, nseg)
	if err := witnessSegments(ctx, s, &g, p.Challenges[:1], segs, workers); err != nil {
		return segmentSizes{}, err
	}
	v := make([]int, 2+2*nseg)
	v[0], v[1] = len(w.Inputs)-1, len(w.Aux)
	for k := range segs {
		v[2+k], v[2+nseg+k] = len(segs[k].Inputs), len(segs[k].Aux)
	}
	segmentVars.put(s, v)
	return segmentSizes{globalIn: v[0], globalAux: v[1], in: v[2 : 2+nseg], aux: v[2+nseg:]}, nil
}

type segmentSizes struct {
	globalIn, globalAux int   // the prefix's, inputs without ONE
	in, aux             []int // per segment of a challenge
}

// segmentVars remembers recordSizes per shape: the prefix's inputs and
// aux, then the inputs of each segment, then the aux of each.
var segmentVars = auxMemo{m: map[Shape][]int{}}

// recordSegments records the segments of the challenges into segs, Layers+3
// per challenge in sequential order, on up to workers goroutines, each
// segment once those whose variables it names are recorded. No segment
// starts once ctx is done.
func recordSegments(ctx context.Context, s Shape, g *global, challenges []Challenge, segs []*r1cs.Segment, workers int) error {
	n, L := len(challenges), s.Layers
	nseg := L + 3
	var (
		dataLeaves = make([]gadget.Num, n)
		cols       = make([][][]gadget.Num, n)
		nodes      = make([]gadget.UInt64, n)
		labels     = make([]gadget.Num, n*L)
		waiting    = make([]int, n) // label and data segments before the replica's
	)
	q := &taskQueue{left: n * nseg}
	q.cond.L = &q.mu
	replica := func(i int) task {
		return task{run: func(cs *gadget.CS) error {
			return recordInto(ctx, cs, segs[(i+1)*nseg-1], func() error {
				return synthReplica(cs, g, &challenges[i], dataLeaves[i], labels[i*L:(i+1)*L])
			})
		}}
	}
	dep := func(i int) { // under q.mu
		if waiting[i]--; waiting[i] == 0 {
			q.ready = append(q.ready, replica(i))
		}
	}
	label := func(i, layer int) task {
		return task{
			run: func(cs *gadget.CS) error {
				return recordInto(ctx, cs, segs[i*nseg+1+layer], func() error {
					labels[i*L+layer-1] = synthLabel(cs, g, &nodes[i], cols[i], layer, nil)
					return nil
				})
			},
			done: func() { dep(i) },
		}
	}
	for i := range challenges {
		waiting[i] = L + 1
		c := &challenges[i]
		q.ready = append(q.ready, task{
			run: func(cs *gadget.CS) error {
				return recordInto(ctx, cs, segs[i*nseg+1], func() (err error) {
					cols[i], nodes[i], err = synthColumns(cs, g, c)
					return err
				})
			},
			done: func() {
				for layer := 1; layer <= L; layer++ {
					q.ready = append(q.ready, label(i, layer))
				}
			},
		})
	}
	for i := range challenges {
		c := &challenges[i]
		q.ready = append(q.ready, task{
			run: func(cs *gadget.CS) error {
				return recordInto(ctx, cs, segs[i*nseg], func() (err error) {
					dataLeaves[i], err = synthData(cs, g, c)
					return err
				})
			},
			done: func() { dep(i) },
		})
	}
	return q.run(ctx, workers)
}

// recordInto points cs at seg and runs synth, which records one segment
// through cs, stopping within 4096 constraints once ctx is done
// ([r1cs.BuildContext]): a segment is up to a few hundred milliseconds of
// recording, seconds on a loaded machine.
func recordInto(ctx context.Context, cs *gadget.CS, seg *r1cs.Segment, synth func() error) error {
	return r1cs.BuildContext(ctx, seg, func(b r1cs.Builder) error {
		cs.Reset(b)
		return synth()
	})
}

// task is a segment to record; done, called under the queue's lock once
// run succeeded, queues the tasks that were waiting for it.
type task struct {
	run  func(*gadget.CS) error
	done func()
}

// taskQueue runs tasks, and those they make ready, on a pool of workers.
type taskQueue struct {
	mu    sync.Mutex
	cond  sync.Cond
	ready []task
	left  int // tasks not finished, ready or not
	busy  int // tasks running
	err   error
}

// run runs the queue on workers goroutines, each with its own CS, until
// every task has finished or one has failed (or found ctx done), and
// returns the first error.
func (q *taskQueue) run(ctx context.Context, workers int) error {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			cs := gadget.New(nil)
			q.mu.Lock()
			defer q.mu.Unlock()
			for {
				for len(q.ready) == 0 && q.left > 0 && q.err == nil && q.busy > 0 {
					q.cond.Wait()
				}
				if len(q.ready) == 0 && q.left > 0 && q.err == nil {
					q.err = errors.New("porep: recording tasks wait for none running") // a scheduling bug
				}
				if q.err != nil || q.left == 0 {
					return
				}
				t := q.ready[0]
				q.ready = q.ready[1:]
				q.busy++
				q.mu.Unlock()
				err := ctx.Err()
				if err == nil {
					err = t.run(cs)
				}
				q.mu.Lock()
				q.busy--
				if err != nil {
					if q.err == nil {
						q.err = err
					}
				} else {
					if t.done != nil {
						t.done()
					}
					q.left--
				}
				q.cond.Broadcast()
			}
		})
	}
	wg.Wait()
	return q.err
}
