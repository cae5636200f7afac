//go:build !cgo

package cuda

import "unsafe"

// Without cgo the library cannot be loaded: every entry point reports
// ErrNoLibrary and c2 runs on the CPU.

func libLoad() error { return &Error{Op: "load", Kind: ErrNoLibrary, Msg: "built without cgo"} }

func loadPath(string) error { return libLoad() }

func rawDeviceCount() (int, error)                                      { return 0, libLoad() }
func rawDeviceInfo(int) (Info, error)                                   { return Info{}, libLoad() }
func rawMemInfo(int) (uint64, uint64, error)                            { return 0, 0, libLoad() }
func rawStreamCreate(int, bool) (stream, error)                         { return stream{}, libLoad() }
func rawStreamDestroy(stream) error                                     { return libLoad() }
func rawStreamMark(stream, int) error                                   { return libLoad() }
func rawStreamSpan(stream) (float64, float64, error)                    { return 0, 0, libLoad() }
func rawStreamScratch(stream) (uint64, error)                           { return 0, libLoad() }
func rawMemAlloc(int, uint64) (unsafe.Pointer, error)                   { return nil, libLoad() }
func rawMemFree(int, unsafe.Pointer) error                              { return libLoad() }
func rawHostAlloc(uint64) (unsafe.Pointer, error)                       { return nil, libLoad() }
func rawHostFree(unsafe.Pointer) error                                  { return libLoad() }
func rawCopy(stream, unsafe.Pointer, unsafe.Pointer, uint64, int) error { return libLoad() }
func rawNTT(stream, ptr, int, int, *nttConsts) error                    { return libLoad() }
func rawComputeH(stream, ptr, ptr, ptr, int, *nttConsts, bool) error    { return libLoad() }
func rawMSM(stream, int, ptr, ptr, uint64, int, unsafe.Pointer) (int, int, error) {
	return 0, 0, libLoad()
}
func rawMSMSplit(stream, int, unsafe.Pointer, unsafe.Pointer, ptr, uint64, int, unsafe.Pointer) (int, int, error) {
	return 0, 0, libLoad()
}
func rawShiftPoints(stream, int, unsafe.Pointer, unsafe.Pointer, uint64, int) error { return libLoad() }
func rawBatchAdd(stream, int, ptr, []uint64, uint64, unsafe.Pointer) error          { return libLoad() }
func rawFill(stream, int, unsafe.Pointer, uint64, unsafe.Pointer, uint64) error {
	return libLoad()
}
func rawR1CSEval(stream, *R1CS, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer,
	unsafe.Pointer, uint64, int) (uint64, error) {
	return 0, libLoad()
}
func rawSelect(stream, unsafe.Pointer, unsafe.Pointer, uint64, []uint64, uint64) error {
	return libLoad()
}
func rawMSMIndexed(stream, int, unsafe.Pointer, uint64, []uint32, unsafe.Pointer, int, unsafe.Pointer) (int, error) {
	return 0, libLoad()
}
func rawFixedBaseTable(stream, int, unsafe.Pointer, int, unsafe.Pointer) error { return libLoad() }
func rawFixedBaseMul(stream, int, unsafe.Pointer, int, ptr, uint64, unsafe.Pointer, uint64) error {
	return libLoad()
}
