package cuda

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// naive references: sum of k_i·P_i, handling infinity and zero scalars.
func naiveG1(bases []bls12381.G1Affine, scalars []fr.Element) bls12381.G1Jac {
	var acc bls12381.G1Jac
	acc.X.SetOne()
	acc.Y.SetOne()
	var k big.Int
	for i := range scalars {
		var p bls12381.G1Jac
		p.FromAffine(&bases[i])
		scalars[i].BigInt(&k)
		p.ScalarMultiplication(&p, &k)
		acc.AddAssign(&p)
	}
	return acc
}

func naiveG2(bases []bls12381.G2Affine, scalars []fr.Element) bls12381.G2Jac {
	var acc bls12381.G2Jac
	acc.X.SetOne()
	acc.Y.SetOne()
	var k big.Int
	for i := range scalars {
		var p bls12381.G2Jac
		p.FromAffine(&bases[i])
		scalars[i].BigInt(&k)
		p.ScalarMultiplication(&p, &k)
		acc.AddAssign(&p)
	}
	return acc
}

func refMSMG1(t *testing.T, bases []bls12381.G1Affine, scalars []fr.Element) bls12381.G1Jac {
	var r bls12381.G1Jac
	_, err := r.MultiExp(bases[:len(scalars)], scalars, ecc.MultiExpConfig{})
	require.NoError(t, err)
	return r
}

func refMSMG2(t *testing.T, bases []bls12381.G2Affine, scalars []fr.Element) bls12381.G2Jac {
	var r bls12381.G2Jac
	_, err := r.MultiExp(bases[:len(scalars)], scalars, ecc.MultiExpConfig{})
	require.NoError(t, err)
	return r
}

func requireG1(t *testing.T, want, got bls12381.G1Jac, what string) {
	t.Helper()
	var a, b bls12381.G1Affine
	a.FromJacobian(&want)
	b.FromJacobian(&got)
	require.True(t, a.Equal(&b), "%s: want %s got %s", what, a.String(), b.String())
}

func requireG2(t *testing.T, want, got bls12381.G2Jac, what string) {
	t.Helper()
	var a, b bls12381.G2Affine
	a.FromJacobian(&want)
	b.FromJacobian(&got)
	require.True(t, a.Equal(&b), "%s: want %s got %s", what, a.String(), b.String())
}

// testPointsG1 returns n valid random points: small sets straight from
// gnark-crypto, large ones from the device fill (sums of random seeds),
// spot-checked to lie on the curve and in G1.
func testPointsG1(t *testing.T, d *Device, rng *rand.Rand, n int) []bls12381.G1Affine {
	if n <= 1<<12 {
		return randG1(rng, n)
	}
	k := 1 << 11
	seeds := randG1(rng, 2*k)
	buf, err := d.Alloc(uint64(n) * g1Bytes)
	require.NoError(t, err)
	defer buf.Free()
	require.NoError(t, d.FillG1(buf, n, seeds))
	pts := make([]bls12381.G1Affine, n)
	require.NoError(t, d.DownloadG1(pts, buf))
	for _, i := range []int{0, 1, k, n - 1, rng.IntN(n)} {
		var want bls12381.G1Affine
		want.Add(&seeds[i%k], &seeds[k+(i/k)%k])
		require.True(t, want.Equal(&pts[i]), "fill point %d", i)
	}
	return pts
}

func testPointsG2(t *testing.T, d *Device, rng *rand.Rand, n int) []bls12381.G2Affine {
	if n <= 1<<10 {
		return randG2(rng, n)
	}
	k := 1 << 10
	seeds := randG2(rng, 2*k)
	buf, err := d.Alloc(uint64(n) * g2Bytes)
	require.NoError(t, err)
	defer buf.Free()
	require.NoError(t, d.FillG2(buf, n, seeds))
	pts := make([]bls12381.G2Affine, n)
	require.NoError(t, d.DownloadG2(pts, buf))
	for _, i := range []int{0, 1, k, n - 1, rng.IntN(n)} {
		var want bls12381.G2Affine
		want.Add(&seeds[i%k], &seeds[k+(i/k)%k])
		require.True(t, want.Equal(&pts[i]), "fill point %d", i)
	}
	return pts
}

