package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/sealc2/c2/gpu/cuda"
	"github.com/sealc2/c2/pool"
)

// A streamed key sums the batch additions of the sections it streams
// itself ([StreamedKey]), outside its slots: a pass copies a section's
// bases chunk by chunk into one of two device buffers, the next chunk's copy
// running while the requests' sums read the chunk before it. Requests for
// one section that wait while a pass runs go together into the next pass,
// so that a backlog crosses the bus once for all of them.

// keyStream is a streamed key's means for its own batch additions: two
// chunk buffers and the scratch of the sums, reserved once and pinned in
// the budget until the key is released.
type keyStream struct {
	res    *pool.Reservation
	chunks [2]*cuda.Buffer
	turn   chan struct{} // one token: the passes take turns on the bus

	mu    sync.Mutex
	queue []*streamReq // waiting for a pass, oldest first
}

// streamReq is one batch addition waiting for, or summed by, a pass.
type streamReq struct {
	sec  Section
	ones []uint64
	g1   bls.G1Jac
	g2   bls.G2Jac
	err  error
	done chan struct{} // closed once g1 or g2, or err, is final
}

// streamChunkBytes is the size of each of a key's two chunk buffers; a
// variable for tests.
var streamChunkBytes int64 = 1 << 27

// streamPoints is how many bases of size bytes a chunk holds: a multiple
// of 64 (whole bitmap words), at least 64.
func streamPoints(size int64) int {
	return int(max(64, streamChunkBytes/size&^63))
}

// streamBytes is the device memory a key reserves for its own batch
// additions on a device of sms SMs: two chunks, the scratch of one chunk's
// sum over resident bases (G1's or G2's, whichever is larger), and what
// slotSlop covers for a slot.
func streamBytes(sms int64) int64 {
	chunk := max(streamChunkBytes, 64*g2Size)
	return 2*chunk + max(batchScratch(int64(streamPoints(g1Size)), msmG1, false, sms),
		batchScratch(int64(streamPoints(g2Size)), msmG2, false, sms)) + slotSlop
}

// reserveStream gives a streamed key k its own batch additions, on a
// device that streams beside its slots (C2_CUDA_STREAM_BESIDE=1), when a
// slot still fits beside their memory (streamBytes: ≈ 0.33 GB) and k's
// sections on the device (fillSections places those first: each saves
// its bytes on the bus for every partition), so that a
// partition's streamed batch additions leave its slot and overlap the next
// partition's work there. Without that room, or when the driver refuses
// the buffers, k's batch additions stay in its slots. It is opt-in: on an
// H100 it has not yet been measured faster (BENCHMARKS.md, session 51).
func (c *CUDA) reserveStream(k *cudaKey) {
	if res := c.streamReservation(k); res != nil && k.openStream(res) != nil {
		res.Release()
	}
}

// streamReservation reserves and pins the memory of k's own batch
// additions; nil for a resident key or without room for it and a slot.
func (c *CUDA) streamReservation(k *cudaKey) *pool.Reservation {
	if k.resident || !c.streamBeside {
		return nil
	}
	need := streamBytes(int64(c.sms))
	if need+c.SlotBytes(k) > c.room() {
		return nil
	}
	res, ok := c.budget.TryReserve(need)
	if !ok {
		return nil
	}
	res.Pin()
	return res
}

// openStream makes k's keyStream on res: its two chunk buffers.
func (k *cudaKey) openStream(res *pool.Reservation) error {
	ks := &keyStream{res: res, turn: make(chan struct{}, 1)}
	for i := range ks.chunks {
		b, err := k.c.d.Alloc(uint64(max(streamChunkBytes, 64*g2Size)))
		if err != nil {
			ks.res = nil // the caller's
			ks.free()
			return err
		}
		ks.chunks[i] = b
	}
	k.stream = ks
	return nil
}

// free releases the buffers and the reservation of s (nil: nothing).
func (s *keyStream) free() {
	if s == nil {
		return
	}
	for _, b := range s.chunks {
		if b != nil {
			_ = b.Free()
		}
	}
	if s.res != nil {
		s.res.Release()
	}
}

// Streams implements [StreamedKey]: sec's batch additions go through k when
// k has its own batch additions and sec (not H, which has none) streams.
func (k *cudaKey) Streams(sec Section) bool {
	return k.stream != nil && sec > SectionH && sec <= SectionBG2 && !k.onDevice().has(sec)
}

// BatchAddG1 implements [StreamedKey].
func (k *cudaKey) BatchAddG1(ctx context.Context, sec Section, ones []uint64) (bls.G1Jac, error) {
	if sec == SectionBG2 {
		return bls.G1Jac{}, &Error{Device: k.c.name, Stage: StageBatchAdd, Section: sec,
			Err: fmt.Errorf("%w: %s is not a G1 section", ErrBadArgument, sec)}
	}
	r, err := k.batchAdd(ctx, sec, ones)
	return r.g1, err
}

// BatchAddG2 implements [StreamedKey].
func (k *cudaKey) BatchAddG2(ctx context.Context, ones []uint64) (bls.G2Jac, error) {
	r, err := k.batchAdd(ctx, SectionBG2, ones)
	return r.g2, err
}

