package r1cs

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Segmented records a System as a sequence of segments, so that segments
// can be recorded concurrently and joined into exactly the System that
// recording them one after the other would give: the same constraints in
// the same order, the same variables, coefficient table (first use first),
// densities and assignment.
//
// A segment is a run of consecutive constraints that allocates a run of
// consecutive inputs and aux variables whose counts are known before it
// starts (they are claimed with [Segmented.Segment], in recording order).
// Its constraints may use its own variables and any variable of an earlier
// segment; a segment that uses another's variables must start after that
// one has allocated them (the caller orders them). The assignment is one
// array per sequence, shared: each segment writes its own values in place.
type Segmented struct {
	inputs, aux       []fr.Element // nil in a shape-only recording
	totalIn, totalAux int          // the recording's variables, ONE included
	segs              []*Segment
	nIn, nAux         int // claimed so far; inputs include ONE
	joined, shapeOnly bool
}

// NewSegmented returns a segmented recording of nInputs inputs (including
// ONE, which it allocates) and nAux aux variables.
func NewSegmented(nInputs, nAux int) *Segmented {
	if nInputs < 1 || nInputs > MaxVariables || nAux < 0 || nAux > MaxVariables {
		panic(fmt.Sprintf("r1cs: NewSegmented(%d, %d): counts out of range", nInputs, nAux))
	}
	r := &Segmented{inputs: make([]fr.Element, nInputs), aux: make([]fr.Element, nAux), totalIn: nInputs, totalAux: nAux, nIn: 1}
	r.inputs[0] = oneElement
	return r
}

// NewSegmentedShape is NewSegmented for a recording of the constraints
// only, as a key's setup or a device layout needs them: each segment keeps
// its own variables' values while it is recorded (its gadgets may read
// them; a value of another segment's variable, ONE aside, cannot be read),
// until [Segment.Done], and the joined System has no assignment
// ([System.Unassigned]). No array of the whole assignment is allocated.
func NewSegmentedShape(nInputs, nAux int) *Segmented {
	if nInputs < 1 || nInputs > MaxVariables || nAux < 0 || nAux > MaxVariables {
		panic(fmt.Sprintf("r1cs: NewSegmentedShape(%d, %d): counts out of range", nInputs, nAux))
	}
	return &Segmented{totalIn: nInputs, totalAux: nAux, nIn: 1, shapeOnly: true}
}

// Segment claims the next segment in recording order: it allocates the
// next nInputs inputs and nAux aux variables.
func (r *Segmented) Segment(nInputs, nAux int) *Segment {
	if r.joined {
		panic("r1cs: Segment after System")
	}
	if nInputs < 0 || nAux < 0 || nInputs > r.totalIn-r.nIn || nAux > r.totalAux-r.nAux {
		panic(fmt.Sprintf("r1cs: segment of %d inputs and %d aux exceeds the recording's %d and %d",
			nInputs, nAux, r.totalIn, r.totalAux))
	}
	g := &Segment{
		r:       r,
		index:   len(r.segs),
		inBase:  r.nIn,
		inEnd:   r.nIn,
		inLimit: r.nIn + nInputs,
		auxBase: r.nAux, auxEnd: r.nAux, auxLimit: r.nAux + nAux,
		coeffTable: newCoeffTable(0),
		bInputs:    make([]uint64, (r.totalIn+63)/64),
	}
	w0, w1 := g.auxBase>>6, (g.auxLimit+63)>>6
	g.aAux = make([]uint64, w1-w0)
	g.bAux = make([]uint64, w1-w0)
	for k := range g.m {
		g.m[k].RowStart = []uint32{0}
	}
	r.nIn += nInputs
	r.nAux += nAux
	r.segs = append(r.segs, g)
	return g
}

