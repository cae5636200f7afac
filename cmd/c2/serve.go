package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/serve"
)

// runServe implements `c2 serve`.
func runServe(fs *flag.FlagSet, args []string) error {
	configPath := fs.String("config", "", "TOML configuration file (flags override it)")
	listen := fs.String("listen", "", `gRPC address: "host:port" or "unix:///path" (default 127.0.0.1:9820)`)
	metricsListen := fs.String("metrics-listen", "", `address of the HTTP /metrics listener (default 127.0.0.1:9821; "none" disables it)`)
	params := fs.String("params", "", "parameter directory (default $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters)")
	devices := fs.String("devices", "", `devices: "cpu", or CUDA ordinals such as "0,1" (default: all, else the CPU)`)
	var hostMemory serve.Bytes
	fs.Var(&hostMemory, "host-memory", `host memory budget of partition buffers, e.g. "128GiB" (default: half of RAM)`)
	var memoryLimit serve.Bytes
	fs.Var(&memoryLimit, "memory-limit", `the Go runtime's soft memory limit, e.g. "14GiB" (default: GOMEMLIMIT, else none)`)
	maxPending := fs.Int("max-pending", 0, "jobs allowed to wait; more are refused with RESOURCE_EXHAUSTED (default 256)")
	maxConcurrent := fs.Int("max-concurrent", 0, "jobs proving at once (default 3: two C2s and a PoSt)")
	preload := fs.String("preload", "", `circuits to warm at start, e.g. "porep-32g,wpost-32g" (porep-, snap-, wpost-, winning- with 2k, 8m, 512m, 32g, 64g)`)
	devKeys := fs.String("insecure-dev-keys", "", `circuits whose INSECURE development keys are made on the GPU at start, in place of parameter files, e.g. "porep-32g,winning-32g" (benchmarks only: the proofs verify under these keys, never on chain)`)
	maxRunning := fs.String("max-running", "", `per proof kind, jobs of that kind proving at once within --max-concurrent, e.g. "porep=2" (kinds porep, snap, wpost, winning; 0: no bound; default porep=2)`)
	jobTimeout := fs.String("job-timeout", "", `per proof kind, how long a job may take from submission, e.g. "winning=25s,wpost=20m" (kinds porep, snap, wpost, winning; default none)`)
	shutdown := fs.Duration("shutdown-timeout", 0, "on SIGINT/SIGTERM, how long queued and running jobs may finish before they are cancelled (default 10m)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}

	cfg := serve.DefaultConfig()
	if *configPath != "" {
		var err error
		if cfg, err = serve.LoadConfig(*configPath); err != nil {
			return err
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["listen"] {
		cfg.Listen = *listen
	}
	if set["metrics-listen"] {
		cfg.MetricsListen = *metricsListen
	}
	if cfg.MetricsListen == "none" {
		cfg.MetricsListen = ""
	}
	if set["params"] {
		cfg.ParamCache = *params
	}
	if set["devices"] {
		if err := setDevices(&cfg, *devices); err != nil {
			return err
		}
	}
	if set["host-memory"] {
		cfg.HostMemory = hostMemory
	}
	if set["memory-limit"] {
		cfg.MemoryLimit = memoryLimit
	}
	if set["max-pending"] {
		cfg.MaxPending = *maxPending
	}
	if set["max-concurrent"] {
		cfg.MaxConcurrent = *maxConcurrent
	}
	if set["preload"] {
		cfg.Preload = splitList(*preload)
	}
	if set["insecure-dev-keys"] {
		cfg.InsecureDevKeys = splitList(*devKeys)
	}
	if set["max-running"] {
		m, err := serve.ParseMaxRunning(*maxRunning)
		if err != nil {
			return err
		}
		if cfg.MaxRunning == nil {
			cfg.MaxRunning = map[string]int{}
		}
		for k, n := range m {
			cfg.MaxRunning[k] = n
		}
	}
	if set["job-timeout"] {
		m, err := serve.ParseJobTimeouts(*jobTimeout)
		if err != nil {
			return err
		}
		if cfg.JobTimeout == nil {
			cfg.JobTimeout = map[string]serve.Duration{}
		}
		for k, d := range m {
			cfg.JobTimeout[k] = d
		}
	}
	if set["shutdown-timeout"] {
		cfg.ShutdownTimeout = serve.Duration(*shutdown)
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	return serveDaemon(cfg)
}

// setDevices applies --devices: "cpu" or comma-separated CUDA ordinals.
func setDevices(cfg *serve.Config, s string) error {
	switch s {
	case "":
		cfg.Backend, cfg.Devices = "", nil
		return nil
	case "cpu":
		cfg.Backend, cfg.Devices = string(c2.BackendCPU), nil
		return nil
	}
	cfg.Backend, cfg.Devices = string(c2.BackendCUDA), nil
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return fmt.Errorf("--devices %q: want \"cpu\" or CUDA ordinals such as 0,1", s)
		}
		cfg.Devices = append(cfg.Devices, n)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// proverLogger writes the prover's logs at info level and above to stderr:
// where each device put each key, a device taken out of rotation, the CPU
// fallback.
func proverLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// serveDaemon runs the daemon until SIGINT or SIGTERM, then shuts it down
// within cfg.ShutdownTimeout.
func serveDaemon(cfg serve.Config) error {
	logger := log.New(os.Stderr, "c2 serve: ", log.LstdFlags)
	if cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(int64(cfg.MemoryLimit))
		logger.Printf("Go memory limit %.1f GiB", float64(cfg.MemoryLimit)/(1<<30))
	}
	pc := cfg.ProverConfig()
	pc.Logger = proverLogger()
	p, err := c2.New(pc)
	if err != nil {
		return err
	}
	// EvictSRS drops one circuit from the prover (Prover.Evict); the prover
	// itself lives until exit.
	closeProver := func() {
		if err := p.Close(); err != nil {
			logger.Printf("closing the prover: %v", err)
		}
	}
	opts := cfg.Options()
	lis, err := serve.Listen(cfg.Listen)
	if err != nil {
		closeProver()
		return err
	}
	var mlis net.Listener
	if cfg.MetricsListen != "" {
		if mlis, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			lis.Close()
			closeProver()
			return err
		}
	}
	srv := serve.NewServer(p, opts)
	if err := makeDevKeys(srv.Engine, cfg.InsecureDevKeys, logger); err != nil {
		lis.Close()
		if mlis != nil {
			mlis.Close()
		}
		closeProver()
		return err
	}
	logger.Printf("devices %v; parameters %s; listening on %s", p.Devices(), cfg.ParamCache, cfg.Listen)

	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(lis) }()
	if mlis != nil {
		logger.Printf("metrics on http://%s/metrics", mlis.Addr())
		go func() { errc <- srv.ServeMetrics(mlis) }()
	}
	// Preloads load keys into host memory: one circuit at a time, stopped
	// by the shutdown.
	pctx, stopPreload := context.WithCancel(context.Background())
	preloaded := make(chan struct{})
	go func() {
		defer close(preloaded)
		for _, id := range cfg.Preload {
			_, took, err := srv.Engine.Preload(pctx, id)
			if err != nil {
				logger.Printf("preload %s: %v", id, err)
				continue
			}
			logger.Printf("preload %s: parameters loaded in %s", id, took.Round(time.Millisecond))
		}
	}()

	grace := time.Duration(cfg.ShutdownTimeout)
	if grace <= 0 {
		grace = 10 * time.Minute
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	var serveErr error
	select {
	case s := <-sig:
		logger.Printf("%v: finishing jobs (up to %s; signal again to cancel them)", s, grace)
	case serveErr = <-errc:
		logger.Printf("listener failed: %v; shutting down", serveErr)
	}
	stopPreload()
	<-preloaded
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Printf("shutdown: unfinished jobs cancelled (%v)", err)
	}
	closeProver()
	if serveErr != nil && !errors.Is(serveErr, net.ErrClosed) {
		return serveErr
	}
	return nil
}

// makeDevKeys makes the INSECURE development keys of circuits on the
// engine's prover, one after the other, before the daemon accepts jobs;
// SIGINT or SIGTERM stops it.
func makeDevKeys(e *serve.Engine, circuits []string, logger *log.Logger) error {
	if len(circuits) == 0 {
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for _, id := range circuits {
		logger.Printf("%s: making an INSECURE development key on the device (its proofs verify under this key only, never on chain)", id)
		vk, took, err := e.DevSetup(ctx, id)
		if err != nil {
			return fmt.Errorf("insecure dev key of %s: %w", id, err)
		}
		var b bytes.Buffer
		if _, err := vk.WriteTo(&b); err != nil {
			return err
		}
		logger.Printf("%s: INSECURE development key made in %s; verifying key sha256 %x", id, took.Round(time.Millisecond), sha256.Sum256(b.Bytes()))
	}
	return nil
}
