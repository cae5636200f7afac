// Package porep synthesizes the Filecoin StackedDRG proof-of-replication
// circuit (storage-proofs-porep's StackedCircuit) from the vanilla proofs of
// a C1 output, constraint for constraint as rust-fil-proofs and bellperson
// do: the same variables in the same order, the same constraints with the
// same coefficients, hence the same R1CS, witness, public inputs and
// Groth16 parameters.
//
// The flow from a C1 output to what a Groth16 prover needs:
//
//	c1, err := DecodeC1(json)               // the C1 output (or a Commit2In wrapper)
//	shape, parts, err := Partitions(c1)     // one Partition per Groth16 proof
//	err = shape.Verify(parts[k], k)         // optional: check the vanilla proofs natively
//	err = Synthesize(sys, shape, parts[k])  // record (r1cs.System), count (r1cs.Counter), …
//	w, err := Witness(shape, parts[k], 0)   // … or only the assignment, on all cores
//
// The R1CS depends only on the [Shape]: it can be recorded once, from any
// partition of the shape ([SyntheticPartition] needs no sector), and paired
// with each partition's [Witness].
package porep

import (
	"context"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/porep/poseidon"
	"github.com/sealc2/c2/r1cs"
)

// Synthesize synthesizes the circuit of one partition of shape s into b,
// in bellperson's order (StackedCircuit::synthesize, then Proof::synthesize
// per challenge). b may record ([r1cs.System]), count ([r1cs.Counter]) or
// keep only the witness ([r1cs.Witness]); the caller finalizes it. p must
// pass [Shape.Check]; any error is returned before b is touched.
func Synthesize(b r1cs.Builder, s Shape, p *Partition) error {
	if err := s.Check(p, 0); err != nil {
		return err
	}
	return synthesize(b, s, p)
}

// synthesize is Synthesize after the check.
func synthesize(b r1cs.Builder, s Shape, p *Partition) error {
	cs := gadget.New(b)
	g := synthGlobal(cs, p)
	for i := range p.Challenges {
		if err := synthChallenge(cs, s, &g, &p.Challenges[i]); err != nil {
			return err
		}
	}
	return nil
}

// global holds the partition-wide variables every challenge refers to.
type global struct {
	replicaID []gadget.Bit // replica_id bits, byte-bit-reversed
	commD     gadget.Num
	commC     gadget.Num
	commRLast gadget.Num
}

// synthGlobal is the partition prefix (571 constraints): replica_id, comm_d
// and comm_r as public inputs, replica_id's bits, the private roots of C and
// R_last, and comm_r = Poseidon(comm_c, comm_r_last).
func synthGlobal(cs *gadget.CS, p *Partition) global {
	var g global
	rid := cs.AllocNum(p.ReplicaID)
	cs.Inputize(rid)
	g.replicaID = gadget.ReverseBitNumbering(nil, cs.ToBitsLE(nil, rid))
	g.commD = cs.AllocNum(p.CommD)
	cs.Inputize(g.commD)
	commR := cs.AllocNum(p.CommR)
	cs.Inputize(commR)
	g.commRLast = cs.AllocNum(p.CommRLast)
	g.commC = cs.AllocNum(p.CommC)
	h := cs.Poseidon(poseidon.MustGet(2), []gadget.Num{g.commC, g.commRLast})
	cs.Equal(commR, h)
	return g
}

// synthChallenge proves one challenge (stacked/circuit/proof.rs
// Proof::synthesize): the data leaf in tree D, the parent columns in tree
// C, the challenge as a public input, the labels of every layer, the
// encoding in tree R_last and the challenged column in tree C.
func synthChallenge(cs *gadget.CS, s Shape, g *global, c *Challenge) error {
	dataLeaf, err := synthData(cs, g, c)
	if err != nil {
		return err
	}
	cols, node, err := synthColumns(cs, g, c)
	if err != nil {
		return err
	}
	labels := make([]gadget.Num, s.Layers)
	parents := make([][]gadget.Bit, 0, DRGParents+ExpParents)
	for layer := 1; layer <= s.Layers; layer++ {
		labels[layer-1] = synthLabel(cs, g, &node, cols, layer, parents[:0])
	}
	return synthReplica(cs, g, c, dataLeaf, labels)
}

// synthData allocates the data leaf and proves it in tree D.
func synthData(cs *gadget.CS, g *global, c *Challenge) (gadget.Num, error) {
	dataLeaf := cs.AllocNum(c.DataLeaf)
	return dataLeaf, cs.PoR(gadget.TreeSHA254, dataLeaf, c.DataPath, g.commD)
}

