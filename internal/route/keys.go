package route

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/lazy"
	"github.com/sealc2/c2/r1cs"
)

// Keys holds the proving keys loaded on devices, one per (proving key,
// device), and the parameter files keys were opened from. It is safe for
// concurrent use; the zero Keys is not: use NewKeys.
type Keys struct {
	log   *slog.Logger
	mu    sync.Mutex // guards the maps, not the loads
	keys  map[keyID]*lazy.Value[gpu.Key]
	files map[*groth16.ProvingKey]*fileKey
}

type keyID struct {
	pk  *groth16.ProvingKey
	dev *Device
}

// fileKey is a proving key read from its .params file: devices that load
// from files ([gpu.FileLoader]) take its bases chunk by chunk; the others
// share one full copy, read on first need.
type fileKey struct {
	f    *groth16.ParamsFile
	full lazy.Value[*groth16.ProvingKey]
}

// NewKeys returns an empty key cache that logs each load at debug level to
// log (nil: nothing is logged).
func NewKeys(log *slog.Logger) *Keys {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Keys{log: log, keys: make(map[keyID]*lazy.Value[gpu.Key]), files: make(map[*groth16.ProvingKey]*fileKey)}
}

// Open opens the parameter file at path and returns its key without host
// bases, registered so that devices load it from the file. Release(pk)
// closes the file.
func (k *Keys) Open(ctx context.Context, path string, opts ...groth16.ReadOption) (*groth16.ProvingKey, error) {
	f, err := groth16.OpenParams(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	pk := f.Key()
	k.mu.Lock()
	k.files[pk] = &fileKey{f: f}
	k.mu.Unlock()
	return pk, nil
}

// FromFile reports whether pk was opened from a file by Open.
func (k *Keys) FromFile(pk *groth16.ProvingKey) bool { return k.fileOf(pk) != nil }

func (k *Keys) fileOf(pk *groth16.ProvingKey) *fileKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.files[pk]
}

// Holds reports whether pk is loaded on d.
func (k *Keys) Holds(pk *groth16.ProvingKey, d *Device) bool {
	_, ok := k.Key(pk, d)
	return ok
}

// Key returns pk as loaded (or made, see Put) on d, once its load has
// succeeded; ok is false before, or when it failed.
func (k *Keys) Key(pk *groth16.ProvingKey, d *Device) (key gpu.Key, ok bool) {
	k.mu.Lock()
	l, ok := k.keys[keyID{pk, d}]
	k.mu.Unlock()
	if !ok {
		return nil, false
	}
	return l.Peek()
}

// Load returns pk loaded on d, loading it on first use. Each (key, device)
// loads on its own: a resident key's upload takes seconds and does not
// hold up lookups of loaded keys or loads on other devices. A device that
// holds the shape's R1CS ([gpu.ShapeLoader], [gpu.FileLoader]) gets sys's
// recorded constraints with the key. A key opened from a file goes to
// file-loading devices straight from the file, to the others as the full
// key, read once.
func (k *Keys) Load(ctx context.Context, d *Device, pk *groth16.ProvingKey, sys *r1cs.System) (gpu.Key, error) {
	id := keyID{pk, d}
	k.mu.Lock()
	l, ok := k.keys[id]
	if !ok {
		l = new(lazy.Value[gpu.Key])
		k.keys[id] = l
	}
	k.mu.Unlock()
	return l.Get(ctx, func() (key gpu.Key, err error) {
		t0 := time.Now()
		defer func() {
			k.log.Debug("c2: key loaded", "device", d.Name, "domain", pk.DomainSize(), "duration", time.Since(t0), "err", err)
			if s, ok := key.(fmt.Stringer); ok && err == nil {
				// Where a device put the key decides its speed: say it once.
				k.log.Info("c2: key placed", "device", d.Name, "domain", pk.DomainSize(), "placement", s.String())
			}
		}()
		if fk := k.fileOf(pk); fk != nil {
			if fl, ok := d.Device.(gpu.FileLoader); ok {
				return fl.LoadShapeFile(ctx, fk.f, sys)
			}
			full, err := fk.full.Get(ctx, func() (*groth16.ProvingKey, error) { return fk.f.ReadAll(ctx) })
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

// Put records key, made on d, as its proving key's load there.
func (k *Keys) Put(d *Device, key gpu.Key) {
	l := new(lazy.Value[gpu.Key])
	l.Set(key)
	k.mu.Lock()
	k.keys[keyID{key.ProvingKey(), d}] = l
	k.mu.Unlock()
}

// Release closes the file pk was opened from and releases and forgets the
// device keys loaded from pk. The caller ensures that no load or use of
// them is in flight.
func (k *Keys) Release(pk *groth16.ProvingKey) {
	k.release(func(p *groth16.ProvingKey) bool { return p == pk })
}

// Close releases every key and closes every file, as Release does for one.
func (k *Keys) Close() { k.release(func(*groth16.ProvingKey) bool { return true }) }

func (k *Keys) release(match func(*groth16.ProvingKey) bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for pk, fk := range k.files {
		if match(pk) {
			_ = fk.f.Close()
			delete(k.files, pk)
		}
	}
	for id, l := range k.keys {
		if !match(id.pk) {
			continue
		}
		if key, ok := l.Peek(); ok {
			key.Release()
		}
		delete(k.keys, id)
	}
}
