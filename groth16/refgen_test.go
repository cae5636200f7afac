package groth16_test

// Interop with bellperson through the vectors in testdata/refgen/out/groth16-interop
// (written by testdata/refgen, whose README defines the circuit and every file).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/refgen"
	"github.com/sealc2/c2/r1cs"
)

var interopDir = filepath.Join("..", "testdata", "refgen", "out", "groth16-interop")

// interopDesc mirrors circuit.json.
type interopDesc struct {
	Bits   int `json:"bits"`
	Chain  int `json:"chain"`
	Counts struct {
		Synthesized int `json:"synthesized_constraints"`
		Constraints int `json:"constraints"`
		Inputs      int `json:"inputs"`
		Aux         int `json:"aux"`
		AAux        int `json:"a_aux_density"`
		BInputs     int `json:"b_input_density"`
		BAux        int `json:"b_aux_density"`
	} `json:"counts"`
	DomainSize   int    `json:"domain_size"`
	R1CSFile     string `json:"r1cs_file"`
	R1CSSHA256   string `json:"r1cs_sha256"`
	ParamsFile   string `json:"params_file"`
	ParamsSHA256 string `json:"params_sha256"`
	VKFile       string `json:"vk_file"`
	VKSHA256     string `json:"vk_sha256"`
	Instances    []struct {
		K             string   `json:"k"`
		X2            string   `json:"x2"`
		W             string   `json:"w"`
		X3            string   `json:"x3"`
		PublicInputs  []string `json:"public_inputs"`
		WitnessFile   string   `json:"witness_file"`
		WitnessSHA256 string   `json:"witness_sha256"`
		InputsFile    string   `json:"inputs_file"`
		ProofFile     string   `json:"proof_file"`
	} `json:"instances"`
}

func readInterop(t *testing.T) *interopDesc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(interopDir, "circuit.json"))
	require.NoError(t, err, "refgen vectors are committed; regenerate with testdata/refgen/gen.sh")
	var d interopDesc
	require.NoError(t, json.Unmarshal(b, &d))
	require.Len(t, d.Instances, 3)
	return &d
}

func readInteropFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(interopDir, name))
	require.NoError(t, err)
	return b
}

func scalarHex(t *testing.T, s string) fr.Element {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, 32)
	e, err := fr.LittleEndian.Element((*[32]byte)(b))
	require.NoError(t, err)
	return e
}

func scalarsLE(t *testing.T, b []byte) []fr.Element {
	t.Helper()
	require.Zero(t, len(b)%32)
	out := make([]fr.Element, len(b)/32)
	for i := range out {
		e, err := fr.LittleEndian.Element((*[32]byte)(b[32*i : 32*i+32]))
		require.NoError(t, err, "scalar %d", i)
		out[i] = e
	}
	return out
}

func sha256Hex(b []byte) string {
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])
}

// TestRefgenKeysRoundTrip parses bellperson's .params and .vk and writes them
// back byte for byte.
func TestRefgenKeysRoundTrip(t *testing.T) {
	d := readInterop(t)
	params := readInteropFile(t, d.ParamsFile)
	vkb := readInteropFile(t, d.VKFile)
	require.Equal(t, d.ParamsSHA256, sha256Hex(params), "params file is not the one circuit.json describes")
	require.Equal(t, d.VKSHA256, sha256Hex(vkb))

	pk, err := groth16.ReadParams(filepath.Join(interopDir, d.ParamsFile))
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = pk.WriteTo(&buf)
	require.NoError(t, err)
	require.True(t, bytes.Equal(params, buf.Bytes()), ".params written back differs")

	vk, err := groth16.ReadVerifyingKey(filepath.Join(interopDir, d.VKFile))
	require.NoError(t, err)
	buf.Reset()
	_, err = vk.WriteTo(&buf)
	require.NoError(t, err)
	require.True(t, bytes.Equal(vkb, buf.Bytes()), ".vk written back differs")

	// The key inside the .params is the .vk; the shapes follow the circuit.
	buf.Reset()
	_, err = pk.VK.WriteTo(&buf)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(vkb, buf.Bytes()))
	assert.Equal(t, d.Counts.Inputs, vk.NumInputs())
	assert.Equal(t, d.DomainSize, pk.DomainSize())
	assert.Len(t, pk.L, d.Counts.Aux)
	assert.Len(t, pk.A, d.Counts.Inputs+d.Counts.AAux)
	assert.Len(t, pk.BG1, d.Counts.BInputs+d.Counts.BAux)
	assert.Len(t, pk.BG2, d.Counts.BInputs+d.Counts.BAux)
}

