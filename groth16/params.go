package groth16

// Reading and writing bellperson's parameter (.params) and verifying-key
// (.vk) files.
//
// Layout, checked against filecoin-project/bellperson src/groth16/params.rs
// (Parameters::write, read, build_mapped_parameters) and verifying_key.rs
// (VerifyingKey::write, read):
//
//	.vk:     alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 ‖ u32 n ‖ n × ic
//	.params: .vk ‖ h ‖ l ‖ a ‖ b_g1 ‖ b_g2, each vector a u32 count then its points
//
// Counts are big-endian uint32. Points are the zcash/IETF uncompressed
// encoding: 96 bytes for G1 (x ‖ y) and 192 bytes for G2 (x.c1 ‖ x.c0 ‖
// y.c1 ‖ y.c0), coordinates big-endian, the three top bits of the first byte
// flags (compressed, infinity, y-sign). Only 000 (a point) and 010 (the
// point at infinity, every other bit zero) are valid here.
//
// bellperson's readers reject the point at infinity in ic, h, l, a, b_g1 and
// b_g2 (its generator never puts one there); these readers accept it, so
// that keys for degenerate circuits survive a round trip.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"golang.org/x/sync/errgroup"

	"github.com/sealc2/c2/internal/regfile"
)

// Encoded sizes in bytes.
const (
	g1Size = bls.SizeOfG1AffineUncompressed // 96
	g2Size = bls.SizeOfG2AffineUncompressed // 192

	// vkFixedSize covers alpha_g1 … delta_g2, before the ic count.
	vkFixedSize = 3*g1Size + 3*g2Size // 864
)

// Section names reported in FormatError.Section.
const (
	sectionVK      = "vk"
	sectionH       = "h"
	sectionL       = "l"
	sectionA       = "a"
	sectionBG1     = "b_g1"
	sectionBG2     = "b_g2"
	sectionTrailer = "trailer" // bytes past the last section
)

// Errors wrapped by FormatError.Err; test with errors.Is.
var (
	// ErrTruncated: the input ends inside a count word or a point, or a
	// count claims more points than the input holds.
	ErrTruncated = errors.New("truncated")
	// ErrTrailingData: bytes follow the last section.
	ErrTrailingData = errors.New("trailing data")
	// ErrInvalidEncoding: bad flag bits, a non-zero byte in an infinity
	// encoding, a coordinate ≥ p, or the all-zero point without the
	// infinity flag.
	ErrInvalidEncoding = errors.New("invalid point encoding")
	// ErrNotOnCurve: the coordinates do not satisfy the curve equation.
	ErrNotOnCurve = errors.New("point not on curve")
	// ErrNotInSubgroup: the point is on the curve but outside the
	// prime-order subgroup.
	ErrNotInSubgroup = errors.New("point not in the prime-order subgroup")
	// ErrTooLarge: a vector has more than 2³²−1 points and cannot be written.
	ErrTooLarge = errors.New("vector too long for a u32 count")
)

var (
	errFlags       = fmt.Errorf("%w: bad flag bits", ErrInvalidEncoding)
	errInfPadding  = fmt.Errorf("%w: infinity flag with non-zero bytes", ErrInvalidEncoding)
	errNonCanon    = fmt.Errorf("%w: coordinate not below the field modulus", ErrInvalidEncoding)
	errZeroNoFlag  = fmt.Errorf("%w: all-zero point without the infinity flag", ErrInvalidEncoding)
	errFaultAccess = errors.New("memory fault reading the mapped file (changed on disk or I/O error)")
)

// FormatError reports malformed .params or .vk input.
type FormatError struct {
	File    string // path, or "" when decoding bytes
	Section string // "vk", "h", "l", "a", "b_g1", "b_g2", or "trailer"
	Offset  int64  // byte offset of the bad count word or point, from the start of the input
	Err     error  // wraps one of ErrTruncated, ErrTrailingData, ErrInvalidEncoding, ErrNotOnCurve, ErrNotInSubgroup
}

