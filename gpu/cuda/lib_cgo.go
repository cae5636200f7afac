//go:build cgo

package cuda

// The only cgo file of the package. It needs dlfcn.h and c2cuda.h (plain C),
// no CUDA headers: libc2cuda.so is opened with dlopen at run time and its
// entry points are called through the function pointers resolved below.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include "c2cuda.h"

static void* c2_lib;
static int (*p_abi_version)(void);
static int (*p_device_count)(c2_status*, int*);
static int (*p_device_info)(c2_status*, int, char*, int, uint64_t*, int*, int*, int*);
static int (*p_mem_info)(c2_status*, int, uint64_t*, uint64_t*);
static int (*p_stream_create)(c2_status*, int, int, c2_stream**);
static int (*p_stream_destroy)(c2_status*, c2_stream*);
static int (*p_stream_mark)(c2_status*, c2_stream*, int);
static int (*p_stream_span)(c2_status*, c2_stream*, double*, double*);
static int (*p_stream_scratch)(c2_status*, c2_stream*, uint64_t*);
static int (*p_mem_alloc)(c2_status*, int, uint64_t, void**);
static int (*p_mem_free)(c2_status*, int, void*);
static int (*p_host_alloc)(c2_status*, uint64_t, void**);
static int (*p_host_free)(c2_status*, void*);
static int (*p_copy)(c2_status*, c2_stream*, void*, const void*, uint64_t, int);
static int (*p_ntt)(c2_status*, c2_stream*, void*, int, int, int, const c2_ntt_consts*);
static int (*p_compute_h)(c2_status*, c2_stream*, void*, void*, void*, int, int, const c2_ntt_consts*);
static int (*p_msm)(c2_status*, c2_stream*, int, const void*, int, const void*, int, uint64_t, int, void*, int*, int*);
static int (*p_msm_split)(c2_status*, c2_stream*, int, const void*, const void*, const void*, int, uint64_t, int, void*,
                          int*, int*);
static int (*p_shift_points)(c2_status*, c2_stream*, int, void*, const void*, uint64_t, int);
static int (*p_batch_add)(c2_status*, c2_stream*, int, const void*, int, const uint64_t*, uint64_t, void*);
static int (*p_fill_points)(c2_status*, c2_stream*, int, void*, uint64_t, const void*, uint64_t);
static int (*p_msm_indexed)(c2_status*, c2_stream*, int, const void*, uint64_t, const uint32_t*, const void*, uint64_t,
                            int, void*, int*, int*);
static int (*p_r1cs_eval)(c2_status*, c2_stream*, const c2_r1cs*, void*, const void*, const uint64_t*, const uint32_t*,
                          const void*, uint64_t, void*, int, uint64_t*);
static int (*p_select)(c2_status*, c2_stream*, void*, const void*, uint64_t, const uint64_t*, uint64_t);
static int (*p_fixed_base_table)(c2_status*, c2_stream*, int, const void*, int, void*);
static int (*p_fixed_base_mul)(c2_status*, c2_stream*, int, const void*, int, const void*, int, uint64_t, void*,
                               uint64_t);

