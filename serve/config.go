package serve

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/internal/regfile"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

// Config is the daemon's configuration file (TOML). Every key is optional;
// command-line flags override it.
//
//	listen           = "unix:///run/c2/c2.sock"   # or "127.0.0.1:9820"
//	metrics_listen   = "127.0.0.1:9821"           # "" disables /metrics
//	param_cache      = "/var/tmp/filecoin-proof-parameters"
//	trust_params     = true                       # false: published files checked by digest, others point by point
//	preload          = ["porep-32g"]
//	insecure_dev_keys = []                        # circuits whose INSECURE keys are made on the GPU at start (benchmarks only)
//	backend          = ""                         # "", "cpu" or "cuda"
//	devices          = [0, 1]                     # CUDA ordinals; empty: all
//	cpu_fallback     = false
//	host_memory      = "128GiB"                   # or a byte count
//	memory_limit     = "14GiB"                    # the Go runtime's soft limit; 0: GOMEMLIMIT or none
//	max_pending      = 256
//	max_concurrent   = 3
//	retain           = "30m"
//	shutdown_timeout = "10m"
//
//	[max_running]                                 # per proof kind, within max_concurrent; 0: no bound of its own
//	porep   = 2                                   # the default: two C2s at a time (Options.KindLimits)
//
//	[job_timeout]                                 # per proof kind, from submission; none by default
//	winning = "25s"                               # WINNING_POST
//	wpost   = "20m"                               # WINDOW_POST_PARTITION
//	snap    = "2h"                                # SNAP_DEALS_UPDATE
//	porep   = "4h"                                # POREP_SEAL_COMMIT
type Config struct {
	Listen        string   `toml:"listen"`
	MetricsListen string   `toml:"metrics_listen"`
	ParamCache    string   `toml:"param_cache"`
	TrustParams   bool     `toml:"trust_params"`
	Preload       []string `toml:"preload"`
	// InsecureDevKeys names circuits ("porep-32g", "winning-32g", …)
	// whose INSECURE development keys the daemon makes in device memory
	// at start (Engine.DevSetup) before it accepts jobs, in place of their
	// parameter files: for measuring a daemon without the published
	// parameters. Their proofs verify under those keys only, never on
	// chain.
	InsecureDevKeys []string `toml:"insecure_dev_keys"`
	Backend         string   `toml:"backend"`
	Devices         []int    `toml:"devices"`
	CPUFallback     bool     `toml:"cpu_fallback"`
	HostMemory      Bytes    `toml:"host_memory"`
	// MemoryLimit is the Go runtime's soft memory limit the daemon sets at
	// start (runtime/debug.SetMemoryLimit); 0 leaves the runtime's own
	// (GOMEMLIMIT, else none). Without one the collector lets garbage grow
	// the heap toward twice its live size; a 32 GiB C2 keeps within 15 GB
	// of RSS with 14GiB and host_memory = "6GiB" (BENCHMARKS.md).
	MemoryLimit     Bytes    `toml:"memory_limit"`
	MaxPending      int      `toml:"max_pending"`
	MaxConcurrent   int      `toml:"max_concurrent"`
	Retain          Duration `toml:"retain"`
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	// MaxRunning bounds the jobs of a proof kind running at once, keyed
	// "porep", "snap", "wpost", "winning"; a key given replaces that kind's
	// entry of DefaultKindLimits(), 0 lifts it (Options.KindLimits).
	MaxRunning map[string]int `toml:"max_running"`
	// JobTimeout bounds the jobs of a proof kind, keyed "porep", "snap",
	// "wpost", "winning" (Options.Timeouts).
	JobTimeout map[string]Duration `toml:"job_timeout"`
}

// DefaultConfig is the configuration without a file: Curio's default cuzk
// address, metrics on the next port, parameters where filecoin-ffi looks
// ($FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters),
// trusted as Filecoin trusts its published files.
func DefaultConfig() Config {
	params := os.Getenv("FIL_PROOFS_PARAMETER_CACHE")
	if params == "" {
		params = "/var/tmp/filecoin-proof-parameters"
	}
	return Config{
		Listen:          "127.0.0.1:9820",
		MetricsListen:   "127.0.0.1:9821",
		ParamCache:      params,
		TrustParams:     true,
		ShutdownTimeout: Duration(10 * time.Minute),
	}
}

// maxConfigFile bounds the configuration file LoadConfig reads.
const maxConfigFile = 1 << 20

// LoadConfig reads a TOML file over DefaultConfig. Unknown keys are errors,
// so that a misspelt key is not silently ignored. The file must be a
// regular file of at most 1 MiB: it is opened non-blocking and examined
// before any read, so that a FIFO or a device is refused instead of
// blocking or filling memory.
func LoadConfig(path string) (Config, error) {
	c := DefaultConfig()
	b, err := regfile.Read(path, maxConfigFile)
	if err != nil {
		return c, err
	}
	md, err := toml.Decode(string(b), &c)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		keys := make([]string, len(u))
		for i, k := range u {
			keys[i] = k.String()
		}
		return c, fmt.Errorf("%s: unknown keys %s", path, strings.Join(keys, ", "))
	}
	return c, c.Check()
}

