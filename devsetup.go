package c2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/r1cs"
)

// ErrNoKeyMaker is returned (wrapped, with the reason when the CUDA
// backend could not be opened) by DevSetup when no device of the Prover
// makes keys in its own memory.
var ErrNoKeyMaker = errors.New("c2: no device makes development keys in its memory")

// DevSetup makes INSECURE development parameters for the finalized system
// sys on the first live device that makes keys in its own memory (CUDA),
// with the trapdoor drawn from rng as groth16.Setup draws it, and keeps
// them there: the bases never exist in host memory. It returns a proving
// key without host bases (its verifying key and query sizes) to pass to
// ProvePartitions, which proves with it on that device only. Close releases
// it. Like groth16.Setup, for tests, benchmarks and demos only.
func (p *Prover) DevSetup(ctx context.Context, sys *r1cs.System, rng io.Reader) (*groth16.ProvingKey, error) {
	end, err := p.begin()
	if err != nil {
		return nil, err
	}
	defer end()
	if !sys.Finalized() {
		return nil, errors.New("c2: DevSetup needs a finalized system")
	}
	tw, err := groth16.NewToxicWaste(rng)
	if err != nil {
		return nil, err
	}
	for _, d := range p.rot.Devices() {
		km, ok := d.Device.(gpu.KeyMaker)
		if !ok || !d.Live() {
			continue
		}
		t0 := time.Now()
		key, err := km.SetupKey(ctx, sys, tw)
		p.log.Info("c2: development key made on the device", "device", d.Name, "constraints", sys.NumConstraints(),
			"duration", time.Since(t0), "err", err)
		if err != nil {
			return nil, err
		}
		p.keys.Put(d, key)
		return key.ProvingKey(), nil
	}
	return nil, p.noKeyMaker()
}

// noKeyMaker is ErrNoKeyMaker with the reason the CUDA backend was not
// opened, when there is one.
func (p *Prover) noKeyMaker() error {
	if p.noCUDA != nil {
		return fmt.Errorf("%w (%v)", ErrNoKeyMaker, p.noCUDA)
	}
	return ErrNoKeyMaker
}

// DevSetupProof makes INSECURE development parameters for the shape of the
// registered PoRep proof named proof (see Preload) in a device's memory —
// DevSetup over the shape's recorded R1CS, recorded here if it is not yet —
// and caches them as the shape's proving key: Prove of that shape then
// needs no parameter file and proves on the device that holds the key, and
// its proofs verify under the returned verifying key only. Call it before
// the shape is proved or preloaded; a shape that already has a key is
// refused. For benchmarks of sector sizes whose CPU setup is out of reach
// (`c2 bench -sector-size 32GiB -setup gpu`).
func (p *Prover) DevSetupProof(ctx context.Context, proof string, rng io.Reader) (*groth16.VerifyingKey, error) {
	s, err := proofShape(proof)
	if err != nil {
		return nil, err
	}
	c, done := p.useShape(s)
	defer done()
	return p.devSetupCache(ctx, c, s.Name, p.recorded(s), rng)
}

// DevSetupPoSt is DevSetupProof for the circuit of the registered PoSt proof
// named proof (see PreloadPoSt): ProveWindowPoSt, ProveWindowPoStPartition
// or ProveWinningPoSt of that circuit then need no parameter file. Errors:
// *post.InputError for a name that is no registered PoSt proof, and those of
// DevSetupProof.
func (p *Prover) DevSetupPoSt(ctx context.Context, proof string, rng io.Reader) (*groth16.VerifyingKey, error) {
	return postCircuits.devSetup(ctx, p, proof, rng)
}

// DevSetupUpdate is DevSetupProof for the circuit of the registered
// SnapDeals update proof named proof (see PreloadUpdate). Errors:
// *update.InputError for a name that is no registered update proof, and
// those of DevSetupProof.
func (p *Prover) DevSetupUpdate(ctx context.Context, proof string, rng io.Reader) (*groth16.VerifyingKey, error) {
	return updateCircuits.devSetup(ctx, p, proof, rng)
}

// devSetupCache makes development parameters for the circuit cached in c
// (label names it) over the R1CS that record gives (cached in c too), on a
// device (DevSetup), and installs them as c's proving key. A cache that
// has a key already is refused.
func (p *Prover) devSetupCache(ctx context.Context, c *shapeCache, label string, record func(context.Context) (*r1cs.System, error),
	rng io.Reader) (*groth16.VerifyingKey, error) {
	if !p.hasKeyMaker() {
		return nil, p.noKeyMaker() // before the recording, which takes seconds to minutes at 32 GiB
	}
	if p.isClosed() {
		return nil, ErrClosed
	}
	if _, ok := c.pk.Peek(); ok {
		return nil, fmt.Errorf("c2: %s already has a proving key", label)
	}
	rec, err := c.sys.GetCtx(ctx, record)
	if err != nil {
		return nil, err
	}
	c.recordWith(record)
	pk, err := p.DevSetup(ctx, rec, rng)
	if err != nil {
		return nil, err
	}
	c.pk.Set(pk)
	return &pk.VK, nil
}

