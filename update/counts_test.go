package update

import (
	"os"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/porep/gadget"
	"github.com/sealc2/c2/r1cs"
)

// countShape synthesizes a blank partition of s into a counter; the counts
// are not finalized (no per-input rows), as bellpepper's num_constraints.
func countShape(t testing.TB, s Shape) r1cs.Counts {
	c := r1cs.NewCounter()
	require.NoError(t, SynthesizeBlank(c, s))
	return c.Counts()
}

func finalized(c r1cs.Counts) r1cs.Counts {
	c.Constraints += c.Inputs
	return c
}

// affine returns a + n·d for every count (densities included).
func affine(a, d r1cs.Counts, n int) r1cs.Counts {
	return r1cs.Counts{
		Constraints: a.Constraints + n*d.Constraints, Inputs: a.Inputs + n*d.Inputs, Aux: a.Aux + n*d.Aux,
		AAux: a.AAux + n*d.AAux, BInputs: a.BInputs + n*d.BInputs, BAux: a.BAux + n*d.BAux,
	}
}

func diff(a, b r1cs.Counts) r1cs.Counts { return affine(a, b, -1) }

// digestCost counts gen_challenge_bits for one and two digests (after the
// comm_r_new and partition numbers it reads) and returns the difference:
// what each further digest adds.
func digestCost(t testing.TB, s Shape) r1cs.Counts {
	run := func(challenges int) r1cs.Counts {
		c := r1cs.NewCounter()
		cs := gadget.New(c)
		commRNew, part := cs.AllocNum(fr.Element{}), cs.AllocNum(fr.Element{})
		s := s
		s.Challenges = challenges
		genChallengeBits(cs, s, commRNew, part, 0)
		return c.Counts()
	}
	per := s.ChallengesPerDigest()
	return diff(run(per+1), run(per))
}

// TestGenChallengeBitsCounts reproduces storage-proofs-update's
// test_gen_challenge_bits_gadget: 568 constraints per digest, 1 digest up
// to 16 MiB, 8 at 512 MiB, 10 at 32 and 64 GiB.
func TestGenChallengeBitsCounts(t *testing.T) {
	want := map[string]int{"StackedDrg2KiBV1": 568, "StackedDrg8MiBV1": 568, "StackedDrg512MiBV1": 4544,
		"StackedDrg32GiBV1": 5680, "StackedDrg64GiBV1": 5680}
	for _, s := range Shapes {
		c := r1cs.NewCounter()
		cs := gadget.New(c)
		commRNew, part := cs.AllocNum(fr.Element{}), cs.AllocNum(fr.Element{})
		before := c.Counts().Constraints
		bits := genChallengeBits(cs, s, commRNew, part, 0)
		require.Len(t, bits, s.Challenges)
		require.Equal(t, want[s.Name], c.Counts().Constraints-before, s.Name)
		require.Equal(t, want[s.Name], 568*s.DigestsPerPartition(), s.Name)
	}
}

// TestApexPoRCounts reproduces storage-proofs-update's apex_por gadget
// tests: 2 KiB (one partition of 8 apex leaves), 16/32 KiB (2 × 128) and
// the hand-made 16 KiB cases (4 × 16, 8 × 8), on a satisfying tree.
func TestApexPoRCounts(t *testing.T) {
	for _, tc := range []struct{ partitions, leaves, want int }{
		{1, 8, 317_654}, {2, 128, 5_808_515}, {4, 16, 771_448}, {8, 8, 453_797},
	} {
		pb := bitsLen(tc.partitions)
		k := tc.partitions - 1
		// A tree D over partitions·leaves apex leaves; partition k's apex
		// root and its path to the root.
		row := make([]fr.Element, tc.partitions*tc.leaves)
		for i := range row {
			row[i].SetUint64(uint64(3*i + 1))
		}
		leaves := append([]fr.Element(nil), row[k*tc.leaves:(k+1)*tc.leaves]...)
		for len(row) > tc.partitions {
			row = hashRow(row)
		}
		var path []fr.Element
		for pos := k; len(row) > 1; pos /= 2 {
			path = append(path, row[pos^1])
			row = hashRow(row)
		}
		// Record (and check satisfaction) where it is cheap; count the 5.8 M.
		var b r1cs.Builder = r1cs.NewCounter()
		sys := r1cs.NewSystem()
		if tc.want < 1_000_000 {
			b = sys
		}
		cs := gadget.New(b)
		constraints := func() int {
			if c, ok := b.(*r1cs.Counter); ok {
				return c.Counts().Constraints
			}
			return sys.NumConstraints()
		}
		comm := cs.AllocNum(row[0])
		bits := make([]gadget.Bit, pb)
		for i := range bits {
			bits[i] = cs.AllocBit(k>>i&1 == 1)
		}
		apex := make([]gadget.Num, len(leaves))
		for i := range leaves {
			apex[i] = cs.AllocNum(leaves[i])
		}
		pp := make([][]gadget.Num, pb)
		for i := range pp {
			pp[i] = []gadget.Num{cs.AllocNum(path[i])}
		}
		before := constraints()
		require.NoError(t, apexPoR(cs, apex, bits, pp, comm))
		require.Equal(t, tc.want, constraints()-before, "%d × %d", tc.partitions, tc.leaves)
		if b == sys {
			require.NoError(t, sys.IsSatisfied())
		}
	}
}

