package c2

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/parallel"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/r1cs"
)

// ErrShapeInUse is returned (wrapped) by Evict, EvictPoSt and EvictUpdate
// while calls use the shape.
var ErrShapeInUse = errors.New("c2: sector shape in use")

// proofShape returns the circuit shape of the registered PoRep proof named
// proof; all proofs of one sector size (V1, V1_1, Synthetic, NI-PoRep)
// share it.
func proofShape(proof string) (porep.Shape, error) {
	rp, err := inputs.ParseProof(proof)
	if err != nil {
		return porep.Shape{}, err
	}
	is, err := rp.Shape()
	if err != nil {
		return porep.Shape{}, err
	}
	s, ok := porep.ShapeBySize(is.SectorSize)
	if !ok || s.Layers != is.Layers || s.Challenges != is.ChallengesPerPartition {
		return porep.Shape{}, fmt.Errorf("c2: %s: no circuit shape for %d-byte sectors", proof, is.SectorSize)
	}
	return s, nil
}

// Preload readies the shape of the registered PoRep proof named proof
// (e.g. "StackedDrg32GiBV1_1"; all proofs of one sector size share a
// shape) exactly as the shape's first Prove would: it reads the proving key
// from Config.Params and records the shape's R1CS, side by side, into the
// cache Prove uses, so that the next Prove of the shape goes straight to
// witness synthesis (its ProveTimes.ParamsLoad is near zero). A shape
// already cached costs nothing; a load in progress, by Prove or Preload, is
// joined. The key stays in host memory until Evict or Close; it is loaded
// onto a device by the first partition proved there, not here.
//
// ctx stops the call; the loads it started go on while other calls wait
// for them and stop once none is left, leaving nothing cached.
//
// Errors: inputs.ErrUnknownProof (wrapped) for a name that is not a
// registered seal proof, ErrNoParams (wrapped) or
// *groth16.FormatError for parameters, ErrClosed after Close, ctx's error.
func (p *Prover) Preload(ctx context.Context, proof string) error {
	s, err := proofShape(proof)
	if err != nil {
		return err
	}
	c, done := p.useShape(s)
	defer done()
	_, _, err = p.loadShape(ctx, c, s)
	return err
}

// Evict drops the cached proving key and R1CS of the shape of the
// registered PoRep proof named proof (see Preload), and releases the
// device keys loaded from that proving key: their device memory is freed
// now, the host memory once nothing refers to it (the next garbage
// collection). The next Prove or Preload of the shape reads and records
// them again. Evicting a shape that is not cached does nothing.
//
// A shape is in use from the moment a Prove or Preload call of it looks
// for its key until the call returns, whether the call waits for a load,
// synthesizes witnesses or proves. Evict then refuses with ErrShapeInUse
// (wrapped): the call holds the key and R1CS, so dropping them would free
// nothing until it returns, and a call starting meanwhile would load a
// second copy beside them. A load that no call waits for any more (its
// callers were cancelled) does not count: it stops on its own and what it
// builds is dropped.
//
// Errors: those of Preload for the name, ErrShapeInUse (wrapped), ErrClosed
// after Close.
func (p *Prover) Evict(proof string) error {
	s, err := proofShape(proof)
	if err != nil {
		return err
	}
	return p.evictCache(s.Name, s.Name)
}

// PreloadPoSt readies the circuit of the registered PoSt proof named proof
// (e.g. "StackedDrgWindow32GiBV1_2" or "StackedDrgWinning32GiBV1"; V1 and
// V1_2 Window proofs of one sector size share a circuit) as Preload does
// for a PoRep shape: the proving key read from Config.Params and the R1CS
// recorded, side by side, into the cache ProveWindowPoSt and
// ProveWinningPoSt use, so that the next proof of the circuit goes
// straight to witness synthesis (ProveTimes.ParamsLoad near zero). Joining
// a load in progress, cancellation and what stays cached until
// EvictPoSt or Close are as for Preload.
//
// Errors: *post.InputError for a name that is no registered PoSt proof,
// ErrNoParams (wrapped) or *groth16.FormatError for parameters, ErrClosed
// after Close, ctx's error.
func (p *Prover) PreloadPoSt(ctx context.Context, proof string) error {
	return postCircuits.preload(ctx, p, proof)
}

// EvictPoSt drops the cached proving key and R1CS of the circuit of the
// registered PoSt proof named proof (both Window versions of a sector
// size: they share it), and releases the device keys loaded from that key,
// as Evict does for a PoRep shape; a ProveWindowPoSt,
// ProveWindowPoStPartition, ProveWinningPoSt or PreloadPoSt call of the
// circuit (or their Timed variants) uses it as a Prove call uses its
// shape.
//
// Errors: *post.InputError for a name that is no registered PoSt proof,
// ErrShapeInUse (wrapped), ErrClosed after Close.
func (p *Prover) EvictPoSt(proof string) error {
	return postCircuits.evict(p, proof)
}