// hasKeyMaker reports whether a live device makes keys in its memory.
func (p *Prover) hasKeyMaker() bool {
	for _, d := range p.rot.Devices() {
		if _, ok := d.Device.(gpu.KeyMaker); ok && d.Live() {
			return true
		}
	}
	return false
}

// WriteDevParams writes the development parameters that DevSetupProof made
// for the registered PoRep proof named proof: the proving key to params in
// bellperson's .params format, its bases read back from the device a chunk
// at a time (tens of GB at 32 GiB: host memory holds one chunk), then, when
// vk is not nil, the verifying key to vk in .vk format. Files written so
// are what `c2 setup` writes for the same key, and Prove reads them as any
// parameter file. ctx's end stops the writing at the next chunk.
//
// Errors: one for a nil params, ErrNoDevKey (wrapped) when the shape has no
// key made on a device, ErrNoDevice (wrapped) when the device holding it
// has left the rotation, the writers' errors, ErrClosed after Close, ctx's
// error.
func (p *Prover) WriteDevParams(ctx context.Context, proof string, params, vk io.Writer) error {
	end, err := p.beginDevWrite("WriteDevParams", params)
	if err != nil {
		return err
	}
	defer end()
	s, err := proofShape(proof)
	if err != nil {
		return err
	}
	c, done := p.useShape(s)
	defer done()
	pk, ok := c.pk.Peek()
	if !ok || pk.HostBases() {
		return fmt.Errorf("%w: %s (make it with DevSetupProof)", ErrNoDevKey, proof)
	}
	return p.writeDevKey(ctx, pk, proof, params, vk)
}

// WriteDevKey is WriteDevParams for a key DevSetup returned: the
// development parameters of any circuit (a PoSt or SnapDeals one, say),
// written as bellperson's .params and .vk files. Errors as WriteDevParams'
// (ErrNoDevKey for a key no device of this Prover made).
func (p *Prover) WriteDevKey(ctx context.Context, pk *groth16.ProvingKey, params, vk io.Writer) error {
	end, err := p.beginDevWrite("WriteDevKey", params)
	if err != nil {
		return err
	}
	defer end()
	if pk == nil || pk.HostBases() {
		return fmt.Errorf("%w: the key has its bases in host memory", ErrNoDevKey)
	}
	return p.writeDevKey(ctx, pk, "the circuit", params, vk)
}

// beginDevWrite begins a call of method (WriteDevParams or WriteDevKey),
// which writes development parameters to params, as begin does, and
// refuses a nil params after that. The caller calls end when the call
// returns.
func (p *Prover) beginDevWrite(method string, params io.Writer) (end func(), err error) {
	if end, err = p.begin(); err != nil {
		return nil, err
	}
	if params == nil {
		end()
		return nil, fmt.Errorf("c2: %s needs a writer for the parameters", method)
	}
	return end, nil
}

// writeDevKey writes pk, made on a device by DevSetup, from the device
// that holds it; proof names its circuit in errors.
func (p *Prover) writeDevKey(ctx context.Context, pk *groth16.ProvingKey, proof string, params, vk io.Writer) error {
	for _, d := range p.rot.Devices() {
		km, ok := d.Device.(gpu.KeyMaker)
		if !ok {
			continue
		}
		key, ok := p.keys.Key(pk, d)
		if !ok {
			continue
		}
		if !d.Live() {
			return fmt.Errorf("%w: %s, which holds the key of %s, has failed", ErrNoDevice, d.Name, proof)
		}
		if _, err := km.WriteKey(key, ctxWriter{ctx, params}); err != nil {
			return fmt.Errorf("c2: writing the parameters of %s: %w", proof, err)
		}
		if vk == nil {
			return nil
		}
		if _, err := pk.VK.WriteTo(ctxWriter{ctx, vk}); err != nil {
			return fmt.Errorf("c2: writing the verifying key of %s: %w", proof, err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s's key is on no device of this Prover", ErrNoDevKey, proof)
}

// ErrNoDevKey is returned by WriteDevParams for a shape without a key made
// on a device.
var ErrNoDevKey = errors.New("c2: no development key made on a device")

// ctxWriter is w that fails with ctx's error once ctx has ended.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
}
