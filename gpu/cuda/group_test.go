package cuda

import (
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/msm"
)

// testAffine is *bls12381.G1Affine or *bls12381.G2Affine (A), J its
// Jacobian form.
type testAffine[A, J any] interface {
	*A
	FromJacobian(*J) *A
	Equal(*A) bool
	String() string
	Neg(*A) *A
	Add(a, b *A) *A
}

// testJacobian is *bls12381.G1Jac or *bls12381.G2Jac (J), A its affine form.
type testJacobian[A, J any] interface {
	jacobian[J]
	FromAffine(*A) *J
	AddMixed(*A) *J
	ScalarMultiplication(*J, *big.Int) *J
	MultiExp([]A, []fr.Element, ecc.MultiExpConfig) (*J, error)
}

// testGroup lets one test body serve G1 and G2: the production group, the
// random points and the Device methods of the group.
type testGroup[A, F, J any, PA testAffine[A, J], PF field[F], PJ testJacobian[A, J]] struct {
	g group[A, F, J, PF, PJ]
	// random returns n random points k_i·G with random k_i.
	random func(rng *rand.Rand, n int) []A
	// hostMax is the most points testPoints draws on the host; larger sets
	// come from the device fill with fillSeeds seeds per half.
	hostMax, fillSeeds int

	fill     func(d *Device, buf *Buffer, n int, seeds []A) error
	upload   func(d *Device, points []A) (*Buffer, error)
	msm      func(d *Device, bases []A, scalars []fr.Element) (J, error)
	resident func(d *Device, bases *Buffer, scalars []fr.Element) (J, error)
	batchAdd func(d *Device, bases []A, bitmap []uint64) (J, error)
	batchRes func(d *Device, bases *Buffer, n int, bitmap []uint64) (J, error)
}

var (
	testG1 = testGroup[bls12381.G1Affine, fp.Element, bls12381.G1Jac, *bls12381.G1Affine, *fp.Element, *bls12381.G1Jac]{
		g: g1, random: randG1, hostMax: 1 << 12, fillSeeds: 1 << 11,
		fill: (*Device).fillG1, upload: (*Device).UploadG1,
		msm: (*Device).MSMG1, resident: (*Device).MSMG1Resident,
		batchAdd: (*Device).BatchAddG1, batchRes: (*Device).BatchAddG1Resident,
	}
	testG2 = testGroup[bls12381.G2Affine, bls12381.E2, bls12381.G2Jac, *bls12381.G2Affine, *bls12381.E2, *bls12381.G2Jac]{
		g: g2, random: randG2, hostMax: 1 << 10, fillSeeds: 1 << 10,
		fill: (*Device).fillG2, upload: (*Device).UploadG2,
		msm: (*Device).MSMG2, resident: (*Device).MSMG2Resident,
		batchAdd: (*Device).BatchAddG2, batchRes: (*Device).BatchAddG2Resident,
	}
)

// naive is the reference sum of k_i·P_i, handling infinity and zero scalars.
func (tg testGroup[A, F, J, PA, PF, PJ]) naive(bases []A, scalars []fr.Element) J {
	acc := tg.g.inf()
	var k big.Int
	for i := range scalars {
		var p J
		PJ(&p).FromAffine(&bases[i])
		scalars[i].BigInt(&k)
		PJ(&p).ScalarMultiplication(&p, &k)
		PJ(&acc).AddAssign(&p)
	}
	return acc
}

// ref is gnark-crypto's MSM over the first len(scalars) bases.
func (tg testGroup[A, F, J, PA, PF, PJ]) ref(t *testing.T, bases []A, scalars []fr.Element) J {
	var r J
	_, err := PJ(&r).MultiExp(bases[:len(scalars)], scalars, ecc.MultiExpConfig{})
	require.NoError(t, err)
	return r
}

// requireEqual fails unless want and got are the same point.
func (tg testGroup[A, F, J, PA, PF, PJ]) requireEqual(t *testing.T, want, got J, what string) {
	t.Helper()
	var a, b A
	PA(&a).FromJacobian(&want)
	PA(&b).FromJacobian(&got)
	require.True(t, PA(&a).Equal(&b), "%s: want %s got %s", what, PA(&a).String(), PA(&b).String())
}

