package update

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

// Partition is what the circuit of one partition reads from its vanilla
// proof (storage-proofs-update's circuit PrivateInputs): comm_c, the roots
// of trees R_old and R_new, the partition's apex leaves of tree D_new, and
// per challenge the three leaves and the siblings of their paths. The path
// positions are not kept: the circuit derives them from comm_r_new.
type Partition struct {
	CommC, RootROld, RootRNew fr.Element
	ApexLeaves                []fr.Element
	Challenges                []Challenge
}

// Challenge holds one challenge's leaves and sibling paths, leaf level
// first: PathROld and PathRNew have arity−1 siblings per tree R level,
// PathDNew one sibling per tree D level (ChallengeBits levels, the last
// PartitionBits of which are the partition's path to comm_d_new).
type Challenge struct {
	LeafROld, LeafDNew, LeafRNew fr.Element
	PathROld, PathRNew           [][]fr.Element
	PathDNew                     []fr.Element
}

// Check reports whether p has the structure shape s fixes: apex leaf and
// challenge counts, path lengths and arities, one partition path shared by
// all challenges (EmptySectorUpdateCircuit asserts it), and leaf_r_new =
// leaf_r_old + leaf_d_new·rho for the rho the public inputs give each
// challenge (the circuit asserts it too). Errors are *InputError values.
func (s Shape) Check(pub PublicInputs, p *Partition, k int) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if p == nil {
		return &InputError{"partition", "none"}
	}
	if _, err := s.KAndHSelect(k, pub.H); err != nil {
		return err
	}
	if len(p.ApexLeaves) != s.ApexLeaves {
		return &InputError{"apex_leafs", fmt.Sprintf("%d, want %d", len(p.ApexLeaves), s.ApexLeaves)}
	}
	if len(p.Challenges) != s.Challenges {
		return &InputError{"challenge_proofs", fmt.Sprintf("%d, want %d", len(p.Challenges), s.Challenges)}
	}
	arities := s.TreeArities()
	cb, pb := s.ChallengeBits(), s.PartitionBits()
	shared := p.Challenges[0].PathDNew
	for i := range p.Challenges {
		c := &p.Challenges[i]
		at := fmt.Sprintf("challenge_proofs[%d]", i)
		for _, t := range []struct {
			name string
			path [][]fr.Element
		}{{"proof_r_old", c.PathROld}, {"proof_r_new", c.PathRNew}} {
			if len(t.path) != len(arities) {
				return &InputError{at + "." + t.name, fmt.Sprintf("%d levels, want %d", len(t.path), len(arities))}
			}
			for l, sib := range t.path {
				if len(sib) != arities[l]-1 {
					return &InputError{fmt.Sprintf("%s.%s level %d", at, t.name, l),
						fmt.Sprintf("%d siblings, want %d", len(sib), arities[l]-1)}
				}
			}
		}
		if len(c.PathDNew) != cb {
			return &InputError{at + ".proof_d_new", fmt.Sprintf("%d levels, want %d", len(c.PathDNew), cb)}
		}
		for l := cb - pb; l < cb; l++ {
			if !c.PathDNew[l].Equal(&shared[l]) {
				return &InputError{at + ".proof_d_new", fmt.Sprintf("level %d differs from the partition path of challenge 0", l)}
			}
		}
	}
	return s.checkEncoding(pub, p, k)
}

// checkEncoding checks each challenge's leaf_r_new against the encoding of
// its leaf_r_old and leaf_d_new.
func (s Shape) checkEncoding(pub PublicInputs, p *Partition, k int) error {
	nodes, err := s.ChallengeNodes(pub.CommRNew, k)
	if err != nil {
		return err
	}
	phi := Phi(pub.CommDNew, pub.CommROld)
	shr := s.ChallengeBits() - pub.H
	for i, c := range nodes {
		ch := &p.Challenges[i]
		rho := Rho(phi, uint32(c>>shr))
		var want fr.Element
		want.Mul(&ch.LeafDNew, &rho).Add(&want, &ch.LeafROld)
		if !want.Equal(&ch.LeafRNew) {
			return &InputError{fmt.Sprintf("challenge_proofs[%d]", i),
				fmt.Sprintf("leaf_r_new of node %d is not leaf_r_old + leaf_d_new·rho", c)}
		}
	}
	return nil
}

