package c2

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/gpu/gputest"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/r1cs"
	"github.com/sealc2/c2/update"
)

// maker is a CPU device that makes development keys "in its own memory":
// callers get a key without host bases, its slots read the full key it
// keeps.
type maker struct{ *gpu.CPU }

type madeKey struct {
	gpu.Key
	pk *groth16.ProvingKey
}

func (k *madeKey) ProvingKey() *groth16.ProvingKey { return k.pk }

func (m *maker) SetupKey(ctx context.Context, sys *r1cs.System, tw groth16.ToxicWaste) (gpu.Key, error) {
	full, err := groth16.SetupWithWaste(sys, tw)
	if err != nil {
		return nil, err
	}
	key, err := m.CPU.LoadKey(ctx, full)
	if err != nil {
		return nil, err
	}
	return &madeKey{Key: key, pk: groth16.KeyWithoutBases(full.VK, full.Sizes())}, nil
}

// unwrap returns the CPU device's key inside a test device's key (a
// *madeKey or a *witnessKey), or key itself.
func unwrap(key gpu.Key) gpu.Key {
	switch k := key.(type) {
	case *madeKey:
		return k.Key
	case *witnessKey:
		return k.Key
	}
	return key
}

// WriteKey writes the full key the maker keeps for key.
func (m *maker) WriteKey(key gpu.Key, w io.Writer) (int64, error) {
	return unwrap(key).ProvingKey().WriteTo(w)
}

func (m *maker) SlotBytes(key gpu.Key) int64 { return m.CPU.SlotBytes(unwrap(key)) }
func (m *maker) Acquire(ctx context.Context, key gpu.Key) (gpu.Slot, error) {
	return m.CPU.Acquire(ctx, unwrap(key))
}

// DevSetup makes the key on the device that can, and ProvePartitions then
// proves only there: the other device, which cannot hold the key, takes no
// partition, and every proof verifies under the returned verifying key.
func TestDevSetupProvesOnTheMaker(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	other := gputest.NewFake(gputest.FakeOptions{Name: "other", G2: true})
	mk := &maker{gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2}, []gpu.Device{other, mk})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	pk, err := p.DevSetup(ctx, f.parts[0], rand.Reader)
	require.NoError(t, err)
	require.False(t, pk.HostBases())
	require.NoError(t, groth16.CheckShape(pk, f.parts[0]))

	proofs, err := p.ProvePartitions(ctx, pk, f.parts)
	require.NoError(t, err)
	require.Len(t, proofs, len(f.parts))
	for i, sys := range f.parts {
		require.NoError(t, groth16.Verify(&pk.VK, &proofs[i], sys.Inputs()[1:]), "partition %d", i)
	}
	st := p.Stats()
	assert.Equal(t, 0, st.Devices[0].Partitions, "the device without the key proves nothing")
	assert.Equal(t, len(f.parts), st.Devices[1].Partitions)

	// Once the maker is gone, nothing can prove with the key: a clear error,
	// not a CPU attempt.
	p.rot.Retire(p.rot.Devices()[1], gpu.ErrDeviceLost)
	_, err = p.ProvePartitions(ctx, pk, f.parts)
	require.ErrorIs(t, err, ErrNoDevice)
}

// Without a CUDA library, the auto backend proves on the CPU, and DevSetup's
// refusal says why no CUDA device was opened.
func TestDevSetupSaysWhyNoCUDA(t *testing.T) {
	p, err := New(Config{Threads: 2})
	require.NoError(t, err)
	defer p.Close()
	if p.Devices()[0] != "cpu" {
		t.Skipf("a CUDA device is open: %v", p.Devices())
	}
	f := newFixture(t, 60, 3, false)
	_, err = p.DevSetup(context.Background(), f.parts[0], rand.Reader)
	require.ErrorIs(t, err, ErrNoKeyMaker)
	require.True(t, strings.Contains(err.Error(), ErrNoCUDA.Error()), "%v", err)
}

func TestDevSetupNeedsAKeyMaker(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	p, err := newProver(Config{Threads: 2, CPUFallback: true}, []gpu.Device{gputest.NewFake(gputest.FakeOptions{Name: "x"})})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.DevSetup(context.Background(), f.parts[0], rand.Reader)
	require.ErrorIs(t, err, ErrNoKeyMaker)
	pk := groth16.KeyWithoutBases(f.pk.VK, f.pk.Sizes())
	_, err = p.ProvePartitions(context.Background(), pk, f.parts)
	require.ErrorIs(t, err, groth16.ErrNoHostBases, "the CPU fallback cannot prove without host bases")
}