// points returns n valid random points: small sets straight from
// gnark-crypto, large ones from the device fill (sums of random seeds),
// spot-checked to lie on the curve and in the group.
func (tg testGroup[A, F, J, PA, PF, PJ]) points(t *testing.T, d *Device, rng *rand.Rand, n int) []A {
	if n <= tg.hostMax {
		return tg.random(rng, n)
	}
	k := tg.fillSeeds
	seeds := tg.random(rng, 2*k)
	buf, err := d.Alloc(uint64(n) * tg.g.point)
	require.NoError(t, err)
	defer buf.Free()
	require.NoError(t, tg.fill(d, buf, n, seeds))
	pts := make([]A, n)
	require.NoError(t, CopyFrom(pts, buf, 0))
	for _, i := range []int{0, 1, k, n - 1, rng.IntN(n)} {
		var want A
		PA(&want).Add(&seeds[i%k], &seeds[k+(i/k)%k])
		require.True(t, PA(&want).Equal(&pts[i]), "fill point %d", i)
	}
	return pts
}

// uploadIf returns bases uploaded to the device (freed when the test
// ends) when resident, else nil.
func (tg testGroup[A, F, J, PA, PF, PJ]) uploadIf(t *testing.T, d *Device, bases []A, resident bool) *Buffer {
	if !resident {
		return nil
	}
	buf, err := tg.upload(d, bases)
	require.NoError(t, err)
	t.Cleanup(func() { _ = buf.Free() })
	return buf
}

// split is msm.G1 or msm.G2 on the device: bitmap batch addition of the
// unit-scalar bases plus an MSM over the tail.
func (tg testGroup[A, F, J, PA, PF, PJ]) split(t *testing.T, d *Device, bases []A, sp *msm.Split) J {
	res, err := tg.batchAdd(d, bases, sp.Ones)
	require.NoError(t, err)
	sum, err := tg.msm(d, msm.Gather(bases, sp.TailIdx), sp.Tail)
	require.NoError(t, err)
	PJ(&res).AddAssign(&sum)
	return res
}

func TestXYZZToJacobian(t *testing.T) {
	rng := testRand(t)
	testJac(t, testG1, rng)
	testJac(t, testG2, rng)
}

// testJac checks group.jac on a random point p = (x, y) in XYZZ
// coordinates (x·a², y·a³, a², a³) with a = x, and on ZZ = 0 (infinity).
func testJac[A, F, J any, PA testAffine[A, J], PF field[F], PJ testJacobian[A, J]](t *testing.T,
	tg testGroup[A, F, J, PA, PF, PJ], rng *rand.Rand) {
	p := tg.random(rng, 1)[0]
	var pj J
	PJ(&pj).FromAffine(&p) // Z = 1
	x, y, _ := tg.g.xyz(&pj)
	var q xyzz[F]
	PF(&q.zz).Square(x)
	PF(&q.zzz).Mul(&q.zz, x)
	PF(&q.x).Mul(x, &q.zz)
	PF(&q.y).Mul(y, &q.zzz)
	got, err := tg.g.jac("test", &q)
	require.NoError(t, err)
	tg.requireEqual(t, pj, got, tg.g.name+" point")
	var inf xyzz[F]
	got, err = tg.g.jac("test", &inf)
	require.NoError(t, err)
	_, _, gz := tg.g.xyz(&got)
	require.True(t, PF(gz).IsZero(), "%s infinity", tg.g.name)

	// A coordinate at or above the modulus (here p + x, the lazy arithmetic's
	// other form of x) is refused, in every position.
	for _, c := range []*F{&q.x, &q.y, &q.zz, &q.zzz} {
		keep := *c
		plusModulus(c)
		_, err = tg.g.jac("test", &q)
		require.ErrorIs(t, err, ErrCUDA, "%s: unreduced coordinate", tg.g.name)
		*c = keep
	}
}

// plusModulus adds p to the first Fp of x (an fp.Element or an E2's A0),
// read as words: the value stays congruent, its words reach p or more
// (x < 2^384 - p for the values here: p < 2^381).
func plusModulus[F any](x *F) {
	w := (*fp.Element)(unsafe.Pointer(x))
	var c uint64
	for i := range w {
		w[i], c = bits.Add64(w[i], fpModulus[i], c)
	}
}
