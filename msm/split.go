// Package msm computes Groth16's multi-scalar multiplications on the CPU,
// exploiting what PoRep witnesses look like: most scalars are 0 or 1.
//
// A query's scalars are first classified ([NewSplit], SupraSeal's prep_msm):
// zeros are skipped, bases whose scalar is exactly 1 are summed with batched
// affine additions ([SumG1], [SumG2]), and only the remaining "tail" goes
// through a Pippenger MSM (gnark-crypto's MultiExp). The classification is
// shared by G1 and G2 queries over the same scalars (b_g1 and b_g2).
package msm

import (
	"context"
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/r1cs"
)

// Segment is a run of assignment values. The values selected by Density (all
// of them when Density is nil) pair, in order, with consecutive bases of the
// query; Density must then have len(Scalars) entries.
type Segment struct {
	Scalars []fr.Element
	Density *r1cs.Density
}

// Split is the classification of one query's scalars. Bases are numbered in
// query order across all segments.
type Split struct {
	N        int          // number of bases the query has
	Ones     []uint64     // bitmap over bases, bit i set when scalar i is 1
	NumOnes  int          // population count of Ones
	NumZeros int          // bases whose scalar is 0
	TailIdx  []uint32     // bases whose scalar is neither 0 nor 1, increasing
	Tail     []fr.Element // their scalars, Montgomery form
}

var frOne = fr.One()

// splitPiece is the number of scalars one classifying goroutine takes at a
// time (a multiple of 64, so that pieces cover whole density words).
const splitPiece = 1 << 16

// tailKept bounds the tail values a piece keeps while it classifies: a
// piece with more (a witness of mostly other values, such as a PoSt's)
// only counts them, and writes them straight to the split's tail in a
// second pass, instead of growing a copy of most of its values.
const tailKept = splitPiece / 8

// piece is a run of one segment's scalars that one goroutine classifies.
type piece struct {
	seg, lo, hi int // scalars [lo, hi) of segs[seg]
	base        int // the query's base of scalar lo
	ones, zeros int
	ntail       int
	tailIdx     []uint32     // the tail while ntail ≤ tailKept
	tail        []fr.Element // its values
}

// addTail records base i, whose scalar v is neither 0 nor 1.
func (pc *piece) addTail(i uint32, v *fr.Element) {
	if pc.ntail < tailKept {
		pc.tailIdx = append(pc.tailIdx, i)
		pc.tail = append(pc.tail, *v)
	}
	pc.ntail++
}

// writeTail writes the piece's tail, all ntail entries, to idx and tail,
// reading its scalars in s again.
func (pc *piece) writeTail(s Segment, idx []uint32, tail []fr.Element) {
	if pc.ntail == len(pc.tail) {
		copy(idx, pc.tailIdx)
		copy(tail, pc.tail)
		return
	}
	b, o := pc.base, 0
	put := func(v *fr.Element) {
		if !v.IsZero() && *v != frOne {
			idx[o], tail[o] = uint32(b), *v
			o++
		}
		b++
	}
	if s.Density == nil {
		for i := pc.lo; i < pc.hi; i++ {
			put(&s.Scalars[i])
		}
		return
	}
	words := s.Density.Words()
	for w := pc.lo >> 6; w < (pc.hi+63)>>6; w++ {
		for word := words[w]; word != 0; word &= word - 1 {
			put(&s.Scalars[w<<6+bits.TrailingZeros64(word)])
		}
	}
}