// TestRefgenBellpersonProofs verifies bellperson's proofs in Go and checks
// that modified inputs and flipped bits are rejected.
func TestRefgenBellpersonProofs(t *testing.T) {
	d := readInterop(t)
	vk, err := groth16.ReadVerifyingKey(filepath.Join(interopDir, d.VKFile))
	require.NoError(t, err)

	var proofs []groth16.Proof
	var inputs [][]fr.Element
	for n, inst := range d.Instances {
		pb := readInteropFile(t, inst.ProofFile)
		p, err := groth16.ReadProof(pb)
		require.NoError(t, err)
		in := scalarsLE(t, readInteropFile(t, inst.InputsFile))
		require.Len(t, in, len(inst.PublicInputs))
		for i, s := range inst.PublicInputs {
			require.Equal(t, scalarHex(t, s), in[i])
		}
		require.NoError(t, groth16.Verify(vk, p, in), "instance %d", n)
		proofs = append(proofs, *p)
		inputs = append(inputs, in)

		// Each public input changed by one.
		for i := range in {
			bad := append([]fr.Element(nil), in...)
			var one fr.Element
			one.SetOne()
			bad[i].Add(&bad[i], &one)
			assert.ErrorIs(t, groth16.Verify(vk, p, bad), groth16.ErrInvalidProof, "instance %d input %d", n, i)
		}
		// Wrong number of inputs is an error, not a verdict.
		assert.Error(t, groth16.Verify(vk, p, in[:len(in)-1]))

		// Flipped bits in A, B and C (x coordinates and flag bits): either
		// the point no longer decodes or the proof is invalid.
		for _, bit := range []int{0, 2, 7, 100, 47*8 + 7, 48*8 + 2, 60*8 + 3, 143*8 + 7, 144*8 + 2, 170*8 + 1, 191*8 + 7} {
			bad := append([]byte(nil), pb...)
			bad[bit/8] ^= 1 << (7 - uint(bit%8))
			q, err := groth16.ReadProof(bad)
			if err != nil {
				continue
			}
			assert.Error(t, groth16.Verify(vk, q, in), "instance %d bit %d", n, bit)
		}
	}
	// A proof with another instance's inputs.
	assert.ErrorIs(t, groth16.Verify(vk, &proofs[0], inputs[1]), groth16.ErrInvalidProof)

	require.NoError(t, groth16.VerifyBatch(vk, proofs, inputs))
	swapped := [][]fr.Element{inputs[0], inputs[2], inputs[1]}
	var ve *groth16.VerifyError
	require.True(t, errors.As(groth16.VerifyBatch(vk, proofs, swapped), &ve))
	assert.Equal(t, 1, ve.Index)
}

// interopInstance holds the values that define one witness.
type interopInstance struct {
	k         uint64
	x2, w, x3 fr.Element
}

func frU64(v uint64) fr.Element {
	var e fr.Element
	e.SetUint64(v)
	return e
}