// Segment records one segment of a [Segmented] recording; it implements
// [Builder]. A Segment is not safe for concurrent use; distinct segments
// are.
type Segment struct {
	r                         *Segmented
	index                     int
	inBase, inEnd, inLimit    int
	auxBase, auxEnd, auxLimit int
	m                         [3]Matrix // CoeffIdx into coeffs; RowStart from 0
	coeffTable
	// aAux and bAux: the densities of the segment's own aux variables,
	// word w covering global aux variables 64·(auxBase/64 + w) onwards;
	// aExt and bExt: earlier aux variables dense in A, B (repeats allowed).
	aAux, bAux []uint64
	aExt, bExt []uint32
	bInputs    []uint64 // every input, by global index
	scratch    LC
	// ownIn and ownAux: in a shape-only recording, the values of the
	// segment's own variables, until Done.
	ownIn, ownAux []fr.Element
	done          bool
	// copyOf: a segment claimed by Repeat, whose constraints are copyOf's
	// with copyOf's variables moved to this segment's, and the variables
	// of earlier segments copyOf uses (its ext, by index) replaced by shared.
	copyOf *Segment
	shared []Variable
	ext    map[Variable]int
}

// source returns the segment whose matrices and coefficients stand for
// g's: g's own, or, for a copy, the original's.
func (g *Segment) source() *Segment {
	if g.copyOf != nil {
		return g.copyOf
	}
	return g
}

// Repeat claims n more segments, each a copy of g moved to its own
// variables: g's constraints, coefficients and densities with g's inputs
// and aux variables replaced by the new segment's, ONE kept, and each
// variable of an earlier segment v that g uses replaced, in copy i (1 to
// n), by shared(i, v), a variable claimed before that copy. The recording
// must be shape-only ([NewSegmentedShape]: copies have no values), g
// Done, with all of its variables allocated; with shared nil g may use no
// variable but ONE and its own. Otherwise Repeat claims nothing and says
// why. For a circuit of n+1 alike parts (a PoSt's sectors, a SnapDeals
// partition's challenges), recording one and repeating it gives the
// System recording all of them gives, in about the time and memory of the
// joined System alone.
func (r *Segmented) Repeat(g *Segment, n int, shared func(i int, v Variable) Variable) error {
	switch {
	case r.joined:
		return fmt.Errorf("r1cs: Repeat after System")
	case !r.shapeOnly:
		return fmt.Errorf("r1cs: Repeat in a recording with an assignment (copies have no values)")
	case g.r != r || g.copyOf != nil:
		return fmt.Errorf("r1cs: Repeat of a segment not recorded in this recording")
	case !g.done:
		return fmt.Errorf("r1cs: Repeat of segment %d before its Done", g.index)
	case g.inEnd != g.inLimit || g.auxEnd != g.auxLimit:
		return fmt.Errorf("r1cs: segment %d allocated %d inputs and %d aux of %d and %d",
			g.index, g.inEnd-g.inBase, g.auxEnd-g.auxBase, g.inLimit-g.inBase, g.auxLimit-g.auxBase)
	case n < 0:
		return fmt.Errorf("r1cs: Repeat %d times", n)
	}
	nIn, nAux := g.inLimit-g.inBase, g.auxLimit-g.auxBase
	switch {
	case n > 0 && nIn == 0 && nAux == 0:
		return fmt.Errorf("r1cs: Repeat of segment %d, which has no variables", g.index)
	case nIn > 0 && n > (r.totalIn-r.nIn)/nIn, nAux > 0 && n > (r.totalAux-r.nAux)/nAux:
		return fmt.Errorf("r1cs: %d copies of %d inputs and %d aux exceed the recording's %d and %d",
			n, nIn, nAux, r.totalIn, r.totalAux)
	}
	// The earlier segments' variables g uses, and what each copy uses instead.
	ext := map[Variable]int{}
	var used []Variable
	for k := range g.m {
		for _, v := range g.m[k].Vars {
			if _, seen := ext[v]; !seen && v != One && !g.owns(v) {
				if shared == nil {
					return fmt.Errorf("r1cs: segment %d uses %v, a variable of an earlier segment", g.index, v)
				}
				ext[v] = len(used)
				used = append(used, v)
			}
		}
	}
	// Rows keep their order (inputs, then aux, each by index) only if
	// shared keeps the order and kind of what it replaces.
	slices.Sort(used)
	for j, v := range used {
		ext[v] = j
	}
	copies := make([][]Variable, n)
	for i := range copies {
		inBase, auxBase := r.nIn+i*nIn, r.nAux+i*nAux
		copies[i] = make([]Variable, len(used))
		for j, v := range used {
			w := shared(i+1, v)
			switch {
			case w.IsAux() != v.IsAux() || w == One:
				return fmt.Errorf("r1cs: copy %d of segment %d would use %v for %v, a variable of another kind", i+1, g.index, w, v)
			case w.IsAux() && w.Index() >= auxBase || !w.IsAux() && w.Index() >= inBase:
				return fmt.Errorf("r1cs: copy %d of segment %d would use %v for %v, a variable not claimed before it", i+1, g.index, w, v)
			case j > 0 && w <= copies[i][j-1]:
				return fmt.Errorf("r1cs: copy %d of segment %d would use %v for %v, out of the order of the variables it replaces", i+1, g.index, w, v)
			}
			copies[i][j] = w
		}
	}
	g.ext = ext
	for i := range n {
		c := &Segment{r: r, index: len(r.segs), inBase: r.nIn, inEnd: r.nIn + nIn, inLimit: r.nIn + nIn,
			auxBase: r.nAux, auxEnd: r.nAux + nAux, auxLimit: r.nAux + nAux, done: true, copyOf: g, shared: copies[i]}
		r.nIn += nIn
		r.nAux += nAux
		r.segs = append(r.segs, c)
	}
	return nil
}

