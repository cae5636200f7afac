package gpu

import (
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
)

// The device memory a slot reserves is its buffers plus the most scratch
// one of its library calls allocates (cuda.OpTime.Scratch measures it).
// The functions below model each call's scratch from the allocations the
// library makes (gpu/cuda: msm.cuh, msm.cu, ntt.cu, r1cs.cu), as upper
// bounds for any input the device contract admits.

const (
	g1Size = int64(unsafe.Sizeof(bls.G1Affine{}))
	g2Size = int64(unsafe.Sizeof(bls.G2Affine{}))
	frSize = int64(fr.Bytes)
	g1XYZZ = 4 * 48
	g2XYZZ = 4 * 96
	// slotSlop covers the allocations no model below counts: CUDA events,
	// the pool's alignment and granularity.
	slotSlop = 64 << 20
	// libChunk is the most points msm_impl digits and sorts at once
	// (MSM_CHUNK), libPiece the most points one accumulation task adds
	// (MSM_PIECE).
	libChunk = 1 << 24
	libPiece = 128
	// hostChunk is the most points an MSM whose bases stream from the host
	// takes at once (gpu/cuda: hostChunkLog).
	hostChunk = 1 << 22
	// splitMaxC is the widest window of a split MSM (MSM_SPLIT_MAX_C).
	splitMaxC = 22
	// threadsPerSM bounds the threads an SM holds at once (2,048 on every
	// GPU since compute capability 3.0), which bounds the partial sums of
	// the window sums and of batch additions.
	threadsPerSM = 2048
)

// tailPiece is the most tail scalars one indexed MSM takes (cudaTail cuts
// longer tails into pieces), so that the bases it gathers on the device
// stay small; a variable for tests.
var tailPiece = 1 << 23

// msmGroup is the sizes of one group's points, in bytes, and the widest
// window its MSM entry allows.
type msmGroup struct {
	point, xyzz int64
	maxC        int
}

var (
	msmG1 = msmGroup{point: g1Size, xyzz: g1XYZZ, maxC: 21}
	msmG2 = msmGroup{point: g2Size, xyzz: g2XYZZ, maxC: 20}
)

// msmWindows mirrors msm_pick_window (gpu/cuda/digits.cuh): of the window
// widths c <= maxC, the layout of W = ceil(256/c) windows, the widest of
// ceil(256/W) bits, that minimises W·(n + 2.7·2^(widest-1)).
func msmWindows(n int64, maxC int) (W, widest int64) {
	best := -1.0
	for c := int64(4); c <= int64(maxC); c++ {
		w := (256 + c - 1) / c
		wide := (256 + w - 1) / w
		cost := float64(w) * (float64(n) + 2.7*float64(int64(1)<<(wide-1)))
		if best < 0 || cost < best {
			W, widest, best = w, wide, cost
		}
	}
	return W, widest
}

// splitPairs mirrors msm_pick_split (gpu/cuda/digits.cuh): the split MSM
// of n points (2n points of 128-bit scalars) in H window pairs, the widest
// of ceil(128/H) <= maxC bits, that minimises H·(2n + 2.7·2^(widest-1)).
func splitPairs(n int64, maxC int) (H, widest int64) {
	best := -1.0
	for h := int64(1); h <= 32; h++ {
		wide := (128 + h - 1) / h
		if wide > int64(maxC) {
			continue
		}
		cost := float64(h) * (2*float64(n) + 2.7*float64(int64(1)<<(wide-1)))
		if best < 0 || cost < best {
			H, widest, best = h, wide, cost
		}
	}
	return H, widest
}

// msmScratch bounds the scratch of one MSM of n points (msm_impl) on a
// device of sms SMs: the digits' keys and values and their sort, the
// buckets with their bounds, sizes, order and tasks, the extra pieces'
// sums, the window sums' partial sums, and double-buffered staging for the
// bases and scalars that come from the host.
func msmScratch(n int64, g msmGroup, hostBases, hostScalars bool, sms int64) int64 {
	if n == 0 {
		return 0
	}
	W, widest := msmWindows(n, g.maxC)
	return layoutScratch(n, W, W, widest, g, hostBases, hostScalars, sms)
}

