// Package stage runs the stages of one Groth16 partition on one device:
// preparation on the CPU (on a device without the shape's R1CS, the
// evaluation of a, b, c and the check that the constraints hold; then the
// classification of the L, A and B scalars into zeros, ones and a tail),
// the device stages (H, batch additions of the unit-scalar bases, tail
// MSMs), the B_G2 tail MSM on the CPU beside a device that leaves G2 to the
// CPU (or a share of it beside one that runs G2, see hostg2.go), and the
// epilogue (randomization and assembly).
//
// A [Runner] bounds the partitions prepared at once and, without overlap,
// runs one partition at a time with its stages in sequence. A [Lease] lends
// a partition's witness buffer to its stages until the device holds the
// values in its own form. Stage durations add up in [Times].
package stage

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/route"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// Times accumulates stage durations over partitions, in nanoseconds.
type Times struct {
	Prep, H, Batch, Tail, BG2, BG2Wait, Epilogue, Verify atomic.Int64
}

// Add adds d to the accumulator acc of t.
func (t *Times) Add(acc *atomic.Int64, d time.Duration) { acc.Add(int64(d)) }

// name returns the stage an accumulator of t counts, for logs.
func (t *Times) name(acc *atomic.Int64) string {
	switch acc {
	case &t.Prep:
		return "prep"
	case &t.H:
		return "h"
	case &t.Batch:
		return "batch-add"
	case &t.Tail:
		return "tail-msm"
	case &t.BG2:
		return "b_g2"
	case &t.BG2Wait:
		return "b_g2-wait"
	case &t.Epilogue:
		return "epilogue"
	case &t.Verify:
		return "verify"
	}
	return "?"
}

// Options configures a Runner.
type Options struct {
	// Threads bounds the goroutines of one CPU MSM and of the evaluation.
	Threads int
	// Workers is the number of partitions prepared at once.
	Workers int
	// Serial runs one partition at a time, its stages in sequence (B_G2
	// after the device stages, the classification before them).
	Serial bool
	// Times receives the stage durations; nil: they are not kept.
	Times *Times
	// Log receives each device stage and preparation at debug level; nil:
	// nothing is logged.
	Log *slog.Logger
}

// Runner runs partitions' stages. It is safe for concurrent use.
type Runner struct {
	keys   *route.Keys
	host   *pool.Pool
	o      Options
	prep   *route.Places // partitions of one circuit prepared at once
	serial sync.Mutex    // held through a whole partition when o.Serial

	shareMu   sync.Mutex
	shares    map[*groth16.ProvingKey]*g2Share // the host's B_G2 bases (hostg2.go)
	shareTick uint64                           // takeShare calls, to order shares by use
}

// New returns a Runner that loads keys onto devices through keys and takes
// host buffers from host.
func New(keys *route.Keys, host *pool.Pool, o Options) *Runner {
	if o.Times == nil {
		o.Times = new(Times)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Runner{keys: keys, host: host, o: o, prep: route.NewPlaces(max(1, o.Workers))}
}

// Lease lends a partition's witness buffer to its stages. Release gives it
// back, once, as soon as the device has everything it needs in its own
// form (the witness pass, or a key that sums its streamed batch additions
// itself: L, A and B classified, after a, b and c on the host); the
// system's aux must not be read after that, and a stage that needs the
// values again (a retry, a check of the device's word) proves or checks
// the system Rebuild synthesizes anew. A nil *Lease lends nothing: the caller keeps
// the witness until the partition is done.
type Lease struct {
	once     sync.Once
	released atomic.Bool
	give     func()
	rebuild  func(context.Context) (*r1cs.System, error)
}

// NewLease returns a lease that calls give on release and rebuild when a
// stage needs the values after it.
func NewLease(give func(), rebuild func(context.Context) (*r1cs.System, error)) *Lease {
	return &Lease{give: give, rebuild: rebuild}
}

// Release gives the buffer back (once).
func (l *Lease) Release() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		l.released.Store(true)
		l.give()
	})
}

// Gone reports whether the buffer was given back.
func (l *Lease) Gone() bool { return l != nil && l.released.Load() }