// DevSetupProof gives a PoRep shape a key made on the device: Prove of a
// real 2 KiB C1 then needs no parameter file, proves on that device and
// returns a proof that verifies (Prove verifies against the derived inputs
// before returning). A second setup of the shape is refused.
func TestDevSetupProofProvesC1(t *testing.T) {
	if os.Getenv("C2_TEST_DEVSETUP_C1") == "" {
		// A CPU dev setup of the 2 KiB PoRep shape: minutes on 2 cores.
		t.Skip("set C2_TEST_DEVSETUP_C1=1 (records the 2 KiB PoRep circuit and makes its key on the CPU)")
	}
	raw, err := os.ReadFile("testdata/refgen/out/porep-2k/c1.json")
	require.NoError(t, err)
	mk := &maker{gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2, Params: t.TempDir()}, []gpu.Device{mk})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	vk, err := p.DevSetupProof(ctx, "StackedDrg2KiBV1_1", rand.Reader)
	require.NoError(t, err)
	require.Equal(t, 1+39, vk.NumInputs(), "the 2 KiB PoRep shape's inputs")
	proof, err := p.Prove(ctx, raw)
	require.NoError(t, err)
	require.Len(t, proof, 192)
	assert.Equal(t, 1, p.Stats().Devices[0].Partitions)
	_, err = p.DevSetupProof(ctx, "StackedDrg2KiBV1", rand.Reader)
	require.ErrorContains(t, err, "already has a proving key")

	// Written as files, the key proves the C1 again for a Prover that reads
	// them as any parameter file, and the proof verifies under the same vk.
	dir := t.TempDir()
	params, err := os.Create(filepath.Join(dir, DevParamsPrefix+porep.Shape2KiB.ParamsName()+".params"))
	require.NoError(t, err)
	var vkFile bytes.Buffer
	require.NoError(t, p.WriteDevParams(ctx, "StackedDrg2KiBV1_1", params, &vkFile))
	require.NoError(t, params.Close())
	gotVK, err := groth16.DecodeVerifyingKey(vkFile.Bytes())
	require.NoError(t, err)
	require.Equal(t, vk, gotVK, "the written verifying key is DevSetupProof's")
	q, err := New(Config{Backend: BackendCPU, Threads: 2, Params: dir})
	require.NoError(t, err)
	defer q.Close()
	proof, err = q.Prove(ctx, raw)
	require.NoError(t, err)
	require.Len(t, proof, 192)
}

// WriteDevParams refuses a shape without a key made on a device, an
// unknown proof and a closed Prover, writing nothing.
func TestWriteDevParamsRefuses(t *testing.T) {
	mk := &maker{gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2, Params: t.TempDir()}, []gpu.Device{mk})
	require.NoError(t, err)
	var out bytes.Buffer
	ctx := context.Background()
	err = p.WriteDevParams(ctx, "StackedDrg2KiBV1_1", &out, &out)
	require.ErrorIs(t, err, ErrNoDevKey)
	require.ErrorContains(t, err, "StackedDrg2KiBV1_1")
	require.Error(t, p.WriteDevParams(ctx, "StackedDrg3KiBV1", &out, &out))
	require.ErrorContains(t, p.WriteDevParams(ctx, "StackedDrg2KiBV1_1", nil, &out), "needs a writer")
	require.NoError(t, p.Close())
	require.ErrorIs(t, p.WriteDevParams(ctx, "StackedDrg2KiBV1_1", &out, &out), ErrClosed)
	require.Zero(t, out.Len())
}

// ctxWriter stops writing once its context has ended.
func TestCtxWriter(t *testing.T) {
	var b bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	w := ctxWriter{ctx, &b}
	_, err := w.Write([]byte("ab"))
	require.NoError(t, err)
	cancel()
	_, err = w.Write([]byte("cd"))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, "ab", b.String())
}

// WriteDevKey writes a DevSetup key of any circuit as .params and .vk
// files that a CPU Prover reads back and proves with; it refuses keys with
// host bases and keys no device of the Prover made.
func TestWriteDevKey(t *testing.T) {
	f := newFixture(t, 60, 2, false)
	mk := &maker{gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2}, []gpu.Device{mk})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	pk, err := p.DevSetup(ctx, f.parts[0], rand.Reader)
	require.NoError(t, err)

	dir := t.TempDir()
	path := filepath.Join(dir, "k.params")
	params, err := os.Create(path)
	require.NoError(t, err)
	var vkFile bytes.Buffer
	require.NoError(t, p.WriteDevKey(ctx, pk, params, &vkFile))
	require.NoError(t, params.Close())
	vk, err := groth16.DecodeVerifyingKey(vkFile.Bytes())
	require.NoError(t, err)
	require.Equal(t, &pk.VK, vk)
	read, err := groth16.ReadParams(path)
	require.NoError(t, err)
	require.Equal(t, pk.VK, read.VK)
	q, err := New(Config{Backend: BackendCPU, Threads: 2})
	require.NoError(t, err)
	defer q.Close()
	proofs, err := q.ProvePartitions(ctx, read, f.parts)
	require.NoError(t, err)
	for i, sys := range f.parts {
		require.NoError(t, groth16.Verify(vk, &proofs[i], sys.Inputs()[1:]), "partition %d", i)
	}

	var out bytes.Buffer
	require.ErrorIs(t, p.WriteDevKey(ctx, f.pk, &out, nil), ErrNoDevKey, "host bases")
	other := groth16.KeyWithoutBases(f.pk.VK, f.pk.Sizes())
	require.ErrorIs(t, p.WriteDevKey(ctx, other, &out, nil), ErrNoDevKey, "made by no device here")
	require.ErrorContains(t, p.WriteDevKey(ctx, pk, nil, nil), "needs a writer")
	require.Zero(t, out.Len())
}

