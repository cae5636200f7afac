package groth16

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// ParamsFile is a .params file opened to read its bases piece by piece:
// a device can take a key chunk by chunk, so that the key's bases (44 GiB
// for a 32 GiB sector) are never whole in host memory. The file is mapped
// read-only; the verifying key is decoded and checked in full when the
// file is opened. Methods are safe for concurrent use; Close waits for the
// reads in progress.
type ParamsFile struct {
	path string
	lay  ParamsLayout
	cfg  readConfig
	key  *ProvingKey

	mu     sync.RWMutex // held for reading by reads, for writing by Close
	m      *mapped
	closed bool
}

// ErrParamsClosed is returned by reads of a closed ParamsFile.
var ErrParamsClosed = errors.New("groth16: parameter file closed")

// OpenParams maps the .params file at path, checks its layout and decodes
// its verifying key. With TrustedFile, reads skip the subgroup checks of
// the query points as ReadParams does. Errors about the content are
// *FormatError naming path.
func OpenParams(ctx context.Context, path string, opts ...ReadOption) (*ParamsFile, error) {
	cfg := configure(opts)
	m, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	f := &ParamsFile{path: path, cfg: cfg, m: m}
	vk, err := f.header(ctx)
	if err != nil {
		m.close()
		return nil, withFile(err, path)
	}
	f.key = KeyWithoutBases(*vk, Sizes{H: f.lay.H.Len, L: f.lay.L.Len, A: f.lay.A.Len, BG1: f.lay.BG1.Len, BG2: f.lay.BG2.Len})
	return f, nil
}

// header scans the layout and decodes the verifying key, IC included, with
// every check (subgroups too, as in both modes of ReadParams).
func (f *ParamsFile) header(ctx context.Context) (vk *VerifyingKey, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guardFault(&err)
	b := f.m.data
	lay, err := ScanParams(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	f.lay = *lay
	vk = new(VerifyingKey)
	if err := decodeVKFixed(vk, b); err != nil {
		return nil, err
	}
	if err := checkVKFixedSubgroups(vk); err != nil && !f.cfg.noSubgroups {
		return nil, err
	}
	vk.IC = make([]bls.G1Affine, lay.IC.Len)
	if err := f.decode(ctx, sectionVK, lay.IC, g1.of(vk.IC), true); err != nil {
		return nil, err
	}
	return vk, nil
}

// Path returns the file's path.
func (f *ParamsFile) Path() string { return f.path }

// Layout returns where the file's sections lie.
func (f *ParamsFile) Layout() ParamsLayout { return f.lay }

// Key returns the file's key without host bases: its verifying key and
// query sizes. The same pointer is returned on every call.
func (f *ParamsFile) Key() *ProvingKey { return f.key }

// ReadG1 decodes points [lo, lo+len(dst)) of the G1 section sec (the
// file's Layout().H, L, A or BG1) into dst, checking each point as
// ReadParams does. ctx stops the work between chunks of points. The
// file's pages the read decoded leave the process's resident memory
// (they stay in the page cache).
func (f *ParamsFile) ReadG1(ctx context.Context, sec Section, lo int, dst []bls.G1Affine) error {
	name := ""
	switch sec {
	case f.lay.H:
		name = sectionH
	case f.lay.L:
		name = sectionL
	case f.lay.A:
		name = sectionA
	case f.lay.BG1:
		name = sectionBG1
	default:
		return fmt.Errorf("groth16: %s: %+v is not a G1 query section of the file", f.path, sec)
	}
	return f.read(ctx, name, sec, lo, len(dst), g1.of(dst))
}

// ReadG2 decodes points [lo, lo+len(dst)) of the file's B_G2 section into
// dst, as ReadG1 does.
func (f *ParamsFile) ReadG2(ctx context.Context, lo int, dst []bls.G2Affine) error {
	return f.read(ctx, sectionBG2, f.lay.BG2, lo, len(dst), g2.of(dst))
}

func (f *ParamsFile) read(ctx context.Context, name string, sec Section, lo, n int, dst vector) error {
	if lo < 0 || n < 0 || lo+n > sec.Len {
		return fmt.Errorf("groth16: %s: points [%d, %d) of %s, which has %d", f.path, lo, lo+n, name, sec.Len)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return ErrParamsClosed
	}
	part := Section{Offset: sec.Offset + int64(lo)*int64(sec.PointSize), Len: n, PointSize: sec.PointSize}
	err := f.decode(ctx, name, part, dst, !f.cfg.trusted && !f.cfg.noSubgroups)
	// The decoded bytes are not needed again by this read: without this,
	// a device load of a 32 GiB key would leave its 44 GiB of mapped pages
	// counted in the process's resident memory.
	f.m.release(part.Offset, int64(n)*int64(sec.PointSize))
	return withFile(err, f.path)
}

// decode decodes all of sec into dst on every core, then checks the
// subgroups when asked.
func (f *ParamsFile) decode(ctx context.Context, name string, sec Section, dst vector, subgroups bool) error {
	chunks := func(n int, subgroup bool) []decodeTask {
		var tasks []decodeTask
		for lo := 0; lo < sec.Len; lo += n {
			tasks = append(tasks, decodeTask{name: name, sec: sec, lo: lo, hi: min(lo+n, sec.Len), dst: dst, subgroup: subgroup})
		}
		return tasks
	}
	if err := runTasks(ctx, f.m.data, chunks(chunkPoints, false)); err != nil {
		return err
	}
	if !subgroups {
		return nil
	}
	return runTasks(ctx, f.m.data, chunks(subgroupChunk, true))
}

// ReadAll decodes the whole key, bases included, as ReadParamsContext does.
func (f *ParamsFile) ReadAll(ctx context.Context) (*ProvingKey, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, ErrParamsClosed
	}
	cfg := f.cfg
	cfg.ctx = ctx
	pk, err := decodeParams(f.m.data, cfg)
	f.m.release(0, int64(len(f.m.data))) // the key is on the heap now
	return pk, withFile(err, f.path)
}

// Close unmaps the file once the reads in progress end. Idempotent.
func (f *ParamsFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		f.m.close()
	}
	return nil
}
