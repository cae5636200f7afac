package poseidon

import "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

type matrix = [][]fr.Element

func newMatrix(n int) matrix {
	m := make(matrix, n)
	for i := range m {
		m[i] = make([]fr.Element, n)
	}
	return m
}

func identity(n int) matrix {
	m := newMatrix(n)
	for i := range m {
		m[i][i].SetOne()
	}
	return m
}

// cauchy returns the t×t matrix 1/(x_i + y_j), x_i = i, y_j = t + j
// (neptune mds.rs generate_mds).
func cauchy(t int) matrix {
	m := newMatrix(t)
	for i := range m {
		for j := range m[i] {
			m[i][j].SetUint64(uint64(i + t + j))
			m[i][j].Inverse(&m[i][j])
		}
	}
	return m
}

func transpose(a matrix) matrix {
	m := newMatrix(len(a))
	for i := range a {
		for j := range a[i] {
			m[j][i] = a[i][j]
		}
	}
	return m
}

func mul(a, b matrix) matrix {
	n := len(a)
	m := newMatrix(n)
	var t fr.Element
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				t.Mul(&a[i][k], &b[k][j])
				m[i][j].Add(&m[i][j], &t)
			}
		}
	}
	return m
}

// apply returns m·v (neptune left_apply_matrix).
func apply(m matrix, v []fr.Element) []fr.Element {
	out := make([]fr.Element, len(v))
	var t fr.Element
	for i := range m {
		for j := range v {
			t.Mul(&m[i][j], &v[j])
			out[i].Add(&out[i], &t)
		}
	}
	return out
}

// invert returns a⁻¹ by Gauss–Jordan elimination. The inverse is unique, so
// the method does not matter; a must be invertible (MDS matrices and their
// minors are).
func invert(a matrix) matrix {
	n := len(a)
	m := newMatrix(n)
	for i := range a {
		copy(m[i], a[i])
	}
	inv := identity(n)
	var f, t fr.Element
	for col := 0; col < n; col++ {
		p := col
		for p < n && m[p][col].IsZero() {
			p++
		}
		if p == n {
			panic("poseidon: singular matrix") // constants are fixed: cannot happen
		}
		m[col], m[p] = m[p], m[col]
		inv[col], inv[p] = inv[p], inv[col]
		f.Inverse(&m[col][col])
		for j := 0; j < n; j++ {
			m[col][j].Mul(&m[col][j], &f)
			inv[col][j].Mul(&inv[col][j], &f)
		}
		for i := 0; i < n; i++ {
			if i == col || m[i][col].IsZero() {
				continue
			}
			f = m[i][col]
			for j := 0; j < n; j++ {
				t.Mul(&f, &m[col][j])
				m[i][j].Sub(&m[i][j], &t)
				t.Mul(&f, &inv[col][j])
				inv[i][j].Sub(&inv[i][j], &t)
			}
		}
	}
	return inv
}

// minor00 returns m without its first row and column.
func minor00(m matrix) matrix {
	out := make(matrix, len(m)-1)
	for i := range out {
		out[i] = append([]fr.Element(nil), m[i+1][1:]...)
	}
	return out
}

// compress returns neptune's compressed round constants
// (preprocessing.rs compress_round_constants with every partial round
// preprocessed): the first round's keys, then the keys of the following
// initial full rounds pushed back through M⁻¹, then the partial rounds' keys
// folded backwards so each partial round adds a single scalar, then the final
// full rounds' keys through M⁻¹.
func compress(c *Constants) []fr.Element {
	t, half, rp := c.Width, c.FullRounds/2, c.PartialRounds
	keys := func(r int) []fr.Element { return c.RoundConstants[r*t : (r+1)*t] }
	res := append([]fr.Element(nil), keys(0)...)
	for i := 0; i < half-1; i++ {
		res = append(res, apply(c.MDSInv, keys(i+1))...)
	}
	final := half + rp
	acc := append([]fr.Element(nil), keys(final)...)
	partial := make([]fr.Element, 0, rp)
	for i := 0; i < rp; i++ {
		prev := keys(final - i - 1)
		inv := apply(c.MDSInv, acc)
		partial = append(partial, inv[0])
		inv[0].SetZero()
		for j := range inv {
			inv[j].Add(&inv[j], &prev[j])
		}
		acc = inv
	}
	res = append(res, apply(c.MDSInv, acc)...)
	for i := len(partial) - 1; i >= 0; i-- {
		res = append(res, partial[i])
	}
	for i := 1; i < half; i++ {
		res = append(res, apply(c.MDSInv, keys(i+final))...)
	}
	return res
}

// factorSparse factors base (the transposed MDS matrix) into a dense
// pre-sparse matrix and n sparse matrices (neptune mds.rs
// factor_to_sparse_matrices): repeatedly split the current matrix M into
// M' (first row/column of the identity, rest of M) and the sparse M-double-prime, and
// continue with base·M'.
func factorSparse(base matrix, n int) (matrix, []Sparse) {
	cur := base
	all := make([]Sparse, 0, n)
	for k := 0; k < n; k++ {
		t := len(cur)
		mHatInv := invert(minor00(cur))
		w := make([]fr.Element, t-1)
		for i := 1; i < t; i++ {
			w[i-1] = cur[i][0]
		}
		wHat := apply(mHatInv, w)
		s := Sparse{WHat: make([]fr.Element, t), VRest: append([]fr.Element(nil), cur[0][1:]...)}
		s.WHat[0] = cur[0][0]
		copy(s.WHat[1:], wHat)
		all = append(all, s)
		prime := newMatrix(t)
		prime[0][0].SetOne()
		for i := 1; i < t; i++ {
			copy(prime[i][1:], cur[i][1:])
		}
		cur = mul(base, prime)
	}
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	return cur, all
}
