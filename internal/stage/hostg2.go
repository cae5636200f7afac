package stage

import (
	"context"
	"runtime"
	"sync"
	"time"
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/pool"
)

// The host's share of B_G2's tail beside a device that runs G2
// ([gpu.Info].HostG2): the first partition of a key that reaches the end of
// its device stages copies the B_G2 bases of a prefix of its tail (that
// fraction of the tail's points) from its slot into a host buffer; every
// later partition of the key splits its tail against those bases, sums the
// entries they hold on the host from its classification on, while the
// device computes H, and leaves the rest to the device. A PoRep partition's
// tail (its values neither 0 nor 1) falls on nearly the same bases in every
// partition, so the prefix keeps its fraction.
//
// A share the host sums after the device is done delays the proof, and a
// host busy with other work (the witnesses, an operator's sealing) sums it
// late. So partitions use a prefix of the share's bases that follows the
// host (adapt): halved after a partition that waited for its host sum,
// grown by an eighth of the share after one that did not, up to the whole.

// minShare is the fewest tail points worth a host share (a variable for
// tests): below it the device's tail MSM is short and the copy not worth
// its memory.
var minShare = 1 << 14

// shareOf returns the fraction of a tail the host takes for a device that
// leaves it frac, with threads goroutines for one CPU MSM (≤ 0: all) out
// of procs (GOMAXPROCS): frac scaled down by the cores the host's sum may
// use, since a device's fraction is sized for all of them and a share the
// host sums late delays the proof.
func shareOf(frac float64, threads, procs int) float64 {
	if threads <= 0 || threads >= procs {
		return frac
	}
	return frac * float64(threads) / float64(procs)
}

// maxShares bounds the keys whose shares the host keeps at once.
const maxShares = 2

// shareState is where a g2Share is in its life.
type shareState int

const (
	shareEmpty   shareState = iota // no bases yet: the next partition may fill it
	shareFilling                   // a partition is copying the bases
	shareReady                     // idx and bases are final
	shareOff                       // none for this key (copy failed or evicted)
)

// g2Share is the host's copy of some of one key's B_G2 bases.
type g2Share struct {
	pk   *groth16.ProvingKey
	used uint64 // when last taken (the Runner's shareTick), for eviction

	mu    sync.Mutex
	state shareState
	users int          // partitions holding the share (take … drop)
	buf   *pool.Buffer // backs bases; released when off and unused
	idx   []uint32     // B_G2 indices, increasing; final once ready
	bases []bls.G2Affine
	use   int // how many of idx and bases partitions take now (adapt)
}

// lateTolerance is how long a partition may wait for its host sum after
// the device is done before its share counts as late: a few thousandths of
// a 32 GiB partition's second of device work (a variable for tests).
var lateTolerance = 5 * time.Millisecond

// adapt sizes the share's prefix after a partition that used it (or, with
// none in use, that would have): halved, and none below minShare, when the
// host's sum was late; else grown by an eighth of the share, up to all of it.
func (sh *g2Share) adapt(late bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.state != shareReady {
		return
	}
	if late {
		if sh.use /= 2; sh.use < minShare {
			sh.use = 0
		}
		return
	}
	sh.use = min(len(sh.idx), sh.use+max(len(sh.idx)/8, minShare))
}

// takeShare returns pk's share, counted as used until drop, making an empty
// one (and evicting the least recently used unused one beyond maxShares).
func (r *Runner) takeShare(pk *groth16.ProvingKey) *g2Share {
	r.shareMu.Lock()
	defer r.shareMu.Unlock()
	if r.shares == nil {
		r.shares = make(map[*groth16.ProvingKey]*g2Share)
	}
	sh := r.shares[pk]
	if sh == nil {
		if len(r.shares) >= maxShares {
			var old *g2Share
			for _, x := range r.shares {
				if old == nil || x.used < old.used {
					old = x
				}
			}
			delete(r.shares, old.pk)
			old.retire()
		}
		sh = &g2Share{pk: pk}
		r.shares[pk] = sh
	}
	r.shareTick++
	sh.used = r.shareTick
	sh.mu.Lock()
	sh.users++
	sh.mu.Unlock()
	return sh
}

// drop ends a partition's use of sh.
func (sh *g2Share) drop() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.users--
	sh.freeIfIdle()
}

// retire turns sh off for good; its memory goes back once no partition
// uses it.
func (sh *g2Share) retire() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.state = shareOff
	sh.freeIfIdle()
}