// Synthesize synthesizes partition k of a proof of pub (shape s) into b in
// bellperson's order (EmptySectorUpdateCircuit::synthesize). b may record
// ([r1cs.System]), count ([r1cs.Counter]) or keep only the witness
// ([r1cs.Witness]); the caller finalizes it. p must pass [Shape.Check];
// any error is returned before b is touched.
func Synthesize(b r1cs.Builder, s Shape, pub PublicInputs, p *Partition, k int) error {
	if err := s.Check(pub, p, k); err != nil {
		return err
	}
	return synthesize(gadget.New(b), s, pub, p, k)
}

func elem(x uint64) fr.Element {
	var e fr.Element
	e.SetUint64(x)
	return e
}

func synthesize(cs *gadget.CS, s Shape, pub PublicInputs, p *Partition, k int) error {
	pre, err := synthPrefix(cs, s, pub, p, k)
	if err != nil {
		return err
	}
	for ci := range pre.random {
		if err := synthChallenge(cs, s, pre, &p.Challenges[ci], ci); err != nil {
			return err
		}
	}
	return nil
}

// prefix is what the challenges read from the part of the circuit before
// them: the numbers and bits they share, and each challenge's random bits.
type prefix struct {
	phi, rootROld, rootRNew gadget.Num
	apex                    []gadget.Num
	partBits, hBits         []gadget.Bit
	random                  [][]gadget.Bit
}

// synthPrefix synthesizes everything before the first challenge: the
// public inputs and their bits, phi, the private roots and their
// commitments, the apex tree and the challenge digests.
func synthPrefix(cs *gadget.CS, s Shape, pub PublicInputs, p *Partition, k int) (*prefix, error) {
	cb, pb := s.ChallengeBits(), s.PartitionBits()
	kh, err := s.KAndHSelect(k, pub.H)
	if err != nil {
		return nil, err
	}

	// k and h_select: one public input, split into bits.
	khNum := cs.AllocNum(elem(kh))
	cs.Inputize(khNum)
	khBits := make([]gadget.Bit, pb+HCount)
	for i := range khBits {
		khBits[i] = cs.AllocBit(kh>>i&1 == 1)
	}
	cs.EnforcePacked(khBits, khNum)
	pre := &prefix{partBits: khBits[:pb], hBits: khBits[pb:]}
	partition := cs.PackBits(pre.partBits)

	commROld := cs.AllocNum(pub.CommROld)
	cs.Inputize(commROld)
	commDNew := cs.AllocNum(pub.CommDNew)
	cs.Inputize(commDNew)
	commRNew := cs.AllocNum(pub.CommRNew)
	cs.Inputize(commRNew)
	pre.phi = cs.Poseidon(genRandomness, []gadget.Num{commDNew, commROld})

	commC := cs.AllocNum(p.CommC)
	pre.rootROld = cs.AllocNum(p.RootROld)
	pre.rootRNew = cs.AllocNum(p.RootRNew)
	pre.apex = make([]gadget.Num, len(p.ApexLeaves))
	for i, v := range p.ApexLeaves {
		pre.apex[i] = cs.AllocNum(v)
	}
	partPath := make([][]gadget.Num, pb)
	for i := range partPath {
		partPath[i] = []gadget.Num{cs.AllocNum(p.Challenges[0].PathDNew[cb-pb+i])}
	}

	h2 := poseidon.MustGet(2)
	cs.Equal(cs.Poseidon(h2, []gadget.Num{commC, pre.rootROld}), commROld)
	cs.Equal(cs.Poseidon(h2, []gadget.Num{commC, pre.rootRNew}), commRNew)

	if err := apexPoR(cs, pre.apex, pre.partBits, partPath, commDNew); err != nil {
		return nil, err
	}
	pre.random = genChallengeBits(cs, s, commRNew, partition, k)
	return pre, nil
}

