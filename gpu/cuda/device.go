// Package cuda is c2's CUDA backend: NTTs, the Groth16 quotient pipeline,
// G1/G2 multi-scalar multiplication and bitmap batch addition on NVIDIA
// GPUs, computed by our own kernels in libc2cuda.so.
//
// The library is loaded at run time (dlopen): from $C2_CUDA_LIB if set, else
// libc2cuda.so beside the executable, else the dynamic loader's search path.
// Binaries therefore build with a plain `go build` (CGO_ENABLED=0 too) and
// need neither CUDA headers nor CUDA libraries; without the library or a GPU,
// Open returns an error wrapping ErrNoLibrary or ErrNoDevice and callers stay
// on the CPU. Build the library with `make -C gpu/cuda`.
//
// All values use gnark-crypto's in-memory layouts (Montgomery-form field
// elements; affine points with infinity as (0, 0)), so slices cross the
// boundary without conversion. Every call is synchronous and safe for
// concurrent use: each call takes its own CUDA stream from the Device and
// its scratch memory from the device's stream-ordered pool, and the library
// makes no device-wide call (synchronize, pool trim, memory query) on these
// paths, so calls from several goroutines overlap on the GPU. Alloc and
// Free (cudaMalloc, cudaFree) may synchronize the device: callers allocate
// once and reuse.
//
// A call's host thread sleeps while it waits for its stream (the CUDA
// context's blocking synchronization) instead of spinning on a core for the
// second or so a large call lasts: C2_CUDA_SYNC=spin or =yield in the
// environment selects CUDA's busy waits instead, and any other value makes
// every call on a device fail with an error wrapping ErrInvalidArgument that
// names the setting.
//
// With C2_TRACE=1 in the environment, the library writes to stderr a line
// for each kernel of each MSM, batch addition, NTT, H pipeline and R1CS
// evaluation call ("c2trace dev=… stream=… call=… seq=… kernel=… end_ms=…
// dt_ms=…"): when the kernel completed, in ms since the device's first
// stream was made, and how long after the call's previous mark. Each
// call's kernels follow a line "c2trace dev=… stream=… call=… start_ms=…
// host_start_ms=… host_end_ms=…": when the call began on the device, and
// when it began and ended on the host's monotonic clock, in ms since the
// host saw that first stream ready (the two clocks agree within a
// wake-up). A device's idle time between two calls of one stream is then
// split into the host's time outside the library and the library's own.
package cuda

import (
	"fmt"
	"sync"
	"unsafe"
)

// Info describes a device.
type Info struct {
	Name        string
	TotalMemory uint64 // bytes
	SMCount     int
	Major       int // compute capability
	Minor       int
}

// stream is a library stream lent to one call; op names the call for its
// device timing.
type stream struct {
	h  uintptr
	op string
}

// ptr is a call argument in host memory (Go or pinned) or in device memory.
type ptr struct {
	p   unsafe.Pointer
	dev bool
}

// DeviceCount returns the number of CUDA devices, or an error wrapping
// ErrNoLibrary or ErrNoDevice.
func DeviceCount() (int, error) {
	n, err := rawDeviceCount()
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Device is one opened GPU, or its urgent view ([Device.Urgent]). Methods
// are safe for concurrent use.
type Device struct {
	*device
	urgent bool // calls run on the device's highest-priority streams
}

// device is what a Device and its urgent view share.
type device struct {
	ordinal int
	info    Info
	view    *Device // the urgent view

	mu     sync.Mutex
	idle   [2][]stream // by priority: 0 the default, 1 urgent
	closed bool
	timer  timer
}

// Open opens GPU number ordinal (0-based).
func Open(ordinal int) (*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, &Error{Op: "Open", Kind: ErrNoDevice, Msg: fmt.Sprintf("device %d requested, %d present", ordinal, n)}
	}
	info, err := rawDeviceInfo(ordinal)
	if err != nil {
		return nil, err
	}
	d := &Device{device: &device{ordinal: ordinal, info: info}}
	d.view = &Device{device: d.device, urgent: true}
	// Create one stream now so that a broken driver shows up at Open.
	s, err := rawStreamCreate(ordinal, false)
	if err != nil {
		return nil, err
	}
	d.idle[0] = append(d.idle[0], s)
	return d, nil
}

// Urgent returns the view of the device whose calls run on streams of the
// device's highest priority: the block scheduler dispatches their kernels'
// pending blocks before those of other calls' kernels, so a short proof
// beside long ones waits only for blocks already running (no preemption).
// The view shares the device's buffers, timings and Close.
func (d *Device) Urgent() *Device { return d.view }

// Info returns the device's description.
func (d *Device) Info() Info { return d.info }

// Close releases the device's streams, its urgent view's included. Buffers
// must be freed separately.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var first error
	for i := range d.idle {
		for _, s := range d.idle[i] {
			if err := rawStreamDestroy(s); err != nil && first == nil {
				first = err
			}
		}
		d.idle[i] = nil
	}
	return first
}

// prio indexes the stream pool of d's priority.
func (d *Device) prio() int {
	if d.urgent {
		return 1
	}
	return 0
}

