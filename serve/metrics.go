package serve

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/sealc2/c2"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

// metrics holds an engine's Prometheus registry. Counters and histograms are
// updated as jobs end; queue, prover and device figures are read at scrape
// time.
type metrics struct {
	reg    *prometheus.Registry
	proofs *prometheus.CounterVec
	stages *prometheus.HistogramVec
}

func newMetrics(e *Engine) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		proofs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "c2_serve_proofs_total",
			Help: "Jobs ended, by proof kind and outcome (completed, failed, cancelled, timed_out: ended by the kind's job timeout).",
		}, []string{"kind", "outcome"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "c2_serve_stage_seconds",
			Help: "Per-job durations: queue_wait, prove and total for every job; checks, srs_load, synthesis and " +
				"gpu_compute (the call's decoding and native checks of its input, parameter wait, witness synthesis " +
				"and the rest of its partitions' proving; the last three as srs_load_ms, synthesis_ms and " +
				"gpu_compute_ms of AwaitProofResponse) for completed " +
				"jobs when the prover times its calls; the prover's stages " +
				"(prep, h, batch_add, tail, bg2, bg2_wait, epilogue, verify; summed over partitions) for completed " +
				"jobs that ran alone, since the prover's counters are process-wide.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 14), // 10 ms .. ~10 h
		}, []string{"kind", "stage"}),
	}
	for _, c := range []prometheus.Collector{m.proofs, m.stages, &engineCollector{e},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		// The collectors are distinct by construction; a failure would
		// only drop that collector from the output.
		_ = m.reg.Register(c)
	}
	return m
}

// emit sends a constant metric, dropping it if its labels do not fit desc.
func emit(ch chan<- prometheus.Metric, desc *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	if m, err := prometheus.NewConstMetric(desc, t, v, labels...); err == nil {
		ch <- m
	}
}

// observe records an ended job. e.mu is held.
func (m *metrics) observe(j *job, r *pb.AwaitProofResponse, times *c2.ProveTimes, st *c2.StageTimes) {
	kind := j.kind.String()
	var outcome string
	switch r.Status {
	case pb.AwaitProofResponse_COMPLETED:
		outcome = "completed"
	case pb.AwaitProofResponse_CANCELLED:
		outcome = "cancelled"
	case pb.AwaitProofResponse_FAILED:
		outcome = "failed"
		if j.expired > 0 {
			outcome = "timed_out"
		}
	default:
		outcome = "failed"
	}
	m.proofs.WithLabelValues(kind, outcome).Inc()
	obs := func(stage string, d time.Duration) { m.stages.WithLabelValues(kind, stage).Observe(d.Seconds()) }
	if !j.started.IsZero() {
		obs("queue_wait", j.started.Sub(j.submitted))
		obs("prove", j.ended.Sub(j.started))
	} else {
		obs("queue_wait", j.ended.Sub(j.submitted))
	}
	obs("total", j.ended.Sub(j.submitted))
	if times != nil && r.Status == pb.AwaitProofResponse_COMPLETED {
		obs("checks", times.Checks)
		obs("srs_load", times.ParamsLoad)
		obs("synthesis", times.Synthesis)
		obs("gpu_compute", gpuCompute(times))
	}
	if st != nil {
		for _, s := range stageList(*st) {
			obs(s.name, s.d)
		}
	}
}

type namedStage struct {
	name string
	d    time.Duration
}

func stageList(s c2.StageTimes) []namedStage {
	return []namedStage{
		{"prep", s.Prep}, {"h", s.H}, {"batch_add", s.BatchAdd}, {"tail", s.Tail},
		{"bg2", s.BG2}, {"bg2_wait", s.BG2Wait}, {"epilogue", s.Epilogue}, {"verify", s.Verify},
	}
}

// Handler serves the engine's metrics in Prometheus exposition format.
func (e *Engine) Handler() http.Handler {
	return promhttp.HandlerFor(e.metrics.reg, promhttp.HandlerOpts{})
}

