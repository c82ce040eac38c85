package ssetest

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Step is what the server does for one request.
type Step struct {
	Status int               // default 200
	Header map[string]string // added to the response
	Body   string
	// Hang keeps the response open after Body until the client goes away,
	// to exercise the idle watchdog and cancellation.
	Hang bool
	// Drop closes the connection without any response (a connection error).
	Drop bool
	// Stall sends nothing at all, not even headers, until the client goes
	// away.
	Stall bool
	// Reached, when set, is closed as the server starts this step: the
	// test's signal that the request is in flight (each step serves at
	// most one request with it).
	Reached chan struct{}
}

// Server answers requests with its steps in order, the last one repeating.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	steps    []Step
	requests []Request
	seed     uint64
}

// Request is what the server received.
type Request struct {
	Header http.Header
	Body   string
}

// New starts a server that closes itself when the test ends. seed makes the
// chunking reproducible.
func New(t testing.TB, seed uint64, steps ...Step) *Server {
	s := &Server{steps: steps, seed: seed}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Header: r.Header.Clone(), Body: string(body)})
	step := s.steps[min(n, len(s.steps)-1)]
	s.mu.Unlock()
	if step.Reached != nil {
		close(step.Reached)
	}
	if step.Stall {
		<-r.Context().Done()
		return
	}
	if step.Drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, v := range step.Header {
		w.Header().Set(k, v)
	}
	status := step.Status
	if status == 0 {
		status = http.StatusOK
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "text/event-stream")
		}
	}
	w.WriteHeader(status)
	rng := rand.New(rand.NewPCG(s.seed, uint64(n)))
	WriteChunked(w, step.Body, rng, 17)
	if step.Hang {
		<-r.Context().Done()
	}
}

// WriteChunked writes body in chunks of 1..maxChunk bytes, flushing after
// each so the client sees them separately.
func WriteChunked(w io.Writer, body string, rng *rand.Rand, maxChunk int) {
	f, _ := w.(http.Flusher)
	for len(body) > 0 {
		n := min(len(body), 1+rng.IntN(maxChunk))
		if _, err := io.WriteString(w, body[:n]); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
		body = body[n:]
	}
}

// Lines joins SSE lines with "\n"; each element is one line.
func Lines(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// CRLF is Lines with "\r\n" line ends.
func CRLF(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }
