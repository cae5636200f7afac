package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/porep"
	pb "github.com/sealc2/c2/serve/cuzkpb"
)

// ErrUnknownCircuit: PreloadSRS or EvictSRS named a circuit c2 does not
// prove.
var ErrUnknownCircuit = errors.New("serve: unknown circuit")

// circuitNames maps PoRep sector sizes to cuzk's circuit ids ("porep-32g"),
// extended to the small test sizes.
var circuitNames = map[uint64]string{
	2 << 10:   "porep-2k",
	8 << 20:   "porep-8m",
	512 << 20: "porep-512m",
	32 << 30:  "porep-32g",
	64 << 30:  "porep-64g",
}

// circuitID names the PoRep circuit of a sector size, "" for an unknown size.
func circuitID(sectorSize uint64) string { return circuitNames[sectorSize] }

// circuitShape returns the PoRep shape a circuit id names.
func circuitShape(id string) (porep.Shape, error) {
	for size, name := range circuitNames {
		if name == id {
			if s, ok := porep.ShapeBySize(size); ok {
				return s, nil
			}
		}
	}
	return porep.Shape{}, fmt.Errorf("%w %q (c2 serves porep-2k, porep-8m, porep-512m, porep-32g, porep-64g)", ErrUnknownCircuit, id)
}

// paramsFile finds the parameter file of a circuit under Options.Params.
func (e *Engine) paramsFile(circuit string) (string, error) {
	s, err := circuitShape(circuit)
	if err != nil {
		return "", err
	}
	if e.opts.Params == "" {
		return "", fmt.Errorf("%w: no parameter directory configured", c2.ErrNoParams)
	}
	f, _, err := c2.FindParams(e.opts.Params, s, ".params")
	return f, err
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

// Preload readies a circuit's parameters as far as c2's public API allows:
// it reads the whole parameter file once, so that the first proof of the
// circuit decodes it from the page cache instead of the disk (tier WARM).
// The key itself is decoded into the Prover by the first proof of the
// circuit (tier HOT afterwards). already reports a circuit that was WARM or
// HOT before the call.
func (e *Engine) Preload(ctx context.Context, circuit string) (already bool, took time.Duration, err error) {
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

// readThrough reads path to its end, stopping early when ctx is done.
func readThrough(ctx context.Context, path string) error {
	f, err := os.Open(path)
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

// Evict frees a circuit's parameters. c2's Prover keeps the keys of every
// circuit it proved until it is closed, so evicting one circuit frees all:
// with Options.Reopen set and no job running, the prover is closed and
// replaced, and every circuit returns to COLD. wasLoaded and freed describe
// the circuit asked for.
func (e *Engine) Evict(circuit string) (wasLoaded bool, freed uint64, err error) {
	if _, err := circuitShape(circuit); err != nil {
		return false, 0, err
	}
	e.mu.Lock()
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
