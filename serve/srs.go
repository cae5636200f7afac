package serve

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/regfile"
	"github.com/sealc2/c2/porep"
	"github.com/sealc2/c2/porep/inputs"
	"github.com/sealc2/c2/post"
	pb "github.com/sealc2/c2/serve/cuzkpb"
	"github.com/sealc2/c2/update"
)

// ErrUnknownCircuit is the error of a PreloadSRS or EvictSRS that names a
// circuit c2 does not prove.
var ErrUnknownCircuit = errors.New("serve: unknown circuit")

// circuits are the PoRep circuits c2 serves, named by cuzk's circuit ids
// ("porep-32g", extended to the small test sizes), with a registered proof
// of each sector size (all seal proofs of a size share the circuit).
var circuits = []struct {
	size  uint64
	id    string
	proof inputs.Proof
}{
	{2 << 10, "porep-2k", inputs.StackedDrg2KiBV1_1},
	{8 << 20, "porep-8m", inputs.StackedDrg8MiBV1_1},
	{512 << 20, "porep-512m", inputs.StackedDrg512MiBV1_1},
	{32 << 30, "porep-32g", inputs.StackedDrg32GiBV1_1},
	{64 << 30, "porep-64g", inputs.StackedDrg64GiBV1_1},
}

// circuitID names the PoRep circuit of a sector size, "" for an unknown size.
func circuitID(sectorSize uint64) string {
	for _, c := range circuits {
		if c.size == sectorSize {
			return c.id
		}
	}
	return ""
}

// circuitInfo describes a circuit the daemon serves.
type circuitInfo struct {
	id   string
	kind pb.ProofKind
	// proof is the registered proof whose circuit this is, as the
	// Prover's Preload and Evict of the kind take it: a PoRep proof
	// ("StackedDrg32GiBV1_1"), an update proof ("StackedDrg32GiBV1") or a
	// PoSt proof ("StackedDrgWindow32GiBV1_2", the circuit V1 shares).
	proof string
	// find returns the circuit's .params file under a parameter directory
	// (official name, else the development one).
	find func(dir string) (string, error)
}

// loader returns p's Preload and Evict of c's circuit, ok false when p
// does not load and drop the circuits of c's kind.
func (c circuitInfo) loader(p Prover) (preload func(context.Context) error, evict func() error, ok bool) {
	switch c.kind {
	case pb.ProofKind_POREP_SEAL_COMMIT:
		if sp, ok := p.(shapeProver); ok {
			return func(ctx context.Context) error { return sp.Preload(ctx, c.proof) }, func() error { return sp.Evict(c.proof) }, true
		}
	case pb.ProofKind_SNAP_DEALS_UPDATE:
		if sp, ok := p.(updateShapeProver); ok {
			return func(ctx context.Context) error { return sp.PreloadUpdate(ctx, c.proof) }, func() error { return sp.EvictUpdate(c.proof) }, true
		}
	case pb.ProofKind_WINDOW_POST_PARTITION, pb.ProofKind_WINNING_POST:
		if sp, ok := p.(postShapeProver); ok {
			return func(ctx context.Context) error { return sp.PreloadPoSt(ctx, c.proof) }, func() error { return sp.EvictPoSt(c.proof) }, true
		}
	}
	return nil, nil, false
}

// devKeyProver is implemented by provers that make a circuit's INSECURE
// development key on a device in place of its parameter file, as
// *c2.Prover does; DevSetup uses them.
type devKeyProver interface {
	DevSetupProof(ctx context.Context, proof string, rng io.Reader) (*groth16.VerifyingKey, error)
	DevSetupPoSt(ctx context.Context, proof string, rng io.Reader) (*groth16.VerifyingKey, error)
	DevSetupUpdate(ctx context.Context, proof string, rng io.Reader) (*groth16.VerifyingKey, error)
}

// devSetup returns p's development setup of c's circuit, ok false when p
// makes no development keys.
func (c circuitInfo) devSetup(p Prover) (setup func(context.Context) (*groth16.VerifyingKey, error), ok bool) {
	dp, ok := p.(devKeyProver)
	if !ok {
		return nil, false
	}
	mk := dp.DevSetupProof
	switch c.kind {
	case pb.ProofKind_SNAP_DEALS_UPDATE:
		mk = dp.DevSetupUpdate
	case pb.ProofKind_WINDOW_POST_PARTITION, pb.ProofKind_WINNING_POST:
		mk = dp.DevSetupPoSt
	}
	return func(ctx context.Context) (*groth16.VerifyingKey, error) { return mk(ctx, c.proof, rand.Reader) }, true
}

// ErrNoDevKeys is the error of a DevSetup asked of a Prover that makes no
// development keys.
var ErrNoDevKeys = errors.New("serve: the prover makes no development keys")