// synthChallenge synthesizes challenge ci: its rho, the encoding of its
// new replica leaf, its inclusion in trees R_old and R_new, and the path
// of its tree D leaf to the apex leaf its bits select. It allocates only
// variables of its own, so in witness-only mode challenges may run on
// separate builders and their aux vectors be concatenated in order.
func synthChallenge(cs *gadget.CS, s Shape, pre *prefix, ch *Challenge, ci int) error {
	cb, pb, ab := s.ChallengeBits(), s.PartitionBits(), s.ApexBits()
	start := cb - pb - ab // tree D levels below the apex leaves
	cBits := append(append(make([]gadget.Bit, 0, cb), pre.random[ci]...), pre.partBits...)
	cHigh := challengeHigh(cs, s, cBits, pre.hBits)
	rho := cs.Poseidon(genRandomness, []gadget.Num{pre.phi, cHigh})

	leafROld := cs.AllocNum(ch.LeafROld)
	leafDNew := cs.AllocNum(ch.LeafDNew)
	leafRNew := labelRNew(cs, leafROld, leafDNew, rho)

	pathROld := allocPath(cs, ch.PathROld)
	if err := cs.PoRBits(gadget.TreePoseidon, cBits, leafROld, pathROld, pre.rootROld); err != nil {
		return err
	}
	pathRNew := allocPath(cs, ch.PathRNew)
	if err := cs.PoRBits(gadget.TreePoseidon, cBits, leafRNew, pathRNew, pre.rootRNew); err != nil {
		return err
	}
	apexLeaf := cs.Select(pre.apex, cBits[start:start+ab])
	toApex := make([][]gadget.Num, start)
	for l := range toApex {
		toApex[l] = []gadget.Num{cs.AllocNum(ch.PathDNew[l])}
	}
	return cs.PoRBits(gadget.TreeSHA254, cBits[:start], leafDNew, toApex, apexLeaf)
}

// apexPoR hashes the apex tree over a partition's apex leaves, row by row,
// and proves its root lies under comm_d_new at the partition's position
// (storage-proofs-update apex_por).
func apexPoR(cs *gadget.CS, apex []gadget.Num, partBits []gadget.Bit, partPath [][]gadget.Num, commDNew gadget.Num) error {
	row := apex
	for len(row) > 1 {
		next := make([]gadget.Num, len(row)/2)
		for i := range next {
			next[i] = cs.SHA254NodeCircuit(row[2*i], row[2*i+1])
		}
		row = next
	}
	return cs.PoRBits(gadget.TreeSHA254, partBits, row[0], partPath, commDNew)
}

// allocPath allocates the siblings of every level, level by level.
func allocPath(cs *gadget.CS, path [][]fr.Element) [][]gadget.Num {
	out := make([][]gadget.Num, len(path))
	for l, sib := range path {
		out[l] = make([]gadget.Num, len(sib))
		for j, v := range sib {
			out[l][j] = cs.AllocNum(v)
		}
	}
	return out
}

// enforceRaw adds a·b = c when cs records constraints.
func enforceRaw(cs *gadget.CS, a, b, c r1cs.LC) {
	if cs.Records() {
		cs.Builder().Enforce(a, b, c)
	}
}

var (
	feOne  = fr.One()
	oneLC  = r1cs.LC{{Var: r1cs.One, Coeff: feOne}}
	feZero fr.Element
)

// genChallengeBits returns the RandomBits low bits of each of the
// partition's challenges (storage-proofs-update gen_challenge_bits): per
// digest j, digest_index = k·digests + j is allocated and tied to the
// packed partition number, the digest H(comm_r_new, digest_index) is
// decomposed into allocated bits, and consecutive runs of RandomBits bits
// are the challenges.
func genChallengeBits(cs *gadget.CS, s Shape, commRNew, partition gadget.Num, k int) [][]gadget.Bit {
	rb, per, digests := s.RandomBits(), s.ChallengesPerDigest(), s.DigestsPerPartition()
	out := make([][]gadget.Bit, 0, s.Challenges)
	for j := 0; j < digests; j++ {
		idx := cs.AllocNum(elem(uint64(k*digests + j)))
		enforceRaw(cs,
			r1cs.LC{{Var: partition.Var, Coeff: elem(uint64(digests))}, {Var: r1cs.One, Coeff: elem(uint64(j))}},
			oneLC, r1cs.LC{{Var: idx.Var, Coeff: feOne}})
		digest := cs.Poseidon(genRandomness, []gadget.Num{commRNew, idx})
		bits := cs.NumToAllocatedBits(make([]gadget.Bit, 0, gadget.NumBits), digest)
		take := per
		if j == digests-1 {
			take = s.Challenges - len(out)
		}
		for i := 0; i < take; i++ {
			out = append(out, bits[i*rb:(i+1)*rb])
		}
	}
	return out
}