// owns reports whether v is one of g's own variables.
func (g *Segment) owns(v Variable) bool {
	i := v.Index()
	if v.IsAux() {
		return i >= g.auxBase && i < g.auxLimit
	}
	return i >= g.inBase && i < g.inLimit
}

// moved returns v of segment src as it stands in its copy g.
func (g *Segment) moved(src *Segment, v Variable) Variable {
	switch {
	case v == One:
		return v
	case !src.owns(v):
		return g.shared[src.ext[v]]
	case v.IsAux():
		return AuxVariable(v.Index() - src.auxBase + g.auxBase)
	default:
		return InputVariable(v.Index() - src.inBase + g.inBase)
	}
}

// Alloc implements [Builder].
func (g *Segment) Alloc(value fr.Element) Variable {
	return AuxVariable(g.alloc(g.r.aux, &g.ownAux, &g.auxEnd, g.auxBase, g.auxLimit, "aux variables", value))
}

// AllocInput implements [Builder].
func (g *Segment) AllocInput(value fr.Element) Variable {
	return InputVariable(g.alloc(g.r.inputs, &g.ownIn, &g.inEnd, g.inBase, g.inLimit, "inputs", value))
}

// alloc sets vals[*end] = value (or, shape-only, appends value to *own)
// and returns the index, advancing *end within the segment's share [base,
// limit) of vals; past it, or after Done, it panics (a circuit bug).
func (g *Segment) alloc(vals []fr.Element, own *[]fr.Element, end *int, base, limit int, what string, value fr.Element) int {
	if *end >= limit || g.done {
		panic(fmt.Sprintf("r1cs: segment %d allocates more than its %d %s", g.index, limit-base, what))
	}
	if g.r.shapeOnly {
		*own = append(*own, value)
	} else {
		vals[*end] = value
	}
	*end++
	return *end - 1
}

// Value implements [Builder]. It reads the shared assignment: v must be
// the segment's own or one of an earlier segment that has allocated it. In
// a shape-only recording v must be ONE or the segment's own, before Done.
func (g *Segment) Value(v Variable) fr.Element {
	i := v.Index()
	switch {
	case !g.r.shapeOnly && v.IsAux():
		return g.r.aux[i]
	case !g.r.shapeOnly:
		return g.r.inputs[i]
	case v == One:
		return oneElement
	case g.done:
	case v.IsAux() && i >= g.auxBase && i < g.auxEnd:
		return g.ownAux[i-g.auxBase]
	case !v.IsAux() && i >= g.inBase && i < g.inEnd:
		return g.ownIn[i-g.inBase]
	}
	panic(fmt.Sprintf("r1cs: shape-only segment %d reads the value of %v, which it does not hold", g.index, v))
}

// Done ends the segment's recording: in a shape-only recording its values
// are dropped (the memory of one segment's assignment, not the whole
// recording's, is what stays live), and it allocates no more. Recording
// constraints after Done is allowed; reading values is not. In a recording
// with an assignment Done only forbids further allocations.
func (g *Segment) Done() {
	g.done = true
	g.ownIn, g.ownAux = nil, nil
}

