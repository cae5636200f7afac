package groth16

import (
	"fmt"
	"io"
	"math"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// ParamsSection names a query of a proving key: for a [ParamsSource], and
// for the chunks of [StreamSetupScalars] (whose ParamsBG1 scalars serve
// B_G2 too).
type ParamsSection int

const (
	ParamsH ParamsSection = iota
	ParamsL
	ParamsA
	ParamsBG1
)

// ParamsSource supplies the bases of a proving key that are not in host
// memory (a key made on a device), a chunk at a time, to [WriteParamsFrom].
type ParamsSource interface {
	// G1 fills dst with points lo, lo+1, … of query q (H, L, A or B_G1).
	G1(q ParamsSection, lo int, dst []bls.G1Affine) error
	// G2 fills dst with points lo, lo+1, … of B_G2.
	G2(lo int, dst []bls.G2Affine) error
}

// streamChunk is how many points WriteParamsFrom asks its source for at a
// time (96 MiB of G1 points, 192 MiB of G2); tests make it smaller.
var streamChunk = 1 << 20

// WriteParamsFrom writes, in bellperson's .params format, the key with
// verifying key vk and query sizes s whose bases src supplies: the bytes
// [ProvingKey.WriteTo] writes for the same key, with one chunk of points in
// host memory at a time. It returns ErrTooLarge, writing nothing, if a
// vector has 2³² or more points, and the first error of src or w.
func WriteParamsFrom(w io.Writer, vk *VerifyingKey, s Sizes, src ParamsSource) (int64, error) {
	for _, l := range []struct {
		name string
		n    int
	}{{"ic", len(vk.IC)}, {sectionH, s.H}, {sectionL, s.L}, {sectionA, s.A}, {sectionBG1, s.BG1}, {sectionBG2, s.BG2}} {
		if uint64(l.n) > math.MaxUint32 {
			return 0, fmt.Errorf("groth16: %s: %w", l.name, ErrTooLarge)
		}
	}
	e := encoder{w: w, buf: make([]byte, 0, 4<<20)}
	e.vk(vk)
	var b1 []bls.G1Affine
	for _, q := range []struct {
		sec  ParamsSection
		n    int
		name string
	}{{ParamsH, s.H, sectionH}, {ParamsL, s.L, sectionL}, {ParamsA, s.A, sectionA}, {ParamsBG1, s.BG1, sectionBG1}} {
		e.u32(q.n)
		for lo := 0; lo < q.n && e.err == nil; lo += streamChunk {
			m := min(streamChunk, q.n-lo)
			if b1 == nil {
				b1 = make([]bls.G1Affine, min(streamChunk, max(s.H, s.L, s.A, s.BG1)))
			}
			if err := src.G1(q.sec, lo, b1[:m]); err != nil {
				return e.n, fmt.Errorf("groth16: %s points from %d: %w", q.name, lo, err)
			}
			g1.of(b1[:m]).write(&e)
		}
	}
	b1 = nil
	e.u32(s.BG2)
	var b2 []bls.G2Affine
	for lo := 0; lo < s.BG2 && e.err == nil; lo += streamChunk {
		m := min(streamChunk, s.BG2-lo)
		if b2 == nil {
			b2 = make([]bls.G2Affine, min(streamChunk, s.BG2))
		}
		if err := src.G2(lo, b2[:m]); err != nil {
			return e.n, fmt.Errorf("groth16: %s points from %d: %w", sectionBG2, lo, err)
		}
		g2.of(b2[:m]).write(&e)
	}
	e.flush()
	return e.n, e.err
}
