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

// ErrNoKeyMaker is returned by DevSetup when no device of the Prover makes
// keys in its own memory.
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
	return nil, ErrNoKeyMaker
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
	if !p.hasKeyMaker() {
		return nil, ErrNoKeyMaker // before the recording, which takes minutes at 32 GiB
	}
	c, done := p.useShape(s)
	defer done()
	if _, ok := c.pk.Peek(); ok {
		return nil, fmt.Errorf("c2: %s already has a proving key", s.Name)
	}
	rec, err := c.sys.GetCtx(ctx, p.recorded(s))
	if err != nil {
		return nil, err
	}
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
