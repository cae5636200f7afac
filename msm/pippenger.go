package msm

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Interruptible multi-scalar multiplication: Pippenger's bucket method as
// gnark-crypto runs it (signed c-bit digits, 2^(c−1) buckets per window,
// batched affine additions into the buckets), except that a window's pass
// over the points is cut into pieces of msmPiece points between which the
// context is checked. gnark-crypto's MultiExp cannot be interrupted, and
// cutting it into calls over fewer points costs a third more at 2^16 points
// per call (BENCHMARKS.md); here the buckets live on across the pieces, so
// the pieces cost nothing.

// msmPiece is the number of points a window's pass adds into its buckets
// between two checks of the context: about 5 ms of G1 work (10 ms of G2) on
// one core.
const msmPiece = 1 << 14

// msmSmall is the size under which MultiExp hands the whole MSM to
// gnark-crypto in one call (at most ~10 ms of G2 work on 2 cores).
const msmSmall = 1 << 11

// MultiExpG1 returns Σ scalars[j]·bases[idx[j]], or Σ scalars[j]·bases[j]
// when idx is nil (then the lengths must be equal), on up to tasks
// goroutines (≤ 0: GOMAXPROCS); scalars are in Montgomery form, as
// gnark-crypto's MultiExp takes them. It checks ctx between pieces of a few
// milliseconds' work and returns ctx's error once ctx ends, after every
// goroutine it started has returned. Its scratch is 2·(⌈256/c⌉+1) bytes
// per scalar for the signed digits (34 from about 2^19 scalars on, where
// c = 16) and 2^(c−1) buckets per goroutine.
func MultiExpG1(ctx context.Context, bases []bls.G1Affine, idx []uint32, scalars []fr.Element, tasks int) (bls.G1Jac, error) {
	return groupG1.multiExp(ctx, bases, idx, scalars, tasks)
}

// MultiExpG2 is MultiExpG1 over G2.
func MultiExpG2(ctx context.Context, bases []bls.G2Affine, idx []uint32, scalars []fr.Element, tasks int) (bls.G2Jac, error) {
	return groupG2.multiExp(ctx, bases, idx, scalars, tasks)
}

// windowBits returns Pippenger's window size for n points: the c ≤ 16
// minimizing (256/c)·(n + 2^c), gnark-crypto's estimate.
func windowBits(n int) int {
	best, cost := 16, -1.0
	for c := 10; c <= 16; c++ {
		k := float64(256) / float64(c) * float64(n+1<<c)
		if cost < 0 || k < cost {
			best, cost = c, k
		}
	}
	return best
}

// batchSizes are gnark-crypto's batch sizes for c = 10..16: the affine
// additions of one batch share one inversion, and a larger batch meets more
// buckets already in it.
var batchSizes = [...]int{80, 150, 200, 350, 400, 500, 640}

