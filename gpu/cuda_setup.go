package gpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/gpu/cuda"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/ntt"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// SetupKey makes the development proving key of the finalized system sys
// for the trapdoor tw straight into this device's memory: the scalars are
// computed on the host a chunk at a time ([groth16.StreamSetupScalars]:
// the host holds a few chunks of setupSlab scalars), each chunk's points by fixed-base multiplication on the device
// into the key's resident buffers as it comes, and the verifying key on
// the host. The bases are the ones
// [groth16.SetupWithWaste] computes for the same tw, byte for byte, and
// never exist in host memory: the key's ProvingKey has the verifying key
// and the sizes only ([groth16.KeyWithoutBases]). When the R1CS fits beside
// the key it is made resident too, as by [CUDA.LoadShape].
//
// The key's bytes are reserved from the budget all at once, with the
// setup's scratch (tables and one chunk of points) until it returns; a key
// that cannot stay resident beside one slot is refused.
//
// INSECURE, as groth16.Setup: whoever knows tw can forge proofs.
func (c *CUDA) SetupKey(ctx context.Context, sys *r1cs.System, tw groth16.ToxicWaste) (Key, error) {
	k, _, err := c.setupKey(ctx, sys, tw)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// setupTimes are the wall times of SetupKey's stages.
type setupTimes struct {
	Scalars time.Duration // the host's scalar stage, the device's multiplications excluded
	VK      time.Duration // verifying key on the host
	G1      time.Duration // H, L, A, B_G1 on the device, chunk by chunk as the scalars come
	G2      time.Duration // B_G2 on the device, likewise
	Shape   time.Duration // the R1CS upload
}

// setupSlab is the number of aux variables whose scalars the host's scalar
// stage holds at once (A, B and C evaluations and the non-zero ones, 32
// bytes each: 2 GiB), and the most scalars one multiplication on the
// device takes. Tests lower it to stream a small key in many chunks.
var setupSlab = 1 << 24

func (c *CUDA) setupKey(ctx context.Context, sys *r1cs.System, tw groth16.ToxicWaste) (*cudaKey, setupTimes, error) {
	var tm setupTimes
	if err := c.enter(ctx, StageLoadKey, 0); err != nil {
		return nil, tm, err
	}
	badArg := func(err error) error {
		return &Error{Device: c.name, Stage: StageLoadKey, Err: fmt.Errorf("%w: %v", ErrBadArgument, err)}
	}
	// The key's size follows from the system: refuse one that cannot stay
	// resident before the scalar stage.
	if !sys.Finalized() {
		return nil, tm, badArg(errors.New("the system is not finalized"))
	}
	n, err := ntt.DomainSize(sys.NumConstraints())
	if err != nil {
		return nil, tm, badArg(err)
	}
	nb := sys.BInputDensity().Count() + sys.BAuxDensity().Count()
	z := groth16.Sizes{H: n - 1, L: sys.NumAux(), A: sys.NumInputs() + sys.ADensity().Count(), BG1: nb, BG2: nb}
	kb := keyBytes(groth16.KeyWithoutBases(groth16.VerifyingKey{}, z))
	if room := c.room(); kb+c.slotBytes(groth16.KeyWithoutBases(groth16.VerifyingKey{}, z), true, 0, false) > room {
		return nil, tm, &Error{Device: c.name, Stage: StageLoadKey, Err: fmt.Errorf(
			"%w: a key of %d bytes and one slot do not fit the %d bytes that the keys already resident leave of the budget of %d bytes (a key made on the device must stay resident)",
			ErrOutOfMemory, kb, room, c.budget.Total())}
	}

	w := cuda.DefaultFixedBaseWindows
	scratch := int64(cuda.FixedBaseTableBytes(1, w)+cuda.FixedBaseTableBytes(2, w)) + cuda.FixedBaseScratch
	res, scr, err := reservePair(ctx, c.budget, kb, scratch)
	if err != nil {
		return nil, tm, err
	}
	res.Pin()
	defer scr.Release()
	// The key takes its verifying key once the scalar stage has given the
	// inputs' scalars; until then it has the sizes only.
	k := c.newKey(groth16.KeyWithoutBases(groth16.VerifyingKey{}, z))
	k.res, k.resident = res, true
	fail := func(sec Section, err error) (*cudaKey, setupTimes, error) {
		k.Release()
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return nil, tm, err
		}
		return nil, tm, c.err(StageLoadKey, sec, err)
	}
	for _, b := range []struct {
		dst   **cuda.Buffer
		n     int
		point int64
		sec   Section
	}{
		{&k.h, z.H, g1Size, SectionH}, {&k.l, z.L, g1Size, SectionL}, {&k.a, z.A, g1Size, SectionA},
		{&k.bg1, z.BG1, g1Size, SectionBG1}, {&k.bg2, z.BG2, g2Size, SectionBG2},
	} {
		if *b.dst, err = c.d.Alloc(uint64(b.n) * uint64(b.point)); err != nil {
			return fail(b.sec, err)
		}
	}
	_, _, g1, g2 := bls.Generators()
	t1, err := c.d.NewFixedBaseG1(&g1, w)
	if err != nil {
		return fail(SectionH, err)
	}
	t2, err := c.d.NewFixedBaseG2(&g2, w)
	if err != nil {
		_ = t1.Free()
		return fail(SectionBG2, err)
	}

	// The scalar stage on the host hands each chunk of scalars to the
	// tables as it comes: the host holds a few chunks, never a query's
	// scalars whole.
	t0 := time.Now()
	var devErr error // a multiplication's error, as against the scalar stage's own
	sec := SectionH
	mul := func(t *cuda.FixedBase, s Section, dst *cuda.Buffer, offset int, v []fr.Element, busy *time.Duration) error {
		t0 := time.Now()
		sec = s
		devErr = t.Mul(dst, offset, v)
		*busy += time.Since(t0)
		return devErr
	}
	sc, err := groth16.StreamSetupScalars(sys, tw, setupSlab, func(q groth16.ParamsSection, offset int, v []fr.Element) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf, s := k.g1Query(q)
		if buf == nil {
			return fmt.Errorf("%w: scalars of section %d", ErrBadArgument, q)
		}
		if err := mul(t1, s, buf, offset, v, &tm.G1); err != nil || q != groth16.ParamsBG1 {
			return err
		}
		return mul(t2, SectionBG2, k.bg2, offset, v, &tm.G2)
	}, nil)
	if ferr := errors.Join(t1.Free(), t2.Free()); err == nil && ferr != nil {
		err, devErr = ferr, ferr
	}
	switch {
	case err == nil:
	case devErr != nil || ctx.Err() != nil:
		return fail(sec, err)
	default: // the system or τ
		k.Release()
		return nil, tm, badArg(err)
	}
	tm.Scalars = time.Since(t0) - tm.G1 - tm.G2
	t0 = time.Now()
	k.pk = groth16.KeyWithoutBases(sc.VerifyingKey(), z)
	tm.VK = time.Since(t0)

	scr.Release() // before the R1CS claims its room
	t0 = time.Now()
	if err := c.attachShape(ctx, k, sys); err != nil {
		k.Release()
		return nil, tm, err
	}
	tm.Shape = time.Since(t0)
	return k, tm, nil
}