// DevSetup makes INSECURE development parameters for a circuit ("porep-32g",
// "winning-32g", …) in the prover's device memory, with a trapdoor drawn
// from crypto/rand and then forgotten, and installs them as the circuit's
// key (tier HOT): its jobs then need no parameter file, and their proofs
// verify only under the returned verifying key, never on chain. It is for
// measuring a daemon where the published parameters are not at hand;
// EvictSRS of the circuit drops the key, and its next job looks for the
// parameter file. took is the recording and setup time.
//
// Errors: ErrUnknownCircuit (wrapped), ErrNoDevKeys (wrapped) for a
// Prover without DevSetupProof, DevSetupPoSt and DevSetupUpdate, one for a
// circuit that is HOT already, and the Prover's (c2.ErrNoKeyMaker without
// a CUDA device).
func (e *Engine) DevSetup(ctx context.Context, circuit string) (vk *groth16.VerifyingKey, took time.Duration, err error) {
	c, err := lookupCircuit(circuit)
	if err != nil {
		return nil, 0, err
	}
	e.mu.Lock()
	setup, ok := c.devSetup(e.prover)
	e.mu.Unlock()
	if !ok {
		return nil, 0, fmt.Errorf("%w: %s", ErrNoDevKeys, circuit)
	}
	already, took, err := e.preloadShape(ctx, circuit, func(ctx context.Context) (err error) {
		vk, err = setup(ctx)
		return err
	})
	switch {
	case err != nil:
		return nil, 0, err
	case already:
		return nil, 0, fmt.Errorf("serve: %s has its key loaded already", circuit)
	}
	return vk, took, nil
}

// lookupCircuit returns the circuit a cuzk circuit id names: "porep-32g",
// "snap-32g", "wpost-32g" (Window PoSt, V1 and V1_1 share it),
// "winning-32g", and the same for 2k, 8m, 512m and 64g.
func lookupCircuit(id string) (circuitInfo, error) {
	for _, c := range circuits {
		if c.id == id {
			s, ok := porep.ShapeBySize(c.size)
			if !ok {
				break
			}
			return circuitInfo{id: id, kind: pb.ProofKind_POREP_SEAL_COMMIT, proof: c.proof.String(), find: func(dir string) (string, error) {
				f, _, err := c2.FindParams(dir, s, ".params")
				return f, err
			}}, nil
		}
	}
	for _, sz := range sectorSizes {
		switch id {
		case "snap-" + sz.id:
			if s, ok := update.ShapeByName("StackedDrg" + sz.name + "V1"); ok {
				return circuitInfo{id: id, kind: pb.ProofKind_SNAP_DEALS_UPDATE, proof: s.Name, find: func(dir string) (string, error) {
					f, _, err := c2.FindUpdateParams(dir, s, ".params")
					return f, err
				}}, nil
			}
		case "wpost-" + sz.id, "winning-" + sz.id:
			name, kind := "StackedDrgWindow"+sz.name+"V1_2", pb.ProofKind_WINDOW_POST_PARTITION
			if id == "winning-"+sz.id {
				name, kind = "StackedDrgWinning"+sz.name+"V1", pb.ProofKind_WINNING_POST
			}
			if s, ok := post.ShapeByName(name); ok {
				return circuitInfo{id: id, kind: kind, proof: s.Name, find: func(dir string) (string, error) {
					f, _, err := c2.FindPoStParams(dir, s, ".params")
					return f, err
				}}, nil
			}
		}
	}
	return circuitInfo{}, fmt.Errorf("%w %q (c2 serves porep-, snap-, wpost- and winning- followed by 2k, 8m, 512m, 32g or 64g)", ErrUnknownCircuit, id)
}

// paramsFile finds the parameter file of a circuit under Options.Params.
func (e *Engine) paramsFile(circuit string) (string, error) {
	c, err := lookupCircuit(circuit)
	if err != nil {
		return "", err
	}
	if e.opts.Params == "" {
		return "", fmt.Errorf("%w: no parameter directory configured", c2.ErrNoParams)
	}
	return c.find(e.opts.Params)
}

// paramsSize is the size of a circuit's parameter file, 0 when unknown.
func (e *Engine) paramsSize(circuit string) uint64 {
	f, err := e.paramsFile(circuit)
	if err != nil {
		return 0
	}
	st, err := os.Stat(f)
	if err != nil {
		return 0
	}
	return uint64(st.Size())
}

