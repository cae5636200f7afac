package c2_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/devparams"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/post"
	"github.com/sealc2/c2/post/postgen"
)

// writePoStDevParams writes dir/dev-insecure-<official name>.{params,vk}
// of each shape (devparams.GeneratePoSt), as `c2 setup --post` does.
func writePoStDevParams(t *testing.T, dir string, shapes ...post.Shape) {
	for _, s := range shapes {
		t0 := time.Now()
		require.NoError(t, devparams.GeneratePoSt(dir, s))
		t.Logf("%s: dev setup and write %v", s.Name, time.Since(t0).Round(time.Millisecond))
	}
}

// windowDevParams writes the development parameters of the 2 KiB Window
// PoSt circuit into a new directory and returns the shape and the
// directory.
func windowDevParams(t *testing.T) (post.Shape, string) {
	win, _ := post.ShapeByName("StackedDrgWindow2KiBV1_2")
	dir := t.TempDir()
	writePoStDevParams(t, dir, win)
	return win, dir
}

// postCase is what the tests take from a refgen post-2k vector.
type postCase struct {
	proof      string
	randomness [32]byte
	bincode    [][]byte
	json       [][]byte // the same proofs, one serde JSON object each
	inputs     [][]fr.Element
}

func loadPoStCase(t *testing.T, name string) postCase {
	v := refgen.ReadVanilla(t, "post-2k", name)
	return postCase{
		proof:      v.Proof,
		randomness: [32]byte(v.Randomness),
		bincode:    v.Bincode,
		json:       v.JSON,
		inputs:     v.Inputs,
	}
}

func (c postCase) prove(ctx context.Context, p *c2.Prover, rnd [32]byte, vanilla [][]byte) ([]byte, error) {
	s, _ := post.ShapeByName(c.proof)
	if s.Kind == post.Winning {
		return p.ProveWinningPoSt(ctx, c.proof, rnd, vanilla)
	}
	return p.ProveWindowPoSt(ctx, c.proof, rnd, vanilla)
}

// proveTimed is prove through the Timed variants; wall is the call's.
func (c postCase) proveTimed(ctx context.Context, p *c2.Prover, vanilla [][]byte) (proof []byte, tm c2.ProveTimes, wall time.Duration, err error) {
	s, _ := post.ShapeByName(c.proof)
	prove := p.ProveWindowPoStTimed
	if s.Kind == post.Winning {
		prove = p.ProveWinningPoStTimed
	}
	t0 := time.Now()
	proof, tm, err = prove(ctx, c.proof, c.randomness, vanilla)
	return proof, tm, time.Since(t0), err
}

// TestProvePoSt2KiB proves the 2 KiB Window (V1_2, V1) and Winning PoSt
// vanilla proofs rust-fil-proofs made (refgen post-2k) under development
// parameters generated here, and checks each partition's proof against
// the public inputs refgen recorded from Rust, and each call's stage times
// (the Timed variants). V1_2's proof also fails under V1's inputs (other
// challenges).
func TestProvePoSt2KiB(t *testing.T) {
	if testing.Short() {
		t.Skip("dev setup of the 2 KiB Winning circuit and four proofs: ~20 CPU-seconds")
	}
	win, _ := post.ShapeByName("StackedDrgWindow2KiBV1_2")
	winning, _ := post.ShapeByName("StackedDrgWinning2KiBV1")
	dir := t.TempDir()
	writePoStDevParams(t, dir, win, winning)
	p := cpuProver(t, dir)

	proofs := map[string][]byte{}
	for _, name := range []string{"window-2k-v1_2", "window-2k-v1", "winning-2k-v1"} {
		c := loadPoStCase(t, name)
		vanilla := c.bincode
		if name == "window-2k-v1" {
			vanilla = c.json // the JSON form filecoin-ffi's callers may hold
		}
		proof, tm, wall, err := c.proveTimed(context.Background(), p, vanilla)
		require.NoError(t, err, name)
		t.Logf("%s: %d partition(s) proved in %v: %+v", name, len(c.inputs), wall.Round(time.Millisecond), tm)
		requireTimes(t, tm, wall)
		require.Len(t, proof, groth16.ProofSize*len(c.inputs))
		proofs[name] = proof

		s, _ := post.ShapeByName(c.proof)
		vk, err := groth16.ReadVerifyingKey(filepath.Join(dir, c2.DevParamsPrefix+s.ParamsName()+".vk"))
		require.NoError(t, err)
		ps, err := groth16.ReadProofs(proof)
		require.NoError(t, err)
		for k := range ps {
			require.NoError(t, groth16.Verify(vk, &ps[k], c.inputs[k]), "%s partition %d under Rust's inputs", name, k)
		}
	}

	v1 := loadPoStCase(t, "window-2k-v1")
	vk, err := groth16.ReadVerifyingKey(filepath.Join(dir, c2.DevParamsPrefix+win.ParamsName()+".vk"))
	require.NoError(t, err)
	ps, err := groth16.ReadProofs(proofs["window-2k-v1_2"])
	require.NoError(t, err)
	require.ErrorIs(t, groth16.Verify(vk, &ps[0], v1.inputs[0]), groth16.ErrInvalidProof, "V1_2 proof under V1's challenges")

	// A deadline in the middle of a call (key and R1CS cached) ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = v1.prove(ctx, p, v1.randomness, v1.bincode)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	t.Logf("cancelled call returned after %v", time.Since(t0).Round(time.Millisecond))
}