// synthColumns allocates each parent column, proves its hash in tree C,
// then allocates the challenge and packs it into a public input.
func synthColumns(cs *gadget.CS, g *global, c *Challenge) ([][]gadget.Num, gadget.UInt64, error) {
	cols := make([][]gadget.Num, len(c.Parents))
	for j := range c.Parents {
		col := &c.Parents[j]
		rows := make([]gadget.Num, len(col.Rows))
		for k := range col.Rows {
			rows[k] = cs.AllocNum(col.Rows[k])
		}
		h := cs.Poseidon(poseidon.MustGet(len(rows)), rows)
		if err := cs.PoR(gadget.TreePoseidon, h, col.Path, g.commC); err != nil {
			return nil, gadget.UInt64{}, err
		}
		cols[j] = rows
	}
	node := cs.AllocUInt64(c.Node)
	cs.PackUInt64IntoInput(&node)
	return cols, node, nil
}

// synthLabel decomposes the parents of a layer's label into bits (the DRG
// parents' rows of the layer, then after layer 1 the expander parents' rows
// of the previous layer) and computes the label.
func synthLabel(cs *gadget.CS, g *global, node *gadget.UInt64, cols [][]gadget.Num, layer int, parents [][]gadget.Bit) gadget.Num {
	for j := 0; j < DRGParents; j++ {
		parents = append(parents, gadget.ReverseBitNumbering(nil, cs.ToBitsLE(nil, cols[j][layer-1])))
	}
	if layer > 1 {
		for j := DRGParents; j < DRGParents+ExpParents; j++ {
			parents = append(parents, gadget.ReverseBitNumbering(nil, cs.ToBitsLE(nil, cols[j][layer-2])))
		}
	}
	return cs.Label(g.replicaID, uint32(layer), node, parents)
}

// synthReplica encodes the data leaf with the last label and proves the
// result in tree R_last, then hashes the labels into the challenged column
// and proves it in tree C.
func synthReplica(cs *gadget.CS, g *global, c *Challenge, dataLeaf gadget.Num, labels []gadget.Num) error {
	enc := cs.Add(labels[len(labels)-1], dataLeaf)
	if err := cs.PoR(gadget.TreePoseidon, enc, c.ReplicaPath, g.commRLast); err != nil {
		return err
	}
	h := cs.Poseidon(poseidon.MustGet(len(labels)), labels)
	return cs.PoR(gadget.TreePoseidon, h, c.ColumnPath, g.commC)
}

// Witness computes the assignment of the circuit of partition p (shape s)
// in witness-only mode, on up to workers goroutines (GOMAXPROCS when
// workers ≤ 0). The result equals what [Synthesize] into an [r1cs.Witness]
// produces: Inputs[0] is ONE, then the public inputs in order; Aux in
// allocation order.
//
// Each challenge is cut into segments that allocate consecutive runs of
// variables: the tree-D proof, the parent columns and the challenge, one
// segment per label, and the replica proofs. Only the last depends on
// others (on the label values), so the segments of all challenges run
// concurrently and the replica segments after them. Gadgets carry their
// values, so in witness-only mode a segment needs no variable of another:
// the values it reads (rows, the challenge bits, labels) are rebuilt from
// the vanilla proof or passed along. Every segment writes straight into
// its slice of the assignment; the segment sizes of a shape are learned
// once, from a first run of one challenge.
func Witness(s Shape, p *Partition, workers int) (*r1cs.Witness, error) {
	return WitnessContext(context.Background(), s, p, workers)
}

// WitnessContext is Witness stopped by ctx: no segment starts once ctx is
// done (a segment is one label, Merkle proof or column batch: milliseconds
// of work), and ctx's error is returned when those running end.
func WitnessContext(ctx context.Context, s Shape, p *Partition, workers int) (*r1cs.Witness, error) {
	return WitnessInto(ctx, s, p, workers, nil)
}

// start checks p against s and ctx before synthesis of p begins, and
// returns the worker count to use: workers, or GOMAXPROCS when it is not
// positive.
func (s Shape) start(ctx context.Context, p *Partition, workers int) (int, error) {
	if err := s.Check(p, 0); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return workers, nil
}