// PreloadUpdate readies the circuit of the registered SnapDeals update
// proof named proof (e.g. "StackedDrg32GiBV1", a RegisteredUpdateProof
// name: a separate method from Preload, since the PoRep proof
// StackedDrg32GiBV1 has the same name) as Preload does for a PoRep shape,
// into the cache ProveUpdate uses; it stays cached until EvictUpdate or
// Close.
//
// Errors: *update.InputError for a name that is no registered update
// proof, ErrNoParams (wrapped) or *groth16.FormatError for parameters,
// ErrClosed after Close, ctx's error.
func (p *Prover) PreloadUpdate(ctx context.Context, proof string) error {
	return updateCircuits.preload(ctx, p, proof)
}

// EvictUpdate drops the cached proving key and R1CS of the circuit of the
// registered update proof named proof, and releases the device keys loaded
// from that key, as Evict does for a PoRep shape; a ProveUpdate(Timed) or
// PreloadUpdate call of the circuit uses it as a Prove call uses its
// shape.
//
// Errors: *update.InputError for a name that is no registered update
// proof, ErrShapeInUse (wrapped), ErrClosed after Close.
func (p *Prover) EvictUpdate(proof string) error {
	return updateCircuits.evict(p, proof)
}

// vanillaShape is what a vanillaFamily needs of its shapes (post.Shape,
// update.Shape) to find, cache and check their parameters.
type vanillaShape interface {
	// ParamsName is the base name of the official parameter files.
	ParamsName() string
	// NumInputs is the number of public inputs of a partition, ONE
	// included.
	NumInputs() int
}

// vanillaFamily is a family of circuits proved from vanilla proofs, one
// circuit per shape S: PoSt (postCircuits) or SnapDeals (updateCircuits).
// It resolves the registered proof names of the family and describes and
// proves their circuits, for PreloadPoSt, EvictPoSt and the PoSt Prove
// calls, or their SnapDeals counterparts.
type vanillaFamily[S vanillaShape] struct {
	// dir starts the cache names of the family's circuits ("post/"); the
	// shape's parameter file name ends them, so that the registered proofs
	// sharing parameters (V1 and V1_2 Window PoSt) share a cache.
	dir string
	// noun names the family's proofs in errors ("PoSt").
	noun string
	// byName returns the registered shape named name, ok false for none.
	byName func(name string) (s S, ok bool)
	// inputErr returns the family's *InputError.
	inputErr func(field, msg string) error
	// label names shape s in logs and errors: its registered proof.
	label func(s S) string
	// blank synthesizes the R1CS of shape s from a blank partition.
	blank func(b r1cs.Builder, s S) error
	// record, when not nil, records the R1CS blank synthesizes, finalized,
	// on up to workers goroutines (all when 0); without it the recording
	// is blank's, on one. Both families have one (post.RecordContext,
	// update.RecordContext).
	record func(ctx context.Context, s S, workers int) (*r1cs.System, error)
}

// shape returns the shape of the registered proof named name, or the
// family's *InputError on Field "proof".
func (f vanillaFamily[S]) shape(name string) (S, error) {
	s, ok := f.byName(name)
	if !ok {
		return s, f.inputErr("proof", fmt.Sprintf("%q is no registered %s proof", name, f.noun))
	}
	return s, nil
}

// circuit describes the circuit of shape s as p proves it. Its cache
// keeps the proving key and R1CS beside the PoRep shapes and the other
// circuits; Close drops them all.
func (f vanillaFamily[S]) circuit(p *Prover, s S) vanillaCircuit {
	return vanillaCircuit{
		cache:     f.dir + s.ParamsName(),
		label:     f.label(s),
		numInputs: s.NumInputs(),
		find:      p.circuitParams(s.ParamsName()),
		record:    func(ctx context.Context) (*r1cs.System, error) { return f.recordShape(ctx, s) },
	}
}

// recordShape records and finalizes the R1CS of shape s, through the
// family's parallel recording when it has one.
func (f vanillaFamily[S]) recordShape(ctx context.Context, s S) (*r1cs.System, error) {
	if f.record != nil {
		return f.record(ctx, s, 0)
	}
	sys := r1cs.NewSystem()
	if err := r1cs.BuildContext(ctx, sys, func(b r1cs.Builder) error { return f.blank(b, s) }); err != nil {
		return nil, err
	}
	sys.Finalize()
	return sys, nil
}

