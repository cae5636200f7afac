package groth16

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/msm"
	"github.com/sealc2/c2/ntt"
	"github.com/sealc2/c2/r1cs"
)

// Setup generates development parameters for the finalized system sys, in
// the layout bellperson's generate_random_parameters produces: the same
// domain, the same queries in the same order, with points at infinity left
// out of A, BG1 and BG2.
//
// INSECURE: whoever knows rng's output knows the trapdoor (τ, α, β, γ, δ)
// and can forge proofs for any statement. Development parameters are for
// tests, benchmarks and demos only; a chain accepts proofs only under the
// parameters of a trusted-setup ceremony.
func Setup(sys *r1cs.System, rng io.Reader) (*ProvingKey, error) {
	if !sys.Finalized() {
		return nil, errors.New("groth16: Setup needs a finalized system")
	}
	tw, err := NewToxicWaste(rng)
	if err != nil {
		return nil, err
	}
	return SetupWithWaste(sys, tw)
}

// ToxicWaste is the trapdoor of a development setup. INSECURE: anyone who
// holds it can forge proofs under the parameters made from it.
type ToxicWaste struct {
	Tau, Alpha, Beta, Gamma, Delta fr.Element
}

// NewToxicWaste draws τ, α, β, γ, δ (non-zero, in that order) from rng,
// exactly as [Setup] does: Setup(sys, rng) equals
// SetupWithWaste(sys, NewToxicWaste(rng)) for the same bytes of rng.
func NewToxicWaste(rng io.Reader) (ToxicWaste, error) {
	var tw ToxicWaste
	for _, e := range []*fr.Element{&tw.Tau, &tw.Alpha, &tw.Beta, &tw.Gamma, &tw.Delta} {
		if err := randomNonZero(rng, e); err != nil {
			return ToxicWaste{}, fmt.Errorf("groth16: setup randomness: %w", err)
		}
	}
	return tw, nil
}

func randomNonZero(rng io.Reader, e *fr.Element) error {
	var b [48]byte // 384 bits reduced mod r: bias below 2^-128
	for {
		if _, err := io.ReadFull(rng, b[:]); err != nil {
			return err
		}
		e.SetBytes(b[:])
		if !e.IsZero() {
			return nil
		}
	}
}

// SetupWithWaste is [Setup] with the trapdoor given: the scalar stage
// ([ComputeSetupScalars]) followed by fixed-base multiplications on the CPU.
// INSECURE, as Setup.
func SetupWithWaste(sys *r1cs.System, tw ToxicWaste) (*ProvingKey, error) {
	s, err := ComputeSetupScalars(sys, tw)
	if err != nil {
		return nil, err
	}
	return s.ProvingKey(), nil
}

// SetupScalars is the scalar stage of a development setup: every query of
// the proving key as the scalars its points are multiples of (the point of
// scalar k is k·G for the group's generator G), in the key's order and with
// the zero scalars of A and B already left out, plus the verifying key's
// scalars. BG serves both B queries (BG1 in G1, BG2 in G2).
type SetupScalars struct {
	H  []fr.Element // τ^i·Z(τ)/δ, i < n−1
	L  []fr.Element // (β·A_j(τ) + α·B_j(τ) + C_j(τ))/δ per aux variable
	A  []fr.Element // the non-zero A_i(τ), inputs then aux
	BG []fr.Element // the non-zero B_i(τ), inputs then aux
	IC []fr.Element // (β·A_i(τ) + α·B_i(τ) + C_i(τ))/γ per input

	Alpha, Beta, Gamma, Delta fr.Element
}

// ProvingKey computes the key's points on the CPU (fixed-base tables of the
// generators).
func (s *SetupScalars) ProvingKey() *ProvingKey {
	_, _, g1, g2 := bls.Generators()
	// A 16-bit G1 table (1 M points to build) pays off from about a million
	// G1 points; small keys use 8-bit tables.
	c1 := uint(8)
	if len(s.H)+len(s.L)+2*len(s.A)+len(s.BG) > 1<<20 {
		c1 = 16
	}
	t1, t2 := msm.NewFixedBaseG1(&g1, c1), msm.NewFixedBaseG2(&g2, 8)
	pk := &ProvingKey{
		H:   t1.Mul(s.H),
		L:   t1.Mul(s.L),
		A:   t1.Mul(s.A),
		BG1: t1.Mul(s.BG),
		BG2: t2.Mul(s.BG),
	}
	pk.VK = s.verifyingKey(t1, t2)
	return pk
}

