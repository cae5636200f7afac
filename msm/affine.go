package msm

// Affine additions in batches: k additions share one field inversion
// (Montgomery's trick), about 5 multiplications and a square each against 11
// for a mixed Jacobian addition. Fixed-base multiplication (fixedbase.go) and
// the sums of unit-scalar bases (sum.go) are built on them.

// coord is a curve's coordinate field (fp for G1, E2 for G2).
type coord[F any] interface {
	*F
	Sub(x, y *F) *F
	Mul(x, y *F) *F
	Square(x *F) *F
	Inverse(x *F) *F
	Neg(x *F) *F
	Equal(x *F) bool
	IsZero() bool
}

// addAffine sets a_j = a_j + q_j for j < k, where acc(j) and q(j) return the
// coordinates of the two points (a_j updated in place) and den[j] holds
// x(q_j) − x(a_j), which must not be zero (the points are neither equal nor
// opposite). pre is scratch of at least k elements.
func addAffine[F any, PF coord[F]](k int, acc, q func(j int) (x, y *F), den, pre []F) {
	if k == 0 {
		return
	}
	pre[0] = den[0]
	for j := 1; j < k; j++ {
		PF(&pre[j]).Mul(&pre[j-1], &den[j])
	}
	var inv, dinv, lam, x3 F
	PF(&inv).Inverse(&pre[k-1]) // 1/(den[0]···den[k−1])
	for j := k - 1; j >= 0; j-- {
		if j > 0 {
			PF(&dinv).Mul(&inv, &pre[j-1]) // 1/den[j]
			PF(&inv).Mul(&inv, &den[j])
		} else {
			dinv = inv
		}
		x, y := acc(j)
		qx, qy := q(j)
		// λ = (qy − y)/(qx − x); x' = λ² − x − qx; y' = λ(x − x') − y.
		PF(&lam).Sub(qy, y)
		PF(&lam).Mul(&lam, &dinv)
		PF(&x3).Square(&lam)
		PF(&x3).Sub(&x3, x)
		PF(&x3).Sub(&x3, qx)
		PF(x).Sub(x, &x3)
		PF(x).Mul(x, &lam)
		PF(y).Sub(x, y)
		*x = x3
	}
}

// treeSum sums the m affine points (xs[i], ys[i]) by levels of pairwise
// additions, each level one addAffine batch. A pair with equal x (equal or
// opposite points) is handed to aside, which must account for both points;
// it leaves the tree. It returns the sum of the rest in xs[0], ys[0], or
// false when none is left. den and pre are scratch of len(xs)/2.
func treeSum[F any, PF coord[F]](xs, ys []F, m int, den, pre []F, aside func(x, y *F)) bool {
	even := func(j int) (x, y *F) { return &xs[2*j], &ys[2*j] }
	odd := func(j int) (x, y *F) { return &xs[2*j+1], &ys[2*j+1] }
	for m > 1 {
		k := 0 // pairs kept; kept pair k moves to 2k, 2k+1
		for j := range m / 2 {
			a, b := 2*j, 2*j+1
			PF(&den[k]).Sub(&xs[b], &xs[a])
			if PF(&den[k]).IsZero() {
				aside(&xs[a], &ys[a])
				aside(&xs[b], &ys[b])
				continue
			}
			xs[2*k], ys[2*k], xs[2*k+1], ys[2*k+1] = xs[a], ys[a], xs[b], ys[b]
			k++
		}
		addAffine[F, PF](k, even, odd, den, pre)
		// Sums to the front, then an odd point out.
		for j := range k {
			xs[j], ys[j] = xs[2*j], ys[2*j]
		}
		n := k
		if m%2 == 1 {
			xs[n], ys[n] = xs[m-1], ys[m-1]
			n++
		}
		m = n
	}
	return m == 1
}
