// Package poseidon is neptune's Poseidon hash over the BLS12-381 scalar field
// as Filecoin uses it: strength Standard, hash type MerkleTree (domain tag
// 2^arity − 1 in the first state element), x^5 S-box, 8 full rounds and the
// partial rounds neptune derives for each width.
//
// All constants are generated here as neptune generates them — round numbers,
// Grain LFSR round constants, the Cauchy MDS matrix — together with the
// optimized forms the R1CS gadget uses as coefficients: compressed round
// constants, the dense pre-sparse matrix and the sparse matrices of the
// partial rounds.
package poseidon

import (
	"fmt"
	"math"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// MaxArity is the largest arity supported (Filecoin instantiates up to 36).
const MaxArity = 36

// Sparse is one of the sparse matrices of the partial rounds: the identity
// except for the first column WHat and the rest of the first row VRest.
type Sparse struct {
	WHat  []fr.Element // length width
	VRest []fr.Element // length width − 1
}

// Constants holds everything the native hash and the circuit need for one
// arity.
type Constants struct {
	Arity         int
	Width         int // Arity + 1
	FullRounds    int
	PartialRounds int
	DomainTag     fr.Element

	RoundConstants []fr.Element   // (FullRounds + PartialRounds)·Width, Grain LFSR order
	MDS            [][]fr.Element // Cauchy matrix 1/(x_i + y_j), symmetric
	MDSInv         [][]fr.Element

	Compressed []fr.Element   // FullRounds·Width + PartialRounds
	PreSparse  [][]fr.Element // dense matrix of the last initial full round
	Sparse     []Sparse       // one per partial round
}

// UnsupportedArityError reports an arity outside 1..MaxArity.
type UnsupportedArityError int

func (e UnsupportedArityError) Error() string {
	return fmt.Sprintf("poseidon: unsupported arity %d (want 1..%d)", int(e), MaxArity)
}

var cache [MaxArity + 1]struct {
	once sync.Once
	c    *Constants
}

// Get returns the Standard / MerkleTree constants for arity, computed once.
func Get(arity int) (*Constants, error) {
	if arity < 1 || arity > MaxArity {
		return nil, UnsupportedArityError(arity)
	}
	e := &cache[arity]
	e.once.Do(func() { e.c = newConstants(arity) })
	return e.c, nil
}

// MustGet is Get for arities known to be valid; it panics otherwise.
func MustGet(arity int) *Constants {
	c, err := Get(arity)
	if err != nil {
		panic(err)
	}
	return c
}

func newConstants(arity int) *Constants {
	t := arity + 1
	rf, rp := RoundNumbers(arity)
	c := &Constants{Arity: arity, Width: t, FullRounds: rf, PartialRounds: rp}
	// MerkleTree domain tag 2^arity − 1.
	var tag fr.Element
	tag.SetUint64(1)
	for i := 0; i < arity; i++ {
		tag.Double(&tag)
	}
	c.DomainTag.Sub(&tag, new(fr.Element).SetOne())
	c.RoundConstants = grainConstants(t, rf, rp)
	c.MDS = cauchy(t)
	c.MDSInv = invert(c.MDS)
	c.Compressed = compress(c)
	c.PreSparse, c.Sparse = factorSparse(transpose(c.MDS), rp)
	return c
}

// RoundNumbers returns (full, partial) rounds for arity as neptune's
// round_numbers_base computes them: the cheapest secure pair for a 256-bit
// prime and M = 128, plus the security margin (RF + 2, RP × 1.075 rounded up),
// evaluated in float32 as neptune does.
func RoundNumbers(arity int) (rf, rp int) {
	t := arity + 1
	best := math.MaxInt
	for rfTest := 2; rfTest <= 1000; rfTest += 2 {
		for rpTest := 4; rpTest < 200; rpTest++ {
			if !roundsSecure(t, rfTest, rpTest) {
				continue
			}
			f := rfTest + 2
			p := int(ceil32(float32(1.075) * float32(rpTest)))
			n := t*f + p
			if n < best || (n == best && f < rf) {
				rf, rp, best = f, p, n
			}
		}
	}
	return rf, rp
}

func ceil32(x float32) float32 { return float32(math.Ceil(float64(x))) }

func roundsSecure(t, rf, rp int) bool {
	const n, m = float32(256), float32(128)
	ft, frp := float32(t), float32(rp)
	rfStat := float32(10)
	if m <= (n-3)*(ft+1) {
		rfStat = 6
	}
	rfInterp := float32(0.43)*m + float32(math.Log2(float64(ft))) - frp
	rfGrob1 := float32(0.21)*n - frp
	rfGrob2 := (float32(0.14)*n - 1 - frp) / (ft - 1)
	mx := 0
	for _, x := range []float32{rfStat, rfInterp, rfGrob1, rfGrob2} {
		if c := int(ceil32(x)); c > mx {
			mx = c
		}
	}
	return rf >= mx
}

// grainConstants generates (rf + rp)·t round constants with the Grain LFSR
// of the Poseidon reference (neptune round_constants.rs): 80-bit seed
// field=1 (2 bits), sbox=1 (4), field size 255 (12), t (12), RF (10), RP (10),
// thirty ones; 160 warm-up clocks; self-shrinking output; 255-bit big-endian
// candidates rejected unless below r.
func grainConstants(t, rf, rp int) []fr.Element {
	var state [80]bool
	pos := 0
	put := func(n int, v uint64) {
		for i := n - 1; i >= 0; i-- {
			state[pos] = v>>i&1 == 1
			pos++
		}
	}
	put(2, 1)
	put(4, 1)
	put(12, 255)
	put(12, uint64(t))
	put(10, uint64(rf))
	put(10, uint64(rp))
	put(30, 1<<30-1)

	// The register is a ring: head is the index of bit 0.
	head := 0
	clock := func() bool {
		b := func(i int) bool { return state[(head+i)%80] }
		nb := b(62) != b(51) != b(38) != b(23) != b(13) != b(0)
		state[head] = nb
		head = (head + 1) % 80
		return nb
	}
	for i := 0; i < 160; i++ {
		clock()
	}
	next := func() bool {
		for {
			if clock() {
				return clock()
			}
			clock()
		}
	}
	byteOf := func(n int) byte {
		var acc byte
		for i := 0; i < n; i++ {
			acc <<= 1
			if next() {
				acc |= 1
			}
		}
		return acc
	}
	out := make([]fr.Element, 0, (rf+rp)*t)
	var be [32]byte
	for len(out) < (rf+rp)*t {
		be[0] = byteOf(255 % 8)
		for i := 1; i < 32; i++ {
			be[i] = byteOf(8)
		}
		e, err := fr.BigEndian.Element(&be)
		if err == nil {
			out = append(out, e)
		}
	}
	return out
}