// prove proves the partitions of shape s with p, unless ctx is done
// already (see proveCircuit): witness synthesizes partition k, its aux
// values written into aux when aux can hold them (an idle buffer of the
// circuit's, or nil), and its public inputs must equal want[k], derived
// from what from names ("the commitments"); a differing one gives the
// family's *InputError.
func (f vanillaFamily[S]) prove(ctx context.Context, p *Prover, s S, want [][]fr.Element, from string, tm *ProveTimes,
	witness func(ctx context.Context, k, workers int, aux []fr.Element) (*r1cs.Witness, error)) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.proveCircuit(ctx, f.circuit(p, s), witness, want, func(k, i int) error {
		return f.inputErr(fmt.Sprintf("partition %d: public input %d", k, i), "the witness's differs from the one derived from "+from)
	}, tm)
}

// preload is PreloadPoSt and PreloadUpdate: the circuit of the registered
// proof named proof loaded into the cache its Prove calls use, holding
// the cache meanwhile.
func (f vanillaFamily[S]) preload(ctx context.Context, p *Prover, proof string) error {
	s, err := f.shape(proof)
	if err != nil {
		return err
	}
	c := f.circuit(p, s)
	cache, done := p.useCache(c.cache)
	defer done()
	if p.isClosed() {
		return ErrClosed
	}
	_, _, err = p.loadCircuit(ctx, cache, c.label, c.numInputs, c.find, c.record)
	return err
}

// devSetup is DevSetupPoSt and DevSetupUpdate: development parameters of
// the circuit of the registered proof named proof made on a device and
// installed in the cache its Prove calls use, holding the cache meanwhile.
func (f vanillaFamily[S]) devSetup(ctx context.Context, p *Prover, proof string, rng io.Reader) (*groth16.VerifyingKey, error) {
	s, err := f.shape(proof)
	if err != nil {
		return nil, err
	}
	c := f.circuit(p, s)
	cache, done := p.useCache(c.cache)
	defer done()
	return p.devSetupCache(ctx, cache, c.label, p.recordCircuit(c.label, c.record), rng)
}

// evict is EvictPoSt and EvictUpdate: the cache of the circuit of the
// registered proof named proof dropped (see evictCache).
func (f vanillaFamily[S]) evict(p *Prover, proof string) error {
	s, err := f.shape(proof)
	if err != nil {
		return err
	}
	c := f.circuit(p, s)
	return p.evictCache(c.cache, c.label)
}

// vanillaCircuit describes a circuit proved from vanilla proofs (PoSt,
// SnapDeals) as its Prove calls, PreloadPoSt and PreloadUpdate load it.
type vanillaCircuit struct {
	// cache names the circuit's shapeCache, shared by the registered
	// proofs that share its parameters (V1 and V1_2 Window PoSt).
	cache string
	// label names the circuit in logs and errors: the registered proof.
	label     string
	numInputs int
	// find resolves the parameter file under Config.Params.
	find func() (string, bool, error)
	// record records the circuit's R1CS, which depends on the shape only,
	// from a blank partition, and finalizes it; ctx's end stops it.
	record func(context.Context) (*r1cs.System, error)
}

// circuitParams returns the lookup of the parameter file whose official
// base name is name (a PoRep shape's, or the find of a vanillaCircuit): its
// .params file (or the development one) under Config.Params, as FindParams,
// FindPoStParams and FindUpdateParams resolve it.
func (p *Prover) circuitParams(name string) func() (string, bool, error) {
	return func() (string, bool, error) {
		if p.cfg.Params == "" {
			return "", false, fmt.Errorf("%w: Config.Params is empty", ErrNoParams)
		}
		return findParamsFile(p.cfg.Params, name, ".params")
	}
}

// vanillaField places field, the path of a value inside the vanilla proof
// at position i of a call's list, in the whole list: "[i]" followed by
// "." and field, or "[i]" alone for an empty field.
func vanillaField(i int, field string) string {
	at := fmt.Sprintf("[%d]", i)
	if field != "" {
		at += "." + field
	}
	return at
}

// vanillaErr is the struct of the families' VanillaError types
// (post.VanillaError, update.VanillaError): the path of the offending
// value and the cause.
type vanillaErr = struct {
	Field string
	Err   error
}

// decodeVanilla decodes each of a call's vanilla proofs with decode, on
// all cores. Its errors are *E, the family's VanillaError: "no vanilla proof"
// for none, else decode's error for the first proof that fails, its Field
// placed in the whole list (see vanillaField), any error other than an *E
// its Err.
func decodeVanilla[T any, E ~vanillaErr, PE interface {
	*E
	error
}](vanilla [][]byte, decode func([]byte) (*T, error)) ([]T, error) {
	if len(vanilla) == 0 {
		return nil, PE(&E{Err: errors.New("no vanilla proof")})
	}
	out := make([]T, len(vanilla))
	err := parallel.FirstError(len(vanilla), func(i int) error {
		v, err := decode(vanilla[i])
		if err != nil {
			ve := vanillaErr{Err: err}
			var e PE
			if errors.As(err, &e) {
				ve = vanillaErr(*e)
			}
			return PE(&E{Field: vanillaField(i, ve.Field), Err: ve.Err})
		}
		out[i] = *v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
