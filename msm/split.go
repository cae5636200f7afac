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
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

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

// NewSplit classifies the scalars of a query made of segs. It fails when a
// density's length differs from its segment's, or when the query would have
// 2^32 bases or more.
func NewSplit(segs ...Segment) (*Split, error) {
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
	base := 0
	add := func(v *fr.Element) {
		switch {
		case v.IsZero():
			sp.NumZeros++
		case *v == frOne:
			sp.Ones[base>>6] |= 1 << (uint(base) & 63)
			sp.NumOnes++
		default:
			sp.TailIdx = append(sp.TailIdx, uint32(base))
			sp.Tail = append(sp.Tail, *v)
		}
		base++
	}
	for _, s := range segs {
		if s.Density == nil {
			for i := range s.Scalars {
				add(&s.Scalars[i])
			}
			continue
		}
		for w, word := range s.Density.Words() {
			for word != 0 {
				i := w<<6 + bits.TrailingZeros64(word)
				word &= word - 1
				add(&s.Scalars[i])
			}
		}
	}
	return sp, nil
}