// WitnessInto is WitnessContext writing the aux assignment into buf when
// its capacity suffices (the result's Aux then shares buf's array), else
// into a new array: a caller proving partition after partition reuses one
// buffer per partition in flight instead of allocating 32 bytes per
// variable each time (4.2 GB for a 32 GiB partition). Every element of the
// result's Aux is written; buf's former contents do not matter.
func WitnessInto(ctx context.Context, s Shape, p *Partition, workers int, buf []fr.Element) (*r1cs.Witness, error) {
	workers, err := s.start(ctx, p, workers)
	if err != nil {
		return nil, err
	}
	w := r1cs.NewWitness(s.NumInputs(), 0)
	g := synthGlobal(gadget.New(w), p)

	nseg := s.Layers + 3 // data, columns, labels, replica
	sizes, known := segmentAux.get(s)
	if !known {
		segs := make([]r1cs.Witness, nseg)
		if err := witnessSegments(ctx, s, &g, p.Challenges[:1], segs, workers); err != nil {
			return nil, err
		}
		sizes = make([]int, nseg)
		for i := range segs {
			sizes[i] = len(segs[i].Aux)
		}
		segmentAux.put(s, sizes)
	}

	segs := make([]r1cs.Witness, len(p.Challenges)*nseg)
	total := len(w.Aux)
	for i := range segs {
		total += sizes[i%nseg]
	}
	aux := buf[:0]
	if cap(aux) >= total {
		aux = aux[:total]
	} else {
		aux = make([]fr.Element, total)
	}
	off := copy(aux, w.Aux)
	for i := range segs {
		n := sizes[i%nseg]
		segs[i].Aux = aux[off : off : off+n]
		off += n
	}
	if err := witnessSegments(ctx, s, &g, p.Challenges, segs, workers); err != nil {
		return nil, err
	}
	off = len(w.Aux)
	for i := range segs {
		if n := sizes[i%nseg]; len(segs[i].Aux) != n || n > 0 && &segs[i].Aux[0] != &aux[off] {
			panic("porep: a segment allocated a different number of variables") // a circuit bug
		}
		off += sizes[i%nseg]
		w.Inputs = append(w.Inputs, segs[i].Inputs...)
	}
	w.Aux = aux
	return w, nil
}

// witnessSegments runs the segments of the challenges (see [Witness]) into
// segs, Layers+3 per challenge. No segment starts once ctx is done.
func witnessSegments(ctx context.Context, s Shape, g *global, challenges []Challenge, segs []r1cs.Witness, workers int) error {
	nseg := s.Layers + 3
	labels := make([]gadget.Num, len(challenges)*s.Layers)
	dataLeaves := make([]gadget.Num, len(challenges))
	grp := r1cs.NewGroup(ctx, workers)
	for i := range challenges {
		c := &challenges[i]
		seg := segs[i*nseg : (i+1)*nseg]
		grp.Go(func() (err error) {
			dataLeaves[i], err = synthData(gadget.New(&seg[0]), g, c)
			return err
		})
		grp.Go(func() error {
			_, _, err := synthColumns(gadget.New(&seg[1]), g, c)
			return err
		})
		// The labels read the rows and the challenge bits by value.
		cols := make([][]gadget.Num, len(c.Parents))
		for j := range c.Parents {
			cols[j] = make([]gadget.Num, len(c.Parents[j].Rows))
			for k, v := range c.Parents[j].Rows {
				cols[j][k].Value = v
			}
		}
		node := gadget.New(&r1cs.Witness{}).AllocUInt64(c.Node)
		for layer := 1; layer <= s.Layers; layer++ {
			grp.Go(func() error {
				labels[i*s.Layers+layer-1] = synthLabel(gadget.New(&seg[1+layer]), g, &node, cols, layer, nil)
				return nil
			})
		}
	}
	if err := grp.Wait(); err != nil {
		return err
	}
	for i := range challenges {
		c := &challenges[i]
		seg := &segs[(i+1)*nseg-1]
		grp.Go(func() error {
			return synthReplica(gadget.New(seg), g, c, dataLeaves[i], labels[i*s.Layers:(i+1)*s.Layers])
		})
	}
	return grp.Wait()
}

// segmentAux remembers, per shape, how many aux variables each segment of
// a challenge allocates (see [Witness]).
var segmentAux = auxMemo{m: map[Shape][]int{}}

type auxMemo struct {
	mu sync.Mutex
	m  map[Shape][]int
}

func (a *auxMemo) get(s Shape) ([]int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.m[s]
	return n, ok
}

func (a *auxMemo) put(s Shape, n []int) {
	a.mu.Lock()
	a.m[s] = n
	a.mu.Unlock()
}
