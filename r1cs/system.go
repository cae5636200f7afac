package r1cs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Density is a bitmap over the variables of one sequence (inputs or aux):
// bit i is set when variable i has a non-zero coefficient in the matrix the
// density belongs to. It mirrors bellperson's DensityTracker.
type Density struct {
	bits []uint64
	n    int
}

// Len returns the number of variables tracked.
func (d *Density) Len() int { return d.n }

// Get reports whether variable i is dense. i must be in [0, Len()).
func (d *Density) Get(i int) bool { return d.bits[i>>6]>>(uint(i)&63)&1 == 1 }

// Count returns the number of dense variables.
func (d *Density) Count() int {
	c := 0
	for _, w := range d.bits {
		c += bits.OnesCount64(w)
	}
	return c
}

// Words returns the bitmap, 64 variables per word, least significant bit first.
// The slice is shared with d.
func (d *Density) Words() []uint64 { return d.bits }

func (d *Density) grow() {
	if d.n&63 == 0 {
		d.bits = append(d.bits, 0)
	}
	d.n++
}

func (d *Density) set(i int) { d.bits[i>>6] |= 1 << (uint(i) & 63) }

func (d *Density) equal(o *Density) bool { return d.n == o.n && slices.Equal(d.bits, o.bits) }

// NewDensity returns a density of n variables in which variable i is dense
// when set(i) holds (msm's split tests build their densities this way).
func NewDensity(n int, set func(i int) bool) Density {
	d := Density{bits: make([]uint64, (n+63)/64), n: n}
	for i := 0; i < n; i++ {
		if set(i) {
			d.set(i)
		}
	}
	return d
}

// Matrix is one of A, B, C in compressed sparse rows. Row j's terms are
// Vars[RowStart[j]:RowStart[j+1]] with coefficients Coeffs[CoeffIdx[...]]
// (at most 2^32−1 terms per matrix: 4 bytes per row start). Within a row, variables are distinct, sorted inputs first then aux, each by
// index, and no coefficient is zero.
type Matrix struct {
	RowStart []uint32
	Vars     []Variable
	CoeffIdx []uint32
}

// System records a constraint system and its assignment.
//
// Coefficients are deduplicated into one table shared by the three matrices;
// circuits built from bits use few distinct coefficients.
type System struct {
	inputs, aux []fr.Element
	coeffTable
	m           [3]Matrix
	aAux        Density
	bInputs     Density
	bAux        Density
	synthesized int // constraints before Finalize appended the per-input ones
	finalized   bool
	scratch     LC
	// unassigned: the system holds no values (see Unassigned); nInputs
	// and nAux are its variable counts.
	unassigned    bool
	nInputs, nAux int
	// noMatrices: the matrices were left out (see WithoutMatrices);
	// nConstraints is the constraint count.
	noMatrices   bool
	nConstraints int
	source       *matrixSource // where Matrices finds them again
	// recording identifies the recorded matrices (see Recording).
	recording uint64
}

// recordings numbers the systems recorded in this process.
var recordings atomic.Uint64

// matrixSource records a system's matrices again for Matrices, once for
// every system that shares it.
type matrixSource struct {
	mu     sync.Mutex
	record func(context.Context) (*System, error)
	m      [3]Matrix
	ok     bool
}

// NewSystem returns an empty recording system holding input ONE.
func NewSystem() *System {
	s := &System{coeffTable: newCoeffTable(0), recording: recordings.Add(1)}
	for k := range s.m {
		s.m[k].RowStart = []uint32{0}
	}
	s.AllocInput(oneElement)
	return s
}

// Alloc implements [Builder].
func (s *System) Alloc(value fr.Element) Variable {
	s.mustBeOpen()
	if len(s.aux) >= MaxVariables {
		panic("r1cs: too many aux variables") // a circuit bug, not an input error
	}
	s.aux = append(s.aux, value)
	s.aAux.grow()
	s.bAux.grow()
	return AuxVariable(len(s.aux) - 1)
}