// MetricsText returns the engine's metrics in Prometheus text format.
func (e *Engine) MetricsText() (string, error) {
	mfs, err := e.metrics.reg.Gather()
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

var (
	descPending  = prometheus.NewDesc("c2_serve_queue_pending", "Jobs waiting to start.", []string{"kind"}, nil)
	descRunning  = prometheus.NewDesc("c2_serve_queue_running", "Jobs proving now.", []string{"kind"}, nil)
	descSRS      = prometheus.NewDesc("c2_serve_srs_tier", "Parameter sets known to the daemon, 1 at their tier (HOT: key in the prover; WARM: file read into the page cache).", []string{"circuit", "tier"}, nil)
	descStage    = prometheus.NewDesc("c2_prover_stage_seconds_total", "Prover stage time summed over partitions since start.", []string{"stage"}, nil)
	descParts    = prometheus.NewDesc("c2_device_partitions_total", "Partitions proved per device.", []string{"device", "name"}, nil)
	descBusy     = prometheus.NewDesc("c2_device_busy_seconds_total", "Time with at least one stage running on the device.", []string{"device", "name"}, nil)
	descBudget   = prometheus.NewDesc("c2_device_memory_budget_bytes", "The device's memory budget.", []string{"device", "name"}, nil)
	descPeak     = prometheus.NewDesc("c2_device_memory_peak_bytes", "Peak bytes reserved from the device's budget.", []string{"device", "name"}, nil)
	descHealthy  = prometheus.NewDesc("c2_device_healthy", "1 while the device is in rotation, 0 once retired after a failure.", []string{"device", "name"}, nil)
	descOpTime   = prometheus.NewDesc("c2_device_op_seconds_total", "Device time by operation, measured on the device (CUDA events), summed over calls since start.", []string{"device", "name", "op"}, nil)
	descScratch  = prometheus.NewDesc("c2_device_op_scratch_bytes", "The most device memory one call of the operation allocated for its own use since start (what a slot's reservation must cover).", []string{"device", "name", "op"}, nil)
	descHostPeak = prometheus.NewDesc("c2_host_buffers_peak_bytes", "Peak bytes of partition buffers on the host.", nil, nil)
	descHostBud  = prometheus.NewDesc("c2_host_memory_budget_bytes", "The host memory budget of partition buffers.", nil, nil)
)

// engineCollector reads queue, parameter and prover figures at scrape time.
type engineCollector struct{ e *Engine }

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPending, descRunning, descSRS, descStage, descParts, descBusy, descBudget, descPeak, descHealthy,
		descOpTime, descScratch, descHostPeak, descHostBud} {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	e.mu.Lock()
	counts := e.counts()
	srs := make(map[string]pb.SRSStatus_Tier, len(e.srs))
	for k, s := range e.srs {
		srs[k] = s.tier
	}
	p := e.prover
	e.mu.Unlock()
	for k, n := range counts {
		emit(ch, descPending, prometheus.GaugeValue, float64(n.pending), k.String())
		emit(ch, descRunning, prometheus.GaugeValue, float64(n.running), k.String())
	}
	for circuit, tier := range srs {
		if tier != pb.SRSStatus_COLD {
			emit(ch, descSRS, prometheus.GaugeValue, 1, circuit, tier.String())
		}
	}
	if e.opts.HostMemory > 0 {
		emit(ch, descHostBud, prometheus.GaugeValue, float64(e.opts.HostMemory))
	}
	sp, ok := p.(statsProver)
	if !ok {
		return
	}
	st := sp.Stats()
	for _, s := range stageList(st.Stages) {
		emit(ch, descStage, prometheus.CounterValue, s.d.Seconds(), s.name)
	}
	for i, d := range st.Devices {
		dev := strconv.Itoa(i)
		emit(ch, descParts, prometheus.CounterValue, float64(d.Partitions), dev, d.Name)
		emit(ch, descBusy, prometheus.CounterValue, d.Busy.Seconds(), dev, d.Name)
		emit(ch, descBudget, prometheus.GaugeValue, float64(d.Budget), dev, d.Name)
		emit(ch, descPeak, prometheus.GaugeValue, float64(d.PeakMemory), dev, d.Name)
		healthy := 1.0
		if d.Failed != nil {
			healthy = 0
		}
		emit(ch, descHealthy, prometheus.GaugeValue, healthy, dev, d.Name)
		for op, t := range d.DeviceOps {
			emit(ch, descOpTime, prometheus.CounterValue, t.Seconds(), dev, d.Name, op)
		}
		for op, b := range d.DeviceScratch {
			emit(ch, descScratch, prometheus.GaugeValue, float64(b), dev, d.Name, op)
		}
	}
	emit(ch, descHostPeak, prometheus.GaugeValue, float64(st.HostPeak))
}
