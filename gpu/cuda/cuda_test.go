package cuda

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/ntt"
)

var (
	testDevOnce sync.Once
	testDev     *Device
	testDevErr  error
)

// testDevice returns device 0, or skips the test when there is no library
// or no GPU (the CPU-only CI case).
func testDevice(tb testing.TB) *Device {
	tb.Helper()
	testDevOnce.Do(func() { testDev, testDevErr = Open(0) })
	if errors.Is(testDevErr, ErrNoLibrary) || errors.Is(testDevErr, ErrNoDevice) {
		tb.Skipf("no GPU: %v", testDevErr)
	}
	require.NoError(tb, testDevErr)
	return testDev
}

// testRand returns a generator with a fresh seed, logged for reproduction.
func testRand(tb testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("C2_TEST_SEED"); s != "" {
		var err error
		seed, err = parseUint(s)
		require.NoError(tb, err)
	}
	tb.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func parseUint(s string) (uint64, error) {
	var v uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number: " + s)
		}
		v = v*10 + uint64(c-'0')
	}
	return v, nil
}

// randFr returns n uniformly distributed elements below 2^254 (< r), taken
// directly as Montgomery representations, so they are valid random elements.
func randFr(rng *rand.Rand, n int) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		v[i] = fr.Element{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64() >> 2}
	}
	return v
}

func randScalars(rng *rand.Rand, n int) []fr.Element { return randFr(rng, n) }

// randG1 returns n random points k_i·G with random k_i.
func randG1(rng *rand.Rand, n int) []bls12381.G1Affine {
	_, _, g, _ := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG1(&g, randFr(rng, n))
}

func randG2(rng *rand.Rand, n int) []bls12381.G2Affine {
	_, _, _, g := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG2(&g, randFr(rng, n))
}

func TestLoadMissingLibrary(t *testing.T) {
	err := loadPath("/nonexistent/libc2cuda.so")
	require.Error(t, err)
	require.ErrorIs(t, err, ErrNoLibrary)
}

func TestOpenErrorIsTyped(t *testing.T) {
	d, err := Open(0)
	if err != nil {
		require.True(t, errors.Is(err, ErrNoLibrary) || errors.Is(err, ErrNoDevice), "untyped error %v", err)
		return
	}
	require.NoError(t, d.Close())
	_, err = d.Alloc(1)
	require.ErrorIs(t, err, ErrClosed)
	err = d.ntt(make([]fr.Element, 2), nttForward)
	require.ErrorIs(t, err, ErrClosed)
}

func TestStatusErrorMapping(t *testing.T) {
	cases := map[int]error{
		codeInvalid: ErrInvalidArgument, codeOOM: ErrDeviceOutOfMemory, codeLost: ErrDeviceLost,
		codeNoDevice: ErrNoDevice, codeCUDA: ErrCUDA,
	}
	for code, want := range cases {
		err := statusError("op", code, 2, "msg")
		require.ErrorIs(t, err, want)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "op", e.Op)
	}
	require.NoError(t, statusError("op", codeOK, 0, ""))
}

func TestDeviceInfo(t *testing.T) {
	d := testDevice(t)
	info := d.Info()
	require.NotEmpty(t, info.Name)
	require.Positive(t, info.SMCount)
	require.Positive(t, info.TotalMemory)
	free, total, err := d.memInfo()
	require.NoError(t, err)
	require.LessOrEqual(t, free, total)
	t.Logf("%s: %d SMs, %d MiB, sm_%d%d", info.Name, info.SMCount, info.TotalMemory>>20, info.Major, info.Minor)
}

func TestInvalidArguments(t *testing.T) {
	d := testDevice(t)
	require.ErrorIs(t, d.ntt(make([]fr.Element, 3), nttForward), ErrInvalidArgument)
	require.ErrorIs(t, d.ntt(nil, nttForward), ErrInvalidArgument)
	require.ErrorIs(t, d.ComputeH(make([]fr.Element, 4), make([]fr.Element, 4), make([]fr.Element, 2)), ErrInvalidArgument)
	_, err := d.MSMG1(make([]bls12381.G1Affine, 1), make([]fr.Element, 2))
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = d.BatchAddG1(make([]bls12381.G1Affine, 65), make([]uint64, 1))
	require.ErrorIs(t, err, ErrInvalidArgument)
	buf, err := d.Alloc(64)
	require.NoError(t, err)
	_, err = d.MSMG1Resident(buf, make([]fr.Element, 1))
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.NoError(t, buf.Free())
	_, err = d.MSMG1Resident(buf, make([]fr.Element, 1))
	require.ErrorIs(t, err, ErrClosed)
}

func TestOutOfMemoryIsTyped(t *testing.T) {
	d := testDevice(t)
	_, err := d.Alloc(1 << 50)
	require.ErrorIs(t, err, ErrDeviceOutOfMemory)
	// the device stays usable
	v := []fr.Element{{1}, {2}}
	require.NoError(t, d.ntt(v, nttForward))
}

