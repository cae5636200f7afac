// Package synth builds satisfiable synthetic circuits shaped like a PoRep
// partition, for tests and benchmarks: about 98 % of the aux values are 0 or
// 1, about a quarter of the aux variables appear in B, and a few public
// inputs are used in B.
//
// The circuit is a random program over bits (booleanity checks, AND, XOR),
// with occasional packing of bits into numbers and products of numbers, as
// SHA-256 and Poseidon gadgets produce. It is deterministic in its seed.
// [RandScalars] draws the random field elements the tests of keys and
// multi-scalar multiplications use.
package synth

import (
	"fmt"
	"math/rand/v2"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/r1cs"
)

// Shape selects a synthetic circuit.
type Shape struct {
	LogSize int    // the circuit fills a domain of 2^LogSize constraints exactly
	Inputs  int    // public inputs besides ONE (default 4 when 0)
	InputsB bool   // use the public inputs in B
	Seed    uint64 // random program and witness
}

// Op is one step of the program; Ops exist so that other constraint-system
// front ends (gnark in benchmarks) can replay exactly the same circuit.
type Op struct {
	Kind    OpKind
	X, Y, Z int        // operand/result variable numbers (see Program)
	Bits    []int      // for Pack: the bits, least significant first
	Value   fr.Element // for NewBit: the bit's value
}

// OpKind is the kind of an Op.
type OpKind uint8

const (
	NewBit     OpKind = iota // Z := fresh bit; enforce (1−Z)·Z = 0
	And                      // Z := X∧Y;  enforce X·Y = Z
	Xor                      // Z := X⊕Y;  enforce (2X)·Y = X + Y − Z
	Pack                     // Z := Σ 2^i·Bits[i]; enforce (Σ 2^i·Bits[i])·1 = Z
	Mul                      // Z := X·Y; enforce X·Y = Z
	InputMul                 // Z := X·input[Y]; enforce X·input[Y] = Z (input used in B)
	InputCheck               // enforce Z·1 = input[Y]  (ties input Y to a number)
)

// System synthesizes the circuit of shape s into a new r1cs.System and
// finalizes it; it returns the system and the public inputs it allocated
// (ONE excluded).
func System(s Shape) (*r1cs.System, []fr.Element, error) {
	sys := r1cs.NewSystem()
	inputs, err := Build(sys, s)
	if err != nil {
		return nil, nil, err
	}
	sys.Finalize()
	return sys, inputs, nil
}

// RandScalars returns n field elements drawn from rng, each the product of
// two random 64-bit values: spread over the field, not only below 2^64.
func RandScalars(rng *rand.Rand, n int) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		v[i].SetUint64(rng.Uint64())
		var hi fr.Element
		hi.SetUint64(rng.Uint64())
		v[i].Mul(&v[i], &hi)
	}
	return v
}

// Build synthesizes the circuit for shape into b and returns the public
// inputs it allocated (ONE excluded). Variables are numbered in allocation
// order: the aux variables are 0, 1, …; inputs are allocated first.
func Build(b r1cs.Builder, s Shape) ([]fr.Element, error) {
	ops, inputs, err := Program(s)
	if err != nil {
		return nil, err
	}
	var one fr.Element
	one.SetOne()
	var two fr.Element
	two.SetUint64(2)
	ins := make([]r1cs.Variable, len(inputs))
	for i := range inputs {
		ins[i] = b.AllocInput(inputs[i])
	}
	var vars []r1cs.Variable
	var pow [16]fr.Element
	pow[0].SetOne()
	for i := 1; i < len(pow); i++ {
		pow[i].Double(&pow[i-1])
	}
	val := func(i int) fr.Element { return b.Value(vars[i]) }
	for _, op := range ops {
		switch op.Kind {
		case NewBit:
			z := b.Alloc(op.Value)
			vars = append(vars, z)
			b.Enforce(r1cs.LC{}.AddVar(r1cs.One).SubVar(z), r1cs.LC{}.AddVar(z), nil)
		case And, Mul: // a product of bits or of numbers
			x, y := val(op.X), val(op.Y)
			var v fr.Element
			v.Mul(&x, &y)
			z := b.Alloc(v)
			vars = append(vars, z)
			b.Enforce(r1cs.LC{}.AddVar(vars[op.X]), r1cs.LC{}.AddVar(vars[op.Y]), r1cs.LC{}.AddVar(z))
		case Xor:
			x, y := val(op.X), val(op.Y)
			var v, t fr.Element
			v.Add(&x, &y)
			t.Mul(&x, &y)
			t.Double(&t)
			v.Sub(&v, &t)
			z := b.Alloc(v)
			vars = append(vars, z)
			b.Enforce(r1cs.LC{}.Add(vars[op.X], two), r1cs.LC{}.AddVar(vars[op.Y]),
				r1cs.LC{}.AddVar(vars[op.X]).AddVar(vars[op.Y]).SubVar(z))
		case Pack:
			var v, t fr.Element
			lc := make(r1cs.LC, 0, len(op.Bits))
			for i, bit := range op.Bits {
				x := val(bit)
				t.Mul(&x, &pow[i])
				v.Add(&v, &t)
				lc = lc.Add(vars[bit], pow[i])
			}
			z := b.Alloc(v)
			vars = append(vars, z)
			b.Enforce(lc, r1cs.LC{}.AddVar(r1cs.One), r1cs.LC{}.AddVar(z))
		case InputMul:
			x := val(op.X)
			var v fr.Element
			v.Mul(&x, &inputs[op.Y])
			z := b.Alloc(v)
			vars = append(vars, z)
			b.Enforce(r1cs.LC{}.AddVar(vars[op.X]), r1cs.LC{}.AddVar(ins[op.Y]), r1cs.LC{}.AddVar(z))
		case InputCheck:
			b.Enforce(r1cs.LC{}.AddVar(vars[op.Z]), r1cs.LC{}.AddVar(r1cs.One), r1cs.LC{}.AddVar(ins[op.Y]))
		}
	}
	return inputs, nil
}