// Returns NULL on success or a static message.
static const char* c2_open(const char* path, int* abi) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
#define C2_SYM(name) \
	*(void**)(&p_##name) = dlsym(h, "c2_" #name); \
	if (!p_##name) { dlclose(h); return "missing symbol c2_" #name; }
	C2_SYM(abi_version)
	C2_SYM(device_count)
	C2_SYM(device_info)
	C2_SYM(mem_info)
	C2_SYM(stream_create)
	C2_SYM(stream_destroy)
	C2_SYM(stream_mark)
	C2_SYM(stream_span)
	C2_SYM(stream_scratch)
	C2_SYM(mem_alloc)
	C2_SYM(mem_free)
	C2_SYM(host_alloc)
	C2_SYM(host_free)
	C2_SYM(copy)
	C2_SYM(ntt)
	C2_SYM(compute_h)
	C2_SYM(msm)
	C2_SYM(msm_split)
	C2_SYM(shift_points)
	C2_SYM(batch_add)
	C2_SYM(fill_points)
	C2_SYM(r1cs_eval)
	C2_SYM(msm_indexed)
	C2_SYM(select)
	C2_SYM(fixed_base_table)
	C2_SYM(fixed_base_mul)
#undef C2_SYM
	*abi = p_abi_version();
	c2_lib = h;
	return NULL;
}

static int w_device_count(c2_status* st, int* n) { return p_device_count(st, n); }
static int w_device_info(c2_status* st, int o, char* name, int nl, uint64_t* mem, int* sm, int* ma, int* mi) {
	return p_device_info(st, o, name, nl, mem, sm, ma, mi);
}
static int w_mem_info(c2_status* st, int o, uint64_t* f, uint64_t* t) { return p_mem_info(st, o, f, t); }
static int w_stream_create(c2_status* st, int o, int urgent, uintptr_t* out) {
	c2_stream* s = NULL;
	int rc = p_stream_create(st, o, urgent, &s);
	*out = (uintptr_t)s;
	return rc;
}
static int w_stream_destroy(c2_status* st, uintptr_t s) { return p_stream_destroy(st, (c2_stream*)s); }
static int w_stream_mark(c2_status* st, uintptr_t s, int which) { return p_stream_mark(st, (c2_stream*)s, which); }
static int w_stream_span(c2_status* st, uintptr_t s, double* a, double* b) {
	return p_stream_span(st, (c2_stream*)s, a, b);
}
static int w_stream_scratch(c2_status* st, uintptr_t s, uint64_t* peak) {
	return p_stream_scratch(st, (c2_stream*)s, peak);
}
static int w_mem_alloc(c2_status* st, int o, uint64_t b, void** p) { return p_mem_alloc(st, o, b, p); }
static int w_mem_free(c2_status* st, int o, void* p) { return p_mem_free(st, o, p); }
static int w_host_alloc(c2_status* st, uint64_t b, void** p) { return p_host_alloc(st, b, p); }
static int w_host_free(c2_status* st, void* p) { return p_host_free(st, p); }
static int w_copy(c2_status* st, uintptr_t s, void* d, void* src, uint64_t b, int k) {
	return p_copy(st, (c2_stream*)s, d, src, b, k);
}
static int w_ntt(c2_status* st, uintptr_t s, void* d, int dev, int lg, int kind, void* k) {
	return p_ntt(st, (c2_stream*)s, d, dev, lg, kind, (const c2_ntt_consts*)k);
}
static int w_compute_h(c2_status* st, uintptr_t s, void* a, void* b, void* c, int flags, int lg, void* k) {
	return p_compute_h(st, (c2_stream*)s, a, b, c, flags, lg, (const c2_ntt_consts*)k);
}
static int w_msm(c2_status* st, uintptr_t s, int g, void* bases, int bd, void* sc, int sd, uint64_t n, int w,
                 void* out, int* nw, int* c) {
	return p_msm(st, (c2_stream*)s, g, bases, bd, sc, sd, n, w, out, nw, c);
}
static int w_msm_split(c2_status* st, uintptr_t s, int g, void* bases, void* hi, void* sc, int sd, uint64_t n, int w,
                       void* out, int* nw, int* c) {
	return p_msm_split(st, (c2_stream*)s, g, bases, hi, sc, sd, n, w, out, nw, c);
}
static int w_shift_points(c2_status* st, uintptr_t s, int g, void* dst, void* src, uint64_t n, int k) {
	return p_shift_points(st, (c2_stream*)s, g, dst, src, n, k);
}
static int w_batch_add(c2_status* st, uintptr_t s, int g, void* bases, int bd, void* bits, uint64_t n, void* out) {
	return p_batch_add(st, (c2_stream*)s, g, bases, bd, (const uint64_t*)bits, n, out);
}
static int w_fill(c2_status* st, uintptr_t s, int g, void* dst, uint64_t n, void* seeds, uint64_t k) {
	return p_fill_points(st, (c2_stream*)s, g, dst, n, seeds, k);
}
static int w_r1cs_eval(c2_status* st, uintptr_t s, const c2_r1cs* r, void* w, void* inputs, void* ones, void* idx,
                       void* vals, uint64_t ntail, void* abc, int lg, uint64_t* bad) {
	return p_r1cs_eval(st, (c2_stream*)s, r, w, inputs, (const uint64_t*)ones, (const uint32_t*)idx, vals, ntail, abc,
	                   lg, bad);
}
static int w_msm_indexed(c2_status* st, uintptr_t s, int g, void* bases, uint64_t nb, void* idx, void* sc, uint64_t n,
                         int w, void* out, int* nw, int* c) {
	return p_msm_indexed(st, (c2_stream*)s, g, bases, nb, (const uint32_t*)idx, sc, n, w, out, nw, c);
}
static int w_select(c2_status* st, uintptr_t s, void* dst, void* src, uint64_t n, void* bitmap, uint64_t count) {
	return p_select(st, (c2_stream*)s, dst, src, n, (const uint64_t*)bitmap, count);
}
static int w_fixed_base_table(c2_status* st, uintptr_t s, int g, void* base, int nw, void* table) {
	return p_fixed_base_table(st, (c2_stream*)s, g, base, nw, table);
}
static int w_fixed_base_mul(c2_status* st, uintptr_t s, int g, void* table, int nw, void* sc, int sd, uint64_t n,
                            void* out, uint64_t off) {
	return p_fixed_base_mul(st, (c2_stream*)s, g, table, nw, sc, sd, n, out, off);
}
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"
)