func TestUrgentView(t *testing.T) {
	d := testDevice(t)
	u := d.Urgent()
	require.Same(t, u, d.Urgent())
	require.Same(t, u, u.Urgent())
	require.Equal(t, d.Info(), u.Info())
	// A buffer of one view serves calls of the other.
	rng := testRand(t)
	bases := randG1(rng, 64)
	buf, err := u.UploadG1(bases)
	require.NoError(t, err)
	defer buf.Free()
	sc := randScalars(rng, 64)
	want, err := d.MSMG1Resident(buf, sc)
	require.NoError(t, err)
	got, err := u.MSMG1Resident(buf, sc)
	require.NoError(t, err)
	require.True(t, got.Equal(&want))
	ref := testG1.ref(t, bases, sc)
	require.True(t, got.Equal(&ref))
}

func TestConcurrentCalls(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	const workers = 4
	in := make([][]fr.Element, workers)
	want := make([][]fr.Element, workers)
	for i := range in {
		in[i] = randFr(rng, 1<<12)
		want[i] = append([]fr.Element(nil), in[i]...)
		refNTT(want[i], nttForward)
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for r := 0; r < 4 && errs[i] == nil; r++ {
				v := append([]fr.Element(nil), in[i]...)
				if errs[i] = d.ntt(v, nttForward); errs[i] == nil && !frEqual(v, want[i]) {
					errs[i] = errors.New("wrong result")
				}
			}
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

// Four goroutines run the H pipeline and an MSM at different sizes at once
// (the NTT passes of each size ask for different shared memory), two on the
// default streams and two on the urgent ones, several times; every result
// equals the CPU's.
func TestConcurrentComputeHAndMSM(t *testing.T) {
	d := testDevice(t)
	rng := testRand(t)
	logs := []int{10, 13, 16, 18}
	type job struct {
		a, b, c, h []fr.Element
		bases      []bls12381.G1Affine
		msm        bls12381.G1Jac
	}
	jobs := make([]job, len(logs))
	for i, lg := range logs {
		n := 1 << lg
		j := &jobs[i]
		j.a, j.b, j.c = randFr(rng, n), randFr(rng, n), randFr(rng, n)
		j.h = append([]fr.Element(nil), j.a...)
		dom, err := ntt.NewDomain(n)
		require.NoError(t, err)
		require.NoError(t, dom.ComputeH(j.h, append([]fr.Element(nil), j.b...), append([]fr.Element(nil), j.c...)))
		j.bases = testG1.points(t, d, rng, min(n, 1<<12))
		j.msm = testG1.ref(t, j.bases, j.a[:len(j.bases)])
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := &jobs[i]
			d := d
			if i%2 == 1 { // beside the default streams' calls
				d = d.Urgent()
			}
			for round := 0; round < 3 && errs[i] == nil; round++ {
				a := append([]fr.Element(nil), j.a...)
				got, err := d.MSMG1(j.bases, a[:len(j.bases)])
				switch {
				case err != nil:
					errs[i] = err
				case !got.Equal(&j.msm):
					errs[i] = fmt.Errorf("size 2^%d round %d: wrong MSM", logs[i], round)
				}
				if errs[i] != nil {
					return
				}
				b, c := append([]fr.Element(nil), j.b...), append([]fr.Element(nil), j.c...)
				if errs[i] = d.ComputeH(a, b, c); errs[i] == nil && !frEqual(a, j.h) {
					errs[i] = fmt.Errorf("size 2^%d round %d: wrong H", logs[i], round)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

// TestSyncModeSetting opens the device in child processes (the wait mode is
// read at a device's first use in a process): with C2_CUDA_SYNC=spin and
// =yield the device proves an NTT round trip as with the default, and with a
// misspelt value Open fails with an invalid-argument error naming it.
func TestSyncModeSetting(t *testing.T) {
	if mode, ok := os.LookupEnv("C2_TEST_SYNC_CHILD"); ok {
		d, err := Open(0)
		if mode == "bogus" {
			require.ErrorIs(t, err, ErrInvalidArgument)
			require.ErrorContains(t, err, `C2_CUDA_SYNC="bogus"`)
			return
		}
		require.NoError(t, err)
		defer d.Close()
		v := randFr(testRand(t), 1<<12)
		w := append([]fr.Element(nil), v...)
		require.NoError(t, d.ntt(w, nttForward))
		require.NoError(t, d.ntt(w, nttInverse))
		require.Equal(t, v, w)
		return
	}
	testDevice(t)
	for _, mode := range []string{"spin", "yield", "bogus"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestSyncModeSetting$", "-test.count", "1")
			cmd.Env = append(os.Environ(), "C2_TEST_SYNC_CHILD="+mode, "C2_CUDA_SYNC="+mode)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "PASS")
		})
	}
}
