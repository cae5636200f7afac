package c2

import (
	"context"
	"errors"
	"fmt"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
)

// ErrShapeInUse is returned (wrapped) by Evict while calls use the shape.
var ErrShapeInUse = errors.New("c2: sector shape in use")

// proofShape returns the circuit shape of the registered PoRep proof named
// proof; V1 and V1_1 of one sector size share it.
func proofShape(proof string) (porep.Shape, error) {
	rp, err := inputs.ParseProof(proof)
	if err != nil {
		return porep.Shape{}, err
	}
	is, err := rp.Shape()
	if err != nil {
		return porep.Shape{}, err
	}
	s, ok := porep.ShapeBySize(is.SectorSize)
	if !ok || s.Layers != is.Layers || s.Partitions != is.Partitions || s.Challenges != is.ChallengesPerPartition {
		return porep.Shape{}, fmt.Errorf("c2: %s: no circuit shape for %d-byte sectors", proof, is.SectorSize)
	}
	return s, nil
}

// Preload readies the shape of the registered PoRep proof named proof
// (e.g. "StackedDrg32GiBV1_1"; V1 and V1_1 of one sector size share a
// shape) exactly as the shape's first Prove would: it reads the proving key
// from Config.Params and records the shape's R1CS, side by side, into the
// cache Prove uses, so that the next Prove of the shape goes straight to
// witness synthesis (its ProveTimes.ParamsLoad is near zero). A shape
// already cached costs nothing; a load in progress, by Prove or Preload, is
// joined. The key stays in host memory until Evict or Close; it is loaded
// onto a device by the first partition proved there, not here.
//
// ctx stops the call; the loads it started go on while other calls wait
// for them and stop once none is left, leaving nothing cached.
//
// Errors: inputs.ErrUnknownProof or inputs.ErrUnsupported (wrapped) for a
// name without an interactive PoRep shape, ErrNoParams (wrapped) or
// *groth16.FormatError for parameters, ErrClosed after Close, ctx's error.
func (p *Prover) Preload(ctx context.Context, proof string) error {
	s, err := proofShape(proof)
	if err != nil {
		return err
	}
	c, done := p.useShape(s)
	defer done()
	_, _, err = p.loadShape(ctx, c, s)
	return err
}

// Evict drops the cached proving key and R1CS of the shape of the
// registered PoRep proof named proof (see Preload), and releases the
// device keys loaded from that proving key: their device memory is freed
// now, the host memory once nothing refers to it (the next garbage
// collection). The next Prove or Preload of the shape reads and records
// them again. Evicting a shape that is not cached does nothing.
//
// A shape is in use from the moment a Prove or Preload call of it looks
// for its key until the call returns, whether the call waits for a load,
// synthesizes witnesses or proves. Evict then refuses with ErrShapeInUse
// (wrapped): the call holds the key and R1CS, so dropping them would free
// nothing until it returns, and a call starting meanwhile would load a
// second copy beside them. A load that no call waits for any more (its
// callers were cancelled) does not count: it stops on its own and what it
// builds is dropped.
//
// Errors: those of Preload for the name, ErrShapeInUse (wrapped), ErrClosed
// after Close.
func (p *Prover) Evict(proof string) error {
	s, err := proofShape(proof)
	if err != nil {
		return err
	}
	p.shapesMu.Lock()
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		p.shapesMu.Unlock()
		return ErrClosed
	}
	c, ok := p.shapes[s.Name]
	if ok && c.users > 0 {
		n := c.users
		p.shapesMu.Unlock()
		return fmt.Errorf("%w: %d calls are proving or loading %s", ErrShapeInUse, n, s.Name)
	}
	delete(p.shapes, s.Name)
	p.shapesMu.Unlock()
	if !ok {
		return nil
	}
	if pk, ok := c.pk.peek(); ok {
		p.releaseKeys(pk)
	}
	p.log.Debug("c2: shape evicted", "shape", s.Name)
	return nil
}

// releaseKeys releases and forgets the device keys loaded from pk, as Close
// does for all keys. The caller ensures that no call uses pk any more (its
// shape has no users and has left the cache), so that no load or use of
// these keys is in flight.
func (p *Prover) releaseKeys(pk *groth16.ProvingKey) {
	p.keyMu.Lock()
	defer p.keyMu.Unlock()
	if fk, ok := p.files[pk]; ok {
		_ = fk.f.Close()
		delete(p.files, pk)
	}
	for id, l := range p.keys {
		if id.pk != pk {
			continue
		}
		if k, ok := l.peek(); ok {
			k.Release()
		}
		delete(p.keys, id)
	}
}