// reservePair takes a and b bytes of budget as two reservations without
// holding one while waiting for the other: when both are not free at once,
// it waits (holding nothing) until a+b could be granted and tries again.
func reservePair(ctx context.Context, budget *pool.Budget, a, b int64) (*pool.Reservation, *pool.Reservation, error) {
	for {
		if ra, ok := budget.TryReserve(a); ok {
			if rb, ok := budget.TryReserve(b); ok {
				return ra, rb, nil
			}
			ra.Release()
		}
		both, err := budget.Reserve(ctx, a+b)
		if err != nil {
			return nil, nil, err
		}
		both.Release()
	}
}

// WriteKey writes key's proving key in bellperson's .params format: through
// [groth16.ProvingKey.WriteTo] when its bases are in host memory, else, for
// a key resident on this device (from [CUDA.SetupKey]), by downloading the
// bases a chunk at a time ([groth16.WriteParamsFrom]), so that host memory
// holds one chunk of points however large the key.
func (c *CUDA) WriteKey(key Key, w io.Writer) (int64, error) {
	pk := key.ProvingKey()
	if pk.HostBases() {
		return pk.WriteTo(w)
	}
	k, ok := key.(*cudaKey)
	if !ok || !k.resident || k.c != c {
		return 0, fmt.Errorf("%w: %v", ErrBadArgument, groth16.ErrNoHostBases)
	}
	return groth16.WriteParamsFrom(w, &pk.VK, pk.Sizes(), deviceSource{k})
}

// deviceSource serves a resident key's bases from device memory.
type deviceSource struct{ k *cudaKey }

// g1Query returns the buffer of a resident key's G1 query q and its
// Section; nil for any other q.
func (k *cudaKey) g1Query(q groth16.ParamsSection) (*cuda.Buffer, Section) {
	switch q {
	case groth16.ParamsH:
		return k.h, SectionH
	case groth16.ParamsL:
		return k.l, SectionL
	case groth16.ParamsA:
		return k.a, SectionA
	case groth16.ParamsBG1:
		return k.bg1, SectionBG1
	}
	return nil, 0
}

func (s deviceSource) G1(q groth16.ParamsSection, lo int, dst []bls.G1Affine) error {
	buf, _ := s.k.g1Query(q)
	if buf == nil {
		return fmt.Errorf("%w: section %d is not in G1", ErrBadArgument, q)
	}
	if err := cuda.CopyFrom(dst, buf, uint64(lo)*uint64(g1Size)); err != nil {
		return s.k.c.err(StageLoadKey, 0, err)
	}
	return nil
}

func (s deviceSource) G2(lo int, dst []bls.G2Affine) error {
	if err := cuda.CopyFrom(dst, s.k.bg2, uint64(lo)*uint64(g2Size)); err != nil {
		return s.k.c.err(StageLoadKey, SectionBG2, err)
	}
	return nil
}
