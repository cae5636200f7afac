package c2

import (
	"context"
	"errors"
	"fmt"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/internal/route"
	"github.com/sealc2/c2/internal/stage"
	"github.com/sealc2/c2/r1cs"
)

// provePartition runs one partition to its (unverified) proof, retrying on
// another device when a device fails; ls, when not nil, lends sys's witness
// buffer (see stage.Lease), and a retry after its release proves a rebuilt
// system. It returns the device that computed the proof.
func (p *Prover) provePartition(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System, ls *stage.Lease, exclude map[*route.Device]bool) (groth16.Proof, *route.Device, error) {
	if exclude == nil {
		exclude = make(map[*route.Device]bool)
	}
	for {
		if err := ctx.Err(); err != nil {
			return groth16.Proof{}, nil, err
		}
		if ls.Gone() {
			// A device had the values and failed: synthesize them again.
			var err error
			if sys, err = ls.Rebuild(ctx); err != nil {
				return groth16.Proof{}, nil, err
			}
			ls = nil
		}
		d, err := p.rot.Pick(ctx, pk, exclude)
		if err != nil {
			return groth16.Proof{}, nil, err
		}
		if d == nil {
			return groth16.Proof{}, nil, p.rot.NoDevice()
		}
		if !pk.HostBases() && !p.keys.FromFile(pk) && !p.keys.Holds(pk, d) {
			// Only the device that made it has this key's bases.
			p.rot.Unload(d, pk)
			exclude[d] = true
			if p.rot.IsFallback(d) {
				return groth16.Proof{}, d, fmt.Errorf("%w: %w", ErrNoDevice, groth16.ErrNoHostBases)
			}
			continue
		}
		proof, err := p.run.Prove(ctx, d, pk, sys, ls)
		p.rot.Unload(d, pk)
		if err == nil {
			return proof, d, nil
		}
		var de *gpu.Error
		if !errors.As(err, &de) || errors.Is(err, gpu.ErrBadArgument) || p.rot.IsFallback(d) {
			return groth16.Proof{}, d, err
		}
		// The device failed: out of rotation, and this partition goes
		// elsewhere.
		p.rot.Retire(d, err)
		exclude[d] = true
	}
}
