package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	pb "github.com/sealc2/c2/serve/cuzkpb"
)

// maxMessage bounds gRPC messages: a 32 GiB sector's C1 is ~50 MB of JSON
// (Curio's client allows 256 MiB each way).
const maxMessage = 256 << 20

// Server is the cuzk.v1 gRPC front of an Engine, with an optional HTTP
// listener for /metrics.
type Server struct {
	Engine *Engine
	grpc   *grpc.Server

	mu      sync.Mutex
	metrics []*http.Server
	closed  bool
}

// NewServer starts an engine on p and registers its gRPC service.
func NewServer(p Prover, opts Options) *Server {
	s := &Server{
		Engine: NewEngine(p, opts),
		grpc:   grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage)),
	}
	pb.RegisterProvingEngineServer(s.grpc, &service{e: s.Engine})
	return s
}

// Listen opens addr: "unix:///path" (or "unix:path") for a unix socket,
// removing a stale socket file first, else a TCP "host:port".
func Listen(addr string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix://"); ok {
		return listenUnix(path)
	}
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return listenUnix(path)
	}
	return net.Listen("tcp", addr)
}

func listenUnix(path string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("serve: empty unix socket path")
	}
	if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeSocket != 0 {
		// A socket nobody answers on is left over from an earlier run.
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("serve: %s: another process is listening", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	return net.Listen("unix", path)
}

// Serve answers gRPC calls on lis until Shutdown; it returns nil after a
// shutdown.
func (s *Server) Serve(lis net.Listener) error {
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// ServeMetrics answers GET /metrics on lis until Shutdown; it returns nil
// after a shutdown.
func (s *Server) ServeMetrics(lis net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.Engine.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return lis.Close()
	}
	s.metrics = append(s.metrics, hs)
	s.mu.Unlock()
	err := hs.Serve(lis)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops taking jobs, lets queued and running jobs finish until ctx
// is done and cancels the rest (their waiters receive CANCELLED), then
// closes the listeners once the last call has been answered. It returns
// ctx's error when jobs had to be cancelled. The Prover is not closed.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.Engine.Shutdown(ctx)
	// Every job has ended, so pending AwaitProof calls return at once;
	// allow a moment for their replies, then cut the connections.
	stopped := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(stopped)
	}()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		s.grpc.Stop()
		<-stopped
	}
	s.mu.Lock()
	hs := s.metrics
	s.metrics = nil
	s.closed = true
	s.mu.Unlock()
	for _, h := range hs {
		if cerr := h.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}
