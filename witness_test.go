package c2

import (
	"context"
	"errors"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/r1cs"
)

// witnessDevice is the CPU device with the witness pass of a GPU emulated
// by gpu.R1CS's host reference: LoadShape keeps the recorded R1CS in the
// device layout, and its slots take the witness handoff instead of a, b, c.
type witnessDevice struct {
	*gpu.CPU
	shapes, witnesses int // calls seen, for assertions (one goroutine at a time per test)
	fail              bool
}

type witnessKey struct {
	gpu.Key
	r *gpu.R1CS
}

func (k *witnessKey) Records(sys *r1cs.System) bool { return k.r.Records(sys) }

type witnessSlot struct {
	gpu.Slot
	d *witnessDevice
	r *gpu.R1CS
	n int
}

func (d *witnessDevice) LoadShape(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System) (gpu.Key, error) {
	k, err := d.LoadKey(ctx, pk)
	if err != nil {
		return nil, err
	}
	r, err := gpu.NewR1CS(sys)
	if err != nil {
		return k, nil
	}
	d.shapes++
	return &witnessKey{Key: k, r: r}, nil
}

func inner(key gpu.Key) gpu.Key {
	if k, ok := key.(*witnessKey); ok {
		return k.Key
	}
	return key
}

func (d *witnessDevice) SlotBytes(key gpu.Key) int64 { return d.CPU.SlotBytes(inner(key)) }

func (d *witnessDevice) Acquire(ctx context.Context, key gpu.Key) (gpu.Slot, error) {
	s, err := d.CPU.Acquire(ctx, inner(key))
	if err != nil {
		return nil, err
	}
	if k, ok := key.(*witnessKey); ok {
		return &witnessSlot{Slot: s, d: d, r: k.r, n: key.ProvingKey().DomainSize()}, nil
	}
	return s, nil
}

func (s *witnessSlot) ComputeHWitness(ctx context.Context, w *gpu.Witness) (bls.G1Jac, error) {
	s.d.witnesses++
	a, b, c := make([]fr.Element, s.n), make([]fr.Element, s.n), make([]fr.Element, s.n)
	bad, err := s.r.Eval(w, a, b, c)
	if err != nil {
		return bls.G1Jac{}, err
	}
	if s.d.fail && bad < 0 {
		bad = 0 // a faulty device that refuses a good witness
	}
	if bad >= 0 {
		return bls.G1Jac{}, &r1cs.UnsatisfiedError{Index: bad, A: a[bad], B: b[bad], C: c[bad]}
	}
	return s.ComputeH(ctx, a, b, c)
}

// shared returns f's partitions as systems sharing parts[0]'s recorded
// matrices, as Prove's partitions share the shape's recording.
func shared(t *testing.T, f *fixture) []*r1cs.System {
	t.Helper()
	var out []*r1cs.System
	for _, sys := range f.parts {
		s, err := f.parts[0].WithAssignment(sys.Inputs(), sys.Aux())
		require.NoError(t, err)
		out = append(out, s)
	}
	return out
}

// Partitions go to a device that evaluates a, b, c itself as witnesses (no
// host a, b, c): the proofs verify, the host buffers stay unused, and a
// partition recorded apart from the resident R1CS is still proved (from
// host a, b, c).
func TestProveWitnessPass(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	parts := shared(t, f)
	for _, overlap := range []bool{true, false} {
		d := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
		p, err := newProver(Config{Threads: 2, DisableOverlap: !overlap}, []gpu.Device{d})
		require.NoError(t, err)
		proofs, err := p.ProvePartitions(context.Background(), f.pk, parts)
		require.NoError(t, err)
		verifyAll(t, f, proofs)
		assert.Equal(t, 1, d.shapes)
		assert.Equal(t, 3, d.witnesses)
		assert.Zero(t, p.Stats().HostPeak, "no host a, b, c")

		// Recorded on its own: not the resident R1CS.
		proofs, err = p.ProvePartitions(context.Background(), f.pk, f.parts[1:2])
		require.NoError(t, err)
		require.NoError(t, verifyOne(f, proofs[0], 1))
		assert.Equal(t, 3, d.witnesses)
		assert.Positive(t, p.Stats().HostPeak)
		require.NoError(t, p.Close())
	}
}

func verifyOne(f *fixture, proof groth16.Proof, i int) error {
	return groth16.Verify(&f.pk.VK, &proof, f.parts[i].Inputs()[1:])
}

// An unsatisfied witness is refused with the constraint the device names,
// and the device stays in rotation; a device that refuses a witness the host
// finds satisfied is faulty: it is retired and the partition proved
// elsewhere.
func TestProveWitnessPassUnsatisfied(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	parts := shared(t, f)
	d := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2}, []gpu.Device{d})
	require.NoError(t, err)
	bad, err := parts[0].WithAssignment(parts[1].Inputs(), append([]fr.Element(nil), parts[1].Aux()...))
	require.NoError(t, err)
	bad.Aux()[2].SetUint64(12345) // p_0 ≠ b_0·v_0
	want := bad.IsSatisfied()
	require.Error(t, want)
	_, err = p.ProvePartitions(context.Background(), f.pk, []*r1cs.System{parts[0], bad})
	var ue, wue *r1cs.UnsatisfiedError
	require.ErrorAs(t, err, &ue)
	require.ErrorAs(t, want, &wue)
	assert.Equal(t, wue.Index, ue.Index)
	assert.NoError(t, p.Stats().Devices[0].Failed)
	require.NoError(t, p.Close())

	liar := &witnessDevice{CPU: gpu.NewCPU(gpu.CPUOptions{Threads: 2}), fail: true}
	p, err = newProver(Config{Threads: 2, CPUFallback: true}, []gpu.Device{liar})
	require.NoError(t, err)
	proofs, err := p.ProvePartitions(context.Background(), f.pk, parts[:1])
	require.NoError(t, err)
	require.NoError(t, verifyOne(f, proofs[0], 0))
	st := p.Stats()
	require.Error(t, st.Devices[0].Failed)
	assert.True(t, errors.Is(st.Devices[0].Failed, gpu.ErrKernel), "%v", st.Devices[0].Failed)
	require.NoError(t, p.Close())
}