// AllocInput implements [Builder].
func (s *System) AllocInput(value fr.Element) Variable {
	s.mustBeOpen()
	if len(s.inputs) >= MaxVariables {
		panic("r1cs: too many inputs")
	}
	s.inputs = append(s.inputs, value)
	s.bInputs.grow()
	return InputVariable(len(s.inputs) - 1)
}

// Value implements [Builder].
func (s *System) Value(v Variable) fr.Element {
	if v.IsAux() {
		return s.aux[v.Index()]
	}
	return s.inputs[v.Index()]
}

// Enforce implements [Builder]: it records a·b = c.
func (s *System) Enforce(a, b, c LC) {
	s.mustBeOpen()
	s.enforce(a, b, c)
}

func (s *System) enforce(a, b, c LC) {
	appendRow(&s.m, &s.scratch, a, b, c, s.coeffID, func(k int, v Variable) {
		s.checkVar(v)
		switch {
		case k == 0 && v.IsAux():
			s.aAux.set(v.Index())
		case k == 1 && v.IsAux():
			s.bAux.set(v.Index())
		case k == 1:
			s.bInputs.set(v.Index())
		}
	})
}

// appendRow appends the constraint a·b = c to the matrices m: each LC's
// terms merged (in scratch), their coefficients numbered by coeffID, and
// use(k, v) called on every variable v of matrix k before it is recorded.
// It panics (a circuit bug, not an input error) when a matrix would pass
// 2^32−1 terms.
func appendRow(m *[3]Matrix, scratch *LC, a, b, c LC, coeffID func(*fr.Element) uint32, use func(k int, v Variable)) {
	for k, lc := range [3]LC{a, b, c} {
		*scratch = mergeTerms(append((*scratch)[:0], lc...))
		mk := &m[k]
		for _, t := range *scratch {
			use(k, t.Var)
			mk.Vars = append(mk.Vars, t.Var)
			mk.CoeffIdx = append(mk.CoeffIdx, coeffID(&t.Coeff))
		}
		if uint64(len(mk.Vars)) > math.MaxUint32 {
			panic("r1cs: a matrix has more than 2^32-1 terms")
		}
		mk.RowStart = append(mk.RowStart, uint32(len(mk.Vars)))
	}
}

func (s *System) checkVar(v Variable) {
	if (v.IsAux() && v.Index() >= len(s.aux)) || (!v.IsAux() && v.Index() >= len(s.inputs)) {
		panic(fmt.Sprintf("r1cs: constraint %d uses unallocated %v", s.NumConstraints(), v))
	}
}

// coeffTable is a deduplicated table of coefficients.
type coeffTable struct {
	coeffs     []fr.Element
	coeffIndex map[fr.Element]uint32
}

// newCoeffTable returns an empty table with room for capacity coefficients.
func newCoeffTable(capacity int) coeffTable {
	return coeffTable{coeffs: make([]fr.Element, 0, capacity), coeffIndex: make(map[fr.Element]uint32)}
}

// coeffID returns c's index in the table, adding c if it is new.
func (t *coeffTable) coeffID(c *fr.Element) uint32 {
	if id, ok := t.coeffIndex[*c]; ok {
		return id
	}
	id := uint32(len(t.coeffs))
	t.coeffs = append(t.coeffs, *c)
	t.coeffIndex[*c] = id
	return id
}

// mergeTerms sorts terms by variable (inputs first, then aux), merges
// repeated variables and drops zero coefficients, in place.
func mergeTerms(t LC) LC {
	if len(t) > 32 {
		slices.SortStableFunc(t, func(a, b Term) int { return cmp.Compare(a.Var, b.Var) })
	} else {
		// Insertion sort: short linear combinations are mostly sorted.
		for i := 1; i < len(t); i++ {
			for j := i; j > 0 && t[j].Var < t[j-1].Var; j-- {
				t[j], t[j-1] = t[j-1], t[j]
			}
		}
	}
	out := t[:0]
	for i := 0; i < len(t); {
		acc := t[i]
		j := i + 1
		for ; j < len(t) && t[j].Var == acc.Var; j++ {
			acc.Coeff.Add(&acc.Coeff, &t[j].Coeff)
		}
		if !acc.Coeff.IsZero() {
			out = append(out, acc)
		}
		i = j
	}
	return out
}

