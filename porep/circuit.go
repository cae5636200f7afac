// Package porep synthesizes the Filecoin StackedDRG proof-of-replication
// circuit (storage-proofs-porep's StackedCircuit) from the vanilla proofs of
// a C1 output, constraint for constraint as rust-fil-proofs and bellperson
// do: the same variables in the same order, the same constraints with the
// same coefficients, hence the same R1CS, witness, public inputs and
// Groth16 parameters.
package porep

import (
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sync/errgroup"

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
	dataLeaf := cs.AllocNum(c.DataLeaf)
	if err := cs.PoR(gadget.TreeSHA254, dataLeaf, c.DataPath, g.commD); err != nil {
		return err
	}
	cols := make([][]gadget.Num, len(c.Parents))
	for j := range c.Parents {
		col := &c.Parents[j]
		rows := make([]gadget.Num, len(col.Rows))
		for k := range col.Rows {
			rows[k] = cs.AllocNum(col.Rows[k])
		}
		h := cs.Poseidon(poseidon.MustGet(len(rows)), rows)
		if err := cs.PoR(gadget.TreePoseidon, h, col.Path, g.commC); err != nil {
			return err
		}
		cols[j] = rows
	}
	node := cs.AllocUInt64(c.Node)
	cs.PackUInt64IntoInput(&node)

	labels := make([]gadget.Num, s.Layers)
	parents := make([][]gadget.Bit, 0, DRGParents+ExpParents)
	for layer := 1; layer <= s.Layers; layer++ {
		labels[layer-1] = synthLabel(cs, g, &node, cols, layer, parents[:0])
	}
	enc := cs.Add(labels[s.Layers-1], dataLeaf)
	if err := cs.PoR(gadget.TreePoseidon, enc, c.ReplicaPath, g.commRLast); err != nil {
		return err
	}
	h := cs.Poseidon(poseidon.MustGet(s.Layers), labels)
	return cs.PoR(gadget.TreePoseidon, h, c.ColumnPath, g.commC)
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

// Witness computes the assignment of the circuit of partition p (shape s)
// in witness-only mode, proving the challenges concurrently on up to
// workers goroutines (GOMAXPROCS when workers ≤ 0). The result equals what
// [Synthesize] into an [r1cs.Witness] produces: Inputs[0] is ONE, then the
// public inputs in order; Aux in allocation order.
func Witness(s Shape, p *Partition, workers int) (*r1cs.Witness, error) {
	if err := s.Check(p, 0); err != nil {
		return nil, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	w := r1cs.NewWitness(s.NumInputs(), 0)
	g := synthGlobal(gadget.New(w), p)

	// Every challenge of a shape allocates the same number of variables;
	// once it is known, challenges write straight into their slice of the
	// final assignment.
	per, known := challengeAux.get(s)
	parts := make([]*r1cs.Witness, len(p.Challenges))
	var aux []fr.Element
	prefix := len(w.Aux)
	if known {
		aux = make([]fr.Element, prefix+per*len(p.Challenges))
		copy(aux, w.Aux)
	}
	var eg errgroup.Group
	eg.SetLimit(workers)
	for i := range p.Challenges {
		eg.Go(func() error {
			cw := &r1cs.Witness{}
			if known {
				off := prefix + i*per
				cw.Aux = aux[off : off : off+per]
			}
			parts[i] = cw
			return synthChallenge(gadget.New(cw), s, &g, &p.Challenges[i])
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	for _, cw := range parts {
		w.Inputs = append(w.Inputs, cw.Inputs...)
	}
	if known {
		for i, cw := range parts {
			off := prefix + i*per
			if len(cw.Aux) != per || &cw.Aux[0] != &aux[off] {
				panic("porep: challenge allocated a different number of variables") // a circuit bug
			}
		}
		w.Aux = aux
		return w, nil
	}
	per = len(parts[0].Aux)
	total := prefix
	for _, cw := range parts {
		if len(cw.Aux) != per {
			panic("porep: challenges allocated different numbers of variables") // a circuit bug
		}
		total += per
	}
	aux = make([]fr.Element, total)
	copy(aux, w.Aux)
	var cg errgroup.Group
	cg.SetLimit(workers)
	for i, cw := range parts {
		cg.Go(func() error { copy(aux[prefix+i*per:], cw.Aux); return nil })
	}
	cg.Wait()
	w.Aux = aux
	challengeAux.put(s, per)
	return w, nil
}

// challengeAux remembers, per shape, how many aux variables one challenge
// allocates.
var challengeAux = auxMemo{m: map[Shape]int{}}

type auxMemo struct {
	mu sync.Mutex
	m  map[Shape]int
}

func (a *auxMemo) get(s Shape) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.m[s]
	return n, ok
}

func (a *auxMemo) put(s Shape, n int) {
	a.mu.Lock()
	a.m[s] = n
	a.mu.Unlock()
}
