package serve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
)

// statsStub is a prover that proves nothing and reports fixed counters.
type statsStub struct{ s c2.Stats }

func (statsStub) Prove(context.Context, []byte) ([]byte, error) { return nil, errors.New("stub") }
func (p statsStub) Stats() c2.Stats                             { return p.s }

// The device figures of the prover's Stats reach the scrape: partitions,
// memory, and by operation the device time and the most scratch one call
// allocated.
func TestDeviceMetrics(t *testing.T) {
	st := c2.Stats{Devices: []c2.DeviceStats{{
		Name: "cuda:0", Partitions: 20, PeakMemory: 100 << 30, Budget: 138 << 30,
		DeviceOps:     map[string]time.Duration{"MSMG1": 13 * time.Second, "EvalR1CS": 500 * time.Millisecond},
		DeviceScratch: map[string]int64{"MSMG1": 5_480_000_000, "EvalR1CS": 4_700_000_000},
	}}}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&engineCollector{e: &Engine{prover: statsStub{st}}})
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.Metric {
			key := f.GetName()
			for _, l := range m.Label {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case m.Counter != nil:
				got[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				got[key] = m.Gauge.GetValue()
			}
		}
	}
	for key, want := range map[string]float64{
		"c2_device_partitions_total,device=0,name=cuda:0":             20,
		"c2_device_memory_peak_bytes,device=0,name=cuda:0":            100 << 30,
		"c2_device_op_seconds_total,device=0,name=cuda:0,op=MSMG1":    13,
		"c2_device_op_seconds_total,device=0,name=cuda:0,op=EvalR1CS": 0.5,
		"c2_device_op_scratch_bytes,device=0,name=cuda:0,op=MSMG1":    5_480_000_000,
		"c2_device_op_scratch_bytes,device=0,name=cuda:0,op=EvalR1CS": 4_700_000_000,
		"c2_device_healthy,device=0,name=cuda:0":                      1,
	} {
		v, ok := got[key]
		require.True(t, ok, "no %s among %v", key, got)
		require.Equal(t, want, v, key)
	}
}
