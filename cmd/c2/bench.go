package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	c2 "github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/synth"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/c1gen"
	"github.com/sealc2/c2/r1cs"
	"golang.org/x/sync/errgroup"
)

// benchResult is what `c2 bench -json` prints.
type benchResult struct {
	LogSize        int                `json:"log_size"`
	Constraints    int                `json:"constraints"`
	Aux            int                `json:"aux"`
	UnitFraction   float64            `json:"aux_0_or_1_fraction"`
	BDensity       float64            `json:"b_aux_density"`
	Partitions     int                `json:"partitions"`
	Concurrency    int                `json:"concurrency"`
	Overlap        bool               `json:"overlap"`
	Threads        int                `json:"threads"`
	Devices        []benchDevice      `json:"devices"`
	WallSeconds    float64            `json:"wall_s"`
	PerPartitionMS float64            `json:"per_partition_ms"`
	Throughput     float64            `json:"partitions_per_s"`
	StagesMS       map[string]float64 `json:"stages_ms"` // summed over partitions
	PeakRSS        int64              `json:"peak_rss_bytes"`
	HostPeak       int64              `json:"host_buffers_peak_bytes"`
	SetupSeconds   float64            `json:"setup_s"`
	// DeviceSetupSeconds is the time to make the key on the device (-setup gpu).
	DeviceSetupSeconds float64 `json:"device_setup_s,omitempty"`
	VRAMBudget         int64   `json:"vram_budget_bytes,omitempty"` // 0: the whole card
	Slots              int     `json:"slots_per_device,omitempty"`  // 0: the default
}

type benchDevice struct {
	Name       string  `json:"name"`
	Partitions int     `json:"partitions"`
	BusyPct    float64 `json:"busy_pct"` // host clock: time with a stage in flight
	PeakMemory int64   `json:"peak_memory_bytes"`
	Failed     string  `json:"failed,omitempty"`
	// From the device's own timing (CUDA events), when it has one: the
	// share of the wall time with an operation on the device, and device
	// ms by operation summed over calls.
	EventBusyPct float64            `json:"event_busy_pct,omitempty"`
	OpsMS        map[string]float64 `json:"device_ops_ms,omitempty"`
	// The most device scratch one call of each operation held at once,
	// since the device opened (MiB).
	ScratchMiB map[string]float64 `json:"device_scratch_mib,omitempty"`
}