// classifyDense classifies v, whose first scalar is base number base (a
// multiple of 64), writing the bits of ones from ones[0]: its whole words
// belong to this piece alone, a last partial one is shared with the next
// segment's first piece. Ones and zeros are counted without a branch on the
// value, since a witness's bits come in no predictable order.
func (pc *piece) classifyDense(ones []uint64, v []fr.Element, base int) {
	one := frOne
	nOnes, nTail := 0, pc.ntail
	for w := 0; w*64 < len(v); w++ {
		blk := v[w*64 : min(len(v), w*64+64)]
		var word uint64
		for k := range blk {
			x := &blk[k]
			// notOne and notZero are 1 or 0: d|−d has its top bit set
			// exactly when d ≠ 0.
			d := (x[0] ^ one[0]) | (x[1] ^ one[1]) | (x[2] ^ one[2]) | (x[3] ^ one[3])
			z := x[0] | x[1] | x[2] | x[3]
			notOne, notZero := (d|-d)>>63, (z|-z)>>63
			word |= (notOne ^ 1) << uint(k)
			if notOne&notZero != 0 {
				pc.addTail(uint32(base+w*64+k), x)
			}
		}
		if len(blk) == 64 {
			ones[w] = word
		} else {
			atomic.OrUint64(&ones[w], word) // the next segment's piece shares it
		}
		nOnes += bits.OnesCount64(word)
	}
	pc.ones += nOnes
	pc.zeros += len(v) - nOnes - (pc.ntail - nTail)
}

// NewSplit classifies the scalars of a query made of segs. It fails when a
// density's length differs from its segment's, or when the query would have
// 2^32 bases or more.
func NewSplit(segs ...Segment) (*Split, error) {
	return NewSplitContext(context.Background(), segs...)
}

// NewSplitContext is NewSplit that checks ctx before each piece of
// splitPiece scalars (about a millisecond's work) and returns ctx's error,
// once every goroutine it started has returned, when ctx ends.
func NewSplitContext(ctx context.Context, segs ...Segment) (*Split, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := 0
	for i, s := range segs {
		switch {
		case s.Density == nil:
			n += len(s.Scalars)
		case s.Density.Len() != len(s.Scalars):
			return nil, fmt.Errorf("msm: segment %d has %d scalars but a density over %d", i, len(s.Scalars), s.Density.Len())
		default:
			n += s.Density.Count()
		}
	}
	if n >= 1<<32 {
		return nil, fmt.Errorf("msm: %d bases exceed 2^32", n)
	}
	sp := &Split{N: n, Ones: make([]uint64, (n+63)/64)}

	// Pieces of whole density words, classified in parallel: each knows
	// its first base from the counts of the pieces before it, collects its
	// own tail, and shares at most its first and last word of Ones with
	// its neighbours (those are written atomically).
	var pieces []*piece
	for k, s := range segs {
		for lo := 0; lo < len(s.Scalars); lo += splitPiece {
			pc := &piece{seg: k, lo: lo, hi: min(lo+splitPiece, len(s.Scalars))}
			pieces = append(pieces, pc)
		}
	}
	count := func(pc *piece) int {
		s := segs[pc.seg]
		if s.Density == nil {
			return pc.hi - pc.lo
		}
		c := 0
		for _, w := range s.Density.Words()[pc.lo>>6 : (pc.hi+63)>>6] {
			c += bits.OnesCount64(w)
		}
		return c
	}
	base := 0
	for _, pc := range pieces {
		pc.base = base
		base += count(pc)
	}
	classify := func(pc *piece) {
		s := segs[pc.seg]
		b := pc.base
		var word uint64
		wi := b >> 6
		flush := func() {
			if word != 0 {
				atomic.OrUint64(&sp.Ones[wi], word)
				word = 0
			}
		}
		add := func(v *fr.Element) {
			if b>>6 != wi {
				flush()
				wi = b >> 6
			}
			switch {
			case v.IsZero():
				pc.zeros++
			case *v == frOne:
				word |= 1 << (uint(b) & 63)
				pc.ones++
			default:
				pc.addTail(uint32(b), v)
			}
			b++
		}
		if s.Density == nil {
			if b&63 == 0 {
				pc.classifyDense(sp.Ones[b>>6:], s.Scalars[pc.lo:pc.hi], b)
				return
			}
			for i := pc.lo; i < pc.hi; i++ {
				add(&s.Scalars[i])
			}
		} else {
			words := s.Density.Words()
			for w := pc.lo >> 6; w < (pc.hi+63)>>6; w++ {
				for word := words[w]; word != 0; word &= word - 1 {
					add(&s.Scalars[w<<6+bits.TrailingZeros64(word)])
				}
			}
		}
		flush()
	}
	if err := parallel.Each(ctx, len(pieces), func(k int) { classify(pieces[k]) }); err != nil {
		return nil, err
	}
	// The pieces' tails, joined in order: each piece writes its own at its
	// offset (a witness of mostly other values has a tail of gigabytes).
	offs := make([]int, len(pieces)+1)
	for k, pc := range pieces {
		sp.NumOnes += pc.ones
		sp.NumZeros += pc.zeros
		offs[k+1] = offs[k] + pc.ntail
	}
	nt := offs[len(pieces)]
	if nt == 0 {
		return sp, nil
	}
	sp.TailIdx = make([]uint32, nt)
	sp.Tail = make([]fr.Element, nt)
	if err := parallel.Each(ctx, len(pieces), func(k int) {
		pc := pieces[k]
		pc.writeTail(segs[pc.seg], sp.TailIdx[offs[k]:offs[k+1]], sp.Tail[offs[k]:offs[k+1]])
		pc.tailIdx, pc.tail = nil, nil
	}); err != nil {
		return nil, err
	}
	return sp, nil
}