func (s *System) mustBeOpen() {
	if s.finalized {
		panic("r1cs: system modified after Finalize")
	}
}

// Finalize appends bellperson's per-input constraints input_i · 0 = 0, in
// input order, and freezes the system. It is idempotent.
func (s *System) Finalize() {
	if s.finalized {
		return
	}
	s.synthesized = s.NumConstraints()
	for i := range s.inputs {
		s.enforce(LC{{InputVariable(i), oneElement}}, nil, nil)
	}
	s.finalized = true
	s.scratch = nil
	// Appending leaves up to a quarter of each large slice unused: the
	// frozen system keeps exact copies (a 32 GiB PoRep partition's
	// matrices shrink by up to ~2 GB).
	for k := range s.m {
		m := &s.m[k]
		m.RowStart, m.Vars, m.CoeffIdx = exact(m.RowStart), exact(m.Vars), exact(m.CoeffIdx)
	}
}

// exact returns v, or a copy of it without spare capacity when that spare
// is more than 1/64 of its length.
func exact[T any](v []T) []T {
	if cap(v)-len(v) <= len(v)/64 {
		return v
	}
	c := make([]T, len(v))
	copy(c, v)
	return c
}

// Finalized reports whether Finalize was called.
func (s *System) Finalized() bool { return s.finalized }

// NumConstraints returns the number of constraints recorded so far,
// including the per-input constraints once finalized.
func (s *System) NumConstraints() int {
	if s.noMatrices {
		return s.nConstraints
	}
	return len(s.m[0].RowStart) - 1
}

// NumInputs returns the number of inputs including ONE.
func (s *System) NumInputs() int {
	if s.unassigned {
		return s.nInputs
	}
	return len(s.inputs)
}

// NumAux returns the number of auxiliary variables.
func (s *System) NumAux() int {
	if s.unassigned {
		return s.nAux
	}
	return len(s.aux)
}

// Unassigned returns a finalized system sharing s's constraints (which must
// not be modified afterwards) without an assignment: it has s's counts and
// densities, Inputs and Aux are empty, and Evaluate, EvaluateChecked and
// IsSatisfied refuse it. A recorded shape keeps it so that the recording's
// values (32 bytes per variable) can be freed; WithAssignment pairs it with
// each partition's witness.
func (s *System) Unassigned() (*System, error) {
	if !s.finalized {
		return nil, errors.New("r1cs: Unassigned needs a finalized system")
	}
	c := *s
	c.scratch = nil
	c.nInputs, c.nAux = s.NumInputs(), s.NumAux()
	c.inputs, c.aux = nil, nil
	c.unassigned = true
	return &c, nil
}

// Assigned reports whether the system holds an assignment (see Unassigned).
func (s *System) Assigned() bool { return !s.unassigned }

// errUnassigned is returned by evaluations of an Unassigned system.
var errUnassigned = errors.New("r1cs: the system has no assignment")

// ErrNoMatrices is returned by the evaluations and the serialization of a
// system made by WithoutMatrices.
var ErrNoMatrices = errors.New("r1cs: the system's matrices were left out (WithoutMatrices)")

// Recording identifies the matrices s records: systems made from one
// another by WithAssignment, Unassigned, WithoutMatrices and WithMatrices
// share it; every other system (NewSystem, Segmented.System) has its own.
// A device that holds a recording's matrices serves every system that
// shares it.
func (s *System) Recording() uint64 { return s.recording }

// HasMatrices reports whether s holds its matrices (see WithoutMatrices).
func (s *System) HasMatrices() bool { return !s.noMatrices }