// Preload readies a circuit's parameters. With a prover that loads and
// drops the circuits of its kind (Preload, PreloadUpdate, PreloadPoSt, as
// *c2.Prover has) it reads the proving key and records the circuit's R1CS
// into the prover, as the circuit's first proof would (tier HOT): the next
// proof starts at once. Otherwise it reads the whole parameter file once,
// so that the first proof decodes it from the page cache instead of the
// disk (tier WARM), and the first proof makes it HOT. already reports a
// circuit that was HOT (or, without a loader, WARM or HOT) before the
// call; took is the time the call spent loading.
func (e *Engine) Preload(ctx context.Context, circuit string) (already bool, took time.Duration, err error) {
	c, err := lookupCircuit(circuit)
	if err != nil {
		return false, 0, err
	}
	e.mu.Lock()
	preload, _, ok := c.loader(e.prover)
	e.mu.Unlock()
	if ok {
		return e.preloadShape(ctx, circuit, preload)
	}
	f, err := e.paramsFile(circuit)
	if err != nil {
		return false, 0, err
	}
	e.mu.Lock()
	s := e.srsEntry(circuit)
	already = s.tier != pb.SRSStatus_COLD
	e.mu.Unlock()
	if already {
		return true, 0, nil
	}
	t0 := time.Now()
	if err := readThrough(ctx, f); err != nil {
		return false, 0, err
	}
	took = time.Since(t0)
	e.mu.Lock()
	if s.tier == pb.SRSStatus_COLD {
		s.tier = pb.SRSStatus_WARM
	}
	e.mu.Unlock()
	return false, took, nil
}

// preloadShape is Preload through the prover's own loader.
func (e *Engine) preloadShape(ctx context.Context, circuit string, preload func(context.Context) error) (already bool, took time.Duration, err error) {
	e.mu.Lock()
	s := e.srsEntry(circuit)
	already, gen := s.tier == pb.SRSStatus_HOT, s.gen
	e.mu.Unlock()
	if already {
		return true, 0, nil
	}
	t0 := time.Now()
	if err := preload(ctx); err != nil {
		return false, 0, err
	}
	took = time.Since(t0)
	e.mu.Lock()
	if s.gen == gen { // not evicted meanwhile
		s.tier = pb.SRSStatus_HOT
	}
	e.mu.Unlock()
	return false, took, nil
}

// readThrough reads path, a regular file, to its end, stopping early when
// ctx is done. It opens it with regfile.Open, so that a FIFO in the
// parameter directory is refused instead of blocking.
func readThrough(ctx context.Context, path string) error {
	f, _, err := regfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 8<<20)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := f.Read(buf)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Evict frees a circuit's parameters. With a prover that loads and drops
// the circuits of its kind (Evict, EvictUpdate, EvictPoSt) it drops that
// circuit's key and R1CS from the prover, and refuses while a job of the
// circuit runs (the prover refuses too while any call uses them).
// Otherwise the prover keeps the keys of every circuit it proved until it
// is closed, so evicting one circuit frees all: with Options.Reopen set
// and no job running, the prover is closed and replaced, and every circuit
// returns to COLD. wasLoaded and freed (the parameter file's size)
// describe the circuit asked for.
func (e *Engine) Evict(circuit string) (wasLoaded bool, freed uint64, err error) {
	c, err := lookupCircuit(circuit)
	if err != nil {
		return false, 0, err
	}
	e.mu.Lock()
	if _, evict, ok := c.loader(e.prover); ok {
		defer e.mu.Unlock()
		return e.evictShape(circuit, evict)
	}
	s, ok := e.srs[circuit]
	loaded := ok && s.tier == pb.SRSStatus_HOT
	warm := ok && s.tier == pb.SRSStatus_WARM
	if warm {
		// Page-cache warmth belongs to the kernel; forget the mark only.
		s.tier = pb.SRSStatus_COLD
	}
	e.mu.Unlock()
	if !loaded {
		return false, 0, nil
	}
	all, err := e.replaceProver()
	if err != nil {
		return true, 0, err
	}
	return true, all[circuit].size, nil
}

// evictShape is Evict through the prover's own evict. e.mu is held, so
// that no job of the circuit starts or ends meanwhile: a job ending marks
// its circuit HOT under e.mu, after its Prove returned.
func (e *Engine) evictShape(circuit string, evict func() error) (wasLoaded bool, freed uint64, err error) {
	for j := range e.running {
		if j.circuit == circuit {
			return false, 0, fmt.Errorf("serve: job %s is proving on %s; evict when it has ended", j.id, circuit)
		}
	}
	if err := evict(); err != nil {
		return false, 0, err
	}
	s, ok := e.srs[circuit]
	if !ok {
		return false, 0, nil
	}
	s.gen++
	wasLoaded = s.tier == pb.SRSStatus_HOT
	s.tier = pb.SRSStatus_COLD
	if wasLoaded {
		freed = s.size
	}
	return wasLoaded, freed, nil
}
