package c2

import (
	"context"
	"fmt"
	"sync"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/lazy"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// shapeCache holds, per sector shape, the proving key and the R1CS recorded
// once and shared by every partition proved afterwards. Failures are not
// cached: parameters installed after a failed call are found by the next.
// Once every live device holds the R1CS beside the key, sys keeps it
// without its matrices (see releaseMatrices).
type shapeCache struct {
	pk  lazy.Value[*groth16.ProvingKey]
	sys lazy.Value[*r1cs.System]
	// record records the R1CS again (for releaseMatrices), guarded by
	// matricesMu.
	record     func(context.Context) (*r1cs.System, error)
	matricesMu sync.Mutex
	// witnesses are idle witness buffers of the shape's partitions.
	witnesses witnessBuffers
	// users counts the Prove and Preload calls holding this cache (from
	// before they look for the key until they return), guarded by
	// Prover.shapesMu: Evict drops a cache only when it is 0.
	users int
}

// cacheLocked returns the cache named name (a PoRep shape's Name, or a
// vanillaCircuit's cache), with p.shapesMu held; after Close, a fresh one
// the Prover does not keep, so that a call racing Close leaves nothing
// behind.
func (p *Prover) cacheLocked(name string) *shapeCache {
	if p.isClosed() {
		return &shapeCache{}
	}
	if p.shapes == nil {
		p.shapes = make(map[string]*shapeCache)
	}
	c, ok := p.shapes[name]
	if !ok {
		c = &shapeCache{}
		p.shapes[name] = c
	}
	return c
}

// useShape is useCache for PoRep shape s.
func (p *Prover) useShape(s porep.Shape) (c *shapeCache, done func()) { return p.useCache(s.Name) }

// dropShapes releases the proving keys and R1CS of every shape and circuit
// (Close calls it once the calls in progress have returned): loads still
// running finish into caches nothing refers to any more.
func (p *Prover) dropShapes() {
	p.shapesMu.Lock()
	p.shapes = nil
	p.shapesMu.Unlock()
}

// useCache returns the cache named name (as cacheLocked does) counted as used
// (Evict refuses it) until done is called; done may be called more than
// once.
func (p *Prover) useCache(name string) (c *shapeCache, done func()) {
	p.shapesMu.Lock()
	c = p.cacheLocked(name)
	c.users++
	p.shapesMu.Unlock()
	var once sync.Once
	return c, func() {
		once.Do(func() {
			p.shapesMu.Lock()
			c.users--
			last := c.users == 0
			p.shapesMu.Unlock()
			if last {
				p.releaseMatrices(c)
			}
		})
	}
}

// releaseMatrices replaces c's R1CS by its copy without matrices
// (r1cs.System.WithoutMatrices) when every live device holds the matrices
// beside c's key, so that the host no longer keeps them (a 32 GiB PoRep
// circuit's ≈ 7 GB, a Window PoSt's ≈ 11 GB). A device or the host that
// needs them later has them recorded again (r1cs.System.Matrices: a
// device loading the key, the host evaluating a partition or checking a
// device's verdict), and they stay until the next release. It keeps them
// with Config.CPUFallback, whose partitions are evaluated on the host.
func (p *Prover) releaseMatrices(c *shapeCache) {
	if p.cfg.CPUFallback {
		return
	}
	c.matricesMu.Lock()
	defer c.matricesMu.Unlock()
	pk, keyed := c.pk.Peek()
	rec, recorded := c.sys.Peek()
	if !keyed || !recorded || c.record == nil || !p.devicesHold(pk, rec) {
		return
	}
	bare, err := rec.WithoutMatrices(c.record)
	if err != nil {
		return
	}
	c.sys.Set(bare)
	if rec.HasMatrices() {
		p.log.Debug("c2: host copy of the R1CS released; the devices hold it", "constraints", rec.NumConstraints())
	}
}

// recordWith notes record as the function that records c's R1CS, for
// releaseMatrices.
func (c *shapeCache) recordWith(record func(context.Context) (*r1cs.System, error)) {
	c.matricesMu.Lock()
	c.record = record
	c.matricesMu.Unlock()
}

// devicesHold reports whether there is a live device and every live one
// holds rec's matrices beside pk (gpu.ShapeKey).
func (p *Prover) devicesHold(pk *groth16.ProvingKey, rec *r1cs.System) bool {
	live := 0
	for _, d := range p.rot.Devices() {
		if !d.Live() {
			continue
		}
		live++
		key, ok := p.keys.Key(pk, d)
		if !ok {
			return false
		}
		if sk, ok := key.(gpu.ShapeKey); !ok || !sk.Records(rec) {
			return false
		}
	}
	return live > 0
}

// evictCache is Evict for the cache named name, of a PoRep shape or a
// circuit; label names it in the error and the log.
func (p *Prover) evictCache(name, label string) error {
	p.shapesMu.Lock()
	if p.isClosed() {
		p.shapesMu.Unlock()
		return ErrClosed
	}
	c, ok := p.shapes[name]
	if ok && c.users > 0 {
		n := c.users
		p.shapesMu.Unlock()
		return fmt.Errorf("%w: %d calls are proving or loading %s", ErrShapeInUse, n, label)
	}
	delete(p.shapes, name)
	p.shapesMu.Unlock()
	if !ok {
		return nil
	}
	if pk, ok := c.pk.Peek(); ok {
		p.keys.Release(pk)
	}
	p.log.Debug("c2: shape evicted", "shape", label)
	return nil
}