// splitScratch bounds the scratch of one split MSM of n points over
// resident bases and their high copy (c2_msm_split): 2H windows of digits
// a point, H bucket sets.
func splitScratch(n int64, g msmGroup, hostScalars bool, sms int64) int64 {
	if n == 0 {
		return 0
	}
	H, widest := splitPairs(n, splitMaxC)
	return layoutScratch(n, 2*H, H, widest, g, false, hostScalars, sms)
}

// layoutScratch is msm_impl's scratch for n points in W windows of digits
// a point and NS sets of 2^(widest-1) buckets.
func layoutScratch(n, W, NS, widest int64, g msmGroup, hostBases, hostScalars bool, sms int64) int64 {
	tb := NS << (widest - 1)
	ch := min(n, libChunk)
	if hostBases {
		ch = min(n, hostChunk)
	}
	m := W * ch
	extra := m/libPiece + 1
	s := 16*m + // keys and values, two buffers each
		m/4 + // the radix sort's temporary storage (cub: its look-back, about 0.2 byte a pair)
		tb*(g.xyzz+24) + // buckets; starts, ends; sizes and ids, two buffers each
		8*(tb+1) + // pieces and first task of each bucket
		4*(tb+extra) + // task owners
		extra*g.xyzz + // sums of the extra pieces
		min(tb, max(NS, sms*threadsPerSM))*g.xyzz // window segments' sums (tasks.cuh: window_segments)
	if hostScalars {
		s += 2 * ch * frSize
	}
	if hostBases {
		s += 2 * ch * g.point
	}
	return s
}

// indexedScratch bounds the scratch of one indexed MSM of n tail points
// over resident bases (c2_msm_indexed): the gathered points and their
// indices, then an MSM over them with the scalars from the host.
func indexedScratch(n int64, g msmGroup, sms int64) int64 {
	return n*(g.point+4) + msmScratch(n, g, false, true, sms)
}

// batchScratch bounds the scratch of one batch addition of n bases
// (batch_add_impl): the bitmap, the per-word counts and their scan, one
// partial sum per resident thread, and the bases when they come from the
// host.
func batchScratch(n int64, g msmGroup, hostBases bool, sms int64) int64 {
	if n == 0 {
		return 0
	}
	words := (n + 63) / 64
	s := 8*words + 8*words + 4*words + // bitmap, counts and firsts, the scan's storage
		min(max(1, n/64), sms*threadsPerSM)*g.xyzz
	if hostBases {
		s += n * g.point
	}
	return s
}

// nttScratch bounds the twiddle tables of a transform or of the H pipeline
// over 2^logN (table_set, k_inner_twiddles, build_full in ntt.cu): four
// tables of 2^ceil(k/2) low powers and 2^floor(k/2) high ones, two of them
// with a row table of at most 2^rowLog elements, and two tables of 2^9
// inner twiddles (the pipeline with fused passes holds both roots' at
// once), twiddleSize bytes an entry but the row tables' frSize; and past
// 2^rowLog, the table of every power of the root below 2^(logN-1), frSize
// bytes an entry (2 GiB at 2^27).
func nttScratch(logN int) int64 {
	lo, hi := int64(1)<<((logN+1)/2), int64(1)<<(logN/2)
	s := twiddleSize*(4*(lo+hi)+2<<9) + frSize*2*(int64(1)<<min(logN, rowLog))
	if logN > rowLog {
		s += frSize << (logN - 1)
	}
	return s
}

// rowLog is the longest row, 2^rowLog elements, whose twiddles the
// transforms read from a row table (ntt.cu's C2_NTT_ROW_LOG).
const rowLog = 18

// twiddleSize is the size of a table entry of the transforms: a Shoup
// multiplier (ntt.cu's fr_tw: 17 words padded to 80 bytes).
const twiddleSize = 80