// buildInterop re-synthesizes refgen's interop circuit (README "groth16-interop").
func buildInterop(b r1cs.Builder, in interopInstance, bits, chain int) {
	one := fr.One()
	three, five, two := frU64(3), frU64(5), frU64(2)

	// Native values.
	ys := make([]fr.Element, chain+1)
	ys[0] = in.w
	var threeX2 fr.Element
	threeX2.Mul(&in.x2, &three)
	for j := 1; j <= chain; j++ {
		jf := frU64(uint64(j))
		var s fr.Element
		s.Add(&ys[j-1], &threeX2).Add(&s, &jf)
		ys[j].Mul(&ys[j-1], &s)
	}
	var x4 fr.Element
	x4.Mul(&ys[chain], &in.x3)

	x1 := b.AllocInput(frU64(in.k))
	x2 := b.AllocInput(in.x2)
	x3 := b.AllocInput(in.x3)
	x4v := b.AllocInput(x4)

	bv := make([]r1cs.Variable, bits)
	for i := range bv {
		bv[i] = b.Alloc(frU64(in.k >> uint(i) & 1))
		b.Enforce(r1cs.LC{}.AddVar(bv[i]), r1cs.LC{}.AddVar(r1cs.One).SubVar(bv[i]), nil)
	}
	var pack r1cs.LC
	coeff := one
	for i := range bv {
		pack = pack.Add(bv[i], coeff)
		coeff.Double(&coeff)
	}
	b.Enforce(pack, r1cs.LC{}.AddVar(r1cs.One), r1cs.LC{}.AddVar(x1))

	prev := b.Alloc(ys[0])
	for j := 1; j <= chain; j++ {
		y := b.Alloc(ys[j])
		b.Enforce(r1cs.LC{}.AddVar(prev),
			r1cs.LC{}.AddVar(prev).Add(x2, three).Add(r1cs.One, frU64(uint64(j))),
			r1cs.LC{}.AddVar(y))
		prev = y
	}
	b.Enforce(r1cs.LC{}.AddVar(prev), r1cs.LC{}.AddVar(x3), r1cs.LC{}.AddVar(x4v))

	var tv, tmp fr.Element
	b0, b1 := frU64(in.k&1), frU64(in.k>>1&1)
	tv.Double(&b0).Add(&tv, &b1)
	tmp.Mul(&in.x2, &five)
	tv.Add(&tv, &tmp).Sub(&tv, &two)
	t := b.Alloc(tv)
	var minusTwo fr.Element
	minusTwo.Neg(&two)
	b.Enforce(r1cs.LC{}.AddVar(bv[0]).AddVar(bv[1]).AddVar(bv[0]).Add(x2, five).Add(r1cs.One, minusTwo),
		r1cs.LC{}.AddVar(r1cs.One), r1cs.LC{}.AddVar(t))

	var uv fr.Element
	uv.Add(&in.w, &in.x2)
	u := b.Alloc(uv)
	b.Enforce(r1cs.LC{}.AddVar(u).SubVar(u).AddVar(r1cs.One), r1cs.LC{}.AddVar(u), r1cs.LC{}.AddVar(u))

	v := b.Alloc(frU64(in.k >> 3 & 1 & (in.k >> 4))) // b3·b4
	b.Enforce(r1cs.LC{}.AddVar(bv[3]), r1cs.LC{}.AddVar(bv[4]), r1cs.LC{}.AddVar(v))
}

func interopInstances(t *testing.T, d *interopDesc) []interopInstance {
	out := make([]interopInstance, len(d.Instances))
	for n, inst := range d.Instances {
		k, err := strconv.ParseUint(inst.K, 10, 64)
		require.NoError(t, err)
		out[n] = interopInstance{k: k, x2: scalarHex(t, inst.X2), w: scalarHex(t, inst.W), x3: scalarHex(t, inst.X3)}
	}
	return out
}

// TestRefgenInteropCircuit rebuilds the circuit in Go and compares its shape,
// canonical R1CS bytes and witness with bellperson's.
func TestRefgenInteropCircuit(t *testing.T) {
	d := readInterop(t)
	wantR1CS := readInteropFile(t, d.R1CSFile)
	require.Equal(t, d.R1CSSHA256, sha256Hex(wantR1CS))
	for n, in := range interopInstances(t, d) {
		sys := r1cs.NewSystem()
		buildInterop(sys, in, d.Bits, d.Chain)
		assert.Equal(t, d.Counts.Synthesized, sys.NumConstraints(), "synthesized constraints")
		sys.Finalize()
		assert.Equal(t, r1cs.Counts{
			Constraints: d.Counts.Constraints, Inputs: d.Counts.Inputs, Aux: d.Counts.Aux,
			AAux: d.Counts.AAux, BInputs: d.Counts.BInputs, BAux: d.Counts.BAux,
		}, sys.Counts())
		require.NoError(t, sys.IsSatisfied())

		var got bytes.Buffer
		require.NoError(t, sys.WriteCanonical(&got))
		if !bytes.Equal(wantR1CS, got.Bytes()) {
			i := 0
			for i < len(wantR1CS) && i < got.Len() && wantR1CS[i] == got.Bytes()[i] {
				i++
			}
			t.Fatalf("instance %d: canonical R1CS differs from bellperson's at byte %d (len %d vs %d)", n, i, got.Len(), len(wantR1CS))
		}
		dg, err := sys.CanonicalDigest()
		require.NoError(t, err)
		assert.Equal(t, d.R1CSSHA256, hex.EncodeToString(dg[:]))

		inst := d.Instances[n]
		wantW := readInteropFile(t, inst.WitnessFile)
		require.Equal(t, inst.WitnessSHA256, sha256Hex(wantW))
		gotW := append(append([]fr.Element(nil), sys.Inputs()...), sys.Aux()...)
		require.Equal(t, scalarsLE(t, wantW), gotW, "instance %d witness", n)
		wd := r1cs.WitnessDigest(sys.Inputs(), sys.Aux())
		assert.Equal(t, inst.WitnessSHA256, hex.EncodeToString(wd[:]))
		for i, s := range inst.PublicInputs {
			assert.Equal(t, scalarHex(t, s), sys.Inputs()[i+1], "instance %d input %d", n, i+1)
		}
	}
}