// DevSetupPoSt makes the Winning PoSt circuit's key on the device that can:
// rust-fil-proofs' vanilla proof is then proved without a parameter file,
// and the proof verifies under the returned verifying key with the inputs
// Rust recorded. A second setup of the circuit, an unknown name and a
// Prover without a key maker are refused.
func TestDevSetupPoSt(t *testing.T) {
	if testing.Short() {
		t.Skip("dev setup of the 2 KiB Winning circuit and a proof: ~5 CPU-seconds")
	}
	mk := &maker{gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	p, err := newProver(Config{Threads: 2}, []gpu.Device{mk})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	v := refgen.ReadVanilla(t, "post-2k", "winning-2k-v1")
	vk, err := p.DevSetupPoSt(ctx, v.Proof, rand.Reader)
	require.NoError(t, err)
	proof, err := p.ProveWinningPoSt(ctx, v.Proof, [32]byte(v.Randomness), v.Bincode)
	require.NoError(t, err)
	ps, err := groth16.ReadProofs(proof)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.NoError(t, groth16.Verify(vk, &ps[0], v.Inputs[0]))

	// The partition's witness buffer stays with the circuit, and the next
	// proof is synthesized into it.
	shape, ok := post.ShapeByName(v.Proof)
	require.True(t, ok)
	cache := p.shapes[postCircuits.circuit(p, shape).cache]
	require.Len(t, cache.witnesses.idle, 1, "an idle witness buffer after the proof")
	kept := &cache.witnesses.idle[0][:1][0]
	proof, err = p.ProveWinningPoSt(ctx, v.Proof, [32]byte(v.Randomness), v.Bincode)
	require.NoError(t, err)
	ps, err = groth16.ReadProofs(proof)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(vk, &ps[0], v.Inputs[0]), "a proof from a reused buffer")
	require.Len(t, cache.witnesses.idle, 1)
	require.Same(t, kept, &cache.witnesses.idle[0][:1][0], "the second proof reused the buffer")

	_, err = p.DevSetupPoSt(ctx, v.Proof, rand.Reader)
	require.ErrorContains(t, err, "already has a proving key")
	var pe *post.InputError
	_, err = p.DevSetupPoSt(ctx, "StackedDrgWinning3KiBV1", rand.Reader)
	require.ErrorAs(t, err, &pe)
	var ue *update.InputError
	_, err = p.DevSetupUpdate(ctx, "StackedDrgWinning2KiBV1", rand.Reader)
	require.ErrorAs(t, err, &ue)

	q, err := newProver(Config{Threads: 2}, []gpu.Device{gpu.NewCPU(gpu.CPUOptions{Threads: 2})})
	require.NoError(t, err)
	defer q.Close()
	_, err = q.DevSetupPoSt(ctx, v.Proof, rand.Reader)
	require.ErrorIs(t, err, ErrNoKeyMaker)
	_, err = q.DevSetupUpdate(ctx, "StackedDrg2KiBV1", rand.Reader)
	require.ErrorIs(t, err, ErrNoKeyMaker)
}

// A call whose partitions would be evaluated in host memory (no device
// holds the circuit's R1CS: here a device without a shape loader) is
// refused before any witness is synthesized when the host budget cannot
// hold a, b and c over the domain; with room it proves.
func TestHostEvaluationRefusedEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("dev setup of the 2 KiB Winning circuit: ~3 CPU-seconds")
	}
	v := refgen.ReadVanilla(t, "post-2k", "winning-2k-v1")
	mk := &maker{gpu.NewCPU(gpu.CPUOptions{Threads: 2})}
	// 2^17 domain: a, b and c take 12.6 MB, a witness 2.9 MB.
	p, err := newProver(Config{Threads: 2, HostMemory: 8 << 20}, []gpu.Device{mk})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	_, err = p.DevSetupPoSt(ctx, v.Proof, rand.Reader)
	require.NoError(t, err)
	_, tm, err := p.ProveWinningPoStTimed(ctx, v.Proof, [32]byte(v.Randomness), v.Bincode)
	var ob *pool.OverBudgetError
	require.ErrorAs(t, err, &ob)
	require.Equal(t, int64(3*32<<17), ob.Requested)
	require.ErrorContains(t, err, "evaluated in host memory")
	require.Zero(t, tm.Synthesis, "refused before the witness")
}