// TestPreloadEvictPoStTimed: PreloadPoSt reads the 2 KiB Window circuit's
// key and records its R1CS, for V1 and V1_2 alike: the proof after it
// needs no parameter file (removed here) and waits for nothing. EvictPoSt
// drops them: a proof then fails for want of the file, and once the file
// is back it reads it again (ParamsLoad no longer near zero). Each timed
// call's stages fit in its wall time.
func TestPreloadEvictPoStTimed(t *testing.T) {
	if testing.Short() {
		t.Skip("dev setup of the 2 KiB Window circuit and two proofs")
	}
	win, src := windowDevParams(t)
	p, link, unlink := linkedProver(t, filepath.Join(src, c2.DevParamsPrefix+win.ParamsName()+".params"))
	ctx := context.Background()
	c := loadPoStCase(t, "window-2k-v1_2")

	link()
	t0 := time.Now()
	require.NoError(t, p.PreloadPoSt(ctx, "StackedDrgWindow2KiBV1")) // V1 and V1_2 share the circuit
	preload := time.Since(t0)
	unlink()

	proof, tm, wall, err := c.proveTimed(ctx, p, c.bincode)
	require.NoError(t, err, "the preloaded key is used; the file is gone")
	require.Len(t, proof, groth16.ProofSize*len(c.inputs))
	t.Logf("preload %v; prove %v: %+v", preload, wall, tm)
	requireTimes(t, tm, wall)
	require.Less(t, tm.ParamsLoad, preload/10, "nothing left to load after PreloadPoSt")

	require.NoError(t, p.EvictPoSt(c.proof))
	_, _, _, err = c.proveTimed(ctx, p, c.bincode)
	require.ErrorIs(t, err, c2.ErrNoParams, "the key was dropped")

	link()
	_, again, wall, err := c.proveTimed(ctx, p, c.bincode)
	require.NoError(t, err)
	t.Logf("prove after EvictPoSt %v: %+v", wall, again)
	requireTimes(t, again, wall)
	require.Greater(t, again.ParamsLoad, 5*tm.ParamsLoad, "parameters read and R1CS recorded again")
}

