package post

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/r1cs"
)

// count synthesizes a blank partition of s into a counter; the counts are
// not finalized (no per-input rows), as bellpepper's num_constraints.
func count(t testing.TB, s Shape) r1cs.Counts {
	c := r1cs.NewCounter()
	require.NoError(t, SynthesizeBlank(c, s))
	return c.Counts()
}

// scaled returns the finalized counts of s from those of one of its
// sectors: sectors share no variable and each synthesizes the same
// gadgets, so every count but ONE's scales with the sector count.
func scaled(s Shape, one r1cs.Counts) r1cs.Counts {
	n := s.Sectors
	inputs := 1 + n*(one.Inputs-1)
	return r1cs.Counts{
		Constraints: n*one.Constraints + inputs, Inputs: inputs, Aux: n * one.Aux,
		AAux: n * one.AAux, BInputs: one.BInputs, BAux: n * one.BAux,
	}
}

func sectorOf(s Shape) Shape { s.Sectors = 1; return s }

// TestRustCountTests reproduces the constraint and input counts asserted by
// storage-proofs-post's own tests (tests/fallback_circuit.rs, 19.1.0): 64
// leaves per base tree, 5 challenges per sector, trees 8-0-0, 8-4-0 and
// 8-4-2; and the ignored bench test, 32 GiB 8-0-0, 10 challenges, 5 sectors.
func TestRustCountTests(t *testing.T) {
	for _, tc := range []struct {
		sub, top, sectors, inputs, constraints int
		size                                   uint64
	}{
		{0, 0, 3, 19, 16_869, 64 * 32},
		{4, 0, 3, 19, 22_674, 4 * 64 * 32},
		{4, 2, 3, 19, 27_384, 8 * 64 * 32},
		{0, 0, 2, 13, 11_246, 64 * 32},
	} {
		s := Shape{Name: "test", SectorSize: tc.size, Sectors: tc.sectors, Challenges: 5, SubArity: tc.sub, TopArity: tc.top}
		c := count(t, s)
		require.Equal(t, tc.inputs, c.Inputs, "%v", tc)
		require.Equal(t, tc.constraints, c.Constraints, "%v", tc)
	}
	bench := Shape{Name: "bench", SectorSize: 32 << 30, Sectors: 5, Challenges: 10}
	require.Equal(t, 266_665, count(t, bench).Constraints)
}

// refgenCount is one proof of refgen's post-counts.json.
type refgenCount struct {
	Circuit struct {
		SectorCount    int `json:"sector_count"`
		ChallengeCount int `json:"challenge_count"`
	} `json:"circuit"`
	Counts refgen.Counts `json:"counts"`
}

// refgenCountsFile is refgen's post-counts.json: blank circuits of the
// registered PoSt proofs counted by the Rust crates.
func refgenCountsFile(t *testing.T) map[string]refgenCount {
	var m map[string]refgenCount
	refgen.ReadJSON(t, &m, "post-counts.json")
	return m
}

// TestRegisteredCounts compares the partition counts of every registered
// PoSt proof with rust-fil-proofs: with refgen's counts of the blank
// circuits (post-counts.json; it must hold the 32 and 64 GiB Window
// circuits, V1_2, whose V1 twins are the same R1CS), and for 32/64 GiB
// Window also with the totals filecoin-proofs' constants.rs states for
// 2349 and 2300 sectors (125,279,217 and 129,887,900 synthesized
// constraints). Shapes up
// to 400 k constraints are counted in full; Window 32/64 GiB (125 M) are
// counted per sector and scaled, a rule checked here by full counts of
// 2 and 3 sectors (set C2_POST_FULL_COUNT=1 to count them in full:
// about 10 minutes each on one core).
func TestRegisteredCounts(t *testing.T) {
	ref := refgenCountsFile(t)
	for _, name := range []string{"StackedDrgWindow32GiBV1_2", "StackedDrgWindow64GiBV1_2"} {
		require.Contains(t, ref, name, "post-counts.json")
	}
	stated := map[string]int{"StackedDrgWindow32GiBV1_2": 125_279_217, "StackedDrgWindow64GiBV1_2": 129_887_900}
	full := os.Getenv("C2_POST_FULL_COUNT") != ""
	// V1 and V1_2 share their circuit (checked below): count each once.
	memo := map[Shape]r1cs.Counts{}
	for _, s := range Shapes {
		key := s
		key.Name, key.Version = "", 0
		got, ok := memo[key]
		if !ok {
			one := count(t, sectorOf(s))
			if s.Sectors*one.Constraints < 1_000_000 || full {
				got = count(t, s)
			} else {
				for n := 2; n <= 3; n++ {
					k := s
					k.Sectors = n
					require.Equal(t, scaled(k, one), finalized(count(t, k)), "%s: %d sectors", s.Name, n)
				}
				got = scaled(s, one)
				got.Constraints -= got.Inputs // unfinalized, as count returns
			}
			memo[key] = got
		}
		if want, ok := stated[s.Name]; ok {
			require.Equal(t, want, got.Constraints, s.Name)
		}
		got = finalized(got)
		require.Equal(t, s.NumInputs(), got.Inputs, s.Name)
		if r, ok := ref[s.Name]; ok {
			require.Equal(t, r.Circuit.SectorCount, s.Sectors, s.Name)
			require.Equal(t, r.Circuit.ChallengeCount, s.Challenges, s.Name)
			require.Equal(t, r.Counts.R1CS(), got, s.Name)
		}
		t.Logf("%s: %v", s.Name, got)
	}
	// The V1 and V1_2 circuits of a size are the same R1CS.
	for _, s := range Shapes {
		if s.Version == V1_0_0 && s.Kind == Window {
			v12, ok := ShapeByName(s.Name + "_2")
			require.True(t, ok)
			v12.Name, v12.Version = s.Name, s.Version
			require.Equal(t, s, v12)
		}
	}
}

func finalized(c r1cs.Counts) r1cs.Counts {
	c.Constraints += c.Inputs
	return c
}
