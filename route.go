package c2

import (
	"context"
	"errors"
	"fmt"

	"github.com/sealc2/c2/gpu"
	"github.com/sealc2/c2/groth16"
	"github.com/sealc2/c2/r1cs"
)

// Device rotation: which device a partition goes to, and what happens when a
// device fails.

// noDevice returns ErrNoDevice with the reason the last device left.
func (p *Prover) noDevice() error {
	p.mu.Lock()
	last := p.lastFailure
	p.mu.Unlock()
	if last == nil {
		return ErrNoDevice
	}
	return fmt.Errorf("%w (last failure: %v)", ErrNoDevice, last)
}

// retire takes d out of rotation for good.
func (p *Prover) retire(d *device, why error) {
	if d == nil || d == p.fall {
		return
	}
	p.log.Warn("c2: device taken out of rotation", "device", d.name, "reason", why)
	p.mu.Lock()
	p.lastFailure = fmt.Errorf("%s: %w", d.name, why)
	p.mu.Unlock()
	d.mu.Lock()
	if d.err == nil {
		d.err = why
	}
	d.mu.Unlock()
	d.dead.Store(true)
}

// pick routes a partition: to the live device with the fewest partitions
// routed to it (lowest index on ties) among those with fewer than
// p.perDevice() in flight, waiting for one to free a place when all are
// full, so that a faster device takes more partitions; to the CPU fallback
// when no device is left and the config allows it; or nowhere (nil, nil).
// The caller calls p.unload(d) when the partition leaves the device.
func (p *Prover) pick(ctx context.Context, exclude map[*device]bool) (*device, error) {
	for {
		p.pickMu.Lock()
		var best *device
		live := false
		for _, d := range p.devs {
			if d.dead.Load() || exclude[d] {
				continue
			}
			live = true
			if d.load.Load() >= p.perDevice() {
				continue
			}
			if best == nil || d.load.Load() < best.load.Load() {
				best = d
			}
		}
		if !live && p.cfg.CPUFallback {
			best = p.fall
			p.log.Warn("c2: no device left: proving on the CPU fallback")
		}
		if best != nil || !live {
			if best != nil {
				best.load.Add(1)
			}
			p.pickMu.Unlock()
			return best, nil
		}
		freed := p.freed
		p.pickMu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// perDevice bounds the partitions routed to one device and not finished:
// those it proves plus those prepared ahead for it.
func (p *Prover) perDevice() int32 { return int32(2*p.cfg.PrepWorkers + 1) }

// unload records that a partition left d and wakes partitions waiting for
// a device.
func (p *Prover) unload(d *device) {
	p.pickMu.Lock()
	d.load.Add(-1)
	close(p.freed)
	p.freed = make(chan struct{})
	p.pickMu.Unlock()
}

// provePartition runs one partition to its (unverified) proof, retrying on
// another device when a device fails; ls, when not nil, lends sys's witness
// buffer (see lease), and a retry after its release proves a rebuilt
// system. It returns the device that computed the proof.
func (p *Prover) provePartition(ctx context.Context, pk *groth16.ProvingKey, sys *r1cs.System, ls *lease, exclude map[*device]bool) (groth16.Proof, *device, error) {
	if exclude == nil {
		exclude = make(map[*device]bool)
	}
	for {
		if err := ctx.Err(); err != nil {
			return groth16.Proof{}, nil, err
		}
		if ls.gone() {
			// A device had the values and failed: synthesize them again.
			var err error
			if sys, err = ls.rebuild(ctx); err != nil {
				return groth16.Proof{}, nil, err
			}
			ls = nil
		}
		d, err := p.pick(ctx, exclude)
		if err != nil {
			return groth16.Proof{}, nil, err
		}
		if d == nil {
			return groth16.Proof{}, nil, p.noDevice()
		}
		if !pk.HostBases() && p.fileOf(pk) == nil && !p.holds(pk, d) {
			// Only the device that made it has this key's bases.
			p.unload(d)
			exclude[d] = true
			if d == p.fall {
				return groth16.Proof{}, d, fmt.Errorf("%w: %w", ErrNoDevice, groth16.ErrNoHostBases)
			}
			continue
		}
		proof, err := p.proveOn(ctx, d, pk, sys, ls)
		p.unload(d)
		if err == nil {
			return proof, d, nil
		}
		var de *gpu.Error
		if !errors.As(err, &de) || errors.Is(err, gpu.ErrBadArgument) || d == p.fall {
			return groth16.Proof{}, d, err
		}
		// The device failed: out of rotation, and this partition goes
		// elsewhere.
		p.retire(d, err)
		exclude[d] = true
	}
}