func bitsLen(n int) int {
	b := 0
	for ; 1<<b < n; b++ {
	}
	return b
}

func hashRow(row []fr.Element) []fr.Element {
	out := make([]fr.Element, len(row)/2)
	for i := range out {
		out[i] = gadget.SHA254Node(row[2*i], row[2*i+1])
	}
	return out
}

// refgenCount is one proof of refgen's update-counts.json.
type refgenCount struct {
	SectorSize uint64        `json:"sector_size"`
	H          int           `json:"h"`
	Params     string        `json:"official_params_file"`
	Counts     refgen.Counts `json:"counts"`
}

// refgenCountsFile is refgen's update-counts.json.
func refgenCountsFile(t testing.TB) map[string]refgenCount {
	var m map[string]refgenCount
	refgen.ReadJSON(t, &m, "update-counts.json")
	return m
}

// TestRegisteredCounts compares the blank-circuit counts of the registered
// update proofs with rust-fil-proofs' (refgen update-counts.json). 2 KiB
// and 8 MiB (1.7 M and 10 M constraints) are counted in full. Larger
// partitions (32 GiB: 81 M constraints, about 30 s here) are counted from
// their parts: the circuit is a prefix, then DigestsPerPartition digests
// and Challenges challenges whose gadgets touch no variable but their own
// and ones the first challenge already made dense, so the counts are
// affine in both; the per-challenge step comes from circuits of 1 and 2
// challenges, the per-digest step from the digest gadget alone. The rule
// is checked against full counts at 8 MiB and at 2 KiB with 43 challenges
// (two digests). C2_UPDATE_FULL_COUNT=1 counts every size in full; -short
// checks only 2 KiB and 32 GiB.
func TestRegisteredCounts(t *testing.T) {
	ref := refgenCountsFile(t)
	full := os.Getenv("C2_UPDATE_FULL_COUNT") != ""
	model := func(s Shape) r1cs.Counts {
		one, two := s, s
		one.Challenges, two.Challenges = 1, 2
		c1 := countShape(t, one)
		step := diff(countShape(t, two), c1)
		return affine(affine(c1, step, s.Challenges-1), digestCost(t, s), s.DigestsPerPartition()-1)
	}
	for _, s := range Shapes {
		r, ok := ref[s.Name]
		if !ok {
			continue
		}
		require.Equal(t, r.SectorSize, s.SectorSize, s.Name)
		require.Equal(t, r.H, s.HDefault(), s.Name)
		require.Equal(t, r.Params, s.ParamsName()+".params", s.Name)
		var got r1cs.Counts
		switch {
		case testing.Short() && !full && s.SectorSize != 2<<10 && s.SectorSize != 32<<30:
			t.Logf("%s: skipped under -short", s.Name)
			continue
		case s.SectorSize <= 8<<20 || full:
			got = countShape(t, s)
			if s.SectorSize == 8<<20 {
				require.Equal(t, got, model(s), "%s: the affine rule", s.Name)
			}
			if s.SectorSize == 2<<10 {
				// 43 challenges take two digests of 42 at 2 KiB.
				s43 := s
				s43.Challenges = 43
				require.Equal(t, countShape(t, s43), model(s43), "%s with 43 challenges: the affine rule", s.Name)
			}
		default:
			got = model(s)
		}
		require.Equal(t, s.NumInputs(), finalized(got).Inputs, s.Name)
		require.Equal(t, r.Counts.R1CS(), finalized(got), s.Name)
		t.Logf("%s: %v", s.Name, finalized(got))
	}
}
