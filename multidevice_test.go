package c2

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/gpu/gputest"
	"github.com/sealc2/c2/r1cs"
)

// Devices of uneven speed: partitions go to the device that frees first,
// so the fast one proves most of them, and a slow device never holds up
// the call beyond its own partitions.
func TestProveUnevenDevices(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	parts := make([]*r1cs.System, 0, 24)
	for len(parts) < 24 {
		parts = append(parts, f.parts...)
	}
	fast := gputest.NewFake(gputest.FakeOptions{Name: "fast", G2: true})
	slow := gputest.NewFake(gputest.FakeOptions{Name: "slow", G2: true, Delay: 40 * time.Millisecond})
	st := proveOn(t, Config{Threads: 2, PrepWorkers: 2}, []gpu.Device{slow, fast}, f, parts)
	require.Len(t, st.Devices, 2)
	nSlow, nFast := st.Devices[0].Partitions, st.Devices[1].Partitions
	t.Logf("fast %d, slow %d", nFast, nSlow)
	assert.Equal(t, len(parts), nSlow+nFast)
	// Unloaded, the fast device takes 18 or 19 of the 24 (also under the
	// race detector); a round robin would split 12 and 12. On a busy 2-core
	// machine the fast one's host work slows too (16 and 8 seen), so the
	// bound is 3:2.
	assert.Greater(t, 2*nFast, 3*nSlow, "fast %d, slow %d", nFast, nSlow)
}

// A device lost in the middle of a multi-partition call: its partitions
// move to the other device, every proof verifies, and the lost device is
// reported.
func TestProveDeviceLostMidCall(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	parts := append(append([]*r1cs.System{}, f.parts...), f.parts...)
	dying := gputest.NewFake(gputest.FakeOptions{Name: "dying", G2: true, Delay: 5 * time.Millisecond,
		Faults: []gputest.Fault{{Stage: gpu.StageTail, Skip: 4, Err: gpu.ErrDeviceLost}}})
	good := gputest.NewFake(gputest.FakeOptions{Name: "good", G2: true, Delay: 5 * time.Millisecond})
	st := proveOn(t, Config{Threads: 2}, []gpu.Device{dying, good}, f, parts)
	assert.ErrorIs(t, st.Devices[0].Failed, gpu.ErrDeviceLost)
	assert.NoError(t, st.Devices[1].Failed)
	assert.Equal(t, len(parts), st.Devices[0].Partitions+st.Devices[1].Partitions)
	assert.True(t, dying.Lost())
}

// proveOn proves parts under f's key on a Prover of cfg over devices,
// checks that the call returns one proof per partition, and returns the
// Prover's Stats after it.
func proveOn(t *testing.T, cfg Config, devices []gpu.Device, f *fixture, parts []*r1cs.System) Stats {
	t.Helper()
	p, err := newProver(cfg, devices)
	require.NoError(t, err)
	defer p.Close()
	proofs, err := p.ProvePartitions(context.Background(), f.pk, parts)
	require.NoError(t, err)
	require.Len(t, proofs, len(parts))
	return p.Stats()
}

// recordHandler keeps the messages and levels of the records it handles.
type recordHandler struct {
	mu   sync.Mutex
	msgs map[string]slog.Level
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs[r.Message] = r.Level
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

// Config.Logger hears of device stages and key loads at debug level, and of
// a retired device and the CPU fallback at warn; without a Logger nothing
// is logged (and nothing fails).
func TestProverLogs(t *testing.T) {
	f := newFixture(t, 60, 3, false)
	h := &recordHandler{msgs: map[string]slog.Level{}}
	dying := gputest.NewFake(gputest.FakeOptions{Name: "dying", Faults: []gputest.Fault{{Stage: gpu.StageTail, Err: gpu.ErrDeviceLost}}})
	p, err := newProver(Config{Threads: 2, CPUFallback: true, Logger: slog.New(h)}, []gpu.Device{dying})
	require.NoError(t, err)
	_, err = p.ProvePartitions(context.Background(), f.pk, f.parts)
	require.NoError(t, err)
	require.NoError(t, p.Close())
	h.mu.Lock()
	defer h.mu.Unlock()
	assert.Equal(t, slog.LevelDebug, h.msgs["c2: device stage"])
	assert.Equal(t, slog.LevelDebug, h.msgs["c2: key loaded"])
	assert.Equal(t, slog.LevelWarn, h.msgs["c2: device taken out of rotation"])
	assert.Equal(t, slog.LevelWarn, h.msgs["c2: no device left: proving on the CPU fallback"])
}
