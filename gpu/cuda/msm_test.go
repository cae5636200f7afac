package cuda

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

func msmSizes(maxLog int) []int {
	s := []int{1, 2, 3, 5, 7, 100, 1000, 3000}
	for k := 1; k <= maxLog; k++ {
		s = append(s, 1<<k)
	}
	s = append(s, (1<<20)+1, 3<<19)
	return s
}

func TestMSMG1(t *testing.T) { testMSM(t, testG1, true) }

func TestMSMG2(t *testing.T) { testMSM(t, testG2, false) }

// testMSM checks the MSM from host bases, and with resident from bases
// uploaded to the device, against gnark-crypto's at every msmSizes size.
func testMSM[A, F, J any, PA testAffine[A, J], PF field[F], PJ testJacobian[A, J]](t *testing.T,
	tg testGroup[A, F, J, PA, PF, PJ], resident bool) {
	d := testDevice(t)
	rng := testRand(t)
	bases := tg.points(t, d, rng, 1<<22)
	res := tg.uploadIf(t, d, bases, resident)
	for _, n := range msmSizes(22) {
		sc := randScalars(rng, n)
		want := tg.ref(t, bases, sc)
		got, err := tg.msm(d, bases[:n], sc)
		require.NoError(t, err)
		tg.requireEqual(t, want, got, fmt.Sprintf("host bases n=%d", n))
		if resident {
			got, err = tg.resident(d, res, sc)
			require.NoError(t, err)
			tg.requireEqual(t, want, got, fmt.Sprintf("resident bases n=%d", n))
		}
	}
}

