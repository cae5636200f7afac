package gadget

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

func bitsValue(bits []Bit) *big.Int {
	v := new(big.Int)
	for i := len(bits) - 1; i >= 0; i-- {
		v.Lsh(v, 1)
		if bits[i].Value() {
			v.SetBit(v, 0, 1)
		}
	}
	return v
}

// toBits records the little-endian bit decomposition of x, strict or not,
// in a new system.
func toBits(x fr.Element, strict bool) (*r1cs.System, []Bit) {
	s := r1cs.NewSystem()
	cs := New(s)
	n := cs.AllocNum(x)
	if strict {
		return s, cs.toBitsLEStrict(nil, n)
	}
	return s, cs.ToBitsLE(nil, n)
}

func TestToBitsLE(t *testing.T) {
	var minusOne fr.Element
	minusOne.Neg(&feOne)
	for _, x := range append(randElements(3, 31), minusOne, fr.Element{}) {
		for _, strict := range []bool{false, true} {
			s, bits := toBits(x, strict)
			if !strict {
				require.Equal(t, 256, s.NumConstraints(), "255 booleanity + 1 packing")
			}
			require.Len(t, bits, 255)
			var want big.Int
			x.BigInt(&want)
			require.Equal(t, 0, want.Cmp(bitsValue(bits)))
			require.NoError(t, s.IsSatisfied())
			requireFlipBreaks(t, s, 1+17)
		}
	}
}

// TestToBitsStrictRejectsOverflow sets the bits to x + r, which the
// non-strict decomposition accepts (it only checks the sum modulo r) and the
// strict one must reject.
func TestToBitsStrictRejectsOverflow(t *testing.T) {
	x := new(big.Int).SetInt64(5)
	y := new(big.Int).Add(x, fr.Modulus())
	var xe fr.Element
	xe.SetBigInt(x)
	for _, strict := range []bool{false, true} {
		s, bits := toBits(xe, strict)
		require.NoError(t, s.IsSatisfied())
		for i, b := range bits {
			s.Aux()[b.Variable().Index()] = feBool(y.Bit(i) == 1)
		}
		if strict {
			require.Error(t, satisfiedAfterFixingAnds(s))
		} else {
			require.NoError(t, s.IsSatisfied())
		}
	}
}

// satisfiedAfterFixingAnds recomputes the helper variables of the strict
// decomposition — the ANDs over runs of ones, constraints x·y = z with one
// term on each side — from the (tampered) bits, as a cheating prover would,
// and checks the system.
func satisfiedAfterFixingAnds(s *r1cs.System) error {
	a, b := s.A(), s.B()
	c := s.C()
	for j := 0; j < s.NumConstraints(); j++ {
		if c.RowStart[j+1]-c.RowStart[j] != 1 || a.RowStart[j+1]-a.RowStart[j] != 1 || b.RowStart[j+1]-b.RowStart[j] != 1 {
			continue
		}
		out := c.Vars[c.RowStart[j]]
		x := s.Value(a.Vars[a.RowStart[j]])
		y := s.Value(b.Vars[b.RowStart[j]])
		s.Aux()[out.Index()].Mul(&x, &y)
	}
	return s.IsSatisfied()
}

func TestPack(t *testing.T) {
	s := r1cs.NewSystem()
	cs := New(s)
	var bits []Bit
	for i := 0; i < 300; i++ {
		switch i % 5 {
		case 0:
			bits = append(bits, Constant(i%3 == 0))
		case 1:
			bits = append(bits, cs.AllocBit(i%7 < 3).Not())
		default:
			bits = append(bits, cs.AllocBit(i%7 < 3))
		}
	}
	p := cs.PackBits(bits)
	cs.PackIntoInputs(bits)
	require.NoError(t, s.IsSatisfied())
	var want1, want2, got fr.Element
	want1.SetBigInt(bitsValue(bits[:Capacity]))
	want2.SetBigInt(bitsValue(bits[Capacity:]))
	require.Equal(t, want1, p.Value)
	require.Equal(t, 3, s.NumInputs())
	require.Equal(t, want1, s.Inputs()[1])
	require.Equal(t, want2, s.Inputs()[2])
	got = s.Inputs()[2]
	s.Inputs()[2].Add(&got, &feOne)
	require.Error(t, s.IsSatisfied())
}

func TestSHA254Node(t *testing.T) {
	kids := randElements(2, 41)
	want := SHA254Node(kids...)
	s := r1cs.NewSystem()
	cs := New(s)
	a, b := cs.AllocNum(kids[0]), cs.AllocNum(kids[1])
	got := cs.SHA254NodeCircuit(a, b)
	require.Equal(t, want, got.Value)
	// Model oracle: treed hash2 (two children allocated, then the hash).
	require.Equal(t, r1cs.Counts{Constraints: 45379, Inputs: 1, Aux: 45333, AAux: 45330, BInputs: 1, BAux: 11498}, s.Counts())
	require.NoError(t, s.IsSatisfied())
	requireFlipBreaks(t, s, 5)
}

func TestSHA254TrimsTopBits(t *testing.T) {
	for i := 0; i < 64; i++ {
		d := SHA254([]byte{byte(i)})
		require.Zero(t, d[31]&0xc0)
	}
}