// VerifyingKey computes the verifying key on the CPU (small tables: it has
// six points and one per input).
func (s *SetupScalars) VerifyingKey() VerifyingKey {
	_, _, g1, g2 := bls.Generators()
	return s.verifyingKey(msm.NewFixedBaseG1(&g1, 8), msm.NewFixedBaseG2(&g2, 8))
}

func (s *SetupScalars) verifyingKey(t1 *msm.FixedBaseG1, t2 *msm.FixedBaseG2) VerifyingKey {
	var vk VerifyingKey
	g1s := t1.Mul([]fr.Element{s.Alpha, s.Beta, s.Delta})
	g2s := t2.Mul([]fr.Element{s.Beta, s.Gamma, s.Delta})
	vk.AlphaG1, vk.BetaG1, vk.DeltaG1 = g1s[0], g1s[1], g1s[2]
	vk.BetaG2, vk.GammaG2, vk.DeltaG2 = g2s[0], g2s[1], g2s[2]
	vk.IC = t1.Mul(s.IC)
	return vk
}

// ComputeSetupScalars runs the scalar stage of a development setup for the
// finalized system sys: the Lagrange basis at τ, every variable's A, B and
// C polynomial at τ, and from them the scalars of every query
// ([StreamSetupScalars] collected). It runs on GOMAXPROCS goroutines.
// Memory: the result (four vectors of about the domain size, 32 bytes an
// element).
func ComputeSetupScalars(sys *r1cs.System, tw ToxicWaste) (*SetupScalars, error) {
	var sizes Sizes
	var q [4][]fr.Element // by ParamsSection: H, L, A, B
	alloc := func() {
		if q[ParamsH] == nil {
			q = [4][]fr.Element{make([]fr.Element, sizes.H), make([]fr.Element, sizes.L), make([]fr.Element, sizes.A), make([]fr.Element, sizes.BG1)}
		}
	}
	s, err := StreamSetupScalars(sys, tw, 1<<20, func(sec ParamsSection, offset int, v []fr.Element) error {
		alloc() // sizes is set before the first chunk
		copy(q[sec][offset:], v)
		return nil
	}, &sizes)
	if err != nil {
		return nil, err
	}
	alloc()
	s.H, s.L, s.A, s.BG = q[ParamsH], q[ParamsL], q[ParamsA], q[ParamsBG1]
	return s, nil
}