// Enforce implements [Builder]: it records a·b = c as [System] does.
func (g *Segment) Enforce(a, b, c LC) {
	appendRow(&g.m, &g.scratch, a, b, c, g.coeffID, func(k int, v Variable) {
		g.checkVar(v)
		i := v.Index()
		switch {
		case k == 0 && v.IsAux():
			g.aAux, g.aExt = g.setAux(g.aAux, g.aExt, i)
		case k == 1 && v.IsAux():
			g.bAux, g.bExt = g.setAux(g.bAux, g.bExt, i)
		case k == 1:
			g.bInputs[i>>6] |= 1 << (uint(i) & 63)
		}
	})
}

func (g *Segment) setAux(local []uint64, ext []uint32, i int) ([]uint64, []uint32) {
	if i >= g.auxBase {
		j := i - g.auxBase&^63
		local[j>>6] |= 1 << (uint(j) & 63)
	} else if n := len(ext); n == 0 || ext[n-1] != uint32(i) {
		ext = append(ext, uint32(i))
	}
	return local, ext
}

func (g *Segment) checkVar(v Variable) {
	if (v.IsAux() && v.Index() >= g.auxEnd) || (!v.IsAux() && v.Index() >= g.inEnd) {
		panic(fmt.Sprintf("r1cs: segment %d constraint %d uses unallocated %v", g.index, g.NumConstraints(), v))
	}
}

// NumConstraints returns the number of constraints the segment recorded.
func (g *Segment) NumConstraints() int { return len(g.source().m[0].RowStart) - 1 }

