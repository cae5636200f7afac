// Package gpu is the contract between the proving pipeline and the devices
// that run its heavy stages: the CPU reference ([NewCPU]) and CUDA GPUs
// ([OpenCUDA]). A fault-injecting wrapper for tests lives in gpu/gputest.
//
// A [Device] holds proving keys ([Device.LoadKey]) and hands out
// [Slot]s: everything one partition needs on the device, reserved from the
// device's memory budget in one step ([Device.Acquire]). The number of
// partitions in flight on a device therefore follows from its budget, and no
// stage ever waits for memory while holding some (no hold-and-wait, no
// deadlock). Stages are calls on a slot; calls on different slots may run
// concurrently. Optional interfaces say what else a device can do:
// [ShapeLoader] keeps the shape's recorded R1CS and takes a partition's
// witness instead of a, b, c; [FileLoader] loads a key from its .params file
// chunk by chunk; [KeyMaker] makes development keys in its own memory;
// [Timed] reports device time measured on the device; [StreamedKey] sums a
// streamed section's batch additions outside the slots.
//
// Errors are values of type *[Error] wrapping one of the sentinel errors
// below. After [ErrDeviceLost] the device is dead: every later call fails
// the same way and the pipeline takes it out of rotation.
package gpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/pool"
	"github.com/sealc2/c2/r1cs"
)

// Section names a query of the proving key. The zero value names none.
type Section int

const (
	SectionH Section = iota + 1
	SectionL
	SectionA
	SectionBG1
	SectionBG2
)

func (s Section) String() string {
	switch s {
	case SectionH:
		return "H"
	case SectionL:
		return "L"
	case SectionA:
		return "A"
	case SectionBG1:
		return "B_G1"
	case SectionBG2:
		return "B_G2"
	}
	return fmt.Sprintf("Section(%d)", int(s))
}

// Stage names a device operation, for errors, fault injection and timings.
type Stage string

const (
	StageLoadKey  Stage = "load-key"
	StageAcquire  Stage = "acquire"
	StageH        Stage = "h"         // NTTs and the H MSM
	StageBatchAdd Stage = "batch-add" // sum of the bases whose scalar is 1
	StageTail     Stage = "tail-msm"  // MSM over the other non-zero scalars
)

// Sentinel errors; device errors wrap one of them (test with errors.Is).
// ErrDeviceLost means that the device is unusable from then on.
var (
	ErrOutOfMemory = errors.New("out of device memory")
	ErrDeviceLost  = errors.New("device lost")
	ErrKernel      = errors.New("kernel failed")
	ErrBadArgument = errors.New("bad argument")
	ErrClosed      = errors.New("device closed")
)

// Error is a failed device operation.
type Error struct {
	Device  string  // Info().Name
	Stage   Stage   // what was running
	Section Section // the key section, for MSM stages
	Err     error   // wraps one of the sentinels above
}

