package cuda

// The package's kernels driven directly, outside the prover's calls: NTTs
// of each kind, field-element transfers, point fills and resident
// fixed-base products, for the kernel tests and benchmarks.

import (
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// memInfo returns the free and total device memory in bytes.
func (d *Device) memInfo() (free, total uint64, err error) { return rawMemInfo(d.ordinal) }

// nttKind selects the transform. All kinds take and return natural order.
type nttKind int

const (
	// nttForward: v_i <- sum_j v_j w^(ij), w = fft.NewDomain(n).Generator.
	nttForward nttKind = iota
	// nttInverse: the inverse of nttForward (includes the 1/n factor).
	nttInverse
	// nttCosetForward: v_i <- sum_j v_j (g w^i)^j, g = 7 (Fr's multiplicative generator).
	nttCosetForward
	// nttCosetInverse: the inverse of nttCosetForward.
	nttCosetInverse
	// kindForwardNR: nttForward without the final permutation (output in
	// bit-reversed order); benchmarks only.
	kindForwardNR
)

// ntt transforms v in place; len(v) must be a power of two.
func (d *Device) ntt(v []fr.Element, kind nttKind) error {
	logN, ok := log2Exact(len(v))
	if !ok || logN > MaxLogN {
		return argError("NTT", "length %d is not a power of two <= 2^%d", len(v), MaxLogN)
	}
	if kind < nttForward || kind > nttCosetInverse {
		return argError("NTT", "kind %d", kind)
	}
	s, err := d.acquire("NTT")
	if err != nil {
		return err
	}
	defer d.release(s)
	return rawNTT(s, ptr{p: unsafe.Pointer(&v[0])}, logN, int(kind), constsFor(logN))
}

// nttResident transforms the first 2^logN elements of buf in place.
func (d *Device) nttResident(buf *Buffer, logN int, kind nttKind) error {
	if logN < 0 || logN > MaxLogN || kind < nttForward || kind > kindForwardNR {
		return argError("NTTResident", "logN %d, kind %d", logN, kind)
	}
	if err := buf.check("NTTResident", frBytes<<logN); err != nil {
		return err
	}
	s, err := d.acquire("NTTResident")
	if err != nil {
		return err
	}
	defer d.release(s)
	return rawNTT(s, buf.arg(), logN, int(kind), constsFor(logN))
}

// uploadFr copies v into a new device buffer.
func (d *Device) uploadFr(v []fr.Element) (*Buffer, error) {
	return upload(d, "UploadFr", unsafe.Pointer(unsafe.SliceData(v)), uint64(len(v))*frBytes)
}

// downloadFr copies len(dst) elements from the start of buf.
func (d *Device) downloadFr(dst []fr.Element, buf *Buffer) error {
	return d.copyOut("DownloadFr", unsafe.Pointer(unsafe.SliceData(dst)), buf, 0, uint64(len(dst))*frBytes)
}

// windowOffset is the first bit of window w of nw (see windowWidth).
func windowOffset(w, nw int) int { return w*(256/nw) + min(w, 256%nw) }

// fillG1 writes n valid points into buf: point i = a[i%k] + b[(i/k)%k] with
// a = seeds[:k], b = seeds[k:] (len(seeds) = 2k). For tests and benchmarks.
func (d *Device) fillG1(buf *Buffer, n int, seeds []bls12381.G1Affine) error {
	return g1.fill(d, "FillG1", buf, n, seeds)
}

// fillG2 is fillG1 in G2.
func (d *Device) fillG2(buf *Buffer, n int, seeds []bls12381.G2Affine) error {
	return g2.fill(d, "FillG2", buf, n, seeds)
}

func (g group[A, F, J, PF, PJ]) fill(d *Device, op string, buf *Buffer, n int, seeds []A) error {
	if len(seeds) < 2 || len(seeds)%2 != 0 {
		return argError(op, "%d seeds: want an even number >= 2", len(seeds))
	}
	if err := buf.check(op, uint64(n)*g.point); err != nil {
		return err
	}
	s, err := d.acquire(op)
	if err != nil {
		return err
	}
	defer d.release(s)
	return rawFill(s, g.id, buf.p, uint64(n), unsafe.Pointer(&seeds[0]), uint64(len(seeds)/2))
}

// bytes returns the table's device memory.
func (t *FixedBase) bytes() uint64 { return t.table.Len() }

// mulResident is Mul with the n scalars in device memory.
func (t *FixedBase) mulResident(dst *Buffer, offset int, scalars *Buffer, n int) error {
	if err := scalars.check(t.op(), uint64(max(n, 0))*frBytes); err != nil {
		return err
	}
	return t.mul(dst, offset, scalars.arg(), n)
}