// System joins the segments, in the order they were claimed, into a
// finalized System (with bellperson's per-input constraints appended, as
// [System.Finalize] does), copying on up to workers goroutines. Every
// variable must have been claimed and every segment must have allocated
// all of its variables. The segments are released; the Segmented can be
// used no more. Once ctx is done it stops within a segment's copy and
// returns ctx's error.
func (r *Segmented) System(ctx context.Context, workers int) (*System, error) {
	if r.joined {
		return nil, fmt.Errorf("r1cs: Segmented.System called twice")
	}
	if r.nIn != r.totalIn || r.nAux != r.totalAux {
		return nil, fmt.Errorf("r1cs: segments claim %d inputs and %d aux of %d and %d", r.nIn, r.nAux, r.totalIn, r.totalAux)
	}
	for _, g := range r.segs {
		if g.inEnd != g.inLimit || g.auxEnd != g.auxLimit {
			return nil, fmt.Errorf("r1cs: segment %d allocated %d inputs and %d aux of %d and %d",
				g.index, g.inEnd-g.inBase, g.auxEnd-g.auxBase, g.inLimit-g.inBase, g.auxLimit-g.auxBase)
		}
	}
	r.joined = true
	nIn, nAux := r.totalIn, r.totalAux

	// Row and term offsets of each segment, and its coefficients in the
	// joined table, where they come in order of first use as in a System.
	s := &System{inputs: r.inputs, aux: r.aux, coeffTable: newCoeffTable(0), recording: recordings.Add(1)}
	if r.shapeOnly {
		s.unassigned, s.nInputs, s.nAux = true, nIn, nAux
	}
	rows := make([]int, len(r.segs)+1)
	terms := make([][3]uint64, len(r.segs)+1)
	remap := make([][]uint32, len(r.segs))
	for i, g := range r.segs {
		src := g.source()
		rows[i+1] = rows[i] + g.NumConstraints()
		for k := range src.m {
			terms[i+1][k] = terms[i][k] + uint64(len(src.m[k].Vars))
		}
		if src != g {
			remap[i] = remap[src.index] // coefficients already in the table
			continue
		}
		remap[i] = make([]uint32, len(g.coeffs))
		for j := range g.coeffs {
			remap[i][j] = s.coeffID(&g.coeffs[j])
		}
	}
	nc := rows[len(r.segs)]
	total := terms[len(r.segs)]
	if total[0]+uint64(nIn) > math.MaxUint32 || total[1] > math.MaxUint32 || total[2] > math.MaxUint32 {
		return nil, fmt.Errorf("r1cs: a matrix has more than 2^32-1 terms")
	}
	for k := range s.m {
		n := int(total[k])
		if k == 0 {
			n += nIn
		}
		s.m[k] = Matrix{RowStart: make([]uint32, nc+nIn+1), Vars: make([]Variable, n), CoeffIdx: make([]uint32, n)}
	}

	// Copy the segments' rows in place, releasing each once copied (a
	// segment with copies once the whole System is joined).
	repeated := make([]bool, len(r.segs))
	for _, g := range r.segs {
		if g.copyOf != nil {
			repeated[g.copyOf.index] = true
		}
	}
	workers = max(1, min(workers, len(r.segs)))
	var wg sync.WaitGroup
	var next sync.Mutex
	ni := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				i := ni
				ni++
				next.Unlock()
				if i >= len(r.segs) || ctx.Err() != nil {
					return
				}
				g := r.segs[i]
				from := g.source()
				for k := range from.m {
					src, dst := &from.m[k], &s.m[k]
					t0 := uint32(terms[i][k])
					for j, v := range src.RowStart[1:] {
						dst.RowStart[rows[i]+1+j] = t0 + v
					}
					if from == g {
						copy(dst.Vars[t0:], src.Vars)
					} else {
						vars := dst.Vars[t0 : int(t0)+len(src.Vars)]
						for j, v := range src.Vars {
							vars[j] = g.moved(from, v)
						}
					}
					ci := dst.CoeffIdx[t0 : int(t0)+len(src.CoeffIdx)]
					for j, c := range src.CoeffIdx {
						ci[j] = remap[i][c]
					}
					if from == g && !repeated[i] {
						*src = Matrix{} // copied for the last time
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		r.segs = nil
		return nil, err
	}

	// Finalize's per-input constraints input_i · 0 = 0.
	one := s.coeffID(&oneElement)
	a := &s.m[0]
	for i := 0; i < nIn; i++ {
		t := int(total[0]) + i
		a.Vars[t], a.CoeffIdx[t] = InputVariable(i), one
		a.RowStart[nc+1+i] = uint32(t + 1)
	}
	for k := 1; k < 3; k++ {
		for i := 0; i < nIn; i++ {
			s.m[k].RowStart[nc+1+i] = uint32(total[k])
		}
	}

	// Densities.
	s.aAux = Density{bits: make([]uint64, (nAux+63)/64), n: nAux}
	s.bAux = Density{bits: make([]uint64, (nAux+63)/64), n: nAux}
	s.bInputs = Density{bits: make([]uint64, (nIn+63)/64), n: nIn}
	for _, g := range r.segs {
		if err := ctx.Err(); err != nil {
			r.segs = nil
			return nil, err
		}
		if src := g.copyOf; src != nil {
			// The original's densities, moved bit by bit.
			for k, d := range []*Density{&s.aAux, &s.bAux} {
				for j, w := range [][]uint64{src.aAux, src.bAux}[k] {
					for ; w != 0; w &= w - 1 {
						d.set(64*(src.auxBase>>6+j) + bits.TrailingZeros64(w) - src.auxBase + g.auxBase)
					}
				}
				for _, i := range [][]uint32{src.aExt, src.bExt}[k] {
					d.set(g.moved(src, AuxVariable(int(i))).Index())
				}
			}
			for j, w := range src.bInputs {
				for ; w != 0; w &= w - 1 {
					if v := InputVariable(64*j + bits.TrailingZeros64(w)); v == One {
						s.bInputs.set(0)
					} else {
						s.bInputs.set(g.moved(src, v).Index())
					}
				}
			}
			continue
		}
		w0 := g.auxBase >> 6
		for j, w := range g.aAux {
			s.aAux.bits[w0+j] |= w
		}
		for j, w := range g.bAux {
			s.bAux.bits[w0+j] |= w
		}
		for _, i := range g.aExt {
			s.aAux.set(int(i))
		}
		for _, i := range g.bExt {
			s.bAux.set(int(i))
		}
		for j, w := range g.bInputs {
			s.bInputs.bits[j] |= w
		}
	}
	s.synthesized = nc
	s.finalized = true
	r.segs = nil
	return s, nil
}