// batchAdd queues a batch addition over a section k streams and waits
// until a pass has summed it: its own, once k's turn comes, or another
// caller's that took it along. It returns ctx's error when ctx ends before
// a pass took the request.
func (k *cudaKey) batchAdd(ctx context.Context, sec Section, ones []uint64) (*streamReq, error) {
	req := &streamReq{sec: sec, ones: ones, done: make(chan struct{})}
	fail := func(err error) (*streamReq, error) {
		return req, &Error{Device: k.c.name, Stage: StageBatchAdd, Section: sec, Err: err}
	}
	if !k.Streams(sec) {
		return fail(fmt.Errorf("%w: the key does not stream %s", ErrBadArgument, sec))
	}
	if err := k.c.enter(ctx, StageBatchAdd, sec); err != nil {
		return req, err
	}
	z := k.pk.Sizes()
	n := map[Section]int{SectionL: z.L, SectionA: z.A, SectionBG1: z.BG1, SectionBG2: z.BG2}[sec]
	if err := checkOnes(n, ones); err != nil {
		return fail(err)
	}
	s := k.stream
	s.mu.Lock()
	s.queue = append(s.queue, req)
	s.mu.Unlock()
	for {
		if ctx.Err() != nil {
			if s.withdraw(req) {
				return req, ctx.Err()
			}
			<-req.done // in another caller's pass: it ends soon
			return req, req.err
		}
		select {
		case <-req.done:
			return req, req.err
		case s.turn <- struct{}{}:
			if batch := s.take(); len(batch) > 0 {
				k.pass(ctx, batch)
			}
			<-s.turn
		case <-ctx.Done():
		}
	}
}

// take removes from the queue its oldest request and every other request
// for that request's section, and returns them.
func (s *keyStream) take() []*streamReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return nil
	}
	sec := s.queue[0].sec
	var batch, rest []*streamReq
	for _, r := range s.queue {
		if r.sec == sec {
			batch = append(batch, r)
		} else {
			rest = append(rest, r)
		}
	}
	s.queue = rest
	return batch
}

// withdraw removes req from the queue and reports whether it was there.
func (s *keyStream) withdraw(req *streamReq) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.queue, req)
	if i < 0 {
		return false
	}
	s.queue = slices.Delete(s.queue, i, i+1)
	return true
}

// pass sums the batch's requests, all over one section, in one pass over
// its bases, and completes them. When ctx ends during the pass, the
// requests of other callers go back to the queue.
func (k *cudaKey) pass(ctx context.Context, batch []*streamReq) {
	var err error
	if sec := batch[0].sec; sec == SectionBG2 {
		err = streamPass(ctx, k, sec, cudaG2, g2Size, batch, func(r *streamReq) *bls.G2Jac { return &r.g2 })
	} else {
		err = streamPass(ctx, k, sec, cudaG1, g1Size, batch, func(r *streamReq) *bls.G1Jac { return &r.g1 })
	}
	if err != nil && errors.Is(err, ctx.Err()) {
		s := k.stream
		s.mu.Lock()
		for _, r := range batch {
			if r.err == nil {
				s.queue = append(s.queue, r)
			}
		}
		s.mu.Unlock()
		return
	}
	for _, r := range batch {
		if err != nil {
			r.err = err
		}
		close(r.done)
	}
}

// streamPass is pass for the group g of points of size bytes, out giving a
// request's sum; it sets the sums only when it returns nil (on an ended
// ctx, ctx's error).
func streamPass[A, J any, PJ point[J]](ctx context.Context, k *cudaKey, sec Section, g cudaGroup[A, J], size int64,
	batch []*streamReq, out func(*streamReq) *J) error {
	n, bases, _, err := g.section(k, sec)
	if err != nil {
		return k.c.err(StageBatchAdd, sec, err)
	}
	per := streamPoints(size)
	chunks := k.stream.chunks
	sums := make([]J, len(batch))
	up := make(chan error, 1)
	upload := func(j int) {
		lo, hi := j*per, min(n, (j+1)*per)
		go func() { up <- cuda.CopyTo(chunks[j%2], 0, bases[lo:hi]) }()
	}
	nchunks := (n + per - 1) / per
	if nchunks > 0 {
		upload(0)
	}
	for j := 0; j < nchunks; j++ {
		err := <-up // chunk j is on the device
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			if errors.Is(err, ctx.Err()) {
				return err
			}
			return k.c.err(StageBatchAdd, sec, err)
		}
		if j+1 < nchunks {
			upload(j + 1) // into the other buffer, whose sums are done
		}
		lo, hi := j*per, min(n, (j+1)*per)
		for i, r := range batch {
			part, err := g.batchAddResident(k.dev(), chunks[j%2], hi-lo, r.ones[lo/64:(hi+63)/64])
			if err != nil {
				if j+1 < nchunks {
					<-up // the copy in flight ends before its buffer may be reused
				}
				return k.c.err(StageBatchAdd, sec, err)
			}
			if j == 0 {
				sums[i] = part
			} else {
				PJ(&sums[i]).AddAssign(&part)
			}
		}
	}
	for i, r := range batch {
		*out(r) = sums[i]
	}
	return nil
}