// TestProveWindowPoStPartition proves partition 1 of refgen's 2 KiB
// Window PoSt (sector 5003 alone), as Curio asks for one partition, for V1
// and V1_2: each proof verifies under the inputs rust-fil-proofs computed
// for partition 1 of the whole PoSt. V1's challenges depend on the
// sector's position: its vanilla proof fails the native check as
// partition 0 (what ProveWindowPoSt makes of it).
func TestProveWindowPoStPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("dev setup of the 2 KiB Window circuit and two proofs")
	}
	win, dir := windowDevParams(t)
	p := cpuProver(t, dir)
	ctx := context.Background()
	vk, err := groth16.ReadVerifyingKey(filepath.Join(dir, c2.DevParamsPrefix+win.ParamsName()+".vk"))
	require.NoError(t, err)

	for _, name := range []string{"window-2k-v1", "window-2k-v1_2"} {
		c := loadPoStCase(t, name)
		last := c.bincode[2:] // sector 5003, partition 1
		t0 := time.Now()
		proof, tm, err := p.ProveWindowPoStPartitionTimed(ctx, c.proof, c.randomness, 1, last)
		wall := time.Since(t0)
		require.NoError(t, err, name)
		t.Logf("%s partition 1: %v: %+v", name, wall.Round(time.Millisecond), tm)
		requireTimes(t, tm, wall)
		ps, err := groth16.ReadProofs(proof)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		require.NoError(t, groth16.Verify(vk, &ps[0], c.inputs[1]), "%s partition 1 under Rust's inputs", name)
	}

	v1 := loadPoStCase(t, "window-2k-v1")
	var ie *post.InputError
	_, err = p.ProveWindowPoSt(ctx, v1.proof, v1.randomness, v1.bincode[2:])
	require.ErrorAs(t, err, &ie, "V1: sector 5003's challenges as partition 0 are others")
	_, err = p.ProveWindowPoStPartition(ctx, v1.proof, v1.randomness, 0, v1.bincode[2:])
	require.ErrorAs(t, err, &ie)
	require.Regexp(t, `^partition 0: sectors\[0\]\.paths\[`, ie.Field)
	_, err = p.ProveWindowPoStPartition(ctx, v1.proof, v1.randomness, 2, v1.bincode[2:])
	require.ErrorAs(t, err, &ie)
	require.Regexp(t, `^partition 2: sectors\[0\]\.paths\[`, ie.Field)
}