// challengeHigh returns the number formed by the h high bits of the
// challenge, h = Hs[i] for the one bit i set in h_select
// (storage-proofs-update get_challenge_high_bits): each candidate is packed
// and multiplied by its h_select bit, and the products are summed.
func challengeHigh(cs *gadget.CS, s Shape, cBits, hBits []gadget.Bit) gadget.Num {
	n := len(cBits)
	var terms [HCount]gadget.Num
	var sum fr.Element
	for i, h := range s.Hs {
		packed := cs.PackBits(cBits[n-h:])
		v := feZero
		if hBits[i].Value() {
			v = packed.Value
		}
		terms[i] = cs.AllocNum(v)
		enforceRaw(cs, r1cs.LC{{Var: packed.Var, Coeff: feOne}}, r1cs.LC{{Var: hBits[i].Variable(), Coeff: feOne}},
			r1cs.LC{{Var: terms[i].Var, Coeff: feOne}})
		sum.Add(&sum, &v)
	}
	sel := cs.AllocNum(sum)
	if cs.Records() {
		a := make(r1cs.LC, HCount)
		for i := range terms {
			a[i] = r1cs.Term{Var: terms[i].Var, Coeff: feOne}
		}
		cs.Builder().Enforce(a, oneLC, r1cs.LC{{Var: sel.Var, Coeff: feOne}})
	}
	return sel
}

// labelRNew is the encoding of one node (storage-proofs-update
// label_r_new): product = leaf_d_new·rho, then
// leaf_r_new = leaf_r_old + product with (leaf_r_old + product)·1 = leaf_r_new.
func labelRNew(cs *gadget.CS, leafROld, leafDNew, rho gadget.Num) gadget.Num {
	prod := cs.Mul(leafDNew, rho)
	var v fr.Element
	v.Add(&leafROld.Value, &prod.Value)
	r := cs.AllocNum(v)
	enforceRaw(cs, r1cs.LC{{Var: leafROld.Var, Coeff: feOne}, {Var: prod.Var, Coeff: feOne}}, oneLC,
		r1cs.LC{{Var: r.Var, Coeff: feOne}})
	return r
}