func TestInsert(t *testing.T) {
	for _, tc := range []struct{ size, cons int }{{2, 2}, {4, 8}, {8, 22}, {16, 16 * 15}} {
		els := randElements(tc.size-1, uint64(tc.size))
		el := randElements(1, 1000)[0]
		for pos := 0; pos < tc.size; pos++ {
			s := r1cs.NewSystem()
			cs := New(s)
			var bits []Bit
			for j := 0; 1<<j < tc.size; j++ {
				bits = append(bits, cs.AllocBit(pos>>j&1 == 1))
			}
			n := cs.AllocNum(el)
			var ns []Num
			for _, e := range els {
				ns = append(ns, cs.AllocNum(e))
			}
			before := s.NumConstraints()
			out := cs.Insert(nil, n, bits, ns)
			require.Equal(t, tc.cons, s.NumConstraints()-before, "size %d", tc.size)
			want := append(append(append([]fr.Element(nil), els[:pos]...), el), els[pos:]...)
			for i := range out {
				require.Equal(t, want[i], out[i].Value, "size %d pos %d slot %d", tc.size, pos, i)
			}
			require.NoError(t, s.IsSatisfied())
			requireFlipBreaks(t, s, 0)
		}
	}
}

func TestUInt64(t *testing.T) {
	s := r1cs.NewSystem()
	cs := New(s)
	const v = 0xfedcba9876543210
	u := cs.AllocUInt64(v)
	cs.PackUInt64IntoInput(&u)
	require.Equal(t, 65, s.NumConstraints())
	var want fr.Element
	want.SetUint64(v)
	require.Equal(t, want, s.Inputs()[1])
	be := u.AppendBitsBE(nil)
	require.True(t, be[0].Value()) // top bit of 0xf…
	require.False(t, be[63].Value())
	require.NoError(t, s.IsSatisfied())
	requireFlipBreaks(t, s, 4)
}

// TestToBitsStrictCharacteristic mirrors bellpepper's test_into_bits_strict:
// decompose r − 1, then turn its bits into those of r by setting the least
// significant one; the conditional booleanity constraint of that bit (the
// last before the packing constraint) must be the first to fail.
func TestToBitsStrictCharacteristic(t *testing.T) {
	var minusOne fr.Element
	minusOne.Neg(&feOne)
	s := r1cs.NewSystem()
	cs := New(s)
	bits := cs.toBitsLEStrict(nil, cs.AllocNum(minusOne))
	require.NoError(t, s.IsSatisfied())
	require.False(t, bits[0].Value())
	s.Aux()[bits[0].Variable().Index()] = feOne
	var ue *r1cs.UnsatisfiedError
	require.ErrorAs(t, s.IsSatisfied(), &ue)
	require.Equal(t, s.NumConstraints()-2, ue.Index)
}

// AllocBitConditionally allocates a bit holding val that must be false when
// mustBeFalse is set: (1 − mustBeFalse − v)·v = 0
// (AllocatedBit::alloc_conditionally).
func (cs *CS) AllocBitConditionally(val bool, mustBeFalse Bit) Bit {
	v := cs.alloc(feBool(val))
	if cs.record {
		cs.la = append(cs.la[:0], r1cs.Term{Var: r1cs.One, Coeff: feOne},
			r1cs.Term{Var: mustBeFalse.v, Coeff: feMinusOne}, r1cs.Term{Var: v, Coeff: feMinusOne})
		cs.lb = append(cs.lb[:0], r1cs.Term{Var: v, Coeff: feOne})
		cs.enforce(cs.la, cs.lb, nil)
	}
	return isBit(v, val)
}

// rMinusOne holds the bits of r − 1, least significant first.
var rMinusOne = func() [4]uint64 {
	var e fr.Element
	e.Neg(&feOne)
	return e.Bits()
}()

// toBitsLEStrict decomposes n into 255 bits, least significant first, and
// proves the bits encode an integer below r (AllocatedNum::to_bits_le_strict):
// bits of r − 1 that are one are allocated freely, and each run of ones is
// AND-ed so that a following bit where r − 1 is zero is allocated
// conditionally. The bits are appended to dst.
func (cs *CS) toBitsLEStrict(dst []Bit, n Num) []Bit {
	a := n.Value.Bits()
	bit := func(x *[4]uint64, i int) bool { return x[i/64]>>(i%64)&1 == 1 }
	var result, run []Bit // big-endian
	var lastRun Bit
	haveLast := false
	found := false
	for i := 255; i >= 0; i-- {
		rb := bit(&rMinusOne, i)
		found = found || rb
		if !found {
			continue
		}
		av := bit(&a, i)
		if rb {
			b := cs.AllocBit(av)
			run = append(run, b)
			result = append(result, b)
			continue
		}
		if len(run) > 0 {
			if haveLast {
				run = append(run, lastRun)
			}
			cur := run[0]
			for _, x := range run[1:] {
				cur = cs.bitAnd(cur, x)
			}
			lastRun, haveLast = cur, true
			run = run[:0]
		}
		result = append(result, cs.AllocBitConditionally(av, lastRun))
	}
	if cs.record {
		cs.lc = cs.lc[:0]
		for i := range result {
			cs.lc = append(cs.lc, r1cs.Term{Var: result[len(result)-1-i].v, Coeff: pow2[i]})
		}
		cs.lc = append(cs.lc, r1cs.Term{Var: n.Var, Coeff: feMinusOne})
		cs.enforce(nil, nil, cs.lc)
	}
	for i := len(result) - 1; i >= 0; i-- {
		dst = append(dst, result[i])
	}
	return dst
}
