package c2

import (
	"fmt"
	"sync"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/lazy"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/r1cs"
)

// shapeCache holds, per sector shape, the proving key and the R1CS recorded
// once and shared by every partition proved afterwards. Failures are not
// cached: parameters installed after a failed call are found by the next.
type shapeCache struct {
	pk  lazy.Value[*groth16.ProvingKey]
	sys lazy.Value[*r1cs.System]
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
			p.shapesMu.Unlock()
		})
	}
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