// TestRefgenGoProofs proves the interop circuit in Go with bellperson's
// parameters and verifies in Go. With REFGEN_GO_PROOFS=DIR it also writes the
// proofs there (go-proof-N.bin, plus go-proof-bad-N.bin with a changed C) for
// testdata/refgen/verify-go-proofs.sh, which asks bellperson to judge them.
func TestRefgenGoProofs(t *testing.T) {
	d := readInterop(t)
	pk, err := groth16.ReadParams(filepath.Join(interopDir, d.ParamsFile))
	require.NoError(t, err)
	outDir := os.Getenv("REFGEN_GO_PROOFS")
	for n, in := range interopInstances(t, d) {
		sys := r1cs.NewSystem()
		buildInterop(sys, in, d.Bits, d.Chain)
		sys.Finalize()
		p, err := groth16.Prove(pk, sys)
		require.NoError(t, err)
		pub := sys.Inputs()[1:]
		require.NoError(t, groth16.Verify(&pk.VK, p, pub), "instance %d", n)

		// The same proof must not verify for other inputs, and the bellperson
		// proof and the Go proof of one statement both verify.
		bad := append([]fr.Element(nil), pub...)
		bad[3].SetUint64(12345)
		assert.ErrorIs(t, groth16.Verify(&pk.VK, p, bad), groth16.ErrInvalidProof)

		if outDir != "" {
			b := p.Bytes()
			require.NoError(t, os.WriteFile(filepath.Join(outDir, "go-proof-"+strconv.Itoa(n)+".bin"), b[:], 0o644))
			var c2 = *p
			c2.C.Add(&c2.C, &pk.VK.DeltaG1) // a valid point, wrong proof
			bb := c2.Bytes()
			require.NoError(t, os.WriteFile(filepath.Join(outDir, "go-proof-bad-"+strconv.Itoa(n)+".bin"), bb[:], 0o644))
		}
	}
}

// TestRefgenPoRepParamsRoundTrip reads bellperson's random parameters for the
// 2 KiB PoRep circuit (~1 GiB, made on demand by `refgen porep-params` into
// REFGEN_CACHE) and writes them back byte for byte (compared by SHA-256).
func TestRefgenPoRepParamsRoundTrip(t *testing.T) {
	cache, path := refgen.Cached(t, "porep-2k.params", "porep-params")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	want := sha256.New()
	_, err = io.Copy(want, f)
	require.NoError(t, err)

	pk, err := groth16.ReadParams(path)
	require.NoError(t, err)
	got := sha256.New()
	_, err = pk.WriteTo(got)
	require.NoError(t, err)
	require.Equal(t, want.Sum(nil), got.Sum(nil), ".params written back differs")
	assert.Equal(t, 40, pk.VK.NumInputs())
	assert.Equal(t, 1<<22, pk.DomainSize())

	vkb, err := os.ReadFile(filepath.Join(cache, "porep-2k.vk"))
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = pk.VK.WriteTo(&buf)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(vkb, buf.Bytes()), "vk inside .params differs from .vk")
}