const abiVersion = C.C2_ABI_VERSION

var (
	loadOnce sync.Once
	loadErr  error
)

// libLoad opens the library once: $C2_CUDA_LIB if set, else libc2cuda.so
// beside the executable, else the dynamic loader's search path.
func libLoad() error {
	loadOnce.Do(func() {
		if p := os.Getenv("C2_CUDA_LIB"); p != "" {
			loadErr = loadPath(p)
			return
		}
		var errs []string
		if exe, err := os.Executable(); err == nil {
			p := filepath.Join(filepath.Dir(exe), "libc2cuda.so")
			if _, err := os.Stat(p); err == nil {
				if loadErr = loadPath(p); loadErr == nil {
					return
				}
				errs = append(errs, loadErr.Error())
			}
		}
		if loadErr = loadPath("libc2cuda.so"); loadErr != nil && len(errs) > 0 {
			loadErr = fmt.Errorf("%w; %s", loadErr, errs[0])
		}
	})
	return loadErr
}

var loadMu sync.Mutex

// loadPath dlopens one file and resolves the ABI.
func loadPath(path string) error {
	loadMu.Lock()
	defer loadMu.Unlock()
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var abi C.int
	if msg := C.c2_open(cp, &abi); msg != nil {
		return &Error{Op: "load " + path, Kind: ErrNoLibrary, Msg: C.GoString(msg)}
	}
	if abi != abiVersion {
		return &Error{Op: "load " + path, Kind: ErrNoLibrary,
			Msg: fmt.Sprintf("library ABI %d, want %d", int(abi), abiVersion)}
	}
	return nil
}