// Check reports configuration values that cannot work.
func (c Config) Check() error {
	switch c2.Backend(c.Backend) {
	case c2.BackendAuto, c2.BackendCPU, c2.BackendCUDA:
	default:
		return fmt.Errorf("backend %q: want \"\", \"cpu\" or \"cuda\"", c.Backend)
	}
	for _, id := range c.Preload {
		if _, err := lookupCircuit(id); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
	}
	for _, id := range c.InsecureDevKeys {
		if _, err := lookupCircuit(id); err != nil {
			return fmt.Errorf("insecure_dev_keys: %w", err)
		}
	}
	if c.Listen == "" {
		return fmt.Errorf("listen is empty")
	}
	if c.MaxPending < 0 || c.MaxConcurrent < 0 || c.HostMemory < 0 || c.MemoryLimit < 0 {
		return fmt.Errorf("max_pending, max_concurrent, host_memory and memory_limit must not be negative")
	}
	for k, n := range c.MaxRunning {
		if _, ok := kindByKey(k); !ok {
			return fmt.Errorf("max_running.%s: want porep, snap, wpost or winning", k)
		}
		if n < 0 {
			return fmt.Errorf("max_running.%s must not be negative", k)
		}
	}
	for k, d := range c.JobTimeout {
		if _, ok := kindByKey(k); !ok {
			return fmt.Errorf("job_timeout.%s: want porep, snap, wpost or winning", k)
		}
		if d < 0 {
			return fmt.Errorf("job_timeout.%s must not be negative", k)
		}
	}
	return nil
}

// ParseJobTimeouts parses "winning=25s,wpost=20m" (a --job-timeout flag)
// into job_timeout entries.
func ParseJobTimeouts(s string) (map[string]Duration, error) {
	return parseKindValues(s, "job timeout", "a duration such as 25s", func(v string) (Duration, bool) {
		d, err := time.ParseDuration(v)
		return Duration(d), err == nil && d >= 0
	})
}

// ParseMaxRunning parses "porep=1,snap=1" (a --max-running flag) into
// max_running entries.
func ParseMaxRunning(s string) (map[string]int, error) {
	return parseKindValues(s, "max running", "a count such as 1 (0: no bound)", func(v string) (int, bool) {
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= 0
	})
}

// parseKindValues parses a comma-separated list of kind=value, value read
// by parse; what names the list and want the value in errors.
func parseKindValues[T any](s, what, want string, parse func(string) (T, bool)) (map[string]T, error) {
	out := map[string]T{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if _, known := kindByKey(k); !ok || !known {
			return nil, fmt.Errorf("%s %q: want kind=value, kind one of porep, snap, wpost, winning", what, f)
		}
		x, ok := parse(strings.TrimSpace(v))
		if !ok {
			return nil, fmt.Errorf("%s %q: want %s", what, f, want)
		}
		out[k] = x
	}
	return out, nil
}

// ProverConfig is the c2.Config the daemon's Prover uses.
func (c Config) ProverConfig() c2.Config {
	return c2.Config{
		Backend:     c2.Backend(c.Backend),
		Devices:     c.Devices,
		CPUFallback: c.CPUFallback,
		HostMemory:  int64(c.HostMemory),
		Params:      c.ParamCache,
		TrustParams: c.TrustParams,
	}
}

// Options are the engine options the configuration sets.
func (c Config) Options() Options {
	return Options{
		MaxConcurrent: c.MaxConcurrent,
		MaxPending:    c.MaxPending,
		Retain:        time.Duration(c.Retain),
		Params:        c.ParamCache,
		HostMemory:    int64(c.HostMemory),
		Timeouts:      c.timeouts(),
		KindLimits:    c.kindLimits(),
	}
}

// kindLimits is DefaultKindLimits() with MaxRunning's entries over it,
// dropping unknown keys (Check refuses them).
func (c Config) kindLimits() map[pb.ProofKind]int {
	m := DefaultKindLimits()
	for k, n := range c.MaxRunning {
		if kind, ok := kindByKey(k); ok {
			m[kind] = n
		}
	}
	return m
}

// timeouts converts JobTimeout, dropping unknown keys (Check refuses them).
func (c Config) timeouts() map[pb.ProofKind]time.Duration {
	if len(c.JobTimeout) == 0 {
		return nil
	}
	m := make(map[pb.ProofKind]time.Duration, len(c.JobTimeout))
	for k, d := range c.JobTimeout {
		if kind, ok := kindByKey(k); ok && d > 0 {
			m[kind] = time.Duration(d)
		}
	}
	return m
}

// Bytes is a byte count written as an integer or as a string with a unit
// ("512MiB", "64GiB", "1.5TB").
type Bytes int64

// UnmarshalTOML accepts an integer or a string.
func (b *Bytes) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		*b = Bytes(x)
		return nil
	case string:
		return b.Set(x)
	}
	return fmt.Errorf("byte count: want an integer or a string such as \"64GiB\", got %T", v)
}

// Set parses s as a byte count (flag.Value).
func (b *Bytes) Set(s string) error {
	n, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*b = Bytes(n)
	return nil
}

func (b *Bytes) String() string { return strconv.FormatInt(int64(*b), 10) }

var byteUnits = []struct {
	suffix string
	scale  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseBytes parses "4096", "512MiB", "64GiB", "1.5TB" (binary units for
// the i-suffixes and the bare K, M, G, T; decimal for KB, MB, GB, TB).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, scale = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.scale
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || !(f >= 0 && f*scale <= 1<<62) { // NaN fails both comparisons
		return 0, fmt.Errorf("byte count %q: want a number with an optional unit such as GiB", s)
	}
	return int64(f * scale), nil
}

// Duration is a time.Duration written as a string ("30m", "1h30m").
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