// acquire lends a stream of d's priority to the call op and marks the
// call's start on it.
func (d *Device) acquire(op string) (stream, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return stream{}, &Error{Op: op, Kind: ErrClosed, Msg: "device closed"}
	}
	var s stream
	pool := &d.idle[d.prio()]
	if n := len(*pool); n > 0 {
		s = (*pool)[n-1]
		*pool = (*pool)[:n-1]
		d.mu.Unlock()
	} else {
		d.mu.Unlock()
		var err error
		if s, err = rawStreamCreate(d.ordinal, d.urgent); err != nil {
			return s, err
		}
	}
	s.op = op
	if rawStreamMark(s, 0) != nil {
		s.op = "" // untimed
	}
	return s, nil
}

// release takes the stream back after its call and records the call's
// device time and scratch. A stream whose timing fails is still reused:
// timing never fails a call.
func (d *Device) release(s stream) {
	if s.op != "" && rawStreamMark(s, 1) == nil {
		if a, b, err := rawStreamSpan(s); err == nil && b >= a {
			peak, _ := rawStreamScratch(s) // 0 when it fails
			d.timer.add(s.op, span{a, b}, peak)
		}
	}
	s.op = ""
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = rawStreamDestroy(s)
		return
	}
	d.idle[d.prio()] = append(d.idle[d.prio()], s)
}

// Buffer is device memory owned by the caller (for example bases kept
// resident across MSMs). Free it with Free.
type Buffer struct {
	d     *Device
	p     unsafe.Pointer
	bytes uint64
	view  bool // from Slice: the memory belongs to another buffer
}

// Alloc allocates bytes of device memory (cudaMalloc).
func (d *Device) Alloc(bytes uint64) (*Buffer, error) {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil, &Error{Op: "Alloc", Kind: ErrClosed, Msg: "device closed"}
	}
	p, err := rawMemAlloc(d.ordinal, bytes)
	if err != nil {
		return nil, err
	}
	return &Buffer{d: d, p: p, bytes: bytes}, nil
}

// Len returns the buffer's size in bytes.
func (b *Buffer) Len() uint64 { return b.bytes }

// Free releases the buffer. It synchronizes the device (cudaFree). Freeing
// a view (from Slice) only detaches it.
func (b *Buffer) Free() error {
	if b.p == nil {
		return nil
	}
	if b.view {
		b.p = nil
		return nil
	}
	err := rawMemFree(b.d.ordinal, b.p)
	b.p = nil
	return err
}

func (b *Buffer) check(op string, need uint64) error {
	if b == nil || b.p == nil {
		return &Error{Op: op, Kind: ErrClosed, Msg: "buffer freed"}
	}
	if need > b.bytes {
		return argError(op, "buffer of %d bytes, need %d", b.bytes, need)
	}
	return nil
}

func (b *Buffer) arg() ptr { return ptr{p: b.p, dev: true} }

// Copy directions of rawCopy.
const (
	hostToDevice = 1
	deviceToHost = 2
)

// copyIn copies bytes from host memory at src into b at offset off.
func (d *Device) copyIn(op string, b *Buffer, off uint64, src unsafe.Pointer, bytes uint64) error {
	return d.copyHost(op, b, off, src, bytes, hostToDevice)
}

// copyOut copies bytes from b at offset off to host memory at dst.
func (d *Device) copyOut(op string, dst unsafe.Pointer, b *Buffer, off uint64, bytes uint64) error {
	return d.copyHost(op, b, off, dst, bytes, deviceToHost)
}

// copyHost copies bytes between b at offset off and host memory at host,
// in direction dir.
func (d *Device) copyHost(op string, b *Buffer, off uint64, host unsafe.Pointer, bytes uint64, dir int) error {
	if err := b.check(op, off+bytes); err != nil {
		return err
	}
	if bytes == 0 {
		return nil
	}
	s, err := d.acquire(op)
	if err != nil {
		return err
	}
	defer d.release(s)
	dev := unsafe.Add(b.p, off)
	if dir == hostToDevice {
		return rawCopy(s, dev, host, bytes, dir)
	}
	return rawCopy(s, host, dev, bytes, dir)
}

// HostBuffer is pinned (page-locked) host memory: copies from it run at full
// bus speed and overlap with compute. Free it with Free.
type HostBuffer struct {
	p     unsafe.Pointer
	bytes uint64
}

// AllocPinned allocates bytes of pinned host memory (cudaHostAlloc).
func AllocPinned(bytes uint64) (*HostBuffer, error) {
	if err := libLoad(); err != nil {
		return nil, err
	}
	p, err := rawHostAlloc(bytes)
	if err != nil {
		return nil, err
	}
	return &HostBuffer{p: p, bytes: bytes}, nil
}

// Bytes returns the buffer's memory; it is valid until Free.
func (h *HostBuffer) Bytes() []byte { return unsafe.Slice((*byte)(h.p), h.bytes) }

// Free releases the buffer.
func (h *HostBuffer) Free() error {
	if h.p == nil {
		return nil
	}
	err := rawHostFree(h.p)
	h.p = nil
	return err
}