// freeIfIdle releases the bases of an unused share that is off. sh.mu is
// held.
func (sh *g2Share) freeIfIdle() {
	if sh.state == shareOff && sh.users == 0 && sh.buf != nil {
		sh.buf.Release()
		sh.buf, sh.idx, sh.bases = nil, nil, nil
	}
}

// ready returns the prefix of the share's indices and bases that a
// partition takes now (adapt; possibly none) once the share is filled.
func (sh *g2Share) ready() ([]uint32, []bls.G2Affine, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.state != shareReady {
		return nil, nil, false
	}
	return sh.idx[:sh.use], sh.bases[:sh.use], true
}

// claim reports whether the caller is the one to fill sh (it was empty).
func (sh *g2Share) claim() bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.state != shareEmpty {
		return false
	}
	sh.state = shareFilling
	return true
}

// fill copies the B_G2 bases of the first frac of tail (a partition's B_G2
// tail indices) from slot into sh, whose caller claimed it. Without a
// reader, with too short a tail or on any failure the share turns off and
// the device keeps the whole tail; without host memory free now it stays
// empty for a later partition. It never fails the partition: the sums are
// already made.
func (r *Runner) fill(ctx context.Context, sh *g2Share, slot gpu.Slot, tail []uint32, frac float64) {
	state := shareOff
	defer func() {
		sh.mu.Lock()
		if sh.state == shareFilling {
			sh.state = state
		}
		sh.freeIfIdle()
		sh.mu.Unlock()
	}()
	rd, ok := slot.(gpu.G2Reader)
	frac = shareOf(frac, r.o.Threads, runtime.GOMAXPROCS(0))
	n := min(int(frac*float64(len(tail))), len(tail))
	if !ok || n < minShare {
		return
	}
	buf, err := r.host.TryGet(n * int(g2Bytes))
	if err != nil || buf == nil {
		state = shareEmpty
		return
	}
	idx := append([]uint32(nil), tail[:n]...)
	bases := pool.View[bls.G2Affine](buf, n)
	t0 := time.Now()
	if err := rd.ReadBasesG2(ctx, idx, bases); err != nil {
		buf.Release()
		if ctx.Err() != nil {
			state = shareEmpty
		}
		r.o.Log.Warn("c2: B_G2 bases for the host's share not copied; the device keeps the whole tail", "err", err)
		return
	}
	sh.mu.Lock()
	sh.buf, sh.idx, sh.bases, sh.use = buf, idx, bases, n
	sh.mu.Unlock()
	state = shareReady
	r.o.Log.Debug("c2: host share of B_G2 copied", "bases", n, "of_tail", len(tail), "duration", time.Since(t0))
}

// g2Bytes is the size of one affine G2 point in a host buffer.
const g2Bytes = unsafe.Sizeof(bls.G2Affine{})

// runShare splits the B_G2 tail of pr against sh's bases once pr is
// classified: the device keeps the entries outside them (g.restIdx,
// g.rest, published when g.split closes), and g.sum is the MSM of the
// others over sh's bases, on the host.
func (r *Runner) runShare(ctx context.Context, pr *prepared, idx []uint32, bases []bls.G2Affine, g *g2Job) {
	defer close(g.done)
	split := func() { close(g.split) }
	select {
	case <-pr.classified:
	case <-ctx.Done():
		g.err = ctx.Err()
		split()
		return
	}
	if g.err = pr.classErr; g.err != nil {
		split()
		return
	}
	if pr.B.dense() {
		split() // no tail: the device's MSM takes every scalar
		return
	}
	t0 := time.Now()
	tail, vals := pr.B.TailIdx, pr.B.Tail
	scalars := make([]fr.Element, len(idx)) // zero where the tail has no entry
	restIdx := make([]uint32, 0, max(len(tail)-len(idx), 0))
	rest := make([]fr.Element, 0, cap(restIdx))
	j, got := 0, 0
	for t, i := range tail {
		for j < len(idx) && idx[j] < i {
			j++
		}
		if j < len(idx) && idx[j] == i {
			scalars[j] = vals[t]
			got++
			continue
		}
		restIdx = append(restIdx, i)
		rest = append(rest, vals[t])
	}
	g.shared, g.restIdx, g.rest = true, restIdx, rest
	split()
	if got > 0 {
		g.sum, g.err = gpu.TailG2CPU(ctx, bases, nil, scalars, r.o.Threads)
	}
	r.o.Times.Add(&r.o.Times.BG2, time.Since(t0))
}