func (e *FormatError) Error() string {
	file := e.File
	if file == "" {
		file = "input"
	}
	return fmt.Sprintf("groth16: %s: section %s at offset %d: %v", file, e.Section, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ReadOption configures ReadParams, ReadParamsContext and OpenParams.
type ReadOption func(*readConfig)

type readConfig struct {
	trusted bool
	ctx     context.Context // nil: never cancelled
	// noSubgroups skips every subgroup check, the verifying key's
	// included. Only the fuzz targets set it, so that their executions
	// exercise the decoding rather than the checks (about a millisecond
	// per key); unit tests cover the checks.
	noSubgroups bool
}

// TrustedFile skips the subgroup checks of the five query vectors (h, l,
// a, b_g1, b_g2), as Filecoin does for its published parameters.
// Encodings, canonical coordinates and the curve equation are still
// checked for every point, and the verifying key's few points are still
// checked in full, as bellperson always does.
func TrustedFile() ReadOption { return func(c *readConfig) { c.trusted = true } }

// Section locates one vector of points in a .params or .vk file.
type Section struct {
	Offset    int64 // byte offset of the first point, just past the u32 count
	Len       int   // number of points
	PointSize int   // bytes per point: 96 (G1) or 192 (G2)
}

// End returns the byte offset just past the section's last point.
func (s Section) End() int64 { return s.Offset + int64(s.Len)*int64(s.PointSize) }

// ParamsLayout is where each vector of a .params file lies. The
// verifying key's fixed points occupy bytes [0, 864).
type ParamsLayout struct {
	IC, H, L, A, BG1, BG2 Section
	Size                  int64 // total bytes; equals BG2.End()
}

// ScanParams reads the six count words of a .params file of size bytes
// and returns its layout. It checks that the counts account for exactly
// size bytes but decodes no point.
func ScanParams(r io.ReaderAt, size int64) (*ParamsLayout, error) {
	var lay ParamsLayout
	if err := checkVKFixed(size); err != nil {
		return nil, err
	}
	off := int64(vkFixedSize)
	specs := []struct {
		name string
		dst  *Section
		size int
	}{
		{sectionVK, &lay.IC, g1Size},
		{sectionH, &lay.H, g1Size},
		{sectionL, &lay.L, g1Size},
		{sectionA, &lay.A, g1Size},
		{sectionBG1, &lay.BG1, g1Size},
		{sectionBG2, &lay.BG2, g2Size},
	}
	for _, s := range specs {
		sec, err := scanSection(r, s.name, off, size, s.size)
		if err != nil {
			return nil, err
		}
		*s.dst = sec
		off = sec.End()
	}
	if off != size {
		return nil, &FormatError{Section: sectionTrailer, Offset: off,
			Err: fmt.Errorf("%w: %d bytes after b_g2", ErrTrailingData, size-off)}
	}
	lay.Size = size
	return &lay, nil
}

// scanVK returns the ic section of a .vk file of size bytes.
func scanVK(r io.ReaderAt, size int64) (Section, error) {
	if err := checkVKFixed(size); err != nil {
		return Section{}, err
	}
	ic, err := scanSection(r, sectionVK, vkFixedSize, size, g1Size)
	if err != nil {
		return Section{}, err
	}
	if end := ic.End(); end != size {
		return Section{}, &FormatError{Section: sectionTrailer, Offset: end,
			Err: fmt.Errorf("%w: %d bytes after ic", ErrTrailingData, size-end)}
	}
	return ic, nil
}

// checkVKFixed reports ErrTruncated, at the offset of the first incomplete
// point, unless the six fixed points of a verifying key fit in size bytes.
func checkVKFixed(size int64) error {
	if size >= vkFixedSize {
		return nil
	}
	bad := int64(0)
	for _, off := range vkFixedOffsets {
		if off <= size {
			bad = off
		}
	}
	return &FormatError{Section: sectionVK, Offset: bad,
		Err: fmt.Errorf("%w: the verifying key needs %d bytes, input has %d", ErrTruncated, vkFixedSize, size)}
}

// checkAvail reports ErrTruncated unless [off, off+n) lies within size.
// The reported offset is that of the first incomplete item of itemSize
// bytes.
func checkAvail(section string, off, n, size int64, itemSize int) error {
	if size-off >= n {
		return nil
	}
	avail := max(size-off, 0)
	bad := off + avail/int64(itemSize)*int64(itemSize)
	return &FormatError{Section: section, Offset: bad,
		Err: fmt.Errorf("%w: needs %d bytes from offset %d, input has %d", ErrTruncated, n, off, size)}
}

// scanSection reads the count word at off and checks that the points it
// announces fit in size bytes, before anything is allocated for them.
func scanSection(r io.ReaderAt, name string, off, size int64, pointSize int) (Section, error) {
	if err := checkAvail(name, off, 4, size, 4); err != nil {
		return Section{}, err
	}
	var w [4]byte
	if _, err := r.ReadAt(w[:], off); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: %w", ErrTruncated, err)
		}
		return Section{}, &FormatError{Section: name, Offset: off, Err: err}
	}
	n := binary.BigEndian.Uint32(w[:])
	if uint64(n) > uint64(math.MaxInt) {
		return Section{}, &FormatError{Section: name, Offset: off,
			Err: fmt.Errorf("%w: count %d exceeds the address space", ErrTruncated, n)}
	}
	sec := Section{Offset: off + 4, Len: int(n), PointSize: pointSize}
	if err := checkAvail(name, sec.Offset, int64(n)*int64(pointSize), size, pointSize); err != nil {
		fe := err.(*FormatError)
		fe.Err = fmt.Errorf("%w: count %d at offset %d needs %d bytes, %d remain",
			ErrTruncated, n, off, int64(n)*int64(pointSize), max(size-sec.Offset, 0))
		return Section{}, fe
	}
	return sec, nil
}

