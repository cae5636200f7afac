package gadget

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/r1cs"
)

// TestBooleanOps checks xor, and, ch and maj on every combination of
// constant, allocated and negated operands: the value is right, the system is
// satisfied, constants fold to constants, and Witness and Counter agree with
// System.
func TestBooleanOps(t *testing.T) {
	type mk func(cs *CS) Bit
	var kinds []mk
	for _, v := range []bool{false, true} {
		v := v
		kinds = append(kinds,
			func(*CS) Bit { return Constant(v) },
			func(cs *CS) Bit { return cs.AllocBit(v) },
			func(cs *CS) Bit { return cs.AllocBit(!v).Not() },
		)
	}
	ops := []struct {
		name string
		f    func(cs *CS, a, b, c Bit) Bit
		want func(a, b, c bool) bool
	}{
		{"xor", func(cs *CS, a, b, _ Bit) Bit { return cs.Xor(a, b) }, func(a, b, _ bool) bool { return a != b }},
		{"and", func(cs *CS, a, b, _ Bit) Bit { return cs.And(a, b) }, func(a, b, _ bool) bool { return a && b }},
		{"ch", func(cs *CS, a, b, c Bit) Bit { return cs.Sha256Ch(a, b, c) }, func(a, b, c bool) bool {
			if a {
				return b
			}
			return c
		}},
		{"maj", func(cs *CS, a, b, c Bit) Bit { return cs.Sha256Maj(a, b, c) }, func(a, b, c bool) bool {
			return (a && b) || (a && c) || (b && c)
		}},
	}
	for _, op := range ops {
		for i, ka := range kinds {
			for j, kb := range kinds {
				for k, kc := range kinds {
					s, w, cnt := r1cs.NewSystem(), r1cs.NewWitness(0, 0), r1cs.NewCounter()
					var outs []Bit
					var vals [3]bool
					for _, b := range []r1cs.Builder{s, w, cnt} {
						cs := New(b)
						a, bb, c := ka(cs), kb(cs), kc(cs)
						vals = [3]bool{a.Value(), bb.Value(), c.Value()}
						outs = append(outs, op.f(cs, a, bb, c))
						if a.isConstant() && bb.isConstant() && (c.isConstant() || op.name == "xor" || op.name == "and") {
							require.True(t, outs[len(outs)-1].isConstant(), "%s(%d,%d,%d) folds", op.name, i, j, k)
						}
					}
					require.Equal(t, op.want(vals[0], vals[1], vals[2]), outs[0].Value(), "%s(%d,%d,%d)", op.name, i, j, k)
					if !outs[0].isConstant() {
						require.Equal(t, outs[0].varVal(), s.Value(outs[0].Variable()) == feOne)
					}
					require.NoError(t, s.IsSatisfied())
					require.Equal(t, len(s.Aux()), len(w.Aux))
					for x := range w.Aux {
						require.Equal(t, s.Aux()[x], w.Aux[x])
					}
					require.Equal(t, s.Counts(), cnt.Counts())
				}
			}
		}
	}
}

// isConstant reports whether x is a constant.
func (x Bit) isConstant() bool { return x.kind == kindConst }
