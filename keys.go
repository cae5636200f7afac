package c2

import (
	"context"
	"fmt"
	"time"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/r1cs"
)

// fileKey is a proving key read from its .params file: devices that load
// from files ([gpu.FileLoader]) take its bases chunk by chunk; the others
// share one full copy, read on first need.
type fileKey struct {
	f    *groth16.ParamsFile
	full lazy[*groth16.ProvingKey]
}

// openKey opens the parameter file at path and returns its key without
// host bases, registered so that devices load it from the file.
func (p *Prover) openKey(ctx context.Context, path string, opts ...groth16.ReadOption) (*groth16.ProvingKey, error) {
	f, err := groth16.OpenParams(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	pk := f.Key()
	p.keyMu.Lock()
	if p.files == nil {
		p.files = make(map[*groth16.ProvingKey]*fileKey)
	}
	p.files[pk] = &fileKey{f: f}
	p.keyMu.Unlock()
	return pk, nil
}

// closeKey forgets a key openKey returned that nothing loaded.
func (p *Prover) closeKey(pk *groth16.ProvingKey) {
	p.keyMu.Lock()
	defer p.keyMu.Unlock()
	if fk, ok := p.files[pk]; ok {
		_ = fk.f.Close()
		delete(p.files, pk)
	}
}

// fileOf returns the file pk was opened from, or nil.
func (p *Prover) fileOf(pk *groth16.ProvingKey) *fileKey {
	p.keyMu.Lock()
	defer p.keyMu.Unlock()
	return p.files[pk]
}

// holds reports whether pk is loaded on d.
func (p *Prover) holds(pk *groth16.ProvingKey, d *device) bool {
	p.keyMu.Lock()
	l, ok := p.keys[keyID{pk, d}]
	p.keyMu.Unlock()
	if !ok {
		return false
	}
	_, ok = l.peek()
	return ok
}

// key returns pk loaded on d, loading it on first use. Each (key, device)
// loads on its own: a resident key's upload takes seconds and must not hold
// up lookups of loaded keys or loads on other devices. A device that can
// hold the shape's R1CS gets sys's recorded constraints with the key. A key
// read from a file goes to file-loading devices straight from the file, to
// the others as the full key.
func (p *Prover) key(ctx context.Context, d *device, pk *groth16.ProvingKey, sys *r1cs.System) (gpu.Key, error) {
	id := keyID{pk, d}
	p.keyMu.Lock()
	l, ok := p.keys[id]
	if !ok {
		l = new(lazy[gpu.Key])
		p.keys[id] = l
	}
	p.keyMu.Unlock()
	return l.get(ctx, func() (key gpu.Key, err error) {
		t0 := time.Now()
		defer func() {
			p.log.Debug("c2: key loaded", "device", d.name, "domain", pk.DomainSize(), "duration", time.Since(t0), "err", err)
		}()
		if fk := p.fileOf(pk); fk != nil {
			if fl, ok := d.Device.(gpu.FileLoader); ok {
				return fl.LoadShapeFile(ctx, fk.f, sys)
			}
			full, err := fk.full.get(ctx, func() (*groth16.ProvingKey, error) { return fk.f.ReadAll(ctx) })
			if err != nil {
				return nil, fmt.Errorf("c2: reading the bases of %s: %w", fk.f.Path(), err)
			}
			pk = full
		}
		if sl, ok := d.Device.(gpu.ShapeLoader); ok {
			return sl.LoadShape(ctx, pk, sys)
		}
		return d.LoadKey(ctx, pk)
	})
}