// ReadParams reads a .params file. It maps the file read-only and decodes
// its sections in parallel, so the decoded points are the only copy on
// the Go heap. Errors about the content are *FormatError naming path.
func ReadParams(path string, opts ...ReadOption) (*ProvingKey, error) {
	return ReadParamsContext(context.Background(), path, opts...)
}

// ReadParamsContext is ReadParams stopped by ctx: once ctx is done, no new
// chunk of points (4096 to 16384 points, tens of milliseconds of work on
// one core) is started and ctx's error is returned when the chunks in
// flight end.
func ReadParamsContext(ctx context.Context, path string, opts ...ReadOption) (*ProvingKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := configure(opts)
	cfg.ctx = ctx
	m, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	defer m.close()
	pk, err := decodeParams(m.data, cfg)
	return pk, withFile(err, path)
}

// DecodeVerifyingKey decodes a .vk file held in b, checking every point
// fully, subgroup included.
func DecodeVerifyingKey(b []byte) (*VerifyingKey, error) {
	return decodeVK(b)
}

// ReadVerifyingKey reads a .vk file; see DecodeVerifyingKey.
func ReadVerifyingKey(path string) (*VerifyingKey, error) {
	m, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	defer m.close()
	vk, err := decodeVK(m.data)
	return vk, withFile(err, path)
}

// ReadParamsVerifyingKey reads the verifying key at the start of a .params
// file without reading the rest; see DecodeVerifyingKey.
func ReadParamsVerifyingKey(path string) (*VerifyingKey, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The fixed points and the ic count, then the ic points; a short file
	// leaves b short, which decodeVK reports as ErrTruncated at its offset.
	b := make([]byte, vkFixedSize+4)
	n, err := io.ReadFull(f, b)
	if err == nil {
		ic := binary.BigEndian.Uint32(b[vkFixedSize:])
		if ic > maxParamsIC {
			return nil, &FormatError{File: path, Section: sectionVK, Offset: vkFixedSize,
				Err: fmt.Errorf("%w: %d public inputs (at most %d read from a .params file)", ErrTruncated, ic, maxParamsIC)}
		}
		b = append(b, make([]byte, g1Size*int(ic))...)
		var m int
		m, err = io.ReadFull(f, b[n:])
		n += m
	}
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	vk, err := decodeVK(b[:n])
	return vk, withFile(err, path)
}

// maxParamsIC bounds the ic count ReadParamsVerifyingKey reads (a PoRep
// key has 2 + 18 per challenge + 1, at most 328).
const maxParamsIC = 1 << 20

func configure(opts []ReadOption) readConfig {
	var cfg readConfig
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

func withFile(err error, path string) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.File = path
	}
	return err
}

// mapped is a read-only view of a whole file.
type mapped struct {
	data  []byte
	unmap func() error
	// mapped is set when data is a file mapping (release may drop pages).
	mapped bool
}

func (m *mapped) close() {
	if m.unmap != nil {
		_ = m.unmap()
	}
}

// maxUnsized is the most mapFile reads from a regular file whose size the
// file system reports as 0 (/proc and similar files); real parameter files
// report their size and are mapped.
const maxUnsized = 64 << 20