// StreamSetupScalars is the scalar stage of [ComputeSetupScalars] handed
// over a chunk at a time, so that a device can multiply each chunk while
// the host holds four vectors of slab scalars, reused from slab to slab
// (the Lagrange basis is computed a block of rows at a time, not held).
// emit receives every query's scalars in key order, chunk after chunk:
// all of H first, then, slab by slab of aux variables (the inputs with
// the first), A's, B's (ParamsBG1: the scalars of B_G1 and B_G2) and L's;
// offset is the number of the query's scalars emitted before the chunk,
// and v is reused once emit returns. sizes, when not nil, is set to the
// queries' sizes (from the system's densities) before the first emit. The
// result holds the verifying key's scalars (IC and α, β, γ, δ); its H, L,
// A and BG are nil. emit's first error is returned.
func StreamSetupScalars(sys *r1cs.System, tw ToxicWaste, slab int, emit func(q ParamsSection, offset int, v []fr.Element) error, sizes *Sizes) (*SetupScalars, error) {
	if !sys.Finalized() {
		return nil, errors.New("groth16: setup needs a finalized system")
	}
	if !sys.HasMatrices() {
		return nil, fmt.Errorf("groth16: setup: %w", r1cs.ErrNoMatrices)
	}
	if slab < 1 {
		return nil, fmt.Errorf("groth16: setup slab of %d variables", slab)
	}
	n, err := ntt.DomainSize(sys.NumConstraints())
	if err != nil {
		return nil, err
	}
	dom, err := ntt.NewDomain(n)
	if err != nil {
		return nil, err
	}
	tau := tw.Tau

	// Z(τ) = τⁿ − 1, non-zero unless τ is a root of unity.
	var zt, one fr.Element
	one.SetOne()
	zt.Exp(tau, new(big.Int).SetUint64(uint64(n)))
	zt.Sub(&zt, &one)
	if zt.IsZero() {
		return nil, errors.New("groth16: degenerate τ (a root of unity)")
	}
	ni, na := sys.NumInputs(), sys.NumAux()
	nb := sys.BInputDensity().Count() + sys.BAuxDensity().Count()
	z := Sizes{H: n - 1, L: na, A: ni + sys.ADensity().Count(), BG1: nb, BG2: nb}
	if sizes != nil {
		*sizes = z
	}
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&tw.Gamma)
	deltaInv.Inverse(&tw.Delta)

	// H: τ^i·Z(τ)/δ, a chunk at a time.
	buf := make([]fr.Element, min(slab, n-1))
	var h0 fr.Element
	h0.Mul(&zt, &deltaInv)
	for lo := 0; lo < n-1; lo += len(buf) {
		first := powTo(tau, lo)
		first.Mul(&first, &h0)
		if err := emit(ParamsH, lo, geometric(buf[:min(len(buf), n-1-lo)], first, tau)); err != nil {
			return nil, err
		}
	}
	buf = nil

	lag := newLagrange(tau, dom.Generator(), zt, n, sys.NumConstraints())
	res := &SetupScalars{Alpha: tw.Alpha, Beta: tw.Beta, Gamma: tw.Gamma, Delta: tw.Delta}
	// A and B queries without the zero evaluations (points at infinity).
	// bellperson filters by the point; the prover selects by density. The
	// two agree unless τ hits a root of some variable's polynomial, which is
	// detected and refused.
	offA, offB := 0, 0
	var nz []fr.Element // the non-zero scalars of a slab, reused
	nonZeroOf := func(q ParamsSection, v []fr.Element, off *int, want int) error {
		nz = nonZero(v, nz)
		if *off+len(nz) > want {
			return fmt.Errorf("groth16: degenerate τ: the %s query has more than the %d points the densities say", map[ParamsSection]string{ParamsA: "A", ParamsBG1: "B"}[q], want)
		}
		if len(nz) > 0 {
			if err := emit(q, *off, nz); err != nil {
				return err
			}
		}
		*off += len(nz)
		return nil
	}
	var ev [3][]fr.Element // a slab's evaluations, reused
	for lo := 0; lo == 0 || lo < na; lo += slab {
		hi := min(na, lo+slab)
		// Every variable's A, B, C polynomial at τ (the inputs' with the
		// first slab), then IC and L: (β·A_i + α·B_i + C_i)/γ for inputs,
		// /δ for aux, written over C's evaluations.
		var in [3][]fr.Element
		ev, in = evalColumns(sys, lag, ni, lo, hi, lo == 0, ev)
		combine := func(a, b, c []fr.Element, scale *fr.Element) {
			parallelRange(len(c), func(lo, hi int) {
				for i := lo; i < hi; i++ {
					var x, y fr.Element
					x.Mul(&tw.Beta, &a[i])
					y.Mul(&tw.Alpha, &b[i])
					x.Add(&x, &y)
					x.Add(&x, &c[i])
					c[i].Mul(&x, scale)
				}
			})
		}
		if lo == 0 {
			if err := nonZeroOf(ParamsA, in[0], &offA, z.A); err != nil {
				return nil, err
			}
			if err := nonZeroOf(ParamsBG1, in[1], &offB, z.BG1); err != nil {
				return nil, err
			}
			combine(in[0], in[1], in[2], &gammaInv)
			res.IC = in[2]
		}
		if err := nonZeroOf(ParamsA, ev[0], &offA, z.A); err != nil {
			return nil, err
		}
		if err := nonZeroOf(ParamsBG1, ev[1], &offB, z.BG1); err != nil {
			return nil, err
		}
		combine(ev[0], ev[1], ev[2], &deltaInv)
		if hi > lo {
			if err := emit(ParamsL, lo, ev[2]); err != nil {
				return nil, err
			}
		}
	}
	if offA != z.A {
		return nil, fmt.Errorf("groth16: degenerate τ: A query has %d points, density says %d", offA, z.A)
	}
	if offB != z.BG1 {
		return nil, fmt.Errorf("groth16: degenerate τ: B query has %d points, density says %d", offB, z.BG1)
	}
	return res, nil
}

// parallelRange splits [0, n) into GOMAXPROCS ranges (fewer for small n)
// and runs f on each in its own goroutine.
func parallelRange(n int, f func(lo, hi int)) {
	tasks := min(runtime.GOMAXPROCS(0), max(1, n/1024))
	if tasks <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*t/tasks, n*(t+1)/tasks)
		}()
	}
	wg.Wait()
}

// powTo returns x^e.
func powTo(x fr.Element, e int) fr.Element {
	var r fr.Element
	r.Exp(x, big.NewInt(int64(e)))
	return r
}