// evalScratch bounds the scratch of one R1CS evaluation with aux values
// and at most rows constraints (c2_r1cs_eval): a sparse witness's bitmaps of
// ones and of tail values; the tail, at most every aux value, with their
// indices; and the list of the long rows (k_eval_long), at most every row.
func evalScratch(aux, rows int64) int64 {
	words := (aux + 63) / 64
	return 2*8*words + aux*(4+frSize) + 64 + 4 + 4*rows
}

// selectScratch is the scratch of one selection from n values (c2_select):
// its bitmap and each word's first index.
func selectScratch(n int64) int64 { return (n + 63) / 64 * 12 }

// slotBytes is the device memory one slot under pk holds: for the witness
// pass (nvars > 0 variables) its w and a‖b‖c buffers, plus the most scratch
// any one of its calls allocates, with the key resident or streamed. Without
// the witness pass, ComputeH stages a, b and c from the host in three device
// vectors, or in two with twoVectors (cuda.Device.ComputeHTwoVectors).
func (c *CUDA) slotBytes(pk *groth16.ProvingKey, resident bool, nvars int, twoVectors bool) int64 {
	var on sections
	if resident {
		on = allSections
	}
	return c.slotBytesOn(pk, on, nvars, twoVectors)
}

// sections is a set of a key's sections, bit s for Section s.
type sections uint8

const allSections = sections(1<<SectionH | 1<<SectionL | 1<<SectionA | 1<<SectionBG1 | 1<<SectionBG2)

func (s sections) has(sec Section) bool { return s&(1<<sec) != 0 }

// slotBytesOn is slotBytes for a key whose sections in on are on the
// device and whose others stream from the host.
func (c *CUDA) slotBytesOn(pk *groth16.ProvingKey, on sections, nvars int, twoVectors bool) int64 {
	resident := on == allSections
	sms := int64(c.sms)
	n := int64(pk.DomainSize())
	z := pk.Sizes()
	logN := 0
	for int64(1)<<logN < n {
		logN++
	}
	witness := nvars > 0
	// H: the R1CS evaluation (the witness pass) and the transforms, then
	// H's MSM, whose scalars are on the device in the witness pass and else
	// come from the host (with a, b and c before it: ComputeH's staging).
	// The witness pass also selects the dense queries' scalars.
	stage := nttScratch(logN)
	if witness {
		stage = max(stage, evalScratch(int64(nvars), n), selectScratch(int64(nvars)))
	} else if twoVectors {
		stage += 2 * n * frSize
	} else {
		stage += 3 * n * frSize
	}
	stage = max(stage, msmScratch(n-1, msmG1, !on.has(SectionH), !witness, sms))
	if c.splitsH(int(n-1)) && witness && resident {
		stage = max(stage, splitScratch(n-1, msmG1, false, sms)) // attachHigh
	}
	// The other queries: every scalar from the host (a dense query), the
	// MSM of its selection from the device's witness (never more), or a
	// tail of at most the whole query, indexed over resident bases in
	// pieces or gathered on the host; and the batch additions, whose
	// streamed bases come in chunks.
	for _, q := range []struct {
		sec Section
		n   int64
		g   msmGroup
	}{{SectionL, int64(z.L), msmG1}, {SectionA, int64(z.A), msmG1}, {SectionBG1, int64(z.BG1), msmG1}, {SectionBG2, int64(z.BG2), msmG2}} {
		stage = max(stage, msmScratch(q.n, q.g, !on.has(q.sec), true, sms))
		if on.has(q.sec) {
			stage = max(stage, indexedScratch(min(q.n, int64(tailPiece)), q.g, sms), batchScratch(q.n, q.g, false, sms))
		} else {
			stage = max(stage, batchScratch(min(q.n, int64(batchChunk)), q.g, true, sms))
		}
	}
	if witness {
		return 3*n*frSize + int64(nvars)*frSize + stage + slotSlop
	}
	return stage + slotSlop
}