// mapFile maps the regular file at path, or reads it when the file system
// reports no size (a /proc file is judged by its content, not by size 0).
func mapFile(path string) (*mapped, error) {
	f, size, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size == 0 {
		b, err := io.ReadAll(io.LimitReader(f, maxUnsized+1))
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if len(b) > maxUnsized {
			return nil, fmt.Errorf("groth16: %s reports size 0 but holds more than %d bytes", path, maxUnsized)
		}
		return &mapped{data: b}, nil
	}
	if size < 0 || uint64(size) > uint64(math.MaxInt) {
		return nil, fmt.Errorf("groth16: %s: %d bytes do not fit in memory", path, size)
	}
	return mapReadOnly(f, int(size))
}

// guardFault turns a memory fault on a mapped file (SIGBUS after the file
// shrank, or an I/O error) into *err. It must be deferred in a goroutine
// that has called debug.SetPanicOnFault(true).
func guardFault(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(interface{ Addr() uintptr }); ok {
		*err = errFaultAccess
		return
	}
	panic(r)
}

func decodeVK(b []byte) (*VerifyingKey, error) { return decodeVKConfig(b, readConfig{}) }

func decodeVKConfig(b []byte, cfg readConfig) (vk *VerifyingKey, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guardFault(&err)

	ic, err := scanVK(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	vk = new(VerifyingKey)
	if err := decodeVKFixed(vk, b); err != nil {
		return nil, err
	}
	vk.IC = make([]bls.G1Affine, ic.Len)
	icv := g1.of(vk.IC)
	if i, err := icv.decode(0, ic.Len, b[ic.Offset:ic.End()]); err != nil {
		return nil, pointError(sectionVK, ic, i, err)
	}
	if cfg.noSubgroups {
		return vk, nil
	}
	if err := checkVKFixedSubgroups(vk); err != nil {
		return nil, err
	}
	if err := icv.checkSubgroup(sectionVK, ic, 0, ic.Len); err != nil {
		return nil, err
	}
	return vk, nil
}

// vkFixed returns alpha_g1 … delta_g2 of vk, in file order, each as a
// vector of one point.
func vkFixed(vk *VerifyingKey) [6]vector {
	return [6]vector{g1.one(&vk.AlphaG1), g1.one(&vk.BetaG1), g2.one(&vk.BetaG2),
		g2.one(&vk.GammaG2), g1.one(&vk.DeltaG1), g2.one(&vk.DeltaG2)}
}

// decodeVKFixed decodes alpha_g1 … delta_g2 from b[:864], which must exist.
func decodeVKFixed(vk *VerifyingKey, b []byte) error {
	for i, v := range vkFixed(vk) {
		off := vkFixedOffsets[i]
		if _, err := v.decode(0, 1, b[off:]); err != nil {
			return &FormatError{Section: sectionVK, Offset: off, Err: err}
		}
	}
	return nil
}

// pointError reports point i of sec as bad.
func pointError(section string, sec Section, i int, err error) *FormatError {
	return &FormatError{Section: section, Offset: sec.Offset + int64(i)*int64(sec.PointSize), Err: err}
}

// vkFixedOffsets are the byte offsets of alpha_g1, beta_g1, beta_g2,
// gamma_g2, delta_g1 and delta_g2.
var vkFixedOffsets = [6]int64{0, g1Size, 2 * g1Size, 2*g1Size + g2Size, 2*g1Size + 2*g2Size, 3*g1Size + 2*g2Size}

// checkVKFixedSubgroups checks each fixed point of vk on its own (no
// probabilistic batch).
func checkVKFixedSubgroups(vk *VerifyingKey) error {
	for i, v := range vkFixed(vk) {
		if !v.inSubgroup(0) {
			return &FormatError{Section: sectionVK, Offset: vkFixedOffsets[i], Err: ErrNotInSubgroup}
		}
	}
	return nil
}

// bisectLeaf is the slice length below which a failed subgroup check is
// located point by point.
const bisectLeaf = 64

// chunkPoints is the number of points one decoding task handles.
const chunkPoints = 1 << 14

// subgroupChunk is the number of points one subgroup-checking task
// handles: a few tens of milliseconds of work, so that a cancelled read
// stops soon.
const subgroupChunk = 1 << 12

// decodeTask decodes points [lo, hi) of one section or, if subgroup is
// set, checks that the decoded points lie in the prime-order subgroup.
type decodeTask struct {
	name     string
	sec      Section
	lo, hi   int
	dst      vector // the whole section's destination
	subgroup bool
}

func (t *decodeTask) run(b []byte) (err error) {
	if t.subgroup {
		return t.dst.checkSubgroup(t.name, t.sec, t.lo, t.hi)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if err == errFaultAccess {
			err = pointError(t.name, t.sec, t.lo, err)
		}
	}()
	defer guardFault(&err)
	src := b[t.sec.Offset+int64(t.lo)*int64(t.sec.PointSize) : t.sec.Offset+int64(t.hi)*int64(t.sec.PointSize)]
	if i, err := t.dst.decode(t.lo, t.hi, src); err != nil {
		return pointError(t.name, t.sec, t.lo+i, err)
	}
	return nil
}

// decodeParams decodes every point, then (unless cfg.trusted) checks the
// subgroups: a bad encoding or a point off the curve anywhere in the file
// is reported after one decoding pass, before any subgroup check; among
// errors of one pass, the one of lowest offset. The subgroup check is one
// probabilistic batch check (gnark-crypto's, error below 2⁻⁶⁴) per chunk of
// points, and a search for the bad point only if one fails. cfg.ctx, if
// set, stops the work between chunks. The result does not reference b.
func decodeParams(b []byte, cfg readConfig) (pk *ProvingKey, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guardFault(&err)

	ctx := cfg.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	lay, err := ScanParams(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	pk = new(ProvingKey)
	if err := decodeVKFixed(&pk.VK, b); err != nil {
		return nil, err
	}
	if err := checkVKFixedSubgroups(&pk.VK); err != nil && !cfg.noSubgroups {
		return nil, err
	}
	pk.VK.IC = make([]bls.G1Affine, lay.IC.Len)
	pk.H = make([]bls.G1Affine, lay.H.Len)
	pk.L = make([]bls.G1Affine, lay.L.Len)
	pk.A = make([]bls.G1Affine, lay.A.Len)
	pk.BG1 = make([]bls.G1Affine, lay.BG1.Len)
	pk.BG2 = make([]bls.G2Affine, lay.BG2.Len)

	secs := []decodeTask{
		{name: sectionVK, sec: lay.IC, dst: g1.of(pk.VK.IC)},
		{name: sectionH, sec: lay.H, dst: g1.of(pk.H)},
		{name: sectionL, sec: lay.L, dst: g1.of(pk.L)},
		{name: sectionA, sec: lay.A, dst: g1.of(pk.A)},
		{name: sectionBG1, sec: lay.BG1, dst: g1.of(pk.BG1)},
		{name: sectionBG2, sec: lay.BG2, dst: g2.of(pk.BG2)},
	}
	// chunks cuts the sections into tasks of n points.
	chunks := func(n int, subgroup bool) []decodeTask {
		var tasks []decodeTask
		for _, s := range secs {
			if subgroup && cfg.trusted && s.name != sectionVK {
				continue // the verifying key is checked in full in both modes
			}
			for lo := 0; lo < s.sec.Len; lo += n {
				t := s
				t.lo, t.hi, t.subgroup = lo, min(lo+n, s.sec.Len), subgroup
				tasks = append(tasks, t)
			}
		}
		return tasks
	}
	if err := runTasks(ctx, b, chunks(chunkPoints, false)); err != nil {
		return nil, err
	}
	if cfg.noSubgroups {
		return pk, nil
	}
	if err := runTasks(ctx, b, chunks(subgroupChunk, true)); err != nil {
		return nil, err
	}
	return pk, nil
}

// runTasks runs tasks on GOMAXPROCS goroutines, in order of file offset,
// and returns the error of lowest offset. After a failure, or once ctx is
// done, no new task starts; every started task finishes, so the error
// returned is the first bad item in the file whatever the scheduling (or
// ctx's error when ctx ended first).
func runTasks(ctx context.Context, b []byte, tasks []decodeTask) error {
	errs := make([]error, len(tasks))
	var failed atomic.Bool
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k := range tasks {
		if failed.Load() || ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			if errs[k] = tasks[k].run(b); errs[k] != nil {
				failed.Store(true)
			}
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Flag bits in the first byte of an encoded point.
const (
	flagMask     = 0b111 << 5
	flagInfinity = 0b010 << 5
)

// point is bls.G1Affine or bls.G2Affine, through its pointer methods.
type point[P any] interface {
	*P
	IsInfinity() bool
	IsOnCurve() bool
	IsInSubGroup() bool
}

// group is what the readers and writers know of G1 or G2 beyond [point].
type group[P any, PP point[P]] struct {
	size int // encoded bytes
	// coords returns p's coordinates in encoding order, nil past the last
	// (G1: x, y; G2: x.c1, x.c0, y.c1, y.c0).
	coords func(p *P) [4]*fp.Element
	batch  func([]P) bool         // gnark-crypto's probabilistic subgroup check
	encode func(dst []byte, p *P) // writes p's size bytes
}

var (
	g1 = group[bls.G1Affine, *bls.G1Affine]{
		size:   g1Size,
		coords: func(p *bls.G1Affine) [4]*fp.Element { return [4]*fp.Element{&p.X, &p.Y} },
		batch:  bls.IsInSubGroupBatchG1,
		encode: func(dst []byte, p *bls.G1Affine) { b := p.RawBytes(); copy(dst, b[:]) },
	}
	g2 = group[bls.G2Affine, *bls.G2Affine]{
		size:   g2Size,
		coords: func(p *bls.G2Affine) [4]*fp.Element { return [4]*fp.Element{&p.X.A1, &p.X.A0, &p.Y.A1, &p.Y.A0} },
		batch:  bls.IsInSubGroupBatchG2,
		encode: func(dst []byte, p *bls.G2Affine) { b := p.RawBytes(); copy(dst, b[:]) },
	}
)

// decode decodes one uncompressed point from b[:g.size]. It checks the
// flags, the infinity encoding, that every coordinate is below p and that
// the point is on the curve; it does not check the subgroup.
func (g group[P, PP]) decode(p *P, b []byte) error {
	b = b[:g.size]
	switch b[0] & flagMask {
	case 0:
	case flagInfinity:
		if !zeroAfterFlags(b) {
			return errInfPadding
		}
		*p = *new(P)
		return nil
	default:
		return errFlags
	}
	for i, c := range g.coords(p) {
		if c == nil {
			break
		}
		var err error
		if *c, err = fp.BigEndian.Element((*[fp.Bytes]byte)(b[i*fp.Bytes:])); err != nil {
			return errNonCanon
		}
	}
	if PP(p).IsInfinity() { // (0,0) is the in-memory infinity, and off the curve
		return errZeroNoFlag
	}
	if !PP(p).IsOnCurve() {
		return ErrNotOnCurve
	}
	return nil
}

func zeroAfterFlags(b []byte) bool {
	if b[0]&^byte(flagMask) != 0 {
		return false
	}
	for _, x := range b[1:] {
		if x != 0 {
			return false
		}
	}
	return true
}

// vector is a section's points, G1 or G2, as the readers and writers
// handle them.
type vector interface {
	len() int
	// decode fills points [lo, hi) from src, hi−lo consecutive encodings,
	// and returns the index (from lo) of the first bad one with its error.
	decode(lo, hi int, src []byte) (int, error)
	// checkSubgroup checks that points [lo, hi), points of sec, lie in the
	// prime-order subgroup: one probabilistic batch check (error below
	// 2⁻⁶⁴) and, only if it fails, a bisection naming the first bad point.
	// The points must all be on the curve.
	checkSubgroup(section string, sec Section, lo, hi int) error
	// inSubgroup checks point i alone.
	inSubgroup(i int) bool
	// write writes the points, without a count.
	write(e *encoder)
}

// points is a [vector] of group g.
type points[P any, PP point[P]] struct {
	g   group[P, PP]
	pts []P
}

func (g group[P, PP]) of(pts []P) vector { return points[P, PP]{g, pts} }

func (g group[P, PP]) one(p *P) vector { return points[P, PP]{g, unsafe.Slice(p, 1)} }

func (v points[P, PP]) len() int { return len(v.pts) }

func (v points[P, PP]) decode(lo, hi int, src []byte) (int, error) {
	for i := range hi - lo {
		if err := v.g.decode(&v.pts[lo+i], src[i*v.g.size:]); err != nil {
			return i, err
		}
	}
	return 0, nil
}

func (v points[P, PP]) checkSubgroup(section string, sec Section, lo, hi int) error {
	pts := v.pts[lo:hi]
	if len(pts) == 0 || v.g.batch(pts) {
		return nil
	}
	base := lo
	for len(pts) > bisectLeaf {
		half := len(pts) / 2
		if !v.g.batch(pts[:half]) {
			pts = pts[:half]
		} else {
			lo, pts = lo+half, pts[half:]
		}
	}
	for i := range pts {
		if !PP(&pts[i]).IsInSubGroup() {
			return pointError(section, sec, lo+i, ErrNotInSubgroup)
		}
	}
	return pointError(section, sec, base, ErrNotInSubgroup) // the batch check's verdict, unlocated
}

func (v points[P, PP]) inSubgroup(i int) bool { return PP(&v.pts[i]).IsInSubGroup() }

func (v points[P, PP]) write(e *encoder) {
	e.points(len(v.pts), v.g.size, func(i int, dst []byte) { v.g.encode(dst, &v.pts[i]) })
}

// WriteTo writes vk in bellperson's .vk format. It returns ErrTooLarge,
// writing nothing, if IC has 2³² or more points.
func (vk *VerifyingKey) WriteTo(w io.Writer) (int64, error) {
	if uint64(len(vk.IC)) > math.MaxUint32 {
		return 0, fmt.Errorf("groth16: ic: %w", ErrTooLarge)
	}
	e := encoder{w: w, buf: make([]byte, 0, 64<<10)}
	e.vk(vk)
	e.flush()
	return e.n, e.err
}

// WriteTo writes pk in bellperson's .params format. It returns
// ErrTooLarge, writing nothing, if a vector has 2³² or more points.
func (pk *ProvingKey) WriteTo(w io.Writer) (int64, error) {
	if !pk.HostBases() {
		return 0, ErrNoHostBases
	}
	lens := []struct {
		name string
		n    int
	}{{"ic", len(pk.VK.IC)}, {sectionH, len(pk.H)}, {sectionL, len(pk.L)}, {sectionA, len(pk.A)}, {sectionBG1, len(pk.BG1)}, {sectionBG2, len(pk.BG2)}}
	for _, l := range lens {
		if uint64(l.n) > math.MaxUint32 {
			return 0, fmt.Errorf("groth16: %s: %w", l.name, ErrTooLarge)
		}
	}
	e := encoder{w: w, buf: make([]byte, 0, 4<<20)}
	e.vk(&pk.VK)
	for _, v := range []vector{g1.of(pk.H), g1.of(pk.L), g1.of(pk.A), g1.of(pk.BG1), g2.of(pk.BG2)} {
		e.vector(v)
	}
	e.flush()
	return e.n, e.err
}

// encoder buffers writes and keeps the first error.
type encoder struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
}

func (e *encoder) put(p []byte) {
	if len(e.buf)+len(p) > cap(e.buf) {
		e.flush()
	}
	e.buf = append(e.buf, p...)
}

func (e *encoder) flush() {
	if e.err == nil && len(e.buf) > 0 {
		var n int
		n, e.err = e.w.Write(e.buf)
		e.n += int64(n)
	}
	e.buf = e.buf[:0]
}

func (e *encoder) u32(n int) {
	e.put(binary.BigEndian.AppendUint32(nil, uint32(n)))
}

// vector writes v's u32 count, then its points.
func (e *encoder) vector(v vector) {
	e.u32(v.len())
	v.write(e)
}

// parallelMin is the number of points below which encoding stays on one
// goroutine.
const parallelMin = 4096

// points writes n points of size bytes each, enc(i, dst) filling
// dst[:size] with point i. Large vectors are encoded a buffer at a time on
// GOMAXPROCS goroutines.
func (e *encoder) points(n, size int, enc func(i int, dst []byte)) {
	per := cap(e.buf) / size
	for lo := 0; lo < n && e.err == nil; lo += per {
		hi := min(lo+per, n)
		if len(e.buf)+(hi-lo)*size > cap(e.buf) {
			e.flush()
		}
		start := len(e.buf)
		e.buf = e.buf[:start+(hi-lo)*size]
		out := e.buf[start:]
		encRange := func(a, b int) {
			for i := a; i < b; i++ {
				enc(i, out[(i-lo)*size:])
			}
		}
		procs := runtime.GOMAXPROCS(0)
		if hi-lo < parallelMin || procs == 1 {
			encRange(lo, hi)
			continue
		}
		var wg sync.WaitGroup
		step := (hi - lo + procs - 1) / procs
		for a := lo; a < hi; a += step {
			wg.Go(func() { encRange(a, min(a+step, hi)) })
		}
		wg.Wait()
	}
}

func (e *encoder) vk(vk *VerifyingKey) {
	for _, v := range vkFixed(vk) {
		v.write(e)
	}
	e.vector(g1.of(vk.IC))
}
