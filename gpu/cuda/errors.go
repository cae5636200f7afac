package cuda

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error returned by this package wraps one of them
// (test with errors.Is).
var (
	// ErrNoLibrary: libc2cuda.so could not be loaded (or this binary was
	// built without cgo). c2 then runs on the CPU.
	ErrNoLibrary = errors.New("cuda: libc2cuda not available")
	// ErrNoDevice: the library loaded but found no usable CUDA device or driver.
	ErrNoDevice = errors.New("cuda: no usable CUDA device")
	// ErrDeviceOutOfMemory: a device (or pinned host) allocation failed.
	ErrDeviceOutOfMemory = errors.New("cuda: out of device memory")
	// ErrDeviceLost: a sticky CUDA error; the device context is unusable.
	ErrDeviceLost = errors.New("cuda: device lost")
	// ErrInvalidArgument: the call's arguments were rejected before any work.
	ErrInvalidArgument = errors.New("cuda: invalid argument")
	// ErrCUDA: any other CUDA error.
	ErrCUDA = errors.New("cuda: CUDA error")
	// ErrClosed: the Device or Buffer was already closed or freed.
	ErrClosed = errors.New("cuda: use after close")
)

// Error describes a failed call into libc2cuda.
type Error struct {
	Op   string // the operation, e.g. "MSMG1"
	Kind error  // one of the sentinel errors above
	Code int    // CUDA error number, 0 if none
	Msg  string // the library's message
}

func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("%v: %s: %s (cuda error %d)", e.Kind, e.Op, e.Msg, e.Code)
	}
	return fmt.Sprintf("%v: %s: %s", e.Kind, e.Op, e.Msg)
}

func (e *Error) Unwrap() error { return e.Kind }

// library status codes (c2cuda.h)
const (
	codeOK = iota
	codeInvalid
	codeOOM
	codeLost
	codeNoDevice
	codeCUDA
)

func statusError(op string, code, cudaCode int, msg string) error {
	if code == codeOK {
		return nil
	}
	kind := ErrCUDA
	switch code {
	case codeInvalid:
		kind = ErrInvalidArgument
	case codeOOM:
		kind = ErrDeviceOutOfMemory
	case codeLost:
		kind = ErrDeviceLost
	case codeNoDevice:
		kind = ErrNoDevice
	}
	return &Error{Op: op, Kind: kind, Code: cudaCode, Msg: msg}
}

func argError(op, format string, args ...any) error {
	return &Error{Op: op, Kind: ErrInvalidArgument, Msg: fmt.Sprintf(format, args...)}
}