// geometric fills v with first·ratio^i and returns it.
func geometric(v []fr.Element, first, ratio fr.Element) []fr.Element {
	parallelRange(len(v), func(lo, hi int) {
		p := powTo(ratio, lo)
		p.Mul(&p, &first)
		for i := lo; i < hi; i++ {
			v[i] = p
			p.Mul(&p, &ratio)
		}
	})
	return v
}

// lagRows is the number of rows whose Lagrange values evalColumns
// computes at once, with one field inversion.
const lagRows = 256

// lagrange evaluates L_j(τ) = Z(τ)/n · ωʲ/(τ−ωʲ) = (Z(τ)/n)/(τ·ω⁻ʲ − 1)
// for the rows j of a system, lagRows rows at a time, with Z(τ) non-zero
// (so that no τ·ω⁻ʲ is one): per row one product for τ·ω⁻ʲ and three for
// the batch inversion, which takes the factor Z(τ)/n in its one
// inversion. It holds one element per block of rows, not the basis.
type lagrange struct {
	start           []fr.Element // τ·ω^(−b·lagRows) for block b
	omegaInv, scale fr.Element
}

func newLagrange(tau, omega, zt fr.Element, n, rows int) *lagrange {
	l := &lagrange{start: make([]fr.Element, (rows+lagRows-1)/lagRows)}
	l.scale.SetUint64(uint64(n))
	l.scale.Inverse(&l.scale)
	l.scale.Mul(&l.scale, &zt)
	l.omegaInv.Inverse(&omega)
	stride := powTo(l.omegaInv, lagRows)
	parallelRange(len(l.start), func(lo, hi int) {
		u := powTo(l.omegaInv, lo*lagRows)
		u.Mul(&u, &tau)
		for b := lo; b < hi; b++ {
			l.start[b] = u
			u.Mul(&u, &stride)
		}
	})
	return l
}

// block writes L_j(τ) for the rows of block b (len(dst) of them, at most
// lagRows) into dst; prefix is scratch of at least len(dst) elements.
func (l *lagrange) block(b int, dst, prefix []fr.Element) {
	var one fr.Element
	one.SetOne()
	u := l.start[b]
	for j := range dst {
		dst[j].Sub(&u, &one)
		u.Mul(&u, &l.omegaInv)
	}
	batchInvertScaled(dst, prefix, &l.scale)
}

// batchInvertScaled replaces every element x of v (none zero) by k/x, with
// one field inversion; prefix is scratch of at least len(v) elements.
func batchInvertScaled(v, prefix []fr.Element, k *fr.Element) {
	if len(v) == 0 {
		return
	}
	prefix[0] = v[0]
	for i := 1; i < len(v); i++ {
		prefix[i].Mul(&prefix[i-1], &v[i])
	}
	var inv fr.Element
	inv.Inverse(&prefix[len(v)-1])
	inv.Mul(&inv, k)
	for i := len(v) - 1; i > 0; i-- {
		var t fr.Element
		t.Mul(&inv, &prefix[i-1])
		inv.Mul(&inv, &v[i])
		v[i] = t
	}
	v[0] = inv
}