func mkerr(op string, rc C.int, st *C.c2_status) error {
	if rc == 0 {
		return nil
	}
	return statusError(op, int(rc), int(st.cuda_error), C.GoString(&st.msg[0]))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func rawDeviceCount() (int, error) {
	if err := libLoad(); err != nil {
		return 0, err
	}
	var st C.c2_status
	var n C.int
	rc := C.w_device_count(&st, &n)
	return int(n), mkerr("DeviceCount", rc, &st)
}

func rawDeviceInfo(ord int) (Info, error) {
	var st C.c2_status
	var name [256]C.char
	var mem C.uint64_t
	var sm, ma, mi C.int
	rc := C.w_device_info(&st, C.int(ord), &name[0], C.int(len(name)), &mem, &sm, &ma, &mi)
	if err := mkerr("DeviceInfo", rc, &st); err != nil {
		return Info{}, err
	}
	return Info{Name: C.GoString(&name[0]), TotalMemory: uint64(mem), SMCount: int(sm), Major: int(ma), Minor: int(mi)}, nil
}

// rawMemInfo serves the package's tests (direct_test.go): cgo is
// not allowed in test files.
func rawMemInfo(ord int) (uint64, uint64, error) {
	var st C.c2_status
	var f, t C.uint64_t
	rc := C.w_mem_info(&st, C.int(ord), &f, &t)
	return uint64(f), uint64(t), mkerr("MemInfo", rc, &st)
}

func rawStreamCreate(ord int, urgent bool) (stream, error) {
	var st C.c2_status
	var s C.uintptr_t
	u := C.int(0)
	if urgent {
		u = 1
	}
	rc := C.w_stream_create(&st, C.int(ord), u, &s)
	return stream{h: uintptr(s)}, mkerr("stream create", rc, &st)
}

func rawStreamDestroy(s stream) error {
	var st C.c2_status
	rc := C.w_stream_destroy(&st, C.uintptr_t(s.h))
	return mkerr("stream destroy", rc, &st)
}

func rawStreamMark(s stream, which int) error {
	var st C.c2_status
	rc := C.w_stream_mark(&st, C.uintptr_t(s.h), C.int(which))
	return mkerr("stream mark", rc, &st)
}

func rawStreamSpan(s stream) (start, end float64, err error) {
	var st C.c2_status
	var a, b C.double
	rc := C.w_stream_span(&st, C.uintptr_t(s.h), &a, &b)
	return float64(a), float64(b), mkerr("stream span", rc, &st)
}

func rawStreamScratch(s stream) (uint64, error) {
	var st C.c2_status
	var peak C.uint64_t
	rc := C.w_stream_scratch(&st, C.uintptr_t(s.h), &peak)
	return uint64(peak), mkerr("stream scratch", rc, &st)
}

func rawMemAlloc(ord int, bytes uint64) (unsafe.Pointer, error) {
	var st C.c2_status
	var p unsafe.Pointer
	rc := C.w_mem_alloc(&st, C.int(ord), C.uint64_t(bytes), &p)
	return p, mkerr("Alloc", rc, &st)
}

func rawMemFree(ord int, p unsafe.Pointer) error {
	var st C.c2_status
	rc := C.w_mem_free(&st, C.int(ord), p)
	return mkerr("Free", rc, &st)
}

func rawHostAlloc(bytes uint64) (unsafe.Pointer, error) {
	var st C.c2_status
	var p unsafe.Pointer
	rc := C.w_host_alloc(&st, C.uint64_t(bytes), &p)
	return p, mkerr("AllocPinned", rc, &st)
}

func rawHostFree(p unsafe.Pointer) error {
	var st C.c2_status
	rc := C.w_host_free(&st, p)
	return mkerr("FreePinned", rc, &st)
}

func rawCopy(s stream, dst, src unsafe.Pointer, bytes uint64, kind int) error {
	var st C.c2_status
	rc := C.w_copy(&st, C.uintptr_t(s.h), dst, src, C.uint64_t(bytes), C.int(kind))
	return mkerr("copy", rc, &st)
}

// rawNTT serves the package's tests (direct_test.go): cgo is
// not allowed in test files.
func rawNTT(s stream, data ptr, logN, kind int, k *nttConsts) error {
	var st C.c2_status
	rc := C.w_ntt(&st, C.uintptr_t(s.h), data.p, cbool(data.dev), C.int(logN), C.int(kind), unsafe.Pointer(k))
	runtime.KeepAlive(k)
	return mkerr("NTT", rc, &st)
}

// rawComputeH runs c2_compute_h; two stages host vectors in two device
// vectors instead of three (C2_H_TWO_VECTORS).
func rawComputeH(s stream, a, b, c ptr, logN int, k *nttConsts, two bool) error {
	var st C.c2_status
	flags := C.int(0)
	if a.dev {
		flags |= C.C2_H_ON_DEVICE
	} else if two {
		flags |= C.C2_H_TWO_VECTORS
	}
	rc := C.w_compute_h(&st, C.uintptr_t(s.h), a.p, b.p, c.p, flags, C.int(logN), unsafe.Pointer(k))
	runtime.KeepAlive(k)
	return mkerr("ComputeH", rc, &st)
}

func rawMSM(s stream, group int, bases, scalars ptr, n uint64, window int, out unsafe.Pointer) (int, int, error) {
	var st C.c2_status
	var nw, c C.int
	rc := C.w_msm(&st, C.uintptr_t(s.h), C.int(group), bases.p, cbool(bases.dev), scalars.p, cbool(scalars.dev),
		C.uint64_t(n), C.int(window), out, &nw, &c)
	return int(nw), int(c), mkerr(fmt.Sprintf("MSMG%d", group), rc, &st)
}

func rawMSMSplit(s stream, group int, bases, basesHi unsafe.Pointer, scalars ptr, n uint64, window int,
	out unsafe.Pointer) (int, int, error) {
	var st C.c2_status
	var nw, c C.int
	rc := C.w_msm_split(&st, C.uintptr_t(s.h), C.int(group), bases, basesHi, scalars.p, cbool(scalars.dev),
		C.uint64_t(n), C.int(window), out, &nw, &c)
	return int(nw), int(c), mkerr(fmt.Sprintf("MSMG%dSplit", group), rc, &st)
}

func rawShiftPoints(s stream, group int, dst, src unsafe.Pointer, n uint64, doublings int) error {
	var st C.c2_status
	rc := C.w_shift_points(&st, C.uintptr_t(s.h), C.int(group), dst, src, C.uint64_t(n), C.int(doublings))
	return mkerr(fmt.Sprintf("ShiftG%d", group), rc, &st)
}

func rawBatchAdd(s stream, group int, bases ptr, bitmap []uint64, n uint64, out unsafe.Pointer) error {
	var st C.c2_status
	var bp unsafe.Pointer
	if len(bitmap) > 0 {
		bp = unsafe.Pointer(&bitmap[0])
	}
	rc := C.w_batch_add(&st, C.uintptr_t(s.h), C.int(group), bases.p, cbool(bases.dev), bp, C.uint64_t(n), out)
	return mkerr(fmt.Sprintf("BatchAddG%d", group), rc, &st)
}

// rawFill serves the package's tests (direct_test.go): cgo is
// not allowed in test files.
func rawFill(s stream, group int, dst unsafe.Pointer, n uint64, seeds unsafe.Pointer, k uint64) error {
	var st C.c2_status
	rc := C.w_fill(&st, C.uintptr_t(s.h), C.int(group), dst, C.uint64_t(n), seeds, C.uint64_t(k))
	return mkerr("FillPoints", rc, &st)
}

func rawR1CSEval(s stream, r *R1CS, w, abc unsafe.Pointer, inputs, ones, idx, vals unsafe.Pointer, ntail uint64,
	logN int) (uint64, error) {
	var st C.c2_status
	var cr C.c2_r1cs
	for i, m := range r.Mats {
		cr.m[i].row_start = (*C.uint32_t)(m.RowStart.p)
		cr.m[i].col = (*C.uint32_t)(m.Col.p)
		cr.m[i].coeff = (*C.uint16_t)(m.Coeff.p)
	}
	cr.coeffs = r.Coeffs.p
	cr.kinds = (*C.uint8_t)(r.Kinds.p)
	cr.constraints = C.uint64_t(r.Constraints)
	cr.inputs = C.uint64_t(r.Inputs)
	cr.aux = C.uint64_t(r.Aux)
	var bad C.uint64_t
	rc := C.w_r1cs_eval(&st, C.uintptr_t(s.h), &cr, w, inputs, ones, idx, vals, C.uint64_t(ntail), abc, C.int(logN), &bad)
	return uint64(bad), mkerr("EvalR1CS", rc, &st)
}

func rawSelect(s stream, dst, src unsafe.Pointer, n uint64, bitmap []uint64, count uint64) error {
	var st C.c2_status
	rc := C.w_select(&st, C.uintptr_t(s.h), dst, src, C.uint64_t(n), unsafe.Pointer(unsafe.SliceData(bitmap)),
		C.uint64_t(count))
	return mkerr("Select", rc, &st)
}

func rawMSMIndexed(s stream, group int, bases unsafe.Pointer, nbases uint64, idx []uint32, scalars unsafe.Pointer,
	window int, out unsafe.Pointer) (int, error) {
	var st C.c2_status
	var nw, c C.int
	rc := C.w_msm_indexed(&st, C.uintptr_t(s.h), C.int(group), bases, C.uint64_t(nbases),
		unsafe.Pointer(unsafe.SliceData(idx)), scalars, C.uint64_t(len(idx)), C.int(window), out, &nw, &c)
	return int(nw), mkerr(fmt.Sprintf("MSMG%dIndexed", group), rc, &st)
}

func rawFixedBaseTable(s stream, group int, base unsafe.Pointer, windows int, table unsafe.Pointer) error {
	var st C.c2_status
	rc := C.w_fixed_base_table(&st, C.uintptr_t(s.h), C.int(group), base, C.int(windows), table)
	return mkerr(fmt.Sprintf("FixedBaseTableG%d", group), rc, &st)
}

func rawFixedBaseMul(s stream, group int, table unsafe.Pointer, windows int, scalars ptr, n uint64, out unsafe.Pointer,
	offset uint64) error {
	var st C.c2_status
	rc := C.w_fixed_base_mul(&st, C.uintptr_t(s.h), C.int(group), table, C.int(windows), scalars.p, cbool(scalars.dev),
		C.uint64_t(n), out, C.uint64_t(offset))
	return mkerr(fmt.Sprintf("FixedBaseMulG%d", group), rc, &st)
}