// TestProvePoStRefusesBadInput: bad names, bad vanilla proofs and another
// randomness are refused natively with typed errors, before parameters are
// looked for (the Prover has none).
func TestProvePoStRefusesBadInput(t *testing.T) {
	p, err := c2.New(c2.Config{Backend: c2.BackendCPU, Params: t.TempDir()})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	window := loadPoStCase(t, "window-2k-v1_2")
	winning := loadPoStCase(t, "winning-2k-v1")

	var ie *post.InputError
	var ve *post.VanillaError
	_, err = p.ProveWindowPoSt(ctx, "StackedDrgWindow3KiBV1", window.randomness, window.bincode)
	require.ErrorAs(t, err, &ie)
	_, err = p.ProveWinningPoSt(ctx, window.proof, window.randomness, window.bincode)
	require.ErrorAs(t, err, &ie, "a Window proof name for Winning")
	_, err = p.ProveWindowPoSt(ctx, window.proof, window.randomness, nil)
	require.ErrorAs(t, err, &ve)

	// Another randomness challenges other leaves: the paths prove the wrong ones.
	for _, c := range []postCase{window, winning} {
		rnd := c.randomness
		rnd[0] ^= 1
		_, err = c.prove(ctx, p, rnd, c.bincode)
		require.ErrorAs(t, err, &ie, c.proof)
		require.NotErrorIs(t, err, c2.ErrNoParams)
	}
	// A randomness that is not a canonical scalar.
	rnd := window.randomness
	rnd[31] = 0xff
	_, err = window.prove(ctx, p, rnd, window.bincode)
	require.ErrorAs(t, err, &ie)

	// One bit of the last sector's comm_r_last (its last 32 bytes): the
	// inclusion proofs' roots differ from it (and comm_r ≠ Poseidon(comm_c,
	// comm_r_last), and the paths do not lead to it).
	bad := append([][]byte(nil), window.bincode...)
	bad[2] = append([]byte(nil), bad[2]...)
	bad[2][len(bad[2])-32] ^= 1
	_, err = window.prove(ctx, p, window.randomness, bad)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "[2].vanilla_proof.sectors[0].inclusion_proofs[0].root", ie.Field)
	// One bit of its comm_c: comm_r ≠ Poseidon(comm_c, comm_r_last).
	bad[2] = append([]byte(nil), window.bincode[2]...)
	bad[2][len(bad[2])-64] ^= 1
	_, err = window.prove(ctx, p, window.randomness, bad)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "partition 1: sectors[0]", ie.Field)
	// Every byte of the Winning proof's first inclusion proof (Single: tag,
	// root, leaf, path), one bit at a time: each change is refused, typed.
	const head, proofLen = 8 + 32 + 8 + 8, 4 + 32 + 32 + 8 + 2*(8+7*32+8)
	for off := head; off < head+proofLen; off++ {
		bw := append([]byte(nil), winning.bincode[0]...)
		bw[off] ^= 0x10
		_, err = winning.prove(ctx, p, winning.randomness, [][]byte{bw})
		require.True(t, errors.As(err, &ie) || errors.As(err, &ve), "byte %d: %v", off, err)
	}

	// Truncated bincode and broken JSON name the proof.
	_, err = window.prove(ctx, p, window.randomness, [][]byte{window.bincode[0], window.bincode[1][:100]})
	require.ErrorAs(t, err, &ve)
	require.Regexp(t, `^\[1\]\.`, ve.Field)
	_, err = window.prove(ctx, p, window.randomness, [][]byte{window.json[0][:len(window.json[0])-1]})
	require.ErrorAs(t, err, &ve)
	require.Regexp(t, `^\[0\]`, ve.Field)

	// One partition: a negative index, more sectors than a partition
	// holds, too many sectors before it, a Winning proof name.
	_, err = p.ProveWindowPoStPartition(ctx, window.proof, window.randomness, -1, window.bincode[:1])
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "partition", ie.Field)
	_, err = p.ProveWindowPoStPartition(ctx, window.proof, window.randomness, 0, window.bincode)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "vanilla", ie.Field)
	_, err = p.ProveWindowPoStPartition(ctx, window.proof, window.randomness, c2.MaxPoStOffset/2+1, window.bincode[:2])
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "partition", ie.Field)
	_, err = p.ProveWindowPoStPartition(ctx, winning.proof, winning.randomness, 0, winning.bincode)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "proof", ie.Field)

	// Good vanilla proofs reach the parameter lookup, also as one
	// partition (the last one, at MaxPoStOffset).
	_, err = window.prove(ctx, p, window.randomness, window.bincode)
	require.ErrorIs(t, err, c2.ErrNoParams)
	require.ErrorContains(t, err, win2KiBParams())
	_, err = p.ProveWindowPoStPartition(ctx, window.proof, window.randomness, c2.MaxPoStOffset/2, window.bincode[:2])
	require.ErrorIs(t, err, c2.ErrNoParams)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = window.prove(cctx, p, window.randomness, window.bincode)
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, p.Close())
	_, err = window.prove(ctx, p, window.randomness, window.bincode)
	require.ErrorIs(t, err, c2.ErrClosed)
}

func win2KiBParams() string {
	s, _ := post.ShapeByName("StackedDrgWindow2KiBV1")
	return s.ParamsName()
}

// BenchmarkVanillaWindow32GiB times the native work before a 32 GiB Window
// PoSt partition is proved: decoding its 2,349 sectors' vanilla proofs
// (serde JSON, as c2 postgen writes them) and checking them against the
// randomness. The proofs are generated once (c2 postgen's generator, about
// 13 s on 2 cores).
func BenchmarkVanillaWindow32GiB(b *testing.B) {
	shape, ok := post.ShapeByName("StackedDrgWindow32GiBV1_2")
	require.True(b, ok)
	var seed, rnd [32]byte
	rnd[0] = 7
	proofs, err := postgen.Generate(context.Background(), shape, seed, rnd, 1, shape.Sectors)
	require.NoError(b, err)
	vanilla := make([][]byte, len(proofs))
	for i := range proofs {
		vanilla[i], err = json.Marshal(proofs[i])
		require.NoError(b, err)
	}
	decoded, err := c2.DecodeVanillaPoSt(vanilla)
	require.NoError(b, err)
	parts, pub, err := post.Partitions(shape, decoded)
	require.NoError(b, err)
	require.Len(b, parts, 1)
	b.Run("decode", func(b *testing.B) {
		for range b.N {
			if _, err := c2.DecodeVanillaPoSt(vanilla); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify", func(b *testing.B) {
		for range b.N {
			if err := shape.VerifyPartition(rnd, pub, parts[0], 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