// Program returns the operations of shape s and its public inputs (ONE
// excluded). Every op enforces exactly one constraint; there are
// 2^LogSize − (inputs + 1) of them so that, with bellperson's per-input
// constraints, the system fills its domain exactly.
func Program(s Shape) ([]Op, []fr.Element, error) {
	if s.LogSize < 4 || s.LogSize > 27 {
		return nil, nil, fmt.Errorf("synth: LogSize %d outside [4, 27]", s.LogSize)
	}
	nIn := s.Inputs
	if nIn == 0 {
		nIn = 4
	}
	total := 1<<s.LogSize - (nIn + 1)
	if total < 4*nIn+8 {
		return nil, nil, fmt.Errorf("synth: 2^%d constraints are too few for %d inputs", s.LogSize, nIn)
	}
	rng := rand.New(rand.NewPCG(s.Seed, uint64(s.LogSize)))
	ops := make([]Op, 0, total)
	var bits, checked, nums []int // variable numbers
	nvars := 0
	values := make([]fr.Element, 0, total) // aux values, to derive inputs
	emit := func(op Op, v fr.Element) {
		if op.Kind != InputCheck {
			op.Z = nvars
			nvars++
			values = append(values, v)
		}
		ops = append(ops, op)
	}
	newBit := func() {
		var v fr.Element
		if rng.IntN(2) == 1 {
			v.SetOne()
		}
		emit(Op{Kind: NewBit, Value: v}, v)
		bits = append(bits, nvars-1)
		checked = append(checked, nvars-1)
	}
	// emitProduct emits an op of kind whose value is that of variable x
	// times that of variable y.
	emitProduct := func(kind OpKind, x, y int) {
		var v fr.Element
		vx, vy := values[x], values[y]
		v.Mul(&vx, &vy)
		emit(Op{Kind: kind, X: x, Y: y}, v)
	}
	pick := func(pool []int) int {
		// Prefer recent variables, like gadgets do.
		w := min(len(pool), 256)
		return pool[len(pool)-1-rng.IntN(w)]
	}
	for range 16 {
		newBit()
	}
	inputs := make([]fr.Element, nIn)
	// Reserve room for 2 constraints per input at the end.
	body := total - len(ops) - 2*nIn
	for len(ops) < 16+body {
		r := rng.IntN(1000)
		if len(nums) == 0 && len(ops) == 16+body-1 {
			r = 980 // the last op packs bits: the inputs need a number to tie to
		}
		switch {
		case r < 200:
			newBit()
		case r < 590:
			emitProduct(And, pick(bits), pick(checked))
			bits = append(bits, nvars-1)
		case r < 980:
			x, y := pick(bits), pick(checked)
			vx, vy := values[x], values[y]
			var v, t fr.Element
			v.Add(&vx, &vy)
			t.Mul(&vx, &vy)
			t.Double(&t)
			v.Sub(&v, &t)
			emit(Op{Kind: Xor, X: x, Y: y}, v)
			bits = append(bits, nvars-1)
		case r < 995, len(nums) < 2:
			k := 8 + rng.IntN(9)
			op := Op{Kind: Pack, Bits: make([]int, k)}
			var v, p fr.Element
			p.SetOne()
			for i := range op.Bits {
				op.Bits[i] = pick(bits)
				t := values[op.Bits[i]]
				t.Mul(&t, &p)
				v.Add(&v, &t)
				p.Double(&p)
			}
			emit(op, v)
			nums = append(nums, nvars-1)
		default:
			emitProduct(Mul, pick(nums), pick(nums))
			nums = append(nums, nvars-1)
		}
	}
	// Tie each input to a number (Z·1 = input), and, when asked, use it in B.
	for i := range inputs {
		if len(nums) == 0 {
			return nil, nil, fmt.Errorf("synth: no number to tie input %d to", i)
		}
		z := pick(nums)
		inputs[i] = values[z]
		emit(Op{Kind: InputCheck, Y: i, Z: z}, fr.Element{})
		if s.InputsB {
			x := pick(bits)
			var v fr.Element
			vx := values[x]
			v.Mul(&vx, &inputs[i])
			emit(Op{Kind: InputMul, X: x, Y: i}, v)
		} else {
			newBit()
		}
	}
	if len(ops) != total {
		return nil, nil, fmt.Errorf("synth: internal: %d ops, want %d", len(ops), total)
	}
	return ops, inputs, nil
}
