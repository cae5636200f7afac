package cuda

import (
	"encoding/binary"
	"math/big"
	"math/bits"
	"sync"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

const (
	frBytes = 32
	g1Bytes = 96
	g2Bytes = 192
	// MaxLogN is the largest NTT size supported (2^MaxLogN elements).
	MaxLogN = 31
)

// Layout checks: these types cross the C boundary by address.
var (
	_ [frBytes - unsafe.Sizeof(fr.Element{})]struct{}
	_ [g1Bytes - unsafe.Sizeof(bls12381.G1Affine{})]struct{}
	_ [g2Bytes - unsafe.Sizeof(bls12381.G2Affine{})]struct{}
)

// nttConsts mirrors c2_ntt_consts.
type nttConsts struct {
	omega, omegaInv, g, gInv, nInv, zInv fr.Element
}

var constCache sync.Map // logN -> *nttConsts

func constsFor(logN int) *nttConsts {
	if c, ok := constCache.Load(logN); ok {
		return c.(*nttConsts)
	}
	n := uint64(1) << logN
	dom := fft.NewDomain(n, fft.WithoutPrecompute())
	k := &nttConsts{
		omega: dom.Generator, omegaInv: dom.GeneratorInv,
		g: dom.FrMultiplicativeGen, gInv: dom.FrMultiplicativeGenInv, nInv: dom.CardinalityInv,
	}
	var gn fr.Element
	gn.Exp(k.g, new(big.Int).SetUint64(n))
	var one fr.Element
	one.SetOne()
	gn.Sub(&gn, &one)
	k.zInv.Inverse(&gn)
	constCache.Store(logN, k)
	return k
}

func log2Exact(n int) (int, bool) {
	if n <= 0 || n&(n-1) != 0 {
		return 0, false
	}
	return bits.TrailingZeros(uint(n)), true
}

// ComputeH computes the Groth16 quotient the way bellperson does, in place:
// with n = len(a) (a power of two, a, b, c the natural-order evaluations of
// A·w, B·w, C·w zero-padded to n), it writes into a the coefficients, in
// natural order, of h = (A·B − C)/Z evaluated through the coset g·<w>: a
// and b are interpolated (iNTT) and moved to the coset (coefficient i times
// g^i, NTT), their product is brought back (iNTT, coefficient i times g^-i),
// and C's coefficients (one iNTT of c) are subtracted, all divided by the
// coset's Z = g^n − 1: six transforms, the result of bellperson's seven.
// b and c are left unchanged. The call stages a, b and c in three device
// vectors of len(a) elements (see ComputeHTwoVectors).
func (d *Device) ComputeH(a, b, c []fr.Element) error {
	return d.computeH("ComputeH", a, b, c, false)
}

// ComputeHTwoVectors is ComputeH staged in two device vectors instead of
// three, for a device short of memory: c is uploaded into b's vector once
// the product of the cosets has read it, so its upload overlaps no work.
func (d *Device) ComputeHTwoVectors(a, b, c []fr.Element) error {
	return d.computeH("ComputeHTwoVectors", a, b, c, true)
}

func (d *Device) computeH(op string, a, b, c []fr.Element, two bool) error {
	logN, ok := log2Exact(len(a))
	if !ok || len(b) != len(a) || len(c) != len(a) || logN > MaxLogN {
		return argError(op, "lengths %d, %d, %d: want equal powers of two", len(a), len(b), len(c))
	}
	if logN == 0 {
		// Z(x) = x − 1 and deg h ≤ −1: h is empty (as package ntt).
		a[0].SetZero()
		return nil
	}
	s, err := d.acquire(op)
	if err != nil {
		return err
	}
	defer d.release(s)
	return rawComputeH(s, ptr{p: unsafe.Pointer(&a[0])}, ptr{p: unsafe.Pointer(&b[0])},
		ptr{p: unsafe.Pointer(&c[0])}, logN, constsFor(logN), two)
}

// ComputeHResident is ComputeH on device buffers holding 2^logN elements
// each; the result is left in a and b, c are clobbered.
func (d *Device) ComputeHResident(a, b, c *Buffer, logN int) error {
	if logN < 0 || logN > MaxLogN {
		return argError("ComputeHResident", "logN %d", logN)
	}
	for _, x := range []*Buffer{a, b, c} {
		if err := x.check("ComputeHResident", frBytes<<logN); err != nil {
			return err
		}
	}
	s, err := d.acquire("ComputeHResident")
	if err != nil {
		return err
	}
	defer d.release(s)
	return rawComputeH(s, a.arg(), b.arg(), c.arg(), logN, constsFor(logN), false)
}

// UploadG1 copies points into a new device buffer (bases kept resident).
func (d *Device) UploadG1(points []bls12381.G1Affine) (*Buffer, error) {
	return upload(d, "UploadG1", unsafe.Pointer(unsafe.SliceData(points)), uint64(len(points))*g1Bytes)
}

// UploadG2 copies points into a new device buffer (bases kept resident).
func (d *Device) UploadG2(points []bls12381.G2Affine) (*Buffer, error) {
	return upload(d, "UploadG2", unsafe.Pointer(unsafe.SliceData(points)), uint64(len(points))*g2Bytes)
}

func upload(d *Device, op string, src unsafe.Pointer, bytes uint64) (*Buffer, error) {
	b, err := d.Alloc(bytes)
	if err != nil {
		return nil, err
	}
	if err := d.copyIn(op, b, 0, src, bytes); err != nil {
		_ = b.Free()
		return nil, err
	}
	return b, nil
}

// field is a curve's coordinate field: fp.Element for G1, E2 for G2.
type field[F any] interface {
	*F
	SetOne() *F
	Mul(x, y *F) *F
	Square(x *F) *F
	IsZero() bool
}

// jacobian is *bls12381.G1Jac or *bls12381.G2Jac.
type jacobian[J any] interface {
	*J
	DoubleAssign() *J
	AddAssign(*J) *J
}

// xyzz mirrors the library's XYZZ output points (c2_g1_xyzz, c2_g2_xyzz).
type xyzz[F any] struct{ x, y, zz, zzz F }

// group lets one body serve G1 and G2: affine points A (as the library
// reads them), Jacobian points J with coordinates in F. Its value holds
// what the constraints cannot.
type group[A, F, J any, PF field[F], PJ jacobian[J]] struct {
	id      int    // the library's group argument: 1 or 2
	name    string // "G1" or "G2", for operation names
	point   uint64 // bytes of one A
	xyz     func(p *J) (x, y, z *F)
	reduced func(x *F) bool // x's words are below the modulus (each Fp of an E2)
}

// fpModulus is p as an fp.Element's words (least significant first).
var fpModulus = func() (q fp.Element) {
	b := fp.Modulus().FillBytes(make([]byte, 8*len(q))) // big-endian
	for i := range q {
		q[i] = binary.BigEndian.Uint64(b[len(b)-8*(i+1):])
	}
	return q
}()

// fpReduced reports whether x's words, read as an integer, are below p: the
// form gnark-crypto's arithmetic expects and the library promises.
func fpReduced(x *fp.Element) bool {
	for i := len(x) - 1; i >= 0; i-- {
		if x[i] != fpModulus[i] {
			return x[i] < fpModulus[i]
		}
	}
	return false
}

var (
	g1 = group[bls12381.G1Affine, fp.Element, bls12381.G1Jac, *fp.Element, *bls12381.G1Jac]{
		id: 1, name: "G1", point: g1Bytes,
		xyz:     func(p *bls12381.G1Jac) (x, y, z *fp.Element) { return &p.X, &p.Y, &p.Z },
		reduced: fpReduced,
	}
	g2 = group[bls12381.G2Affine, bls12381.E2, bls12381.G2Jac, *bls12381.E2, *bls12381.G2Jac]{
		id: 2, name: "G2", point: g2Bytes,
		xyz:     func(p *bls12381.G2Jac) (x, y, z *bls12381.E2) { return &p.X, &p.Y, &p.Z },
		reduced: func(x *bls12381.E2) bool { return fpReduced(&x.A0) && fpReduced(&x.A1) },
	}
)

// hostPtr is the host-memory argument for v.
func hostPtr[T any](v []T) ptr { return ptr{p: unsafe.Pointer(unsafe.SliceData(v))} }

// inf returns the point at infinity, (1, 1, 0).
func (g group[A, F, J, PF, PJ]) inf() J {
	var r J
	x, y, _ := g.xyz(&r)
	PF(x).SetOne()
	PF(y).SetOne()
	return r
}

// jac returns p, a point the library wrote for operation op, in Jacobian
// coordinates; a coordinate not below the modulus is the library's fault
// (ErrCUDA), never taken for a value.
func (g group[A, F, J, PF, PJ]) jac(op string, p *xyzz[F]) (J, error) {
	for _, c := range []*F{&p.x, &p.y, &p.zz, &p.zzz} {
		if !g.reduced(c) {
			return g.inf(), &Error{Op: op, Kind: ErrCUDA, Msg: "the library returned a coordinate not below the field modulus"}
		}
	}
	if PF(&p.zz).IsZero() {
		return g.inf(), nil
	}
	var r J
	x, y, z := g.xyz(&r)
	// Z = ZZ·ZZZ, X = X·ZZ·ZZZ², Y = Y·ZZ³·ZZZ²
	var zzz2, t F
	PF(&zzz2).Square(&p.zzz)
	PF(z).Mul(&p.zz, &p.zzz)
	PF(x).Mul(&p.x, &p.zz)
	PF(x).Mul(x, &zzz2)
	PF(&t).Square(&p.zz)
	PF(&t).Mul(&t, &p.zz)
	PF(y).Mul(&p.y, &t)
	PF(y).Mul(y, &zzz2)
	return r, nil
}

// combine returns sum sums[w]·2^o_w (Horner from the top), o_w the offset of
// window w of len(sums) near-equal windows covering span bits (spanWidth).
func (g group[A, F, J, PF, PJ]) combine(sums []J, span int) J {
	res := g.inf()
	for w := len(sums) - 1; w >= 0; w-- {
		if w != len(sums)-1 {
			for i := 0; i < spanWidth(w, len(sums), span); i++ {
				PJ(&res).DoubleAssign()
			}
		}
		PJ(&res).AddAssign(&sums[w])
	}
	return res
}

// combineOut combines the first nw window sums the library wrote into out
// for operation op, windows covering span bits (256; 128 for a split MSM).
func (g group[A, F, J, PF, PJ]) combineOut(op string, out []xyzz[F], nw, span int) (J, error) {
	sums := make([]J, nw)
	for w := range sums {
		var err error
		if sums[w], err = g.jac(op, &out[w]); err != nil {
			return g.inf(), err
		}
	}
	return g.combine(sums, span), nil
}

const maxWindows = 64 // C2_MAX_WINDOWS

// Test knobs: msmWindow forces the MSM window size and msmChunkLog the
// streaming chunk (2^msmChunkLog points) when non-zero.
var msmWindow, msmChunkLog = 0, 0

func msmKnobs() int { return msmWindow | msmChunkLog<<8 }

// MSMG1 returns sum scalars[i]·bases[i] over i < len(scalars); bases (host
// memory) must hold at least len(scalars) points. Scalars are fr.Elements as
// stored by gnark-crypto (Montgomery form).
func (d *Device) MSMG1(bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	return g1.msmHost(d, "MSMG1", bases, scalars)
}

// MSMG1Resident is MSMG1 with the bases in device memory (from UploadG1).
func (d *Device) MSMG1Resident(bases *Buffer, scalars []fr.Element) (bls12381.G1Jac, error) {
	return g1.msmResident(d, "MSMG1Resident", bases, scalars)
}

// MSMG1OnDevice is MSMG1 with both the bases and the n scalars in device
// memory, e.g. h left on the device by ComputeHResident (no host round trip).
func (d *Device) MSMG1OnDevice(bases, scalars *Buffer, n int) (bls12381.G1Jac, error) {
	return g1.msmOnDevice(d, "MSMG1OnDevice", bases, scalars, n)
}

// MSMG1HostBases is MSMG1OnDevice with the bases in host memory, streamed
// to the device in chunks while earlier chunks compute (pinned memory from
// AllocPinned streams fastest), and the n scalars in device memory.
func (d *Device) MSMG1HostBases(bases []bls12381.G1Affine, scalars *Buffer, n int) (bls12381.G1Jac, error) {
	return g1.msmHostBases(d, "MSMG1HostBases", bases, scalars, n)
}

// MSMG2OnDevice is MSMG1OnDevice in G2.
func (d *Device) MSMG2OnDevice(bases, scalars *Buffer, n int) (bls12381.G2Jac, error) {
	return g2.msmOnDevice(d, "MSMG2OnDevice", bases, scalars, n)
}

// MSMG2HostBases is MSMG1HostBases in G2.
func (d *Device) MSMG2HostBases(bases []bls12381.G2Affine, scalars *Buffer, n int) (bls12381.G2Jac, error) {
	return g2.msmHostBases(d, "MSMG2HostBases", bases, scalars, n)
}

func (g group[A, F, J, PF, PJ]) msmOnDevice(d *Device, op string, bases, scalars *Buffer, n int) (J, error) {
	var zero J
	if n < 0 {
		return zero, argError(op, "n = %d", n)
	}
	if err := bases.check(op, uint64(n)*g.point); err != nil {
		return zero, err
	}
	if err := scalars.check(op, uint64(n)*frBytes); err != nil {
		return zero, err
	}
	return g.msm(d, bases.arg(), scalars.arg(), n, msmKnobs())
}

func (g group[A, F, J, PF, PJ]) msmHostBases(d *Device, op string, bases []A, scalars *Buffer, n int) (J, error) {
	var zero J
	if n < 0 || len(bases) < n {
		return zero, argError(op, "%d bases for n = %d", len(bases), n)
	}
	if err := scalars.check(op, uint64(n)*frBytes); err != nil {
		return zero, err
	}
	return g.msm(d, hostPtr(bases), scalars.arg(), n, hostKnobs())
}

// hostKnobs are the knobs of an MSM whose bases stream from the host: in
// chunks of 2^hostChunkLog points unless a test sets msmChunkLog.
func hostKnobs() int {
	if msmChunkLog == 0 {
		return msmKnobs() | hostChunkLog<<8
	}
	return msmKnobs()
}

// splitShift is the doubling count between a split MSM's two base arrays,
// basesHi[i] = 2^splitShift·bases[i], and the bits each half of its scalars
// covers: a split MSM's window sums combine over windows of 128 bits.
const splitShift = 128

// HighBasesG1 sets dst[i] = 2^128·src[i] for i < n (device buffers; dst
// may be src): the second base array of MSMG1SplitOnDevice.
func (d *Device) HighBasesG1(dst, src *Buffer, n int) error {
	return g1.shift(d, "HighBasesG1", dst, src, n, splitShift)
}

// msmG1Split is MSMG1Resident computed as an MSM of 2n points of 128-bit
// scalars: basesHi (from HighBasesG1) multiplies the scalars' high halves,
// so the MSM needs 12 windows where MSMG1Resident needs 13 (c2_msm_split).
func (d *Device) msmG1Split(bases, basesHi *Buffer, scalars []fr.Element) (bls12381.G1Jac, error) {
	return g1.msmSplit(d, "MSMG1Split", bases, basesHi, hostPtr(scalars), len(scalars))
}

// MSMG1SplitOnDevice is MSMG1OnDevice computed as an MSM of 2n points of
// 128-bit scalars: basesHi (from HighBasesG1) multiplies the scalars' high
// halves, so that it needs 12 windows where MSMG1OnDevice needs 13
// (c2_msm_split).
func (d *Device) MSMG1SplitOnDevice(bases, basesHi, scalars *Buffer, n int) (bls12381.G1Jac, error) {
	const op = "MSMG1SplitOnDevice"
	if err := scalars.check(op, uint64(max(n, 0))*frBytes); err != nil {
		return g1.inf(), err
	}
	return g1.msmSplit(d, op, bases, basesHi, scalars.arg(), n)
}

// shift sets dst[i] = 2^k·src[i] for i < n (device buffers of affine points).
func (g group[A, F, J, PF, PJ]) shift(d *Device, op string, dst, src *Buffer, n, k int) error {
	if n < 0 || k < 0 {
		return argError(op, "n = %d, k = %d", n, k)
	}
	if err := src.check(op, uint64(n)*g.point); err != nil {
		return err
	}
	if err := dst.check(op, uint64(n)*g.point); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	s, err := d.acquire(op)
	if err != nil {
		return err
	}
	defer d.release(s)
	return rawShiftPoints(s, g.id, dst.p, src.p, uint64(n), k)
}

// msmSplit is the MSM of n scalars over resident bases whose high halves
// multiply basesHi[i] = 2^splitShift·bases[i].
func (g group[A, F, J, PF, PJ]) msmSplit(d *Device, op string, bases, basesHi *Buffer, scalars ptr, n int) (J, error) {
	res := g.inf()
	if n < 0 {
		return res, argError(op, "n = %d", n)
	}
	if err := bases.check(op, uint64(n)*g.point); err != nil {
		return res, err
	}
	if err := basesHi.check(op, uint64(n)*g.point); err != nil {
		return res, err
	}
	if n == 0 {
		return res, nil
	}
	s, err := d.acquire(op)
	if err != nil {
		return res, err
	}
	defer d.release(s)
	var out [maxWindows]xyzz[F]
	nw, _, err := rawMSMSplit(s, g.id, bases.p, basesHi.p, scalars, uint64(n), msmKnobs(), unsafe.Pointer(&out[0]))
	if err != nil {
		return res, err
	}
	return g.combineOut(op, out[:], nw, splitShift)
}

// hostChunkLog is the log2 of the chunk in which an MSM streams bases from
// host memory (MSMG1, MSMG2, MSMG1HostBases): small enough that copying a
// chunk overlaps the previous one's compute and that the staging stays a
// fraction of a small card's memory (1.6 GB of G2 points), large enough
// that per-chunk sorting stays efficient.
const hostChunkLog = 22

// MSMG2 returns sum scalars[i]·bases[i] over i < len(scalars) in G2.
func (d *Device) MSMG2(bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	return g2.msmHost(d, "MSMG2", bases, scalars)
}

// MSMG2Resident is MSMG2 with the bases in device memory (from UploadG2).
func (d *Device) MSMG2Resident(bases *Buffer, scalars []fr.Element) (bls12381.G2Jac, error) {
	return g2.msmResident(d, "MSMG2Resident", bases, scalars)
}

// msmHost is the MSM over bases in host memory, which must hold at least
// len(scalars) points.
func (g group[A, F, J, PF, PJ]) msmHost(d *Device, op string, bases []A, scalars []fr.Element) (J, error) {
	if len(bases) < len(scalars) {
		var zero J
		return zero, argError(op, "%d bases for %d scalars", len(bases), len(scalars))
	}
	return g.msm(d, hostPtr(bases), hostPtr(scalars), len(scalars), hostKnobs())
}

// msmResident is the MSM over bases in a device buffer.
func (g group[A, F, J, PF, PJ]) msmResident(d *Device, op string, bases *Buffer, scalars []fr.Element) (J, error) {
	if err := bases.check(op, uint64(len(scalars))*g.point); err != nil {
		var zero J
		return zero, err
	}
	return g.msm(d, bases.arg(), hostPtr(scalars), len(scalars), msmKnobs())
}

// msm runs c2_msm over n bases and scalars with the given knobs.
func (g group[A, F, J, PF, PJ]) msm(d *Device, bases, scalars ptr, n, knobs int) (J, error) {
	res := g.inf()
	if n == 0 {
		return res, nil
	}
	op := "MSM" + g.name
	s, err := d.acquire(op)
	if err != nil {
		return res, err
	}
	defer d.release(s)
	var out [maxWindows]xyzz[F]
	nw, _, err := rawMSM(s, g.id, bases, scalars, uint64(n), knobs, unsafe.Pointer(&out[0]))
	if err != nil {
		return res, err
	}
	return g.combineOut(op, out[:], nw, 256)
}

// windowWidth is the width of window w of nw, as digits.cuh cuts them: nw
// near-equal windows covering 256 bits, the wider ones first.
func windowWidth(w, nw int) int { return spanWidth(w, nw, 256) }

// spanWidth is the width of window w of nw near-equal windows covering span
// bits, the wider ones first (digits.cuh: window_width, split_width).
func spanWidth(w, nw, span int) int {
	if w < span%nw {
		return span/nw + 1
	}
	return span / nw
}

func checkBitmap(op string, bitmap []uint64, n int) error {
	if uint64(len(bitmap))*64 < uint64(n) {
		return argError(op, "bitmap of %d words for %d bases", len(bitmap), n)
	}
	return nil
}

// BatchAddG1 returns the sum of bases[i] for every i < len(bases) whose bit
// i is set in bitmap (bit i%64 of word i/64).
func (d *Device) BatchAddG1(bases []bls12381.G1Affine, bitmap []uint64) (bls12381.G1Jac, error) {
	return g1.batchAddHost(d, "BatchAddG1", bases, bitmap)
}

// BatchAddG1Resident is BatchAddG1 over the first n points of a device buffer.
func (d *Device) BatchAddG1Resident(bases *Buffer, n int, bitmap []uint64) (bls12381.G1Jac, error) {
	return g1.batchAddResident(d, "BatchAddG1Resident", bases, n, bitmap)
}

// BatchAddG2 is BatchAddG1 in G2.
func (d *Device) BatchAddG2(bases []bls12381.G2Affine, bitmap []uint64) (bls12381.G2Jac, error) {
	return g2.batchAddHost(d, "BatchAddG2", bases, bitmap)
}

// BatchAddG2Resident is BatchAddG2 over the first n points of a device buffer.
func (d *Device) BatchAddG2Resident(bases *Buffer, n int, bitmap []uint64) (bls12381.G2Jac, error) {
	return g2.batchAddResident(d, "BatchAddG2Resident", bases, n, bitmap)
}

func (g group[A, F, J, PF, PJ]) batchAddHost(d *Device, op string, bases []A, bitmap []uint64) (J, error) {
	if err := checkBitmap(op, bitmap, len(bases)); err != nil {
		var zero J
		return zero, err
	}
	return g.batchAdd(d, hostPtr(bases), bitmap, len(bases))
}

func (g group[A, F, J, PF, PJ]) batchAddResident(d *Device, op string, bases *Buffer, n int, bitmap []uint64) (J, error) {
	var zero J
	if err := bases.check(op, uint64(n)*g.point); err != nil {
		return zero, err
	}
	if err := checkBitmap(op, bitmap, n); err != nil {
		return zero, err
	}
	return g.batchAdd(d, bases.arg(), bitmap, n)
}

// batchAdd runs c2_batch_add over n bases.
func (g group[A, F, J, PF, PJ]) batchAdd(d *Device, bases ptr, bitmap []uint64, n int) (J, error) {
	var zero J
	op := "BatchAdd" + g.name
	s, err := d.acquire(op)
	if err != nil {
		return zero, err
	}
	defer d.release(s)
	var out xyzz[F]
	if err := rawBatchAdd(s, g.id, bases, bitmap, uint64(n), unsafe.Pointer(&out)); err != nil {
		return zero, err
	}
	return g.jac(op, &out)
}

// checkIndexed validates an indexed MSM over the first nbases points of a
// resident buffer of point-byte points.
func checkIndexed(op string, bases *Buffer, nbases int, point uint64, idx []uint32, scalars []fr.Element) error {
	if err := bases.check(op, uint64(nbases)*point); err != nil {
		return err
	}
	if len(idx) != len(scalars) {
		return argError(op, "%d indices for %d scalars", len(idx), len(scalars))
	}
	for j, i := range idx {
		if int(i) >= nbases {
			return argError(op, "index %d (position %d) past %d bases", i, j, nbases)
		}
	}
	return nil
}

// MSMG1Indexed returns Σ scalars[j]·bases[idx[j]] over the first nbases
// points of a resident buffer (from UploadG1): the device gathers the
// bases, so only idx and the scalars cross the bus.
func (d *Device) MSMG1Indexed(bases *Buffer, nbases int, idx []uint32, scalars []fr.Element) (bls12381.G1Jac, error) {
	return g1.msmIndexed(d, "MSMG1Indexed", bases, nbases, idx, scalars)
}

// MSMG2Indexed is MSMG1Indexed in G2 (bases from UploadG2).
func (d *Device) MSMG2Indexed(bases *Buffer, nbases int, idx []uint32, scalars []fr.Element) (bls12381.G2Jac, error) {
	return g2.msmIndexed(d, "MSMG2Indexed", bases, nbases, idx, scalars)
}

// msmIndexed runs c2_msm_indexed.
func (g group[A, F, J, PF, PJ]) msmIndexed(d *Device, op string, bases *Buffer, nbases int, idx []uint32,
	scalars []fr.Element) (J, error) {
	inf := g.inf()
	if err := checkIndexed(op, bases, nbases, g.point, idx, scalars); err != nil || len(idx) == 0 {
		return inf, err
	}
	s, err := d.acquire(op)
	if err != nil {
		return inf, err
	}
	defer d.release(s)
	var out [maxWindows]xyzz[F]
	nw, err := rawMSMIndexed(s, g.id, bases.p, uint64(nbases), idx, unsafe.Pointer(unsafe.SliceData(scalars)), msmKnobs(), unsafe.Pointer(&out[0]))
	if err != nil {
		return inf, err
	}
	return g.combineOut(op, out[:], nw, 256)
}
