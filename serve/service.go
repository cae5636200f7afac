package serve

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/sealc2/c2/serve/cuzkpb"
)

// service answers cuzk.v1.ProvingEngine calls from an Engine.
type service struct {
	pb.UnimplementedProvingEngineServer
	e *Engine
}

// grpcError maps engine errors to gRPC statuses.
func grpcError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnsupportedKind):
		return status.Error(codes.Unimplemented, err.Error())
	case errors.Is(err, ErrQueueFull):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, ErrClosed):
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, ErrUnknownJob):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Error(codes.InvalidArgument, err.Error())
}

func (s *service) SubmitProof(_ context.Context, req *pb.SubmitProofRequest) (*pb.SubmitProofResponse, error) {
	id, pos, err := s.e.Submit(req)
	if err != nil {
		return nil, grpcError(err)
	}
	return &pb.SubmitProofResponse{JobId: id, QueuePosition: uint32(pos), AssignedGpu: s.e.assigned(id)}, nil
}

// assigned names the devices a running job may use (c2 spreads a job's
// partitions over every device), empty while it waits.
func (e *Engine) assigned(id string) string {
	e.mu.Lock()
	j, ok := e.jobs[id]
	running := ok && j.state == stateRunning
	p := e.prover
	e.mu.Unlock()
	if !running {
		return ""
	}
	sp, ok := p.(statsProver)
	if !ok {
		return ""
	}
	var names []string
	for _, d := range sp.Stats().Devices {
		if d.Failed == nil {
			names = append(names, d.Name)
		}
	}
	return strings.Join(names, ",")
}

func (s *service) AwaitProof(ctx context.Context, req *pb.AwaitProofRequest) (*pb.AwaitProofResponse, error) {
	r, err := s.e.Await(ctx, req.GetJobId(), time.Duration(req.GetTimeoutMs())*time.Millisecond)
	return r, grpcError(err)
}

func (s *service) Prove(ctx context.Context, req *pb.ProveRequest) (*pb.ProveResponse, error) {
	if req.GetSubmit() == nil {
		return nil, status.Error(codes.InvalidArgument, "serve: ProveRequest.submit is missing")
	}
	id, _, err := s.e.Submit(req.GetSubmit())
	if err != nil {
		return nil, grpcError(err)
	}
	r, err := s.e.Await(ctx, id, 0)
	if err != nil {
		return nil, grpcError(err)
	}
	return &pb.ProveResponse{Result: r}, nil
}

func (s *service) CancelProof(_ context.Context, req *pb.CancelProofRequest) (*pb.CancelProofResponse, error) {
	running, err := s.e.Cancel(req.GetJobId())
	if err != nil {
		return nil, grpcError(err)
	}
	return &pb.CancelProofResponse{WasRunning: running}, nil
}

func (s *service) GetStatus(context.Context, *pb.GetStatusRequest) (*pb.GetStatusResponse, error) {
	return s.e.Status(), nil
}

// Status describes the queues, the prover's devices and the parameter sets.
// Devices come from the prover's counters: vram_total_bytes is the device's
// memory budget and vram_free_bytes what its peak use left of it (c2 does
// not expose current use); a device shows the ids of the running jobs,
// since c2 spreads every job over all devices.
func (e *Engine) Status() *pb.GetStatusResponse {
	e.mu.Lock()
	r := &pb.GetStatusResponse{
		TotalProofsCompleted: e.complete,
		TotalProofsFailed:    e.failed,
		UptimeSeconds:        uint64(time.Since(e.start) / time.Second),
	}
	if e.opts.HostMemory > 0 {
		r.PinnedMemoryLimitBytes = uint64(e.opts.HostMemory)
	}
	counts := e.counts()
	refs := map[string]uint32{}
	var runningIDs, runningKinds []string
	for j := range e.running {
		runningIDs = append(runningIDs, j.id)
		runningKinds = append(runningKinds, j.kind.String())
		if j.circuit != "" {
			refs[j.circuit]++
		}
	}
	for c, s := range e.srs {
		if s.tier != pb.SRSStatus_COLD || refs[c] > 0 {
			r.LoadedSrs = append(r.LoadedSrs, &pb.SRSStatus{CircuitId: c, Tier: s.tier, SizeBytes: s.size, RefCount: refs[c]})
		}
	}
	for c, n := range refs {
		if _, ok := e.srs[c]; !ok {
			r.LoadedSrs = append(r.LoadedSrs, &pb.SRSStatus{CircuitId: c, Tier: pb.SRSStatus_COLD, RefCount: n})
		}
	}
	p := e.prover
	e.mu.Unlock()

	sort.Slice(r.LoadedSrs, func(a, b int) bool { return r.LoadedSrs[a].CircuitId < r.LoadedSrs[b].CircuitId })
	sort.Strings(runningIDs)
	kinds := make([]pb.ProofKind, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(a, b int) bool { return kinds[a] < kinds[b] })
	for _, k := range kinds {
		c := counts[k]
		r.Queues = append(r.Queues, &pb.QueueStatus{ProofKind: k.String(), Pending: uint32(c.pending), InProgress: uint32(c.running)})
	}
	if sp, ok := p.(statsProver); ok {
		for i, d := range sp.Stats().Devices {
			g := &pb.GPUStatus{Ordinal: uint32(i), Name: d.Name, VramTotalBytes: uint64(max(d.Budget, 0))}
			if d.Budget > d.PeakMemory {
				g.VramFreeBytes = uint64(d.Budget - d.PeakMemory)
			}
			if d.Failed != nil {
				g.Name += " (retired: " + d.Failed.Error() + ")"
			} else if len(runningIDs) > 0 {
				g.CurrentJobId = strings.Join(runningIDs, ",")
				g.CurrentProofKind = runningKinds[0]
			}
			r.Gpus = append(r.Gpus, g)
		}
	}
	return r
}

func (s *service) GetMetrics(context.Context, *pb.GetMetricsRequest) (*pb.GetMetricsResponse, error) {
	text, err := s.e.MetricsText()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pb.GetMetricsResponse{PrometheusText: text}, nil
}

func (s *service) PreloadSRS(ctx context.Context, req *pb.PreloadSrsRequest) (*pb.PreloadSrsResponse, error) {
	already, took, err := s.e.Preload(ctx, req.GetCircuitId())
	if err != nil {
		return nil, srsError(err)
	}
	return &pb.PreloadSrsResponse{AlreadyLoaded: already, LoadTimeMs: ms(took)}, nil
}

func (s *service) EvictSRS(_ context.Context, req *pb.EvictSrsRequest) (*pb.EvictSrsResponse, error) {
	was, freed, err := s.e.Evict(req.GetCircuitId())
	if err != nil {
		return nil, srsError(err)
	}
	return &pb.EvictSrsResponse{WasLoaded: was, FreedBytes: freed}, nil
}

// srsError maps PreloadSRS and EvictSRS errors: an unknown circuit is
// NotFound, a context error keeps its code, anything else (no parameter
// file, busy prover, no reopen configured) is FailedPrecondition.
func srsError(err error) error {
	switch {
	case errors.Is(err, ErrUnknownCircuit):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return grpcError(err)
	}
	return status.Error(codes.FailedPrecondition, err.Error())
}