func msmSizes(maxLog int) []int {
	s := []int{1, 2, 3, 5, 7, 100, 1000, 3000}
	for k := 1; k <= maxLog; k++ {
		s = append(s, 1<<k)
	}
	s = append(s, (1<<20)+1, 3<<19)
	return s
}

func TestMSMG1(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	bases := testPointsG1(t, d, rng, 1<<22)
	res, err := d.UploadG1(bases)
	require.NoError(t, err)
	defer res.Free()
	for _, n := range msmSizes(22) {
		sc := randScalars(rng, n)
		want := refMSMG1(t, bases, sc)
		got, err := d.MSMG1(bases[:n], sc)
		require.NoError(t, err)
		requireG1(t, want, got, fmt.Sprintf("host bases n=%d", n))
		got, err = d.MSMG1Resident(res, sc)
		require.NoError(t, err)
		requireG1(t, want, got, fmt.Sprintf("resident bases n=%d", n))
	}
}

func TestMSMG1OnDevice(t *testing.T) {
	// h computed and kept on the device, then the H MSM from device scalars
	d := testDevice(t)
	rng := testRand(t)
	const logN = 14
	n := 1 << logN
	bases := testPointsG1(t, d, rng, n)
	a, b, c := randFr(rng, n), randFr(rng, n), randFr(rng, n)
	bufs := make([]*Buffer, 3)
	for i, v := range [][]fr.Element{a, b, c} {
		var err error
		bufs[i], err = d.UploadFr(v)
		require.NoError(t, err)
		defer bufs[i].Free()
	}
	require.NoError(t, d.ComputeHResident(bufs[0], bufs[1], bufs[2], logN))
	h := refHLiteral(a, b, c)
	res, err := d.UploadG1(bases)
	require.NoError(t, err)
	defer res.Free()
	want := refMSMG1(t, bases, h[:n-1])
	got, err := d.MSMG1OnDevice(res, bufs[0], n-1)
	require.NoError(t, err)
	requireG1(t, want, got, "H MSM from device scalars")
	_, err = d.MSMG1OnDevice(res, bufs[0], n+1)
	require.ErrorIs(t, err, ErrInvalidArgument)
}

func TestMSMG2(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	bases := testPointsG2(t, d, rng, 1<<22)
	for _, n := range msmSizes(22) {
		sc := randScalars(rng, n)
		want := refMSMG2(t, bases, sc)
		got, err := d.MSMG2(bases[:n], sc)
		require.NoError(t, err)
		requireG2(t, want, got, fmt.Sprintf("n=%d", n))
	}
}

