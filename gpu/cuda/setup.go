package cuda

import (
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Fixed-base scalar multiplication on the device, for development keys made
// straight into device memory (c2_fixed_base_table, c2_fixed_base_mul).

const (
	// FixedBaseScratch is the most device scratch one FixedBase.Mul call
	// uses (C2_FIXED_BASE_SCRATCH).
	FixedBaseScratch = 768 << 20
	// DefaultFixedBaseWindows is the window count that suits keys: 16
	// additions a point, tables of 50 MB (G1) and 100 MB (G2).
	DefaultFixedBaseWindows = 16
	minFixedBaseWindows     = 11
	maxFixedBaseWindows     = 64
)

// fixedBaseChunkLog is a test knob: log2 of the points per launch when
// non-zero.
var fixedBaseChunkLog = 0

// FixedBase is a device table of multiples of one point: with W windows,
// for each window w and signed digit magnitude d, d·2^(o_w)·P, so that k·P
// costs W mixed additions. Free it with Free.
type FixedBase struct {
	d       *Device
	group   int
	windows int
	table   *Buffer
}

// FixedBaseTableBytes returns the device memory of a table of group (1 or
// 2) with the given window count.
func FixedBaseTableBytes(group, windows int) uint64 {
	point := uint64(g1Bytes)
	if group == 2 {
		point = g2Bytes
	}
	return uint64(windows) << (windowWidth(0, windows) - 1) * point
}

// NewFixedBaseG1 builds on the device the table of base (not infinity) with
// the given window count (11 to 64; DefaultFixedBaseWindows suits keys).
func (d *Device) NewFixedBaseG1(base *bls12381.G1Affine, windows int) (*FixedBase, error) {
	return d.newFixedBase("FixedBaseTableG1", 1, unsafe.Pointer(base), base.IsInfinity(), windows)
}

// NewFixedBaseG2 is NewFixedBaseG1 in G2.
func (d *Device) NewFixedBaseG2(base *bls12381.G2Affine, windows int) (*FixedBase, error) {
	return d.newFixedBase("FixedBaseTableG2", 2, unsafe.Pointer(base), base.IsInfinity(), windows)
}

func (d *Device) newFixedBase(op string, group int, base unsafe.Pointer, inf bool, windows int) (*FixedBase, error) {
	if windows < minFixedBaseWindows || windows > maxFixedBaseWindows {
		return nil, argError(op, "%d windows outside [%d, %d]", windows, minFixedBaseWindows, maxFixedBaseWindows)
	}
	if inf {
		return nil, argError(op, "the base is the point at infinity")
	}
	buf, err := d.Alloc(FixedBaseTableBytes(group, windows))
	if err != nil {
		return nil, err
	}
	s, err := d.acquire(op)
	if err != nil {
		_ = buf.Free()
		return nil, err
	}
	err = rawFixedBaseTable(s, group, base, windows, buf.p)
	d.release(s)
	if err != nil {
		_ = buf.Free()
		return nil, err
	}
	return &FixedBase{d: d, group: group, windows: windows, table: buf}, nil
}

// Free releases the table.
func (t *FixedBase) Free() error { return t.table.Free() }

func (t *FixedBase) point() uint64 {
	if t.group == 2 {
		return g2Bytes
	}
	return g1Bytes
}

// Mul writes k·P for every scalar k (host memory, Montgomery form, as
// gnark-crypto stores them) as affine points (gnark-crypto layout, zero for
// infinity) into dst at point index offset, offset+1, ...; scalars cross
// the bus in chunks while the previous chunk computes.
func (t *FixedBase) Mul(dst *Buffer, offset int, scalars []fr.Element) error {
	return t.mul(dst, offset, ptr{p: unsafe.Pointer(unsafe.SliceData(scalars))}, len(scalars))
}

func (t *FixedBase) op() string {
	if t.group == 2 {
		return "FixedBaseMulG2"
	}
	return "FixedBaseMulG1"
}

func (t *FixedBase) mul(dst *Buffer, offset int, scalars ptr, n int) error {
	op := t.op()
	if offset < 0 || n < 0 {
		return argError(op, "offset %d, %d scalars", offset, n)
	}
	if t.table == nil || t.table.p == nil {
		return &Error{Op: op, Kind: ErrClosed, Msg: "table freed"}
	}
	if err := dst.check(op, uint64(offset+n)*t.point()); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	s, err := t.d.acquire(op)
	if err != nil {
		return err
	}
	defer t.d.release(s)
	return rawFixedBaseMul(s, t.group, t.table.p, t.windows|fixedBaseChunkLog<<8, scalars, uint64(n), dst.p,
		uint64(offset))
}