func TestMSMG1OnDevice(t *testing.T) {
	// h computed and kept on the device, then the H MSM from device scalars
	d := testDevice(t)
	rng := testRand(t)
	const logN = 14
	n := 1 << logN
	bases := testG1.points(t, d, rng, n)
	a, b, c := randFr(rng, n), randFr(rng, n), randFr(rng, n)
	bufs := make([]*Buffer, 3)
	for i, v := range [][]fr.Element{a, b, c} {
		var err error
		bufs[i], err = d.uploadFr(v)
		require.NoError(t, err)
		defer bufs[i].Free()
	}
	require.NoError(t, d.ComputeHResident(bufs[0], bufs[1], bufs[2], logN))
	h := refHLiteral(a, b, c)
	res, err := d.UploadG1(bases)
	require.NoError(t, err)
	defer res.Free()
	want := testG1.ref(t, bases, h[:n-1])
	got, err := d.MSMG1OnDevice(res, bufs[0], n-1)
	require.NoError(t, err)
	testG1.requireEqual(t, want, got, "H MSM from device scalars")
	_, err = d.MSMG1OnDevice(res, bufs[0], n+1)
	require.ErrorIs(t, err, ErrInvalidArgument)
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

func TestMSMEdgeCasesG1(t *testing.T) { testMSMEdgeCases(t, testG1, 96, []int{0, 4, 5, 7, 13, 16}) }

func TestMSMEdgeCasesG2(t *testing.T) { testMSMEdgeCases(t, testG2, 40, []int{0, 5, 11}) }

// testMSMEdgeCases checks n-term MSMs over random, repeated, P/−P and
// partly infinite bases with every edgeScalars vector and forced window,
// against the naive sum.
func testMSMEdgeCases[A, F, J any, PA testAffine[A, J], PF field[F], PJ testJacobian[A, J]](t *testing.T,
	tg testGroup[A, F, J, PA, PF, PJ], n int, windows []int) {
	d := testDevice(t)
	rng := testRand(t)
	random := tg.random(rng, n)
	p := random[0]
	var negP, inf A
	PA(&negP).Neg(&p)
	baseSets := map[string][]A{
		"random":   random,
		"repeated": make([]A, n),
		"P,-P":     make([]A, n),
		"infinity": append([]A(nil), random...),
	}
	for i := 0; i < n; i++ {
		baseSets["repeated"][i] = p
		if i%2 == 0 {
			baseSets["P,-P"][i] = p
		} else {
			baseSets["P,-P"][i] = negP
		}
		if i%3 == 0 {
			baseSets["infinity"][i] = inf
		}
	}
	for bname, bases := range baseSets {
		for sname, sc := range edgeScalars(rng, n) {
			want := tg.naive(bases, sc)
			for _, w := range windows {
				msmWindow = w
				got, err := tg.msm(d, bases, sc)
				msmWindow = 0
				require.NoError(t, err)
				tg.requireEqual(t, want, got, fmt.Sprintf("bases %s scalars %s window %d", bname, sname, w))
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
	bases := testG1.points(t, d, rng, n)
	res, err := d.UploadG1(bases)
	require.NoError(t, err)
	defer res.Free()
	sc := randScalars(rng, n)
	want := testG1.ref(t, bases, sc)
	defer func() { msmWindow, msmChunkLog = 0, 0 }()
	for w := 4; w <= 21; w++ {
		msmWindow, msmChunkLog = w, 14
		got, err := d.MSMG1(bases, sc)
		require.NoError(t, err)
		testG1.requireEqual(t, want, got, fmt.Sprintf("window %d", w))
		got, err = d.MSMG1Resident(res, sc)
		require.NoError(t, err)
		testG1.requireEqual(t, want, got, fmt.Sprintf("resident window %d", w))
	}
	g2 := testG2.points(t, d, rng, 1<<12+1)
	sc2 := sc[:len(g2)]
	want2 := testG2.ref(t, g2, sc2)
	msmWindow, msmChunkLog = 0, 10
	got2, err := d.MSMG2(g2, sc2)
	require.NoError(t, err)
	testG2.requireEqual(t, want2, got2, "G2 in chunks")
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
	testBatchAdd(t, testG1, 1<<20, []int{1, 2, 63, 64, 65, 1000, 1 << 16, 1<<20 - 5}, []float64{0, 0.3, 1}, true)
}

func TestBatchAddG2(t *testing.T) {
	testBatchAdd(t, testG2, 1<<18, []int{1, 65, 1000, 1 << 18}, []float64{0.5}, false)
}

// testBatchAdd checks bitmap batch additions over the first n of nbases
// random points, for each n and bitmap density (and with resident, from
// bases uploaded to the device), against AddMixed; then over repeated
// points (doubling inside a thread), P and −P, and infinity.
func testBatchAdd[A, F, J any, PA testAffine[A, J], PF field[F], PJ testJacobian[A, J]](t *testing.T,
	tg testGroup[A, F, J, PA, PF, PJ], nbases int, ns []int, densities []float64, resident bool) {
	d := testDevice(t)
	rng := testRand(t)
	bases := tg.points(t, d, rng, nbases)
	res := tg.uploadIf(t, d, bases, resident)
	for _, n := range ns {
		for _, dens := range densities {
			bm := randBitmap(rng, n, dens)
			want := tg.g.inf()
			for i := 0; i < n; i++ {
				if bm[i/64]>>(i%64)&1 == 1 {
					PJ(&want).AddMixed(&bases[i])
				}
			}
			got, err := tg.batchAdd(d, bases[:n], bm)
			require.NoError(t, err)
			tg.requireEqual(t, want, got, fmt.Sprintf("n=%d density %.1f", n, dens))
			if resident {
				got, err = tg.batchRes(d, res, n, bm)
				require.NoError(t, err)
				tg.requireEqual(t, want, got, fmt.Sprintf("resident n=%d density %.1f", n, dens))
			}
		}
	}
	p := bases[0]
	var negP, inf A
	PA(&negP).Neg(&p)
	pts := []A{p, p, p, negP, inf, p, inf, negP}
	want := tg.naive(pts, edgeScalars(rng, len(pts))["one"])
	got, err := tg.batchAdd(d, pts, []uint64{0xff})
	require.NoError(t, err)
	tg.requireEqual(t, want, got, "edge points")
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
	rng := testRand(t)
	for _, nw := range []int{1, 11, 13, 22, 64} {
		testCombine(t, testG1, rng, nw, 256)
		testCombine(t, testG2, rng, nw, 256)
	}
	// the split MSM's window pairs: windows over 128 bits
	for _, nw := range []int{6, 7, 32} {
		testCombine(t, testG1, rng, nw, splitShift)
	}
}

// testCombine checks group.combine on nw random window sums against
// sum sums[w]·2^offset(w) by scalar multiplication, windows covering span
// bits.
func testCombine[A, F, J any, PA testAffine[A, J], PF field[F], PJ testJacobian[A, J]](t *testing.T,
	tg testGroup[A, F, J, PA, PF, PJ], rng *rand.Rand, nw, span int) {
	s := tg.random(rng, nw)
	j := make([]J, nw)
	want := tg.g.inf()
	off := 0
	for w := 0; w < nw; w++ {
		PJ(&j[w]).FromAffine(&s[w])
		k := new(big.Int).Lsh(big.NewInt(1), uint(off))
		var p J
		PJ(&p).ScalarMultiplication(&j[w], k)
		PJ(&want).AddAssign(&p)
		off += spanWidth(w, nw, span)
	}
	require.Equal(t, span, off)
	tg.requireEqual(t, want, tg.g.combine(j, span), fmt.Sprintf("%s %d windows over %d bits", tg.g.name, nw, span))
}

func TestMSMSkewedScalars(t *testing.T) {
	// Many equal scalars put up to all points of a window into one bucket,
	// which the accumulation then splits into pieces (tasks.cuh).
	d := testDevice(t)
	rng := testRand(t)
	bases := testG1.points(t, d, rng, 1<<15)
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
			want := testG1.ref(t, bases, sc)
			got, err := d.MSMG1(bases[:n], sc)
			require.NoError(t, err)
			testG1.requireEqual(t, want, got, fmt.Sprintf("%s n=%d", kind, n))
		}
	}
	g2 := testG2.points(t, d, rng, 3000)
	sc := make([]fr.Element, len(g2))
	for i := range sc {
		sc[i] = same
	}
	want := testG2.ref(t, g2, sc)
	got, err := d.MSMG2(g2, sc)
	require.NoError(t, err)
	testG2.requireEqual(t, want, got, "G2 all equal")
}

// Indexed MSMs gather resident bases on the device: equal to the MSM over
// the same bases gathered on the host, in G1 and G2; an index past the
// bases is refused before any work.
func TestMSMIndexed(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	const n = 1 << 13
	g1, g2 := testG1.points(t, d, rng, n), testG2.points(t, d, rng, n)
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
		testG1.requireEqual(t, testG1.naive(h1, scalars), got1, fmt.Sprintf("G1 indexed, %d terms", m))
		got2, err := d.MSMG2Indexed(b2, n, idx, scalars)
		require.NoError(t, err)
		testG2.requireEqual(t, testG2.naive(h2, scalars), got2, fmt.Sprintf("G2 indexed, %d terms", m))
	}
	_, err = d.MSMG1Indexed(b1, n, []uint32{n}, randScalars(rng, 1))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = d.MSMG2Indexed(b2, n+1, []uint32{0}, randScalars(rng, 1))
	require.ErrorIs(t, err, ErrInvalidArgument, "more bases than the buffer holds")
}

// Select gathers the values a bitmap picks, in order, for sizes on and off
// word boundaries and selections empty, sparse and full; MSMG2OnDevice over
// the selection equals the MSM of the same scalars from the host; bits past
// n and a too small destination are refused.
func TestSelect(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	for _, n := range []int{1, 63, 64, 65, 1000, 1 << 14} {
		for _, p := range []float64{0, 0.3, 1} {
			src := randScalars(rng, n)
			bitmap := make([]uint64, (n+63)/64)
			var want []fr.Element
			for i := range src {
				if rng.Float64() < p {
					bitmap[i>>6] |= 1 << (uint(i) & 63)
					want = append(want, src[i])
				}
			}
			bs, err := d.Alloc(uint64(n) * frBytes)
			require.NoError(t, err)
			require.NoError(t, CopyTo(bs, 0, src))
			bd, err := d.Alloc(uint64(max(len(want), 1)) * frBytes)
			require.NoError(t, err)
			got, err := d.Select(bd, bs, n, bitmap)
			require.NoError(t, err)
			require.Equal(t, len(want), got, "n %d p %.1f", n, p)
			back := make([]fr.Element, got)
			require.NoError(t, CopyFrom(back, bd, 0))
			require.Equal(t, append([]fr.Element{}, want...), back, "n %d p %.1f", n, p)
			if n == 1000 && p == 0.3 {
				g2 := testG2.points(t, d, rng, got)
				b2, err := d.UploadG2(g2)
				require.NoError(t, err)
				sum, err := d.MSMG2OnDevice(b2, bd, got)
				require.NoError(t, err)
				testG2.requireEqual(t, testG2.naive(g2, want), sum, "G2 over the selection")
				require.NoError(t, b2.Free())
				if got > 0 {
					_, err = d.Select(bd, bs, n, append([]uint64(nil), ^uint64(0)))
					require.ErrorIs(t, err, ErrInvalidArgument, "bitmap of the wrong length")
				}
				over := append([]uint64(nil), bitmap...)
				over[len(over)-1] |= 1 << 63 // 1000 is not a multiple of 64
				_, err = d.Select(bd, bs, n, over)
				require.ErrorIs(t, err, ErrInvalidArgument, "a bit past n")
				all := make([]uint64, len(bitmap))
				for i := range all {
					all[i] = ^uint64(0)
				}
				all[len(all)-1] = 1<<(n%64) - 1
				_, err = d.Select(bd, bs, n, all)
				require.ErrorIs(t, err, ErrInvalidArgument, "more values than the destination holds")
			}
			require.NoError(t, bs.Free())
			require.NoError(t, bd.Free())
		}
	}
}