// SelectedTail returns how many of sp's tail values d selects: the tail
// NewSplitSelect(ctx, nil, sp, d) would have, without building it. It
// fails as NewSplitSelect does.
func (sp *Split) SelectedTail(ctx context.Context, d *r1cs.Density) (int, error) {
	if d.Len() != sp.N {
		return 0, fmt.Errorf("msm: a density over %d values selects from a split of %d", d.Len(), sp.N)
	}
	if err := sp.check(); err != nil {
		return 0, err
	}
	counts, err := sp.selectedTail(ctx, d)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return n, nil
}

// selectedTail counts the tail values d selects in pieces of splitPiece
// entries of sp's tail, on all cores: counts[k+1] is piece k's (counts[0]
// is 0).
func (sp *Split) selectedTail(ctx context.Context, d *r1cs.Density) ([]int, error) {
	words := d.Words()
	nt := len(sp.TailIdx)
	pieces := (nt + splitPiece - 1) / splitPiece
	counts := make([]int, pieces+1)
	err := parallel.Each(ctx, pieces, func(k int) {
		c := 0
		for _, i := range sp.TailIdx[k*splitPiece : min(nt, (k+1)*splitPiece)] {
			c += int(words[i>>6] >> (i & 63) & 1)
		}
		counts[k+1] = c
	})
	return counts, err
}

// check reports a split whose bitmap or tail does not fit its N (one not
// made by NewSplit or NewSplitSelect), naming the field at fault.
func (sp *Split) check() error {
	if sp.N < 0 || sp.N >= 1<<32 {
		return fmt.Errorf("msm: split of %d bases", sp.N)
	}
	if len(sp.Ones) != (sp.N+63)/64 {
		return fmt.Errorf("msm: split of %d bases has %d words of Ones, want %d", sp.N, len(sp.Ones), (sp.N+63)/64)
	}
	if len(sp.Tail) != len(sp.TailIdx) {
		return fmt.Errorf("msm: split has %d TailIdx entries but %d Tail scalars", len(sp.TailIdx), len(sp.Tail))
	}
	if k := parallel.FirstUnsorted(sp.TailIdx, sp.N); k >= 0 {
		return fmt.Errorf("msm: split's TailIdx[%d] = %d is not increasing below N = %d", k, sp.TailIdx[k], sp.N)
	}
	return nil
}

// compress8[sel<<8|x] holds the bits of x at the positions set in sel,
// moved down to the lowest bits in order (PEXT on a byte).
var compress8 = func() (t [1 << 16]uint8) {
	for sel := range 256 {
		for x := range 256 {
			var v uint8
			k := 0
			for i := range 8 {
				if sel>>i&1 == 1 {
					v |= uint8(x>>i&1) << k
					k++
				}
			}
			t[sel<<8|x] = v
		}
	}
	return t
}()