func (g group[A, F, J, PA, PF, PJ]) multiExp(ctx context.Context, bases []A, idx []uint32, scalars []fr.Element, tasks int) (J, error) {
	var res J
	n := len(scalars)
	if idx == nil && len(bases) != n {
		return res, fmt.Errorf("msm: %s: %d bases for %d scalars", g.name, len(bases), n)
	}
	if idx != nil {
		if len(idx) != n {
			return res, fmt.Errorf("msm: %s: %d indices for %d scalars", g.name, len(idx), n)
		}
		for _, i := range idx {
			if int(i) >= len(bases) {
				return res, fmt.Errorf("msm: %s: index %d beyond %d bases", g.name, i, len(bases))
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if tasks <= 0 {
		tasks = runtime.GOMAXPROCS(0)
	}
	if n == 0 {
		return res, nil
	}
	if n < msmSmall {
		if idx != nil {
			bases = Gather(bases, idx)
		}
		if _, err := PJ(&res).MultiExp(bases, scalars, ecc.MultiExpConfig{NbTasks: tasks}); err != nil {
			return res, fmt.Errorf("msm: %s: %w", g.name, err)
		}
		return res, ctx.Err()
	}
	c := windowBits(n)
	// Windows 0..nw−1 hold digits in [−2^(c−1), 2^(c−1)); the carry out of
	// the top one (0 or 1) is window nw.
	nw := (256 + c - 1) / c
	digits := make([]uint16, (nw+1)*n)
	var used [64]atomic.Bool // windows with a non-zero digit (nw+1 ≤ 27)
	err := run(ctx, tasks, (n+msmPiece-1)/msmPiece, func(k int) {
		lo, hi := k*msmPiece, min(n, (k+1)*msmPiece)
		var nz [64]bool
		mask := uint64(1)<<c - 1
		half := 1 << (c - 1)
		for i := lo; i < hi; i++ {
			if scalars[i].IsZero() {
				continue
			}
			s := scalars[i].Bits()
			carry := 0
			for w := range nw {
				o := w * c
				word, sh := o/64, o%64
				v := s[word] >> sh
				if sh+c > 64 && word+1 < len(s) {
					v |= s[word+1] << (64 - sh)
				}
				d := int(v&mask) + carry
				carry = 0
				if d >= half {
					d -= 1 << c
					carry = 1
				}
				if d == 0 {
					continue
				}
				nz[w] = true
				if d > 0 {
					digits[w*n+i] = uint16(d) << 1
				} else {
					digits[w*n+i] = uint16(-d-1)<<1 | 1
				}
			}
			if carry != 0 {
				nz[nw] = true
				digits[nw*n+i] = 1 << 1
			}
		}
		for w := range nw + 1 {
			if nz[w] {
				used[w].Store(true)
			}
		}
	})
	if err != nil {
		return res, err
	}

	// One unit per window and part of the points: more parts when there
	// are more goroutines than windows.
	var wins []int
	for w := range nw + 1 {
		if used[w].Load() {
			wins = append(wins, w)
		}
	}
	if len(wins) == 0 {
		return res, nil
	}
	parts := max(1, (tasks+len(wins)-1)/len(wins))
	parts = min(parts, max(1, n/msmPiece))
	sums := make([]J, len(wins)*parts)
	var mu sync.Mutex
	var pool []*buckets[A, F, J, PA, PF, PJ]
	err = run(ctx, tasks, len(sums), func(u int) {
		mu.Lock()
		var b *buckets[A, F, J, PA, PF, PJ]
		if k := len(pool); k > 0 {
			b, pool = pool[k-1], pool[:k-1]
		}
		mu.Unlock()
		if b == nil {
			b = g.newBuckets(c)
		}
		w, part := wins[u/parts], u%parts
		lo, hi := n*part/parts, n*(part+1)/parts
		b.reset()
		for p := lo; p < hi; p += msmPiece {
			if ctx.Err() != nil {
				break
			}
			q := min(hi, p+msmPiece)
			if idx == nil {
				b.add(bases[p:q], nil, digits[w*n+p:w*n+q])
			} else {
				b.add(bases, idx[p:q], digits[w*n+p:w*n+q])
			}
		}
		if ctx.Err() == nil {
			sums[u] = b.reduce(ctx)
		}
		mu.Lock()
		pool = append(pool, b)
		mu.Unlock()
	})
	if err != nil {
		return res, err
	}
	// res = Σ_w 2^(c·w)·(Σ_parts sums), by Horner from the top window.
	for k := len(wins) - 1; k >= 0; k-- {
		if k < len(wins)-1 {
			for range (wins[k+1] - wins[k]) * c {
				PJ(&res).DoubleAssign()
			}
		}
		for part := range parts {
			PJ(&res).AddAssign(&sums[k*parts+part])
		}
	}
	for range wins[0] * c {
		PJ(&res).DoubleAssign()
	}
	return res, nil
}

// run calls f(k) for k in [0, units) on up to tasks goroutines that check
// ctx before each call, and returns once all have returned: ctx's error
// when it ended, else nil.
func run(ctx context.Context, tasks, units int, f func(k int)) error {
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			k := int(next.Add(1)) - 1
			if k >= units {
				return
			}
			f(k)
		}
	}
	var wg sync.WaitGroup
	for range min(tasks, units) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return ctx.Err()
}

// buckets is one window's bucket state: bucket b holds the sum of the points
// whose digit is ±(b+1), in affine form, plus what could not be added in
// affine form (a doubling, or a point of a full queue) in Jacobian form.
type buckets[A, F, J any, PA affinePoint[A, J], PF coord[F], PJ jacobianPoint[A, J]] struct {
	g    group[A, F, J, PA, PF, PJ]
	aff  []A
	jac  []J
	jUse []bool
	// The current batch: bucket ids (marked in inBatch) and their points.
	inBatch []uint64
	ids     []int32
	pts     []A
	// Points whose bucket was in the batch, waiting for the next one.
	queue   []op[A]
	den, pr []F
}

type op[A any] struct {
	id int32
	p  A
}

func (g group[A, F, J, PA, PF, PJ]) newBuckets(c int) *buckets[A, F, J, PA, PF, PJ] {
	nb := 1 << (c - 1)
	bs := batchSizes[c-10]
	return &buckets[A, F, J, PA, PF, PJ]{
		g: g, aff: make([]A, nb), jac: make([]J, nb), jUse: make([]bool, nb),
		inBatch: make([]uint64, (nb+63)/64), ids: make([]int32, 0, bs), pts: make([]A, bs),
		queue: make([]op[A], 0, bs), den: make([]F, bs), pr: make([]F, bs),
	}
}

func (b *buckets[A, F, J, PA, PF, PJ]) reset() {
	clear(b.aff) // (0, 0): the point at infinity
	clear(b.jUse)
	clear(b.inBatch)
	b.ids = b.ids[:0]
	b.queue = b.queue[:0]
}

// add adds ±bases[idx[i]] (±bases[i] when idx is nil) to the bucket of
// digits[i] for every i.
func (b *buckets[A, F, J, PA, PF, PJ]) add(bases []A, idx []uint32, digits []uint16) {
	var neg A
	for i, d := range digits {
		if d == 0 {
			continue
		}
		p := &bases[i]
		if idx != nil {
			p = &bases[idx[i]]
		}
		if PA(p).IsInfinity() {
			continue
		}
		id := int32(d>>1) - 1
		if d&1 == 1 { // negative digit: bucket −d−1, point −P
			id = int32(d >> 1)
			neg = *p
			_, y := b.g.xy(&neg)
			PF(y).Neg(y)
			p = &neg
		}
		if b.inBatch[id>>6]&(1<<(id&63)) != 0 {
			b.queue = append(b.queue, op[A]{id, *p})
			if len(b.queue) == cap(b.queue) {
				b.flushQueue()
			}
			continue
		}
		b.put(id, p)
		if len(b.ids) == len(b.pts) {
			b.execute()
			b.fromQueue()
		}
	}
}

// put adds p to bucket id, which is not in the batch: at once when the
// bucket is empty or holds ±p, else into the batch.
func (b *buckets[A, F, J, PA, PF, PJ]) put(id int32, p *A) {
	bk := &b.aff[id]
	bx, by := b.g.xy(bk)
	px, py := b.g.xy(p)
	switch {
	case PF(bx).IsZero() && PF(by).IsZero():
		*bk = *p
	case PF(bx).Equal(px):
		if PF(by).Equal(py) { // p + p: a doubling, left to Jacobian form
			b.addJac(id, p)
		} else { // p − p
			var inf A
			*bk = inf
		}
	default:
		b.inBatch[id>>6] |= 1 << (id & 63)
		b.pts[len(b.ids)] = *p
		b.ids = append(b.ids, id)
	}
}

// addJac adds p to bucket id's Jacobian part.
func (b *buckets[A, F, J, PA, PF, PJ]) addJac(id int32, p *A) {
	if !b.jUse[id] {
		b.jac[id] = *new(J) // Z = 0: the point at infinity
		b.jUse[id] = true
	}
	PJ(&b.jac[id]).AddMixed(p)
}

// fromQueue moves queued points whose bucket is free into the batch. The
// batch was just executed and the queue is shorter than a batch, so the
// batch has room for all of it.
func (b *buckets[A, F, J, PA, PF, PJ]) fromQueue() {
	k := 0
	for _, q := range b.queue {
		if b.inBatch[q.id>>6]&(1<<(q.id&63)) != 0 {
			b.queue[k] = q
			k++
			continue
		}
		b.put(q.id, &q.p)
	}
	b.queue = b.queue[:k]
}

// flushQueue adds the queued points in Jacobian form.
func (b *buckets[A, F, J, PA, PF, PJ]) flushQueue() {
	for i := range b.queue {
		b.addJac(b.queue[i].id, &b.queue[i].p)
	}
	b.queue = b.queue[:0]
}

// execute performs the batch's affine additions, sharing one inversion.
func (b *buckets[A, F, J, PA, PF, PJ]) execute() {
	k := len(b.ids)
	if k == 0 {
		return
	}
	for j, id := range b.ids {
		bx, _ := b.g.xy(&b.aff[id])
		px, _ := b.g.xy(&b.pts[j])
		PF(&b.den[j]).Sub(px, bx)
	}
	addAffine[F, PF](k, func(j int) (x, y *F) { return b.g.xy(&b.aff[b.ids[j]]) },
		func(j int) (x, y *F) { return b.g.xy(&b.pts[j]) }, b.den, b.pr)
	for _, id := range b.ids {
		b.inBatch[id>>6] = 0
	}
	b.ids = b.ids[:0]
}

// reduceCheck is how many buckets reduce sums between checks of its
// context (about a millisecond's work).
const reduceCheck = 1024

// reduce flushes what is pending and returns Σ (b+1)·bucket b, or stops
// early, its sum then meaningless, once ctx ends (checked every
// reduceCheck buckets).
func (b *buckets[A, F, J, PA, PF, PJ]) reduce(ctx context.Context) J {
	b.execute()
	b.flushQueue()
	var run, total J
	for k := len(b.aff) - 1; k >= 0; k-- {
		if k%reduceCheck == 0 && ctx.Err() != nil {
			break
		}
		PJ(&run).AddMixed(&b.aff[k])
		if b.jUse[k] {
			PJ(&run).AddAssign(&b.jac[k])
		}
		PJ(&total).AddAssign(&run)
	}
	return total
}