// Rebuild synthesizes the partition's system again.
func (l *Lease) Rebuild(ctx context.Context) (*r1cs.System, error) { return l.rebuild(ctx) }

// Prove runs the stages of one partition with d as its device and returns
// its proof, not verified; ls lends sys's witness buffer (may be nil).
// Errors: a *gpu.Error for a device failure, the preparation's (an
// *r1cs.UnsatisfiedError names the first constraint that fails), ctx's.
func (r *Runner) Prove(ctx context.Context, d *route.Device, pk *groth16.ProvingKey, sys *r1cs.System, ls *Lease) (groth16.Proof, error) {
	if r.o.Serial {
		r.serial.Lock()
		defer r.serial.Unlock()
	}
	key, err := r.keys.Load(ctx, d, pk, sys)
	if err != nil {
		return groth16.Proof{}, err
	}
	sk, ok := key.(gpu.ShapeKey)
	onDevice := ok && sk.Records(sys) // the device evaluates a, b, c

	// Look ahead by at most Workers partitions of this circuit per device,
	// and prepare at most Workers of them at once: another circuit's
	// partitions never hold this one's places.
	admitted, err := d.Ahead(ctx, pk)
	if err != nil {
		return groth16.Proof{}, err
	}
	defer admitted()

	prepared, err := r.prep.Take(ctx, pk)
	if err != nil {
		return groth16.Proof{}, err
	}
	if !onDevice && !streamsBeside(key) {
		// The host evaluates a, b, c from the witness: kept to the end.
		// Beside a key's own batch additions it goes back once classified,
		// so that partitions in those additions let the next ones be
		// synthesized.
		ls = nil
	}
	// A device that takes the witness and does G2 reads dense queries' scalars from it.
	pr, err := r.prepare(ctx, pk, sys, !onDevice, onDevice && d.Info().G2, ls, prepared)
	if err != nil {
		return groth16.Proof{}, err
	}
	defer pr.release()

	// B_G2's tail on the CPU, when the device leaves it to us: started as
	// soon as the witness is classified, so it runs while the partition
	// waits for and uses the device (after the device stages when serial).
	// Beside a device that runs G2, the host's share of it once the key's
	// share holds bases (none when serial).
	var g2 *g2Job
	var sh *g2Share
	switch info := d.Info(); {
	case !info.G2:
		g2 = &g2Job{done: make(chan struct{})}
		run := func() { r.runG2(ctx, key.ProvingKey(), pr, g2) }
		if r.o.Serial {
			g2.start = run
		} else {
			go run()
		}
		defer g2.join()
	case info.HostG2 > 0 && !r.o.Serial:
		sh = r.takeShare(pk)
		defer sh.drop()
		switch idx, bases, ok := sh.ready(); {
		case ok && len(idx) == 0:
			sh.adapt(false) // none in use after late sums: try a little again
		case ok:
			g2 = &g2Job{done: make(chan struct{}), split: make(chan struct{})}
			go r.runShare(ctx, pr, idx, bases, g2)
			defer g2.join()
		}
	}
	sums, err := r.deviceStages(ctx, d, key, sys, ls, pr, onDevice, admitted, g2, sh)
	if err != nil {
		return groth16.Proof{}, err
	}

	t0 := time.Now()
	var rr, s fr.Element
	if err := randomNonZero(&rr); err != nil {
		return groth16.Proof{}, err
	}
	if err := randomNonZero(&s); err != nil {
		return groth16.Proof{}, err
	}
	proof := groth16.Assemble(&pk.VK, sums, rr, s)
	r.o.Times.Add(&r.o.Times.Epilogue, time.Since(t0))
	d.Complete()
	return proof, nil
}

// streamsBeside reports whether key sums the batch additions of some of
// its sections itself ([gpu.StreamedKey]).
func streamsBeside(key gpu.Key) bool {
	sk, ok := key.(gpu.StreamedKey)
	if !ok {
		return false
	}
	for _, sec := range []gpu.Section{gpu.SectionL, gpu.SectionA, gpu.SectionBG1, gpu.SectionBG2} {
		if sk.Streams(sec) {
			return true
		}
	}
	return false
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