// edgeScalars returns scalar vectors that stress digits, carries and buckets.
func edgeScalars(rng *rand.Rand, n int) map[string][]fr.Element {
	var rm1, half fr.Element
	rm1.SetOne()
	rm1.Neg(&rm1) // r - 1
	half.SetUint64(2)
	half.Inverse(&half) // (r+1)/2
	fill := func(f func(i int) fr.Element) []fr.Element {
		v := make([]fr.Element, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	return map[string][]fr.Element{
		"zero":    fill(func(int) fr.Element { return fr.Element{} }),
		"one":     fill(func(int) fr.Element { var x fr.Element; x.SetOne(); return x }),
		"r-1":     fill(func(int) fr.Element { return rm1 }),
		"(r+1)/2": fill(func(int) fr.Element { return half }),
		"small":   fill(func(int) fr.Element { var x fr.Element; x.SetUint64(rng.Uint64N(9)); return x }),
		"pow2": fill(func(int) fr.Element {
			var x fr.Element
			var b big.Int
			b.Lsh(big.NewInt(1), uint(rng.IntN(255)))
			x.SetBigInt(&b)
			return x
		}),
		"mixed": fill(func(i int) fr.Element {
			var x fr.Element
			switch i % 4 {
			case 0:
				x.SetOne()
			case 1:
				x = rm1
			case 2:
				x.SetRandom()
			}
			return x
		}),
	}
}

func TestMSMEdgeCasesG1(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	const n = 96
	random := randG1(rng, n)
	p := random[0]
	var negP bls12381.G1Affine
	negP.Neg(&p)
	baseSets := map[string][]bls12381.G1Affine{
		"random":   random,
		"repeated": make([]bls12381.G1Affine, n),
		"P,-P":     make([]bls12381.G1Affine, n),
		"infinity": append([]bls12381.G1Affine(nil), random...),
	}
	for i := 0; i < n; i++ {
		baseSets["repeated"][i] = p
		if i%2 == 0 {
			baseSets["P,-P"][i] = p
		} else {
			baseSets["P,-P"][i] = negP
		}
		if i%3 == 0 {
			baseSets["infinity"][i] = bls12381.G1Affine{}
		}
	}
	for bname, bases := range baseSets {
		for sname, sc := range edgeScalars(rng, n) {
			want := naiveG1(bases, sc)
			for _, w := range []int{0, 4, 5, 7, 13, 16} {
				msmWindow = w
				got, err := d.MSMG1(bases, sc)
				msmWindow = 0
				require.NoError(t, err)
				requireG1(t, want, got, fmt.Sprintf("bases %s scalars %s window %d", bname, sname, w))
			}
		}
	}
}

func TestMSMEdgeCasesG2(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	const n = 40
	random := randG2(rng, n)
	p := random[0]
	var negP bls12381.G2Affine
	negP.Neg(&p)
	baseSets := map[string][]bls12381.G2Affine{
		"random":   random,
		"repeated": make([]bls12381.G2Affine, n),
		"P,-P":     make([]bls12381.G2Affine, n),
		"infinity": append([]bls12381.G2Affine(nil), random...),
	}
	for i := 0; i < n; i++ {
		baseSets["repeated"][i] = p
		if i%2 == 0 {
			baseSets["P,-P"][i] = p
		} else {
			baseSets["P,-P"][i] = negP
		}
		if i%3 == 0 {
			baseSets["infinity"][i] = bls12381.G2Affine{}
		}
	}
	for bname, bases := range baseSets {
		for sname, sc := range edgeScalars(rng, n) {
			want := naiveG2(bases, sc)
			for _, w := range []int{0, 5, 11} {
				msmWindow = w
				got, err := d.MSMG2(bases, sc)
				msmWindow = 0
				require.NoError(t, err)
				requireG2(t, want, got, fmt.Sprintf("bases %s scalars %s window %d", bname, sname, w))
			}
		}
	}
}

func TestMSMWindowsLarge(t *testing.T) {
	// every window size on one random input, streamed in chunks of 2^14
	// points (5 chunks, the last short) from host and from device memory
	d := testDevice(t)
	rng := testRand(t)
	n := 1<<16 + 3
	bases := testPointsG1(t, d, rng, n)
	res, err := d.UploadG1(bases)
	require.NoError(t, err)
	defer res.Free()
	sc := randScalars(rng, n)
	want := refMSMG1(t, bases, sc)
	defer func() { msmWindow, msmChunkLog = 0, 0 }()
	for w := 4; w <= 21; w++ {
		msmWindow, msmChunkLog = w, 14
		got, err := d.MSMG1(bases, sc)
		require.NoError(t, err)
		requireG1(t, want, got, fmt.Sprintf("window %d", w))
		got, err = d.MSMG1Resident(res, sc)
		require.NoError(t, err)
		requireG1(t, want, got, fmt.Sprintf("resident window %d", w))
	}
	g2 := testPointsG2(t, d, rng, 1<<12+1)
	sc2 := sc[:len(g2)]
	want2 := refMSMG2(t, g2, sc2)
	msmWindow, msmChunkLog = 0, 10
	got2, err := d.MSMG2(g2, sc2)
	require.NoError(t, err)
	requireG2(t, want2, got2, "G2 in chunks")
}

func randBitmap(rng *rand.Rand, n int, density float64) []uint64 {
	bm := make([]uint64, (n+63)/64)
	for i := 0; i < n; i++ {
		if rng.Float64() < density {
			bm[i/64] |= 1 << (i % 64)
		}
	}
	return bm
}

func TestBatchAddG1(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	bases := testPointsG1(t, d, rng, 1<<20)
	res, err := d.UploadG1(bases)
	require.NoError(t, err)
	defer res.Free()
	for _, n := range []int{1, 2, 63, 64, 65, 1000, 1 << 16, 1<<20 - 5} {
		for _, dens := range []float64{0, 0.3, 1} {
			bm := randBitmap(rng, n, dens)
			var want bls12381.G1Jac
			want.X.SetOne()
			want.Y.SetOne()
			for i := 0; i < n; i++ {
				if bm[i/64]>>(i%64)&1 == 1 {
					want.AddMixed(&bases[i])
				}
			}
			got, err := d.BatchAddG1(bases[:n], bm)
			require.NoError(t, err)
			requireG1(t, want, got, fmt.Sprintf("n=%d density %.1f", n, dens))
			got, err = d.BatchAddG1Resident(res, n, bm)
			require.NoError(t, err)
			requireG1(t, want, got, fmt.Sprintf("resident n=%d density %.1f", n, dens))
		}
	}
	// repeated points (doubling inside a thread), P and -P, and infinity
	p := bases[0]
	var negP bls12381.G1Affine
	negP.Neg(&p)
	pts := []bls12381.G1Affine{p, p, p, negP, {}, p, {}, negP}
	bm := []uint64{0xff}
	want := naiveG1(pts, edgeScalars(rng, len(pts))["one"])
	got, err := d.BatchAddG1(pts, bm)
	require.NoError(t, err)
	requireG1(t, want, got, "edge points")
}

func TestBatchAddG2(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	bases := testPointsG2(t, d, rng, 1<<18)
	for _, n := range []int{1, 65, 1000, 1 << 18} {
		bm := randBitmap(rng, n, 0.5)
		var want bls12381.G2Jac
		want.X.SetOne()
		want.Y.SetOne()
		for i := 0; i < n; i++ {
			if bm[i/64]>>(i%64)&1 == 1 {
				want.AddMixed(&bases[i])
			}
		}
		got, err := d.BatchAddG2(bases[:n], bm)
		require.NoError(t, err)
		requireG2(t, want, got, fmt.Sprintf("n=%d", n))
	}
	p := bases[0]
	var negP bls12381.G2Affine
	negP.Neg(&p)
	pts := []bls12381.G2Affine{p, p, p, negP, {}, p, {}, negP}
	want := naiveG2(pts, edgeScalars(rng, len(pts))["one"])
	got, err := d.BatchAddG2(pts, []uint64{0xff})
	require.NoError(t, err)
	requireG2(t, want, got, "edge points")
}

func TestWindowLayout(t *testing.T) {
	for nw := 1; nw <= maxWindows; nw++ {
		off := 0
		for w := 0; w < nw; w++ {
			require.Equal(t, off, windowOffset(w, nw))
			require.LessOrEqual(t, windowWidth(w, nw), windowWidth(0, nw))
			require.GreaterOrEqual(t, windowWidth(w, nw), windowWidth(0, nw)-1)
			off += windowWidth(w, nw)
		}
		require.Equal(t, 256, off, "windows of %d", nw)
	}
}

func TestCombineWindows(t *testing.T) {
	// combineG1/G2 against sum sums[w]·2^offset(w) by scalar multiplication
	rng := testRand(t)
	for _, nw := range []int{1, 11, 13, 22, 64} {
		s1 := randG1(rng, nw)
		s2 := randG2(rng, nw)
		j1 := make([]bls12381.G1Jac, nw)
		j2 := make([]bls12381.G2Jac, nw)
		var want1 bls12381.G1Jac
		var want2 bls12381.G2Jac
		want1.X.SetOne()
		want1.Y.SetOne()
		want2.X.SetOne()
		want2.Y.SetOne()
		for w := 0; w < nw; w++ {
			j1[w].FromAffine(&s1[w])
			j2[w].FromAffine(&s2[w])
			k := new(big.Int).Lsh(big.NewInt(1), uint(windowOffset(w, nw)))
			var p1 bls12381.G1Jac
			var p2 bls12381.G2Jac
			p1.ScalarMultiplication(&j1[w], k)
			p2.ScalarMultiplication(&j2[w], k)
			want1.AddAssign(&p1)
			want2.AddAssign(&p2)
		}
		requireG1(t, want1, combineG1(j1), fmt.Sprintf("G1 %d windows", nw))
		requireG2(t, want2, combineG2(j2), fmt.Sprintf("G2 %d windows", nw))
	}
}

func TestMSMSkewedScalars(t *testing.T) {
	// Many equal scalars put up to all points of a window into one bucket,
	// which the accumulation then splits into pieces (tasks.cuh).
	d := testDevice(t)
	rng := testRand(t)
	bases := testPointsG1(t, d, rng, 1<<15)
	var same fr.Element
	same.SetRandom()
	for _, n := range []int{129, 1000, 20000, 1 << 15} {
		for _, kind := range []string{"all equal", "half equal"} {
			sc := randScalars(rng, n)
			for i := range sc {
				if kind == "all equal" || i%2 == 0 {
					sc[i] = same
				}
			}
			want := refMSMG1(t, bases, sc)
			got, err := d.MSMG1(bases[:n], sc)
			require.NoError(t, err)
			requireG1(t, want, got, fmt.Sprintf("%s n=%d", kind, n))
		}
	}
	g2 := testPointsG2(t, d, rng, 3000)
	sc := make([]fr.Element, len(g2))
	for i := range sc {
		sc[i] = same
	}
	want := refMSMG2(t, g2, sc)
	got, err := d.MSMG2(g2, sc)
	require.NoError(t, err)
	requireG2(t, want, got, "G2 all equal")
}

// Indexed MSMs gather resident bases on the device: equal to the MSM over
// the same bases gathered on the host, in G1 and G2; an index past the
// bases is refused before any work.
func TestMSMIndexed(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	const n = 1 << 13
	g1, g2 := testPointsG1(t, d, rng, n), testPointsG2(t, d, rng, n)
	b1, err := d.UploadG1(g1)
	require.NoError(t, err)
	defer b1.Free()
	b2, err := d.UploadG2(g2)
	require.NoError(t, err)
	defer b2.Free()
	for _, m := range []int{0, 1, 37, 3000} {
		idx := make([]uint32, m)
		for j := range idx {
			idx[j] = uint32(rng.IntN(n)) // repeats and any order are allowed
		}
		scalars := randScalars(rng, m)
		h1, h2 := make([]bls12381.G1Affine, m), make([]bls12381.G2Affine, m)
		for j, i := range idx {
			h1[j], h2[j] = g1[i], g2[i]
		}
		got1, err := d.MSMG1Indexed(b1, n, idx, scalars)
		require.NoError(t, err)
		requireG1(t, naiveG1(h1, scalars), got1, fmt.Sprintf("G1 indexed, %d terms", m))
		got2, err := d.MSMG2Indexed(b2, n, idx, scalars)
		require.NoError(t, err)
		requireG2(t, naiveG2(h2, scalars), got2, fmt.Sprintf("G2 indexed, %d terms", m))
	}
	_, err = d.MSMG1Indexed(b1, n, []uint32{n}, randScalars(rng, 1))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = d.MSMG2Indexed(b2, n+1, []uint32{0}, randScalars(rng, 1))
	require.ErrorIs(t, err, ErrInvalidArgument, "more bases than the buffer holds")
}