// runBench implements `c2 bench`.
func runBench(fs *flag.FlagSet, args []string) error {
	logSize := fs.Int("log", 16, "partition size: 2^log constraints")
	parts := fs.Int("partitions", 10, "partitions per call")
	conc := fs.Int("concurrency", 1, "concurrent calls, each proving -partitions partitions; with -sector-size, timed proofs in flight at once")
	devices := fs.String("devices", "", `devices: "" all, "cpu", or CUDA ordinals such as "0,1"`)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	noOverlap := fs.Bool("no-overlap", false, "run partitions and their stages one at a time")
	compare := fs.Bool("compare", false, "run twice on the same key: with overlap, then without")
	threads := fs.Int("threads", 0, "CPU goroutines per MSM (0: all CPUs)")
	feeders := fs.Int("feeder-ps", 0, "Go Ps the host's loops leave free a GPU (0: 2, at most GOMAXPROCS/8; <0: none)")
	prep := fs.Int("prep", 0, "partitions prepared on the CPU at once (0: default)")
	seed := fs.Uint64("seed", 1, "seed of the synthetic circuit")
	c1 := fs.String("c1", "", "prove this C1 output file instead of synthetic partitions (needs -params)")
	params := fs.String("params", "", "with -c1: directory (or file) of the sector size's parameters")
	hostMem := fs.Float64("host-memory", 0, "Config.HostMemory in GiB: the host buffers of partitions in flight, witnesses included (0: half of physical memory)")
	vram := fs.String("vram", "", `cap each GPU's memory budget at this many GiB; a list such as "0,24,8" measures each on the same key (0: the whole card)`)
	sectorSize := fs.String("sector-size", "", "prove synthetic C1 outputs of this sector size (2KiB … 64GiB; see c2 c1gen) with -params")
	v11 := fs.Bool("v1_1", false, "with -sector-size: StackedDrg*V1_1 proofs")
	proofs := fs.Int("proofs", 1, "with -sector-size: C2 proofs timed back to back, after a warm-up proof")
	memLimit := fs.Float64("memlimit", 0, "with -sector-size: soft limit of the Go runtime's memory, GiB, from the C1s' generation on (runtime/debug.SetMemoryLimit; 0: GOMEMLIMIT or none)")
	slotList := fs.String("slots", "", `CUDA: partitions a device runs at once (default 3); a list such as "2,3" measures each`)
	setupOn := fs.String("setup", "cpu", `synthetic partitions: where the development key is made: "cpu" (in host memory, then loaded on the devices) or "gpu" (in the first CUDA device's memory, once per measurement; the host never holds it)`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *parts < 1 || *conc < 1 {
		return errors.New("-partitions and -concurrency must be at least 1")
	}
	budgets := []int64{0}
	if *vram != "" {
		budgets = nil
		for _, f := range strings.Split(*vram, ",") {
			g, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || g < 0 {
				return fmt.Errorf("-vram: %q is not a size in GiB", f)
			}
			budgets = append(budgets, int64(g*(1<<30)))
		}
	}
	slots := []int{0}
	if *slotList != "" {
		slots = nil
		for _, f := range strings.Split(*slotList, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("-slots: %q is not a positive count", f)
			}
			slots = append(slots, n)
		}
	}
	if *hostMem < 0 {
		return errors.New("-host-memory must not be negative")
	}
	cfg := c2.Config{Threads: *threads, PrepWorkers: *prep, FeederPs: *feeders, SlotsPerDevice: slots[0], HostMemory: int64(*hostMem * (1 << 30)),
		Logger: proverLogger()}
	switch *devices {
	case "":
	case "cpu":
		cfg.Backend = c2.BackendCPU
	default:
		cfg.Backend = c2.BackendCUDA
		for _, f := range strings.Split(*devices, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 {
				return fmt.Errorf("-devices: %q is not a device ordinal", f)
			}
			cfg.Devices = append(cfg.Devices, n)
		}
	}
	if *setupOn != "cpu" && *setupOn != "gpu" {
		return fmt.Errorf("-setup: %q is neither cpu nor gpu", *setupOn)
	}
	if *sectorSize != "" {
		if *c1 != "" {
			return errors.New("give -sector-size or -c1, not both")
		}
		if *proofs < 1 {
			return errors.New("-proofs must be at least 1")
		}
		cfg.VRAMBudget = budgets[0]
		if *memLimit < 0 {
			return errors.New("-memlimit must not be negative")
		}
		return benchSector(cfg, *sectorSize, *v11, *params, *seed, *proofs, *conc, *asJSON, *setupOn == "gpu", int64(*memLimit*(1<<30)))
	}
	if *c1 != "" {
		data, err := porep.ReadC1(*c1) // regular files only, size-capped
		if err != nil {
			return err
		}
		cfg.Params, cfg.TrustParams = *params, true
		prover, err := c2.New(cfg)
		if err != nil {
			return err
		}
		defer prover.Close()
		pool.ResetPeakRSS()
		if _, err := proveC1(prover, data); err != nil {
			return inC1(*c1, err)
		}
		if rss, err := pool.PeakRSS(); err == nil {
			fmt.Printf("peak RSS %.2f GiB\n", float64(rss)/(1<<30))
		}
		return nil
	}

	log := io.Writer(os.Stderr)
	t0 := time.Now()
	sys, _, err := synth.System(synth.Shape{LogSize: *logSize, InputsB: true, Seed: *seed})
	if err != nil {
		return err
	}
	var pk *groth16.ProvingKey // nil: made on the device by each measurement
	if *setupOn == "cpu" {
		var err error
		if pk, err = groth16.Setup(sys, rand.Reader); err != nil {
			return err
		}
	}
	setup := time.Since(t0)
	fmt.Fprintf(log, "c2 bench: 2^%d constraints, synthesis and development setup (%s) %.1f s\n", *logSize, *setupOn, setup.Seconds())

	// All partitions share one witness: their shape must match the key's,
	// and the synthetic generator ties the witness to the shape's seed.
	partitions := make([]*r1cs.System, *parts)
	for i := range partitions {
		partitions[i] = sys
	}
	base := benchResult{
		LogSize: *logSize, Partitions: *parts * *conc, Concurrency: *conc,
		Threads: *threads, SetupSeconds: setup.Seconds(),
	}
	base.Constraints, base.Aux = sys.NumConstraints(), sys.NumAux()
	units := 0
	for _, v := range sys.Aux() {
		if v.IsZero() || v.IsOne() {
			units++
		}
	}
	base.UnitFraction = float64(units) / float64(max(1, base.Aux))
	base.BDensity = float64(sys.BAuxDensity().Count()) / float64(max(1, base.Aux))
	if base.Threads == 0 {
		base.Threads = runtime.GOMAXPROCS(0)
	}

	modes := []bool{*noOverlap}
	if *compare {
		modes = []bool{false, true}
	}
	var results []*benchResult
	for _, budget := range budgets {
		for _, ns := range slots {
			for _, serial := range modes {
				cfg.DisableOverlap, cfg.VRAMBudget, cfg.SlotsPerDevice = serial, budget, ns
				res := base
				res.Overlap, res.VRAMBudget, res.Slots = !serial, budget, ns
				if err := measure(log, cfg, pk, partitions, *conc, &res); err != nil {
					return err
				}
				results = append(results, &res)
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if len(results) == 1 {
			return enc.Encode(results[0])
		}
		return enc.Encode(results)
	}
	for _, r := range results {
		printBench(os.Stdout, r)
	}
	return nil
}

// measure proves conc concurrent calls of partitions with a fresh prover
// for cfg, after one warm-up partition, and fills res. With pk nil the
// prover first makes the key on its device (Prover.DevSetup).
func measure(log io.Writer, cfg c2.Config, pk *groth16.ProvingKey, partitions []*r1cs.System, conc int, res *benchResult) error {
	prover, err := c2.New(cfg)
	if err != nil {
		return err
	}
	defer prover.Close()
	if pk == nil {
		t0 := time.Now()
		if pk, err = prover.DevSetup(context.Background(), partitions[0], rand.Reader); err != nil {
			return err
		}
		res.DeviceSetupSeconds = time.Since(t0).Seconds()
		fmt.Fprintf(log, "development key made on the device in %.1f s\n", res.DeviceSetupSeconds)
	}
	fmt.Fprintf(log, "%d partitions × %d calls on %s, overlap %v (%d CPUs)\n",
		len(partitions), conc, strings.Join(prover.Devices(), ","), !cfg.DisableOverlap, runtime.GOMAXPROCS(0))
	// Warm-up: loads the key on the devices and the library's kernels.
	if _, err := prover.ProvePartitions(context.Background(), pk, partitions[:1]); err != nil {
		return err
	}

	// Measure the proving run, not the setup: return the memory the setup
	// freed to the OS, then restart the high-water mark from what is live.
	debug.FreeOSMemory()
	_ = pool.ResetPeakRSS()
	before := prover.Stats()
	stop := make(chan struct{})
	var bar sync.WaitGroup
	bar.Add(1)
	go func() {
		defer bar.Done()
		progress(log, prover, before, res.Partitions, stop)
	}()
	t0 := time.Now()
	errs := make([]error, conc)
	var wg sync.WaitGroup
	for c := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[c] = prover.ProvePartitions(context.Background(), pk, partitions)
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	close(stop)
	bar.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}

	st := prover.Stats()
	res.WallSeconds = wall.Seconds()
	res.PerPartitionMS = float64(wall.Microseconds()) / 1000 / float64(res.Partitions)
	res.Throughput = float64(res.Partitions) / wall.Seconds()
	res.StagesMS = stageDeltas(st.Stages, before.Stages)
	res.Devices = deviceDeltas(st, before, wall)
	res.PeakRSS, _ = pool.PeakRSS()
	res.HostPeak = st.HostPeak
	return nil
}

// progress draws a bar from the prover's completed-partition count until
// stop is closed.
func progress(w io.Writer, p *c2.Prover, before c2.Stats, total int, stop <-chan struct{}) {
	done := func() int {
		n := 0
		for _, d := range p.Stats().Devices {
			n += d.Partitions
		}
		for _, d := range before.Devices {
			n -= d.Partitions
		}
		return n
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	draw := func() {
		n := min(done(), total)
		const width = 30
		fill := width * n / total
		fmt.Fprintf(w, "\r[%s%s] %d/%d partitions", strings.Repeat("#", fill), strings.Repeat(".", width-fill), n, total)
	}
	for {
		select {
		case <-stop:
			draw()
			fmt.Fprintln(w)
			return
		case <-t.C:
			draw()
		}
	}
}

func printBench(w io.Writer, r *benchResult) {
	fmt.Fprintf(w, "circuit    2^%d: %d constraints, %d aux (%.1f %% are 0 or 1), B density %.1f %%\n",
		r.LogSize, r.Constraints, r.Aux, 100*r.UnitFraction, 100*r.BDensity)
	fmt.Fprintf(w, "run        %d partitions (%d calls), overlap %v, %d threads", r.Partitions, r.Concurrency, r.Overlap, r.Threads)
	if r.VRAMBudget > 0 {
		fmt.Fprintf(w, ", GPU budget capped at %.1f GiB", float64(r.VRAMBudget)/(1<<30))
	}
	if r.Slots > 0 {
		fmt.Fprintf(w, ", %d slots per GPU", r.Slots)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "stages (summed over partitions; they overlap):\n")
	for _, k := range stageNames {
		fmt.Fprintf(w, "  %-10s %10.1f ms  %8.1f ms/partition\n", k, r.StagesMS[k], r.StagesMS[k]/float64(r.Partitions))
	}
	fmt.Fprintf(w, "wall       %.3f s, %.1f ms/partition, %.2f partitions/s\n", r.WallSeconds, r.PerPartitionMS, r.Throughput)
	printDevices(w, r.Devices)
	fmt.Fprintf(w, "host       peak RSS %.1f MiB, partition buffers peak %.1f MiB\n", float64(r.PeakRSS)/(1<<20), float64(r.HostPeak)/(1<<20))
}

// sectorResult is what `c2 bench -sector-size … -json` prints.
type sectorResult struct {
	Proof        string        `json:"registered_proof"`
	Partitions   int           `json:"partitions"`
	Devices      []benchDevice `json:"devices"`
	C1Seconds    float64       `json:"c1gen_s"`
	WarmSeconds  float64       `json:"first_proof_s"` // parameters, R1CS recording, key upload, one proof
	ProofSeconds []float64     `json:"proof_s"`       // each timed proof, verified
	// InFlight timed proofs run at once (-concurrency); TimedSeconds is
	// the wall time of all of them, so TimedSeconds/len(ProofSeconds) is
	// the steady-state time a proof.
	InFlight     int     `json:"in_flight"`
	TimedSeconds float64 `json:"timed_wall_s"`
	// HostCPUSeconds is the CPU time the process used during the timed
	// proofs, user and system over all threads (0 where the system does
	// not say); HostCPUSeconds/TimedSeconds is the host's cores kept busy
	// on average.
	HostCPUSeconds float64 `json:"host_cpu_s,omitempty"`
	// HostGCSeconds is the part of it the Go runtime estimates its garbage
	// collector took.
	HostGCSeconds float64 `json:"host_gc_cpu_s,omitempty"`
	// Timed proofs' own stages, summed over them (ProveTimed's
	// ProveTimes): the C1's decoding and native checks come before the
	// proving span; witness synthesis and verification happen inside it.
	ChecksSeconds    float64            `json:"checks_s"`
	SynthesisSeconds float64            `json:"synthesis_s"`
	ProvingSeconds   float64            `json:"proving_s"`
	VerifySeconds    float64            `json:"verify_s"`
	StagesMS         map[string]float64 `json:"stages_ms"` // timed proofs, summed over partitions
	PeakRSS          int64              `json:"peak_rss_bytes"`
	// StartPeakRSS is the peak RSS before the timed proofs: C1 generation,
	// the R1CS recording and the key (read, or made with -setup gpu), the
	// warm-up proof.
	StartPeakRSS int64 `json:"start_peak_rss_bytes"`
	// MemoryLimit is the Go runtime's soft memory limit (-memlimit), set
	// before the C1s are generated.
	MemoryLimit int64 `json:"memory_limit_bytes,omitempty"`
	// DeviceSetupSeconds is the R1CS recording and the key made on the
	// device (-setup gpu).
	DeviceSetupSeconds float64 `json:"device_setup_s,omitempty"`
}

// benchSector proves synthetic C1 outputs of one sector size end to end
// (c1gen → Prove: witness synthesis, device stages, verification) with the
// parameters in params (default $FIL_PROOFS_PARAMETER_CACHE, else
// /var/tmp/filecoin-proof-parameters): one warm-up proof, then n timed ones
// of other sectors, inFlight of them at a time.
func benchSector(cfg c2.Config, size string, v11 bool, params string, seed uint64, n, inFlight int, asJSON, devSetup bool, memLimit int64) error {
	proof, err := c1genProof("", size, v11)
	if err != nil {
		return err
	}
	shape, err := proof.Shape()
	if err != nil {
		return err
	}
	if params == "" {
		params = os.Getenv("FIL_PROOFS_PARAMETER_CACHE")
	}
	if params == "" {
		params = "/var/tmp/filecoin-proof-parameters"
	}
	pshape, err := parseSectorSize(size)
	if err != nil {
		return err
	}
	if _, _, err := findParams(params, pshape, ".params"); err != nil && !devSetup {
		return fmt.Errorf("%w (give -params DIR, make development ones: c2 setup --sector-size %s --out DIR, or make them on the GPU: -setup gpu)", err, size)
	}
	log := io.Writer(os.Stderr)
	res := sectorResult{Proof: proof.String(), Partitions: shape.Partitions, InFlight: inFlight}
	if memLimit > 0 {
		debug.SetMemoryLimit(memLimit)
		res.MemoryLimit = memLimit
	}
	c1s := make([][]byte, n+1)
	t0 := time.Now()
	for i := range c1s {
		var s [32]byte
		binary.LittleEndian.PutUint64(s[:], seed)
		s[8] = byte(i)
		sec, err := c1gen.Generate(proof, s, nil)
		if err != nil {
			return err
		}
		if c1s[i], err = sec.JSON(); err != nil {
			return err
		}
	}
	res.C1Seconds = time.Since(t0).Seconds() / float64(len(c1s))
	fmt.Fprintf(log, "c2 bench: %s, %d partitions, %d synthetic C1 outputs (%.1f s each)\n", proof, shape.Partitions, len(c1s), res.C1Seconds)

	cfg.Params, cfg.TrustParams = params, true
	prover, err := c2.New(cfg)
	if err != nil {
		return err
	}
	defer prover.Close()
	if devSetup {
		t0 = time.Now()
		if _, err := prover.DevSetupProof(context.Background(), proof.String(), rand.Reader); err != nil {
			return err
		}
		res.DeviceSetupSeconds = time.Since(t0).Seconds()
		fmt.Fprintf(log, "R1CS recorded and development key made on the device in %.1f s\n", res.DeviceSetupSeconds)
	}
	t0 = time.Now()
	if _, err := prover.Prove(context.Background(), c1s[0]); err != nil {
		return err
	}
	res.WarmSeconds = time.Since(t0).Seconds()
	fmt.Fprintf(log, "warm-up proof (parameters, R1CS recording, key upload) %.1f s on %s\n", res.WarmSeconds, strings.Join(prover.Devices(), ","))

	res.StartPeakRSS, _ = pool.PeakRSS()
	debug.FreeOSMemory()
	_ = pool.ResetPeakRSS()
	before := prover.Stats()
	cpu0, cpuOK := processCPU()
	gc0 := gcCPU()
	timed := time.Now()
	if err := proveSectors(log, prover, c1s[1:], inFlight, &res); err != nil {
		return err
	}
	res.TimedSeconds = time.Since(timed).Seconds()
	if cpu1, ok := processCPU(); ok && cpuOK {
		res.HostCPUSeconds = (cpu1 - cpu0).Seconds()
	}
	res.HostGCSeconds = (gcCPU() - gc0).Seconds()
	st := prover.Stats()
	res.StagesMS = stageDeltas(st.Stages, before.Stages)
	res.Devices = deviceDeltas(st, before, time.Since(timed))
	res.PeakRSS, _ = pool.PeakRSS()
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Printf("sector     %s: %d partitions, C1 generated in %.1f s\n", res.Proof, res.Partitions, res.C1Seconds)
	fmt.Printf("warm-up    %.1f s (parameters, R1CS recording, key upload, one proof)\n", res.WarmSeconds)
	for i, s := range res.ProofSeconds {
		fmt.Printf("proof %-4d %.2f s, %.1f ms/partition\n", i+1, s, 1000*s/float64(res.Partitions))
	}
	fmt.Printf("timed      %d proofs, %d in flight, in %.2f s: %.2f s a proof\n", len(res.ProofSeconds), res.InFlight,
		res.TimedSeconds, res.TimedSeconds/float64(len(res.ProofSeconds)))
	fmt.Printf("stages (summed over the timed proofs' partitions; they overlap):\n")
	for _, k := range stageNames {
		fmt.Printf("  %-10s %10.1f ms\n", k, res.StagesMS[k])
	}
	printDevices(os.Stdout, res.Devices)
	fmt.Printf("host       peak RSS %.1f MiB (%.1f MiB before the timed proofs)", float64(res.PeakRSS)/(1<<20), float64(res.StartPeakRSS)/(1<<20))
	if res.HostCPUSeconds > 0 {
		fmt.Printf(", CPU %.1f s (%.1f cores busy of %d; garbage collection %.1f s)", res.HostCPUSeconds,
			res.HostCPUSeconds/res.TimedSeconds, runtime.GOMAXPROCS(0), res.HostGCSeconds)
	}
	fmt.Println()
	return nil
}

// proveSectors proves each of c1s, verified, inFlight at a time, and adds
// each proof's wall time (in c1s's order) and stages to res.
func proveSectors(log io.Writer, prover *c2.Prover, c1s [][]byte, inFlight int, res *sectorResult) error {
	res.ProofSeconds = make([]float64, len(c1s))
	var mu sync.Mutex
	g := new(errgroup.Group)
	g.SetLimit(inFlight)
	for i, c1 := range c1s {
		g.Go(func() error {
			t := time.Now()
			_, tm, err := prover.ProveTimed(context.Background(), c1)
			if err != nil {
				return fmt.Errorf("proof %d: %w", i+1, err)
			}
			mu.Lock()
			defer mu.Unlock()
			res.ProofSeconds[i] = time.Since(t).Seconds()
			res.ChecksSeconds += tm.Checks.Seconds()
			res.SynthesisSeconds += tm.Synthesis.Seconds()
			res.ProvingSeconds += tm.Prove.Seconds()
			res.VerifySeconds += tm.Verify.Seconds()
			fmt.Fprintf(log, "proof %d: %.2f s (verified; C1 checks %.2f s, synthesis %.2f s, proving %.2f s, verification %.3f s)\n",
				i+1, res.ProofSeconds[i], tm.Checks.Seconds(), tm.Synthesis.Seconds(), tm.Prove.Seconds(), tm.Verify.Seconds())
			return nil
		})
	}
	return g.Wait()
}

// printDevices writes each device's line: partitions, busy share of the
// wall (host clock), peak reserved memory, and, where the device times
// itself, its busy share by events and device ms by operation.
func printDevices(w io.Writer, devs []benchDevice) {
	for _, d := range devs {
		fmt.Fprintf(w, "device     %-8s %d partitions, busy %.1f %%, peak reserved %.1f MiB", d.Name, d.Partitions, d.BusyPct, float64(d.PeakMemory)/(1<<20))
		if d.Failed != "" {
			fmt.Fprintf(w, ", FAILED: %s", d.Failed)
		}
		fmt.Fprintln(w)
		if d.OpsMS != nil {
			fmt.Fprintf(w, "  by events: busy %.1f %% of wall; device time per partition by operation:\n", d.EventBusyPct)
			ops := slices.Sorted(maps.Keys(d.OpsMS))
			for _, op := range ops {
				fmt.Fprintf(w, "    %-20s %10.1f ms  %8.1f ms/partition", op, d.OpsMS[op], d.OpsMS[op]/float64(max(1, d.Partitions)))
				if m, ok := d.ScratchMiB[op]; ok {
					fmt.Fprintf(w, "  scratch ≤ %.0f MiB a call", m)
				}
				fmt.Fprintln(w)
			}
		}
	}
}

// stageNames orders the keys of stageDeltas for printing.
var stageNames = []string{"prep_msm", "ntt_h", "batch_add", "tail_msm", "b_g2", "b_g2_wait", "epilogue", "verify"}

// stageDeltas returns s − b per stage in milliseconds.
func stageDeltas(s, b c2.StageTimes) map[string]float64 {
	ms := func(a, b time.Duration) float64 { return float64((a - b).Microseconds()) / 1000 }
	return map[string]float64{
		"prep_msm": ms(s.Prep, b.Prep), "ntt_h": ms(s.H, b.H), "batch_add": ms(s.BatchAdd, b.BatchAdd),
		"tail_msm": ms(s.Tail, b.Tail), "b_g2": ms(s.BG2, b.BG2), "b_g2_wait": ms(s.BG2Wait, b.BG2Wait),
		"epilogue": ms(s.Epilogue, b.Epilogue), "verify": ms(s.Verify, b.Verify),
	}
}

// deviceDeltas describes each device's share of the work between before
// and st; busy percentages are of wall (none when wall is 0).
func deviceDeltas(st, before c2.Stats, wall time.Duration) []benchDevice {
	var out []benchDevice
	for i, d := range st.Devices {
		bd := benchDevice{Name: d.Name, Partitions: d.Partitions, PeakMemory: d.PeakMemory}
		busy, ebusy := d.Busy, d.DeviceBusy
		var prevOps map[string]time.Duration
		if i < len(before.Devices) && before.Devices[i].Name == d.Name {
			busy -= before.Devices[i].Busy
			ebusy -= before.Devices[i].DeviceBusy
			bd.Partitions -= before.Devices[i].Partitions
			prevOps = before.Devices[i].DeviceOps
		}
		if wall > 0 {
			bd.BusyPct = 100 * busy.Seconds() / wall.Seconds()
			if d.DeviceOps != nil {
				bd.EventBusyPct = 100 * ebusy.Seconds() / wall.Seconds()
			}
		}
		for op, t := range d.DeviceOps {
			if ms := float64((t - prevOps[op]).Microseconds()) / 1000; ms > 0 {
				if bd.OpsMS == nil {
					bd.OpsMS = make(map[string]float64)
				}
				bd.OpsMS[op] = ms
			}
		}
		for op, b := range d.DeviceScratch {
			if b > 0 {
				if bd.ScratchMiB == nil {
					bd.ScratchMiB = make(map[string]float64)
				}
				bd.ScratchMiB[op] = float64(b) / (1 << 20)
			}
		}
		if d.Failed != nil {
			bd.Failed = d.Failed.Error()
		}
		out = append(out, bd)
	}
	return out
}