// evalColumns returns, for each matrix m of A, B and C, Σ_j m[j][i]·L_j(τ)
// for the aux variables i in [lo, hi), written into bufs[k] (reused when
// its capacity suffices), and, when inputs is set, for every input: the
// variables' polynomials at τ.
//
// The work is split without locks or per-goroutine copies of the result:
// goroutine g owns the g-th range of the aux variables (it alone writes
// them) and, with inputs, the g-th range of row blocks, whose input terms
// it adds into its own small input accumulators (summed at the end: ONE and
// other inputs appear in rows everywhere). A first pass marks, per block
// of rows, the owners of the aux variables it mentions in any matrix, and
// each goroutine then scans only the blocks marked for it, computing the
// block's Lagrange values once for the three matrices: circuits use a
// variable mostly in rows near the one that allocated it, so every
// goroutine reads about its share of the matrices. Unit coefficients skip
// the product.
func evalColumns(sys *r1cs.System, lag *lagrange, ni, lo, hi int, inputs bool, bufs [3][]fr.Element) (aux, in [3][]fr.Element) {
	ms := [3]*r1cs.Matrix{sys.A(), sys.B(), sys.C()}
	na := hi - lo
	for k := range aux {
		aux[k] = bufs[k][:0]
		if cap(aux[k]) < na {
			aux[k] = make([]fr.Element, na)
		}
		aux[k] = aux[k][:na]
		clear(aux[k])
	}
	coeffs := sys.Coeffs()
	var one, minusOne fr.Element
	one.SetOne()
	minusOne.Neg(&one)
	kind := make([]uint8, len(coeffs)) // 1: one, 2: minus one, 0: other
	for i := range coeffs {
		switch coeffs[i] {
		case one:
			kind[i] = 1
		case minusOne:
			kind[i] = 2
		}
	}
	const rowBlock = lagRows // a block's Lagrange values are computed together
	rows := sys.NumConstraints()
	nblocks := (rows + rowBlock - 1) / rowBlock
	owners := max(1, min(runtime.GOMAXPROCS(0), 64, nblocks, max(na, 1)))
	auxOwner := func(a int) int { return int(int64(a-lo) * int64(owners) / int64(na)) }
	blockOwner := func(b int) int { return b * owners / nblocks }
	blockRows := func(b int) (int, int) { return b * rowBlock, min((b+1)*rowBlock, rows) }

	// Pass 1: which owners' aux variables each block mentions (and, with
	// inputs, its own owner).
	marks := make([]uint64, nblocks)
	parallelRange(nblocks, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			var mask uint64
			if inputs {
				mask = 1 << blockOwner(b)
			}
			r0, r1 := blockRows(b)
			for _, m := range ms {
				for t := m.RowStart[r0]; t < m.RowStart[r1]; t++ {
					if v := m.Vars[t]; v.IsAux() && v.Index() >= lo && v.Index() < hi {
						mask |= 1 << auxOwner(v.Index())
					}
				}
			}
			marks[b] = mask
		}
	})

	// Pass 2: each owner adds its terms.
	ins := make([][3][]fr.Element, owners)
	var wg sync.WaitGroup
	for g := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var acc [3][]fr.Element
			if inputs {
				for k := range acc {
					acc[k] = make([]fr.Element, ni)
				}
				ins[g] = acc
			}
			bit := uint64(1) << g
			var lb, prefix [rowBlock]fr.Element // the block's L_j(τ), and scratch
			for b := range nblocks {
				if marks[b]&bit == 0 {
					continue
				}
				mine := inputs && blockOwner(b) == g
				r0, r1 := blockRows(b)
				lag.block(b, lb[:r1-r0], prefix[:])
				for k, m := range ms {
					out := aux[k]
					for j := r0; j < r1; j++ {
						lj := &lb[j-r0]
						for t := m.RowStart[j]; t < m.RowStart[j+1]; t++ {
							v := m.Vars[t]
							var dst *fr.Element
							switch i := v.Index(); {
							case !v.IsAux():
								if !mine {
									continue
								}
								dst = &acc[k][i]
							case i >= lo && i < hi && auxOwner(i) == g:
								dst = &out[i-lo]
							default:
								continue
							}
							switch c := m.CoeffIdx[t]; kind[c] {
							case 1:
								dst.Add(dst, lj)
							case 2:
								dst.Sub(dst, lj)
							default:
								var x fr.Element
								x.Mul(&coeffs[c], lj)
								dst.Add(dst, &x)
							}
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if inputs {
		for k := range in {
			in[k] = make([]fr.Element, ni)
			for _, acc := range ins {
				for i := range acc[k] {
					in[k][i].Add(&in[k][i], &acc[k][i])
				}
			}
		}
	}
	return aux, in
}

// nonZero returns the non-zero elements of v in order, written into buf
// (reused when its capacity suffices; not v's array).
func nonZero(v, buf []fr.Element) []fr.Element {
	tasks := min(runtime.GOMAXPROCS(0), max(1, len(v)/1024))
	counts := make([]int, tasks+1)
	span := func(t int) (int, int) { return len(v) * t / tasks, len(v) * (t + 1) / tasks }
	var wg sync.WaitGroup
	for t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := span(t)
			for i := lo; i < hi; i++ {
				if !v[i].IsZero() {
					counts[t+1]++
				}
			}
		}()
	}
	wg.Wait()
	for t := range tasks {
		counts[t+1] += counts[t]
	}
	out := buf[:0]
	if cap(out) < counts[tasks] {
		out = make([]fr.Element, counts[tasks])
	}
	out = out[:counts[tasks]]
	for t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := span(t)
			k := counts[t]
			for i := lo; i < hi; i++ {
				if !v[i].IsZero() {
					out[k] = v[i]
					k++
				}
			}
		}()
	}
	wg.Wait()
	return out
}