func (e *Error) Error() string {
	if e.Stage == StageBatchAdd || e.Stage == StageTail {
		return fmt.Sprintf("gpu: %s: %s %s: %v", e.Device, e.Stage, e.Section, e.Err)
	}
	return fmt.Sprintf("gpu: %s: %s: %v", e.Device, e.Stage, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Kind says what backs a device.
type Kind string

const (
	KindCPU  Kind = "cpu"
	KindCUDA Kind = "cuda"
	KindFake Kind = "fake"
)

// Info describes a device.
type Info struct {
	Name   string // unique within a process, e.g. "cpu" or "cuda:3"
	Kind   Kind
	Memory int64 // bytes of the device's budget (total less the safety margin)
	// G2 is true when the device should run the B_G2 tail MSM itself; when
	// false the pipeline runs it on the CPU, overlapping the device's work.
	G2 bool
	// HostG2 is, with G2, the fraction of B_G2's tail (by points, 0 to 1)
	// that the pipeline runs on the host beside the device, over bases it
	// copies once from a slot that implements [G2Reader]; 0: none.
	HostG2 float64
}

// Key is a proving key made available to one device: resident in its memory
// or streamed from the host. Release frees what LoadKey took.
type Key interface {
	ProvingKey() *groth16.ProvingKey
	Release()
}

// Device runs the heavy stages of a Groth16 proof.
type Device interface {
	Info() Info
	// Budget is the device memory budget every key and slot is charged to.
	Budget() *pool.Budget
	// LoadKey prepares pk for proving on this device, charging what it keeps
	// to the budget. The caller keeps pk unchanged while the Key is alive.
	LoadKey(ctx context.Context, pk *groth16.ProvingKey) (Key, error)
	// SlotBytes is the memory Acquire reserves for one partition under key.
	SlotBytes(key Key) int64
	// Acquire returns a slot holding SlotBytes(key) bytes of the budget,
	// reserved in one step, waiting until they are free (or, on devices that
	// keep released slots with their key, until one is released) or ctx
	// ends. A slot larger than the whole budget fails at once with a
	// *pool.OverBudgetError.
	Acquire(ctx context.Context, key Key) (Slot, error)
	// Close releases the device. Keys and slots must be released first.
	Close() error
}

// StreamedKey is implemented by keys whose sections may stream from host
// memory ([CUDA]: a key with too little room beside its slots; its Streams
// reports none unless C2_CUDA_STREAM_BESIDE=1). The batch additions of the
// sections it streams run on device memory the key reserved once for them,
// outside any slot: a partition makes them after releasing its slot, so
// that the bus carries its bases while the next partition's H and tails run
// in the slot.
type StreamedKey interface {
	Key
	// Streams reports whether sec's batch additions go through the key.
	Streams(sec Section) bool
	// BatchAddG1 is [Slot.BatchAddG1] for a section that Streams names.
	BatchAddG1(ctx context.Context, sec Section, ones []uint64) (bls.G1Jac, error)
	// BatchAddG2 is [Slot.BatchAddG2], when Streams(SectionBG2).
	BatchAddG2(ctx context.Context, ones []uint64) (bls.G2Jac, error)
}

// HostAllocator is implemented by devices that can provide page-locked
// ("pinned") host memory, which the pipeline then uses for its partition
// buffers so that uploads run at full bus speed.
type HostAllocator interface {
	HostAllocator() pool.Allocator
}

// Slot is one partition's workspace on a device. Its methods may be called
// one at a time; the inputs are host slices that are only read, except by
// ComputeH. Results are Jacobian sums the epilogue adds up.
type Slot interface {
	// ComputeH computes h from a, b, c (each of the domain size, zero beyond
	// the last constraint; all three are clobbered) and returns Σ h_i·H_i.
	ComputeH(ctx context.Context, a, b, c []fr.Element) (bls.G1Jac, error)
	// BatchAddG1 returns Σ sec[i] over the bits i set in ones (one bit per
	// base of the section, least significant first). sec is L, A or B_G1.
	BatchAddG1(ctx context.Context, sec Section, ones []uint64) (bls.G1Jac, error)
	// BatchAddG2 is BatchAddG1 over B_G2.
	BatchAddG2(ctx context.Context, ones []uint64) (bls.G2Jac, error)
	// TailG1 returns Σ scalars[j]·sec[idx[j]]; idx is increasing. With idx
	// nil it is the full MSM Σ scalars[i]·sec[i] over the first
	// len(scalars) bases.
	TailG1(ctx context.Context, sec Section, idx []uint32, scalars []fr.Element) (bls.G1Jac, error)
	// TailG2 is TailG1 over B_G2.
	TailG2(ctx context.Context, idx []uint32, scalars []fr.Element) (bls.G2Jac, error)
	// Release returns the slot's memory to the budget. Idempotent.
	Release()
}

// G2Reader is implemented by slots that copy their key's B_G2 bases to the
// host, so that the host can take a share of B_G2's tail ([Info].HostG2).
type G2Reader interface {
	// ReadBasesG2 sets dst[j] = B_G2[idx[j]]; idx is increasing and as long
	// as dst. On a slot that took a witness it may use the scratch of that
	// partition's H, so it is called after ComputeHWitness.
	ReadBasesG2(ctx context.Context, idx []uint32, dst []bls.G2Affine) error
}

// ShapeLoader is implemented by devices that also hold a shape's recorded
// R1CS and run a partition's whole pass from its [Witness]: expansion, a, b,
// c and their check, H, and the MSMs. Only the witness crosses to the device
// per partition.
type ShapeLoader interface {
	// LoadShape is LoadKey that also makes sys's recorded constraints
	// resident when sys holds its matrices and they fit (charged to the
	// budget). The key then
	// implements [ShapeKey]; its slots implement [WitnessSlot] for systems
	// it Records.
	LoadShape(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System) (Key, error)
}

// ShapeKey is a key loaded by [ShapeLoader.LoadShape].
type ShapeKey interface {
	Key
	// Records reports whether sys's constraints are resident with the key:
	// sys has the [r1cs.System.Recording] of the system it was loaded
	// with, matrices held or not.
	Records(sys *r1cs.System) bool
}

// WitnessSlot is a slot that evaluates its key's resident R1CS.
type WitnessSlot interface {
	Slot
	// ComputeHWitness evaluates a = A·w, b = B·w, c = C·w on the device,
	// checks a·b = c, computes h as ComputeH does and returns Σ h_i·H_i. A
	// witness that does not satisfy the constraints gives an
	// *r1cs.UnsatisfiedError naming the first failing one.
	ComputeHWitness(ctx context.Context, w *Witness) (bls.G1Jac, error)
	// MSMWitnessG1 returns Σ s_k·sec[k] over all of sec's bases, where s is
	// the variables of the witness that this slot's last ComputeHWitness
	// took, as sel selects them, in order: bit i of sel (word i/64) selects
	// variable i of w = inputs ‖ aux, and nil selects every aux value. The
	// selection must number as many variables as sec has bases. For a
	// dense query (a PoSt's): no scalars cross to the device again.
	MSMWitnessG1(ctx context.Context, sec Section, sel []uint64) (bls.G1Jac, error)
	// MSMWitnessG2 is MSMWitnessG1 over B_G2.
	MSMWitnessG2(ctx context.Context, sel []uint64) (bls.G2Jac, error)
}

// FileLoader is implemented by devices that load a key straight from its
// parameter file, chunk by chunk ([CUDA]): the bases go from the mapped
// file to the device (or, for a key streamed from the host, to pinned
// memory) without the whole key ever on the Go heap. The key's ProvingKey
// is f.Key(), without host bases.
type FileLoader interface {
	// LoadShapeFile is [ShapeLoader.LoadShape] for the key in f.
	LoadShapeFile(ctx context.Context, f *groth16.ParamsFile, sys *r1cs.System) (Key, error)
}

// KeyMaker is implemented by devices that make development keys in their
// own memory ([CUDA]): the key's bases never exist on the host, and its
// ProvingKey has no host bases (groth16.KeyWithoutBases). INSECURE, as
// groth16.Setup: for tests and benchmarks only.
type KeyMaker interface {
	// SetupKey makes the development key of the finalized system sys for
	// the trapdoor tw, equal to groth16.SetupWithWaste(sys, tw)'s, and
	// keeps it (and, when it fits, sys's recorded constraints) resident.
	SetupKey(ctx context.Context, sys *r1cs.System, tw groth16.ToxicWaste) (Key, error)
	// WriteKey writes the proving key of key, one SetupKey made, to w in
	// bellperson's .params format (the bytes groth16.ProvingKey.WriteTo
	// writes for the same key) and returns the number of bytes written.
	WriteKey(key Key, w io.Writer) (int64, error)
}

// DeviceTimes is a device's own measurement of its work: the time its
// operations spent on the device, accumulated since it was opened.
type DeviceTimes struct {
	// Ops is the device time by operation, summed over calls (operations
	// of concurrent slots each count in full).
	Ops map[string]time.Duration
	// Busy is the time at least one operation was on the device.
	Busy time.Duration
	// Scratch is, by operation, the most device memory one call allocated
	// for its own use at once (beyond the key and the slot's buffers), in
	// bytes: what a slot's reservation must cover (SlotBytes).
	Scratch map[string]int64
}

// Timed is implemented by devices that measure their operations on the
// device itself (CUDA: with events on each call's stream), which host
// timers around calls cannot do.
type Timed interface {
	DeviceTimes() DeviceTimes
}

// checkMSM validates an MSM request against a section of n bases.
func checkMSM(n int, idx []uint32, scalars []fr.Element) error {
	if idx == nil {
		if len(scalars) > n {
			return fmt.Errorf("%w: %d scalars for %d bases", ErrBadArgument, len(scalars), n)
		}
		return nil
	}
	return checkIdx(n, idx, len(scalars), "scalars")
}

// checkIdx validates the increasing indices into n bases that go with m
// values (what names them, for the error).
func checkIdx(n int, idx []uint32, m int, what string) error {
	if len(idx) != m {
		return fmt.Errorf("%w: %d indices for %d %s", ErrBadArgument, len(idx), m, what)
	}
	for j, i := range idx {
		if int(i) >= n || (j > 0 && i <= idx[j-1]) {
			return fmt.Errorf("%w: tail index %d (position %d) out of range or not increasing (%d bases)",
				ErrBadArgument, i, j, n)
		}
	}
	return nil
}

// checkOnes validates a unit-scalar bitmap against a section of n bases.
func checkOnes(n int, ones []uint64) error {
	if len(ones) != (n+63)/64 {
		return fmt.Errorf("%w: bitmap of %d words for %d bases", ErrBadArgument, len(ones), n)
	}
	if r := n & 63; r != 0 && ones[len(ones)-1]>>uint(r) != 0 {
		return fmt.Errorf("%w: bitmap has bits beyond base %d", ErrBadArgument, n)
	}
	return nil
}

// g1Section returns the G1 bases of sec.
func g1Section(pk *groth16.ProvingKey, sec Section) ([]bls.G1Affine, error) {
	switch sec {
	case SectionH:
		return pk.H, nil
	case SectionL:
		return pk.L, nil
	case SectionA:
		return pk.A, nil
	case SectionBG1:
		return pk.BG1, nil
	}
	return nil, fmt.Errorf("%w: %s is not a G1 section", ErrBadArgument, sec)
}
