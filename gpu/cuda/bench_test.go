package cuda

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"
)

// Benchmarks follow the sppark anchors' method: bases resident on the device
// (valid random points: sums of random seeds, computed on the device),
// scalars random and copied each call from pinned host memory.
// C2_BENCH_MAXLOG caps the sizes (default 26).

func benchMaxLog() int {
	if s := os.Getenv("C2_BENCH_MAXLOG"); s != "" {
		if v, err := strconv.Atoi(s); err == nil {
			return v
		}
	}
	return 26
}

type benchData struct {
	once    sync.Once
	bases   *Buffer
	scalars *HostBuffer
	n       int
	// hi: 2^128 times bases, for the split MSM, made at its first use
	hiOnce sync.Once
	hi     *Buffer
}

var benchG1, benchG2 benchData

func (bd *benchData) get(b *testing.B, d *Device, group, n int) (*Buffer, []fr.Element) {
	bd.once.Do(func() {
		maxN := 1 << benchMaxLog()
		if group == 2 {
			maxN = 1 << min(benchMaxLog(), 24)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		k := 1
		for k*k < maxN {
			k *= 2
		}
		var err error
		if group == 1 {
			seeds := randG1(rng, 2*k)
			bd.bases, err = d.Alloc(uint64(maxN) * g1Bytes)
			require.NoError(b, err)
			require.NoError(b, d.fillG1(bd.bases, maxN, seeds))
		} else {
			seeds := randG2(rng, 2*k)
			bd.bases, err = d.Alloc(uint64(maxN) * g2Bytes)
			require.NoError(b, err)
			require.NoError(b, d.fillG2(bd.bases, maxN, seeds))
		}
		bd.scalars, err = AllocPinned(uint64(maxN) * frBytes)
		require.NoError(b, err)
		sc := unsafe.Slice((*fr.Element)(unsafe.Pointer(&bd.scalars.Bytes()[0])), maxN)
		for i := range sc {
			sc[i] = fr.Element{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64() >> 2}
		}
		bd.n = maxN
	})
	if n > bd.n {
		b.Skipf("size %d above C2_BENCH_MAXLOG", n)
	}
	sc := unsafe.Slice((*fr.Element)(unsafe.Pointer(&bd.scalars.Bytes()[0])), n)
	return bd.bases, sc
}

func BenchmarkMSMG1(b *testing.B) {
	benchMSM(b, &benchG1, 1, []int{16, 20, 22, 24, 26, 27}, (*Device).MSMG1Resident)
}

// BenchmarkMSMG1Split times the split MSM (msmG1Split) as BenchmarkMSMG1
// times MSMG1Resident; its high bases are made once, untimed.
func BenchmarkMSMG1Split(b *testing.B) {
	benchMSM(b, &benchG1, 1, []int{16, 20, 22, 24, 26, 27},
		func(d *Device, bases *Buffer, scalars []fr.Element) (bls12381.G1Jac, error) {
			var err error
			benchG1.hiOnce.Do(func() {
				if benchG1.hi, err = d.Alloc(uint64(benchG1.n) * g1Bytes); err == nil {
					err = d.HighBasesG1(benchG1.hi, bases, benchG1.n)
				}
			})
			if err != nil {
				return bls12381.G1Jac{}, err
			}
			return d.msmG1Split(bases, benchG1.hi, scalars)
		})
}

func BenchmarkMSMG2(b *testing.B) {
	benchMSM(b, &benchG2, 2, []int{16, 20, 22, 24}, (*Device).MSMG2Resident)
}

// BenchmarkMSMWindow times the MSM at each window width in C2_BENCH_WINDOWS
// (space-separated, e.g. "14 16 18 20"; unset: skipped), for G1 and G2 at
// the sizes 2^k for k in C2_BENCH_WINDOW_LOGS (default "20 22 24"; G2 stops
// at 2^24): the measurements msm_pick_window's cost model is fitted to.
func BenchmarkMSMWindow(b *testing.B) {
	var widths []int
	for _, f := range strings.Fields(os.Getenv("C2_BENCH_WINDOWS")) {
		w, err := strconv.Atoi(f)
		require.NoError(b, err)
		widths = append(widths, w)
	}
	if len(widths) == 0 {
		b.Skip("set C2_BENCH_WINDOWS to the window widths to time")
	}
	logs := []int{20, 22, 24}
	if s := os.Getenv("C2_BENCH_WINDOW_LOGS"); s != "" {
		logs = nil
		for _, f := range strings.Fields(s) {
			lg, err := strconv.Atoi(f)
			require.NoError(b, err)
			logs = append(logs, lg)
		}
	}
	defer func() { msmWindow = 0 }()
	for _, w := range widths {
		msmWindow = w
		b.Run(fmt.Sprintf("G1/c=%d", w), func(b *testing.B) {
			benchMSM(b, &benchG1, 1, logs, (*Device).MSMG1Resident)
		})
		b.Run(fmt.Sprintf("G2/c=%d", w), func(b *testing.B) {
			benchMSM(b, &benchG2, 2, logs, (*Device).MSMG2Resident)
		})
	}
}

// benchMSM times msm over the resident bases of bd (of group 1 or 2) at
// each size 2^lg, after one warm-up call.
func benchMSM[J any](b *testing.B, bd *benchData, group int, logs []int,
	msm func(*Device, *Buffer, []fr.Element) (J, error)) {
	d := testDevice(b)
	for _, lg := range logs {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			bases, sc := bd.get(b, d, group, 1<<lg)
			if _, err := msm(d, bases, sc); err != nil { // warm-up
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := msm(d, bases, sc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBatchAddG1(b *testing.B) {
	benchBatchAdd(b, &benchG1, 1, func(d *Device, bases *Buffer, n int, bm []uint64) error {
		_, err := d.BatchAddG1Resident(bases, n, bm)
		return err
	})
}

func BenchmarkBatchAddG2(b *testing.B) {
	benchBatchAdd(b, &benchG2, 2, func(d *Device, bases *Buffer, n int, bm []uint64) error {
		_, err := d.BatchAddG2Resident(bases, n, bm)
		return err
	})
}

// benchBatchAdd times add over resident bases with half of them selected.
func benchBatchAdd(b *testing.B, bd *benchData, group int, add func(*Device, *Buffer, int, []uint64) error) {
	d := testDevice(b)
	for _, lg := range []int{20, 24} {
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			bases, _ := bd.get(b, d, group, 1<<lg)
			bm := randBitmap(rand.New(rand.NewPCG(3, 4)), 1<<lg, 0.5)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := add(d, bases, 1<<lg, bm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func deviceRandFr(b *testing.B, d *Device, n int, seed uint64) *Buffer {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]fr.Element, n)
	for i := range v {
		v[i] = fr.Element{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64() >> 2}
	}
	buf, err := d.uploadFr(v)
	require.NoError(b, err)
	return buf
}

// BenchmarkNTT: device-resident data. "NR" is the bare transform (natural in,
// bit-reversed out), comparable with sppark's NR numbers; the others include
// our natural-order permutation.
func BenchmarkNTT(b *testing.B) {
	d := testDevice(b)
	for _, lg := range []int{20, 24, 26, 27} {
		if lg > benchMaxLog()+1 {
			continue
		}
		buf := deviceRandFr(b, d, 1<<lg, uint64(lg))
		for _, k := range []struct {
			name string
			kind nttKind
		}{{"NR", kindForwardNR}, {"NN", nttForward}, {"coset-NN", nttCosetForward}} {
			b.Run(fmt.Sprintf("%s/2^%d", k.name, lg), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := d.nttResident(buf, lg, k.kind); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		require.NoError(b, buf.Free())
	}
}

// BenchmarkComputeH: the 6-NTT quotient pipeline on device-resident a, b, c.
func BenchmarkComputeH(b *testing.B) {
	d := testDevice(b)
	for _, lg := range []int{20, 24, 27} {
		if lg > benchMaxLog()+1 {
			continue
		}
		bufs := []*Buffer{deviceRandFr(b, d, 1<<lg, 1), deviceRandFr(b, d, 1<<lg, 2), deviceRandFr(b, d, 1<<lg, 3)}
		b.Run(fmt.Sprintf("2^%d", lg), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := d.ComputeHResident(bufs[0], bufs[1], bufs[2], lg); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, x := range bufs {
			require.NoError(b, x.Free())
		}
	}
}

// BenchmarkBeside times a small call alone, and while another goroutine
// keeps large calls queued on the default streams: with the small call on
// the default streams too, and on the urgent ones ([Device.Urgent]). Calls
// (small 2^18, large 2^24): msm, a G1 MSM of resident bases and host
// scalars; msmdev, the same with the scalars on the device; batch (small
// only), a batch addition of half the bases; h, the H pipeline on the
// device.
func BenchmarkBeside(b *testing.B) {
	d := testDevice(b)
	bases, sc := benchG1.get(b, d, 1, 1<<24)
	onDevice := func(lg int) *Buffer {
		buf, err := d.Alloc(frBytes << lg)
		require.NoError(b, err)
		require.NoError(b, CopyTo(buf, 0, sc[:1<<lg]))
		b.Cleanup(func() { _ = buf.Free() })
		return buf
	}
	h := func(lg int) func(d *Device) error {
		a, bb, c := onDevice(lg), onDevice(lg), onDevice(lg)
		return func(d *Device) error { return d.ComputeHResident(a, bb, c, lg) }
	}
	msm := func(lg int) func(d *Device) error {
		return func(d *Device) error {
			_, err := d.MSMG1Resident(bases, sc[:1<<lg])
			return err
		}
	}
	msmDev := func(lg int) func(d *Device) error {
		s := onDevice(lg)
		return func(d *Device) error {
			_, err := d.MSMG1OnDevice(bases, s, 1<<lg)
			return err
		}
	}
	half := make([]uint64, (1<<18)/64)
	for i := range half {
		half[i] = 0x5555555555555555
	}
	batch := func(d *Device) error {
		_, err := d.BatchAddG1Resident(bases, 1<<18, half)
		return err
	}
	smalls := []struct {
		name string
		f    func(d *Device) error
	}{{"msm", msm(18)}, {"msmdev", msmDev(18)}, {"batch", batch}, {"h", h(18)}}
	bigs := []struct {
		name string
		f    func(d *Device) error
	}{{"msm", msm(24)}, {"msmdev", msmDev(24)}, {"h", h(24)}}
	for _, sm := range smalls {
		b.Run(sm.name+"/alone", func(b *testing.B) { benchBeside(b, sm.f, nil, d, d) })
		for _, bg := range bigs {
			for _, v := range []struct {
				name string
				d    *Device
			}{{"default", d}, {"urgent", d.Urgent()}} {
				b.Run(sm.name+"/"+bg.name+"/"+v.name, func(b *testing.B) { benchBeside(b, sm.f, bg.f, v.d, d) })
			}
		}
	}
}

// benchBeside times small(on) while big(d), unless nil, runs in a loop.
func benchBeside(b *testing.B, small, big func(*Device) error, on, d *Device) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bgErr error
	if big != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if bgErr = big(d); bgErr != nil {
					return
				}
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
		if bgErr != nil {
			b.Fatal(bgErr)
		}
	}()
	if err := small(on); err != nil { // warm-up
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := small(on); err != nil {
			b.Fatal(err)
		}
	}
}
