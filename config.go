package c2

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/sealc2/c2/pool"
)

// Backend selects what runs the device stages.
type Backend string

const (
	// BackendAuto uses every CUDA device when the CUDA library loads and
	// finds one, else the CPU.
	BackendAuto Backend = ""
	// BackendCPU runs everything on the CPU (the reference).
	BackendCPU Backend = "cpu"
	// BackendCUDA requires CUDA devices; New fails without them.
	BackendCUDA Backend = "cuda"
)

// ErrNoCUDA is returned by New for BackendCUDA when no CUDA device is usable
// (no library, no driver or no device).
var ErrNoCUDA = errors.New("c2: no usable CUDA device")

// Config configures a Prover. The zero value works: all devices, CPU when
// there are none, budgets derived from the machine.
type Config struct {
	Backend Backend
	// Devices lists the CUDA ordinals to use; nil means all.
	Devices []int
	// VRAMMargin is device memory left outside the budget on each GPU, for
	// the CUDA context and fragmentation; 0 means 2 GiB.
	VRAMMargin int64
	// VRAMBudget caps each GPU's budget (keys, R1CS, slots) in bytes; 0
	// means the whole card less VRAMMargin. A key that does not fit beside
	// a slot is streamed from host memory.
	VRAMBudget int64
	// SlotsPerDevice is how many partitions one GPU runs at once under a
	// key (each slot holds its own work buffers; the budget may allow
	// fewer); 0 means 3.
	SlotsPerDevice int
	// Logger receives the Prover's logs: device stages and key loads at
	// debug level, where a CUDA device put each key (resident, or streamed
	// with some sections on the device) and development keys made on a
	// device at info, a device taken out of rotation and proving on the
	// CPU fallback at warn. nil: nothing is logged.
	Logger *slog.Logger
	// HostMemory bounds the host buffers of partitions in flight: their
	// witnesses (32 bytes per aux variable: 4.2 GB for a 32 GiB partition;
	// the Prove calls of one sector shape keep at most two together, one
	// when HostMemory holds only one, the older call served first; a PoSt
	// or SnapDeals call bounds its own the same way; a circuit keeps as
	// many idle witness buffers for its next partitions until Evict or
	// Close), a, b, c when the host evaluates them, and the classified
	// witness; 0 means half of physical memory.
	HostMemory int64
	// Threads bounds the goroutines of one CPU MSM; 0 means GOMAXPROCS.
	// The host's share of B_G2's tail beside a GPU shrinks in proportion
	// when Threads is below GOMAXPROCS.
	Threads int
	// PrepWorkers is the number of partitions prepared on the CPU at once
	// (evaluation of a, b, c is single-threaded per partition); 0 means
	// max(2, GOMAXPROCS/4).
	PrepWorkers int
	// FeederPs is how many Go Ps the host's parallel loops (witness
	// synthesis, classification, checks) leave free for each device that is
	// not the CPU, so that a goroutine coming back from a device call runs
	// at once instead of waiting for a busy loop goroutine's preemption (up
	// to 10 ms) while the device waits for it; 0 means 2, at most an eighth
	// of GOMAXPROCS in all; negative leaves none.
	FeederPs int
	// DisableOverlap runs partitions one at a time and their stages in
	// sequence (b_g2 after the device stages), to measure what overlap buys.
	DisableOverlap bool
	// CPUFallback proves on the CPU once every device has failed, instead of
	// returning ErrNoDevice. It also keeps each circuit's recorded R1CS in
	// host memory (≈ 7 GB for a 32 GiB PoRep circuit, ≈ 11 GB for a Window
	// PoSt's), which the host otherwise lets go of once every device holds
	// it beside the key and records again only when it needs it.
	CPUFallback bool
	// Params is where Prove finds Groth16 parameters: a directory holding
	// the shape's official file (as filecoin-proofs names it) or, failing
	// that, a development file from `c2 setup`; or a single .params file.
	Params string
	// TrustParams skips the checks of parameter files' points beyond their
	// curve equations, as filecoin-proofs does. Without it a file under a
	// name Filecoin publishes (rust-fil-proofs' parameters.json) must have
	// the published BLAKE2b digest, as paramfetch checks, and is then read
	// as trusted (a digest that differs is ErrParamsDigest, wrapped with the
	// file and both digests); any other file has every point checked to be in
	// the prime-order subgroup (minutes for a 32 GiB sector's key).
	TrustParams bool
}

func (c *Config) withDefaults() (Config, error) {
	o := *c
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.PrepWorkers <= 0 {
		o.PrepWorkers = max(2, runtime.GOMAXPROCS(0)/4)
	}
	if o.DisableOverlap {
		o.PrepWorkers = 1
	}
	if o.VRAMMargin <= 0 {
		o.VRAMMargin = 2 << 30
	}
	if o.HostMemory <= 0 {
		m, err := pool.PhysicalMemory()
		if err != nil {
			m = 8 << 30
		}
		o.HostMemory = m / 2
	}
	switch o.Backend {
	case BackendAuto, BackendCPU, BackendCUDA:
	default:
		return o, fmt.Errorf("c2: unknown backend %q", o.Backend)
	}
	return o, nil
}
