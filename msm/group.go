package msm

import (
	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// affinePoint is *bls.G1Affine or *bls.G2Affine (A), J its Jacobian form.
type affinePoint[A, J any] interface {
	*A
	FromJacobian(*J) *A
	IsInfinity() bool
}

// jacobianPoint is *bls.G1Jac or *bls.G2Jac (J), A its affine form.
type jacobianPoint[A, J any] interface {
	*J
	FromAffine(*A) *J
	AddMixed(*A) *J
	AddAssign(*J) *J
	DoubleAssign() *J
	MultiExp([]A, []fr.Element, ecc.MultiExpConfig) (*J, error)
}

// group lets one generic body serve G1 and G2: affine points A with
// coordinates in F (fp for G1, E2 for G2) and Jacobian points J. Its value
// holds what constraints cannot: the name and the coordinates.
type group[A, F, J any, PA affinePoint[A, J], PF coord[F], PJ jacobianPoint[A, J]] struct {
	name string // "G1" or "G2", for errors
	xy   func(p *A) (x, y *F)
}

var (
	groupG1 = group[bls.G1Affine, fp.Element, bls.G1Jac, *bls.G1Affine, *fp.Element, *bls.G1Jac]{
		name: "G1", xy: func(p *bls.G1Affine) (x, y *fp.Element) { return &p.X, &p.Y },
	}
	groupG2 = group[bls.G2Affine, bls.E2, bls.G2Jac, *bls.G2Affine, *bls.E2, *bls.G2Jac]{
		name: "G2", xy: func(p *bls.G2Affine) (x, y *bls.E2) { return &p.X, &p.Y },
	}
)

// point returns the affine point (x, y).
func (g group[A, F, J, PA, PF, PJ]) point(x, y *F) A {
	var p A
	px, py := g.xy(&p)
	*px, *py = *x, *y
	return p
}

// Gather returns bases[idx[j]] for every j: the bases of a tail MSM, in a
// fresh slice.
func Gather[A any](bases []A, idx []uint32) []A {
	out := make([]A, len(idx))
	for j, i := range idx {
		out[j] = bases[i]
	}
	return out
}