// NewSplitSelect returns the split of a query made of head's segments
// followed by the values that src classifies, selected by d: what NewSplit
// returns for head's segments and Segment{Scalars: values, Density: d},
// where src = NewSplit(Segment{Scalars: values}). It reads src's bitmap and
// tail instead of the values (the A and B queries of a Groth16 proof select
// from the aux values that L's split already classified). It fails when d's
// length differs from src.N or the query would have 2^32 bases or more, and
// returns ctx's error when ctx ends.
func NewSplitSelect(ctx context.Context, head []Segment, src *Split, d *r1cs.Density) (*Split, error) {
	hs, err := NewSplitContext(ctx, head...)
	if err != nil {
		return nil, err
	}
	if src == nil || d == nil {
		return nil, fmt.Errorf("msm: NewSplitSelect needs a split and a density")
	}
	if d.Len() != src.N {
		return nil, fmt.Errorf("msm: a density over %d values selects from a split of %d", d.Len(), src.N)
	}
	if err := src.check(); err != nil {
		return nil, err
	}
	words := d.Words()
	// rank[w]: selected values before word w.
	rank := make([]uint32, len(words)+1)
	for w, x := range words {
		rank[w+1] = rank[w] + uint32(bits.OnesCount64(x))
	}
	h := hs.N
	n := h + int(rank[len(words)])
	if n >= 1<<32 {
		return nil, fmt.Errorf("msm: %d bases exceed 2^32", n)
	}
	sp := &Split{N: n, Ones: make([]uint64, (n+63)/64)}
	copy(sp.Ones, hs.Ones)

	// The selected bits of src's bitmap, compacted: pieces of whole words
	// in parallel, sharing boundary words of sp.Ones atomically.
	const pieceWords = splitPiece / 64
	npieces := (len(words) + pieceWords - 1) / pieceWords
	var ones atomic.Int64
	err = parallel.Each(ctx, npieces, func(k int) {
		w0, w1 := k*pieceWords, min((k+1)*pieceWords, len(words))
		b := h + int(rank[w0])
		wi, pos := b>>6, uint(b)&63
		var acc uint64
		count := 0
		for w := w0; w < w1; w++ {
			sel, one := words[w], src.Ones[w]
			count += bits.OnesCount64(sel & one)
			for ; sel != 0; sel, one = sel>>8, one>>8 {
				sb := uint(sel & 0xff)
				if sb == 0 {
					continue
				}
				v := uint64(compress8[sb<<8|uint(one&0xff)])
				acc |= v << pos
				if pos += uint(bits.OnesCount8(uint8(sb))); pos >= 64 {
					if acc != 0 {
						atomic.OrUint64(&sp.Ones[wi], acc)
					}
					pos -= 64
					acc, wi = v>>(uint(bits.OnesCount8(uint8(sb)))-pos), wi+1
				}
			}
		}
		if acc != 0 {
			atomic.OrUint64(&sp.Ones[wi], acc)
		}
		ones.Add(int64(count))
	})
	if err != nil {
		return nil, err
	}

	// The selected part of src's tail: pieces of it counted, then copied
	// at their offsets, in parallel.
	nsrc := len(src.TailIdx)
	offs, err := src.selectedTail(ctx, d)
	if err != nil {
		return nil, err
	}
	npieces = len(offs) - 1
	offs[0] = len(hs.TailIdx)
	for k := range npieces {
		offs[k+1] += offs[k]
	}
	selected := func(i uint32) bool { return words[i>>6]>>(i&63)&1 != 0 }
	if nt := offs[npieces]; nt > 0 {
		sp.TailIdx = make([]uint32, nt)
		sp.Tail = make([]fr.Element, nt)
		copy(sp.TailIdx, hs.TailIdx)
		copy(sp.Tail, hs.Tail)
		if err := parallel.Each(ctx, npieces, func(k int) {
			o := offs[k]
			for t := k * splitPiece; t < min(nsrc, (k+1)*splitPiece); t++ {
				i := src.TailIdx[t]
				if !selected(i) {
					continue
				}
				w, bit := i>>6, uint(i)&63
				sp.TailIdx[o] = uint32(h) + rank[w] + uint32(bits.OnesCount64(words[w]&(1<<bit-1)))
				sp.Tail[o] = src.Tail[t]
				o++
			}
		}); err != nil {
			return nil, err
		}
	}
	sp.NumOnes = hs.NumOnes + int(ones.Load())
	sp.NumZeros = n - sp.NumOnes - len(sp.TailIdx)
	return sp, nil
}