// WithoutMatrices returns a finalized system with s's recording, counts,
// densities and coefficients but not its matrices: A, B and C are empty,
// and Evaluate, EvaluateChecked, IsSatisfied and WriteCanonical return
// ErrNoMatrices. It is what a prover keeps of a circuit whose matrices its
// devices hold (about 8 bytes a term and 12 a constraint less on the
// host). record, when not nil, records the same circuit again for
// [System.Matrices]; s may itself be without matrices.
func (s *System) WithoutMatrices(record func(context.Context) (*System, error)) (*System, error) {
	if !s.finalized {
		return nil, errors.New("r1cs: WithoutMatrices needs a finalized system")
	}
	c := *s
	c.scratch = nil
	c.nConstraints = s.NumConstraints()
	c.noMatrices = true
	c.m = [3]Matrix{}
	c.source = &matrixSource{record: record}
	return &c, nil
}

// Matrices returns s when it holds its matrices; otherwise s (assignment
// included) with the matrices of the circuit recorded again by the record
// function given to WithoutMatrices, checked as WithMatrices checks them.
// The recording runs once for s and every system made from it by
// WithAssignment or Unassigned (later calls return at once, and a call
// during it waits for it); ErrNoMatrices without a record function.
func (s *System) Matrices(ctx context.Context) (*System, error) {
	if !s.noMatrices {
		return s, nil
	}
	src := s.source
	if src == nil || src.record == nil {
		return nil, ErrNoMatrices
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if !src.ok {
		full, err := src.record(ctx)
		if err != nil {
			return nil, err
		}
		back, err := s.WithMatrices(full)
		if err != nil {
			return nil, err
		}
		src.m, src.ok = back.m, true
	}
	c := *s
	c.m = src.m
	c.noMatrices, c.nConstraints, c.source = false, 0, nil
	return &c, nil
}

// WithMatrices returns s with the matrices of full, a recording of the
// same circuit made again (s being made by WithoutMatrices): a system
// that shares s's recording and assignment and holds full's matrices. It
// refuses a full whose counts, densities or coefficients differ from s's.
func (s *System) WithMatrices(full *System) (*System, error) {
	switch {
	case !full.finalized || full.noMatrices:
		return nil, errors.New("r1cs: WithMatrices needs a finalized system with its matrices")
	case full.Counts() != s.Counts() || full.synthesized != s.synthesized:
		return nil, fmt.Errorf("r1cs: recordings differ: %+v against %+v", full.Counts(), s.Counts())
	case !slices.Equal(full.coeffs, s.coeffs) || !full.aAux.equal(&s.aAux) || !full.bInputs.equal(&s.bInputs) || !full.bAux.equal(&s.bAux):
		return nil, errors.New("r1cs: recordings differ in their coefficients or densities")
	}
	c := *s
	c.m = full.m
	c.noMatrices, c.nConstraints, c.source = false, 0, nil
	return &c, nil
}

// Inputs returns the input assignment (index 0 is ONE). Shared, not copied.
func (s *System) Inputs() []fr.Element { return s.inputs }

// Aux returns the aux assignment. Shared, not copied.
func (s *System) Aux() []fr.Element { return s.aux }

// Coeffs returns the coefficient table indexed by Matrix.CoeffIdx.
func (s *System) Coeffs() []fr.Element { return s.coeffs }

// A returns the recorded matrix A. Shared, not copied.
func (s *System) A() *Matrix { return &s.m[0] }

// B returns the recorded matrix B. Shared, not copied.
func (s *System) B() *Matrix { return &s.m[1] }

// C returns the recorded matrix C. Shared, not copied.
func (s *System) C() *Matrix { return &s.m[2] }

// ADensity returns the aux variables dense in A. (All inputs are dense in A
// once the system is finalized.)
func (s *System) ADensity() *Density { return &s.aAux }

// BInputDensity returns the inputs dense in B.
func (s *System) BInputDensity() *Density { return &s.bInputs }

// BAuxDensity returns the aux variables dense in B.
func (s *System) BAuxDensity() *Density { return &s.bAux }

// Counts returns the system's shape.
func (s *System) Counts() Counts {
	return Counts{
		Constraints: s.NumConstraints(),
		Inputs:      s.NumInputs(),
		Aux:         s.NumAux(),
		AAux:        s.aAux.Count(),
		BInputs:     s.bInputs.Count(),
		BAux:        s.bAux.Count(),
	}
}

// evaluable reports why s cannot be evaluated, or nil.
func (s *System) evaluable() error {
	switch {
	case s.noMatrices:
		return ErrNoMatrices
	case s.unassigned:
		return errUnassigned
	}
	return nil
}

// evalRow returns ⟨row j of m, assignment⟩.
func (s *System) evalRow(m *Matrix, j int) fr.Element {
	var acc fr.Element
	s.evalRowInto(&acc, m, j)
	return acc
}

// evalRowInto writes ⟨row j of m, assignment⟩ to acc.
func (s *System) evalRowInto(acc *fr.Element, m *Matrix, j int) {
	aux, inputs, coeffs := s.aux, s.inputs, s.coeffs
	lo, hi := m.RowStart[j], m.RowStart[j+1]
	vars, idx := m.Vars[lo:hi], m.CoeffIdx[lo:hi]
	var t fr.Element
	*acc = fr.Element{}
	for k, v := range vars {
		var val *fr.Element
		if v.IsAux() {
			val = &aux[v.Index()]
		} else {
			val = &inputs[v.Index()]
		}
		// Most values of a PoRep witness are bits: a 0 adds nothing and a 1
		// adds the coefficient, both without a product.
		if val.IsZero() {
			continue
		}
		c := &coeffs[idx[k]]
		switch {
		case *c == oneElement:
			acc.Add(acc, val)
		case *val == oneElement:
			acc.Add(acc, c)
		default:
			t.Mul(val, c)
			acc.Add(acc, &t)
		}
	}
}

// Evaluate writes ⟨A_j, w⟩, ⟨B_j, w⟩ and ⟨C_j, w⟩ for every constraint j into
// a, b and c, which must have length ≥ NumConstraints(); entries beyond are
// left untouched. It fails only for a system without an assignment.
func (s *System) Evaluate(a, b, c []fr.Element) error {
	if err := s.evaluable(); err != nil {
		return err
	}
	n := s.NumConstraints()
	for j := 0; j < n; j++ {
		a[j] = s.evalRow(&s.m[0], j)
		b[j] = s.evalRow(&s.m[1], j)
		c[j] = s.evalRow(&s.m[2], j)
	}
	return nil
}

// EvaluateChecked is Evaluate on up to threads goroutines (ranges of
// rows), followed by the satisfaction check of IsSatisfied: it returns an
// error when input 0 is not ONE, an *UnsatisfiedError naming the first
// constraint with a·b ≠ c (a, b, c are then partly written), or nil.
func (s *System) EvaluateChecked(a, b, c []fr.Element, threads int) error {
	return s.EvaluateCheckedContext(context.Background(), a, b, c, threads)
}

// evalCheck is the number of rows EvaluateCheckedContext's goroutines
// evaluate between checks of the context (about a millisecond's work).
const evalCheck = 1 << 12

// EvaluateCheckedContext is EvaluateChecked that checks ctx every
// evalCheck rows of each range and returns ctx's error (a, b and c partly
// written) once ctx ends, after its goroutines have returned.
func (s *System) EvaluateCheckedContext(ctx context.Context, a, b, c []fr.Element, threads int) error {
	if err := s.evaluable(); err != nil {
		return err
	}
	if len(s.inputs) == 0 || s.inputs[0] != oneElement {
		return fmt.Errorf("r1cs: input 0 (ONE) is not 1")
	}
	n := s.NumConstraints()
	tasks := max(1, min(threads, n/4096))
	bad := make([]int, tasks) // first failing row of each range, or -1
	var wg sync.WaitGroup
	for t := range tasks {
		lo, hi := n*t/tasks, n*(t+1)/tasks
		bad[t] = -1
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ab fr.Element
			for j := lo; j < hi; j++ {
				if (j-lo)%evalCheck == 0 && ctx.Err() != nil {
					return
				}
				s.evalRowInto(&a[j], &s.m[0], j)
				s.evalRowInto(&b[j], &s.m[1], j)
				s.evalRowInto(&c[j], &s.m[2], j)
				if !holds(&a[j], &b[j], &c[j], &ab) {
					bad[t] = j
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, j := range bad {
		if j >= 0 {
			return &UnsatisfiedError{Index: j, Input: s.finalized && j >= s.synthesized, A: a[j], B: b[j], C: c[j]}
		}
	}
	return nil
}

// holds reports whether a·b = c, with a product only where neither a nor b
// is 0 or 1; ab is scratch.
func holds(a, b, c, ab *fr.Element) bool {
	switch {
	case a.IsZero() || b.IsZero():
		return c.IsZero()
	case *a == oneElement:
		return *b == *c
	case *b == oneElement:
		return *a == *c
	}
	ab.Mul(a, b)
	return *ab == *c
}

// UnsatisfiedError reports the first constraint a·b ≠ c.
type UnsatisfiedError struct {
	Index int  // constraint index in recording order
	Input bool // one of the per-input constraints appended by Finalize
	A     fr.Element
	B     fr.Element
	C     fr.Element
}

func (e *UnsatisfiedError) Error() string {
	kind := "constraint"
	if e.Input {
		kind = "per-input constraint"
	}
	return fmt.Sprintf("r1cs: %s %d is not satisfied: a·b = %s·%s ≠ c = %s",
		kind, e.Index, e.A.String(), e.B.String(), e.C.String())
}

// IsSatisfied checks every constraint against the assignment and returns an
// *UnsatisfiedError naming the first one that fails, or nil. It also checks
// that input 0 is ONE.
func (s *System) IsSatisfied() error {
	if err := s.evaluable(); err != nil {
		return err
	}
	if len(s.inputs) == 0 || s.inputs[0] != oneElement {
		return fmt.Errorf("r1cs: input 0 (ONE) is not 1")
	}
	var ab fr.Element
	for j := 0; j < s.NumConstraints(); j++ {
		a := s.evalRow(&s.m[0], j)
		b := s.evalRow(&s.m[1], j)
		c := s.evalRow(&s.m[2], j)
		if !holds(&a, &b, &c, &ab) {
			return &UnsatisfiedError{Index: j, Input: s.finalized && j >= s.synthesized, A: a, B: b, C: c}
		}
	}
	return nil
}

// SetAssignment replaces the system's assignment, for example with a
// [Witness] synthesized for this shape. Lengths must match and inputs[0]
// must be 1. The slices are shared, not copied.
func (s *System) SetAssignment(inputs, aux []fr.Element) error {
	if len(inputs) != s.NumInputs() || len(aux) != s.NumAux() {
		return fmt.Errorf("r1cs: assignment has %d inputs and %d aux, the system %d and %d",
			len(inputs), len(aux), s.NumInputs(), s.NumAux())
	}
	if inputs[0] != oneElement {
		return errors.New("r1cs: input 0 (ONE) is not 1")
	}
	s.inputs, s.aux = inputs, aux
	s.unassigned, s.nInputs, s.nAux = false, 0, 0
	return nil
}

// WithAssignment returns a system sharing s's constraints (which must not be
// modified afterwards) with another assignment, so that one recorded R1CS
// serves the witnesses of many partitions of the same shape. The rules of
// SetAssignment apply.
func (s *System) WithAssignment(inputs, aux []fr.Element) (*System, error) {
	c := *s
	c.scratch = nil
	if err := c.SetAssignment(inputs, aux); err != nil {
		return nil, err
	}
	return &c, nil
}
