package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// LengthError reports a preimage whose length is not the arity.
type LengthError struct{ Got, Arity int }

func (e *LengthError) Error() string {
	return fmt.Sprintf("poseidon: preimage has %d elements, arity is %d", e.Got, e.Arity)
}

// Hash returns the Poseidon hash of preimage, which must hold exactly Arity
// elements (MerkleTree hashing has no padding). It follows neptune's
// optimized static schedule.
func (c *Constants) Hash(preimage []fr.Element) (fr.Element, error) {
	if len(preimage) != c.Arity {
		return fr.Element{}, &LengthError{len(preimage), c.Arity}
	}
	var st [MaxArity + 1]fr.Element
	s := st[:c.Width]
	s[0] = c.DomainTag
	copy(s[1:], preimage)
	c.permute(s)
	return s[1], nil
}

func sbox(x *fr.Element) {
	var t fr.Element
	t.Square(x)
	t.Square(&t)
	x.Mul(x, &t)
}

// permute runs the optimized permutation on s (neptune hash_optimized_static).
func (c *Constants) permute(s []fr.Element) {
	k := c.Compressed
	off := 0
	for i := range s {
		s[i].Add(&s[i], &k[off+i])
	}
	off += c.Width
	half := c.FullRounds / 2
	round := 0
	var tmp [MaxArity + 1]fr.Element
	mix := func() {
		switch {
		case round == half-1:
			c.vecMat(s, c.PreSparse, tmp[:c.Width])
		case round > half-1 && round < half+c.PartialRounds:
			c.sparseMul(s, &c.Sparse[round-half])
		default:
			c.vecMat(s, c.MDS, tmp[:c.Width])
		}
		round++
	}
	full := func(last bool) {
		for i := range s {
			sbox(&s[i])
			if !last {
				s[i].Add(&s[i], &k[off+i])
			}
		}
		if !last {
			off += c.Width
		}
		mix()
	}
	for i := 0; i < half; i++ {
		full(false)
	}
	for i := 0; i < c.PartialRounds; i++ {
		sbox(&s[0])
		s[0].Add(&s[0], &k[off])
		off++
		mix()
	}
	for i := 1; i < half; i++ {
		full(false)
	}
	full(true)
}

// vecMat sets s to s·m, using tmp as scratch.
func (c *Constants) vecMat(s []fr.Element, m [][]fr.Element, tmp []fr.Element) {
	var t fr.Element
	for j := range tmp {
		tmp[j].SetZero()
		for i := range s {
			t.Mul(&m[i][j], &s[i])
			tmp[j].Add(&tmp[j], &t)
		}
	}
	copy(s, tmp)
}

// sparseMul sets s to s·S for the sparse matrix S.
func (c *Constants) sparseMul(s []fr.Element, sp *Sparse) {
	var s0, t fr.Element
	for i := range s {
		t.Mul(&sp.WHat[i], &s[i])
		s0.Add(&s0, &t)
	}
	for j := 1; j < len(s); j++ {
		t.Mul(&sp.VRest[j-1], &s[0])
		s[j].Add(&s[j], &t)
	}
	s[0] = s0
}