// WitnessContext computes the assignment of partition k on up to workers
// goroutines (GOMAXPROCS when workers ≤ 0), its aux values written into aux
// when aux (nil, or a buffer to reuse) has the capacity for them. The
// result equals what
// [Synthesize] into an [r1cs.Witness] produces: Inputs[0] is ONE, then the
// public inputs in order; Aux in allocation order. The part before the
// challenges runs first, then the challenges, each written straight into
// its place in the result (they allocate only variables of their own, and
// every one as many: [r1cs.Witness.AppendParts]); no challenge starts once
// ctx is done, and ctx's error is returned when those running end.
func WitnessContext(ctx context.Context, s Shape, pub PublicInputs, p *Partition, k, workers int, aux []fr.Element) (*r1cs.Witness, error) {
	if err := s.Check(pub, p, k); err != nil {
		return nil, err
	}
	w := r1cs.NewWitness(s.NumInputs(), 0)
	w.Aux = aux[:0]
	pre, err := synthPrefix(gadget.New(w), s, pub, p, k)
	if err != nil {
		return nil, err
	}
	err = w.AppendParts(ctx, len(pre.random), workers, func(ci int, part *r1cs.Witness) error {
		return synthChallenge(gadget.New(part), s, pre, &p.Challenges[ci], ci)
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// RecordContext records the R1CS of shape s, the one [SynthesizeBlank]
// gives, and finalizes it without an assignment
// ([r1cs.System.Unassigned]): the part before the challenges is recorded
// first, then challenge 0, each a segment of a shape-only [r1cs.Segmented]
// recording (a challenge allocates only variables of its own and takes the
// prefix's values from the Go side, as [WitnessContext] relies on). The
// blank challenges are alike but for their random bits, so challenge 0 is
// repeated into the others ([r1cs.Segmented.Repeat]) with challenge i's
// bits in place of challenge 0's, and the constraints equal the
// sequential recording's; the join runs on up to workers goroutines
// (GOMAXPROCS when workers ≤ 0). ctx's error is returned once ctx is
// done.
func RecordContext(ctx context.Context, s Shape, workers int) (*r1cs.System, error) {
	blank, err := BlankPartition(s)
	if err != nil {
		return nil, err
	}
	pub := BlankInputs(s)
	if err := s.Check(pub, blank, 0); err != nil {
		return nil, err
	}
	// The sizes of the prefix and of a challenge (every challenge of a
	// shape allocates the same), from a witness-only run. The prefix (6 M
	// variables at 64 GiB) is synthesized on one goroutine, twice: both
	// runs stop within 4096 constraints of ctx's end (r1cs.BuildContext).
	w := r1cs.NewWitness(0, 0)
	var pre *prefix
	err = r1cs.BuildContext(ctx, w, func(b r1cs.Builder) (err error) {
		pre, err = synthPrefix(gadget.New(b), s, pub, blank, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	var one r1cs.Witness
	if err := synthChallenge(gadget.New(&one), s, pre, &blank.Challenges[0], 0); err != nil {
		return nil, err
	}
	preIn, preAux := len(w.Inputs)-1, len(w.Aux)
	chIn, chAux := len(one.Inputs), len(one.Aux)
	n := len(pre.random)

	rec := r1cs.NewSegmentedShape(1+preIn+n*chIn, preAux+n*chAux)
	head := rec.Segment(preIn, preAux)
	first := rec.Segment(chIn, chAux)
	err = r1cs.BuildContext(ctx, head, func(b r1cs.Builder) (err error) {
		pre, err = synthPrefix(gadget.New(b), s, pub, blank, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	head.Done()
	err = synthChallenge(gadget.New(first), s, pre, &blank.Challenges[0], 0)
	first.Done()
	if err != nil {
		return nil, err
	}
	// Challenge i reads its own random bits where challenge 0 reads its.
	bit := map[r1cs.Variable]int{}
	for j, b := range pre.random[0] {
		bit[b.Variable()] = j
	}
	err = rec.Repeat(first, n-1, func(i int, v r1cs.Variable) r1cs.Variable {
		if j, ok := bit[v]; ok {
			return pre.random[i][j].Variable()
		}
		return v
	})
	if err != nil {
		return nil, fmt.Errorf("update: %s: challenges cannot be repeated: %w", s.Name, err)
	}
	return rec.System(ctx, workers)
}

// SynthesizeBlank synthesizes the circuit of shape s from its
// [BlankPartition] and [BlankInputs] into b: the R1CS of the shape, with
// values that satisfy nothing.
func SynthesizeBlank(b r1cs.Builder, s Shape) error {
	blank, err := BlankPartition(s)
	if err != nil {
		return err
	}
	return Synthesize(b, s, BlankInputs(s), blank, 0)
}

// BlankPartition returns a partition of shape s whose values are all zero:
// it synthesizes the R1CS of the shape (which depends on nothing else), as
// EmptySectorUpdateCompound::blank_circuit does for parameter generation,
// but its witness satisfies nothing. Use it with [BlankInputs].
func BlankPartition(s Shape) (*Partition, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	arities := s.TreeArities()
	pathR := make([][]fr.Element, len(arities))
	for l, a := range arities {
		pathR[l] = make([]fr.Element, a-1)
	}
	c := Challenge{PathROld: pathR, PathRNew: pathR, PathDNew: make([]fr.Element, s.ChallengeBits())}
	p := &Partition{ApexLeaves: make([]fr.Element, s.ApexLeaves), Challenges: make([]Challenge, s.Challenges)}
	for i := range p.Challenges {
		p.Challenges[i] = c
	}
	return p, nil
}

// BlankInputs returns all-zero public inputs with the default h, for
// [BlankPartition].
func BlankInputs(s Shape) PublicInputs { return PublicInputs{H: s.HDefault()} }
