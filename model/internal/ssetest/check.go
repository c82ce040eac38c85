package ssetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/model/internal/httpx"
	"github.com/dsh-tools/dshd/model/llm"
)

// Sleeper records retry delays without waiting; pass its Sleep as
// llm.RetryPolicy.Sleep.
type Sleeper struct {
	mu     sync.Mutex
	delays []time.Duration
}

// Sleep records d and returns at once (ctx's error, if it ended).
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Configure points tr's retries at a new Sleeper, which it returns, and
// discards tr's logs unless tr has a Logger.
func Configure(tr *httpx.Transport) *Sleeper {
	s := &Sleeper{}
	tr.Retry.Sleep = s.Sleep
	if tr.Logger == nil {
		tr.Logger = slog.New(slog.DiscardHandler)
	}
	return s
}

// SimpleRequest returns a request of one user message, "hi".
func SimpleRequest() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "hi"}}}}}
}

// Delays returns the delays recorded so far.
func (s *Sleeper) Delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// ErrorCase is one row of an adapter's table of failures: what the server
// does for each request, and how Stream must end.
type ErrorCase struct {
	Name  string
	Steps []Step
	// WantErr, if set, must be in the error's chain; else WantAPI, if
	// set, must equal the *llm.APIError in it; else the error must be nil.
	WantErr error
	WantAPI *llm.APIError
	// WantReqs is the number of requests the server must see.
	WantReqs int
	// WantText is the response's text (what was kept of a failed stream).
	WantText string
	// WantDelays are the retry delays in order, -1 matching any; nil
	// skips the check.
	WantDelays []time.Duration
}

// RunErrorCases runs each case as a subtest: a fresh server (seeded with
// the case's index) plays its steps to the provider newProvider builds,
// which must log to log and retry with the Sleeper it returns, and Stream's events,
// error, requests, text and delays are checked. key, the provider's API
// key, must appear neither in the logs nor in the error. check, if not
// nil, then inspects what the server received.
func RunErrorCases(t *testing.T, cases []ErrorCase, key string,
	newProvider func(t *testing.T, srv *Server, log *slog.Logger) (llm.Provider, *Sleeper),
	check func(t *testing.T, srv *Server)) {
	t.Helper()
	req := SimpleRequest()
	for i, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			srv := New(t, uint64(i), tc.Steps...)
			var logs bytes.Buffer
			p, sleep := newProvider(t, srv, slog.New(slog.NewTextHandler(&logs, nil)))
			var c Collector
			resp, err := p.Stream(t.Context(), req, c.Emit)
			c.Check(t, resp)
			checkError(t, err, tc.WantErr, tc.WantAPI)
			if n := len(srv.Requests()); n != tc.WantReqs {
				t.Errorf("%d requests, want %d", n, tc.WantReqs)
			}
			if got := resp.Message.Text(); got != tc.WantText {
				t.Errorf("text = %q, want %q", got, tc.WantText)
			}
			if tc.WantDelays != nil && !matchDelays(sleep.Delays(), tc.WantDelays) {
				t.Errorf("delays = %v, want %v (-1: any)", sleep.Delays(), tc.WantDelays)
			}
			if strings.Contains(logs.String(), key) || err != nil && strings.Contains(err.Error(), key) {
				t.Errorf("the API key leaked: %s %v", logs.String(), err)
			}
			if check != nil {
				check(t, srv)
			}
		})
	}
}

func matchDelays(got, want []time.Duration) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if want[i] >= 0 && got[i] != want[i] {
			return false
		}
	}
	return true
}

// checkError fails the test unless err wraps wantErr (when set), or is an
// *llm.APIError equal to wantAPI (when set), or else is nil.
func checkError(t testing.TB, err, wantErr error, wantAPI *llm.APIError) {
	t.Helper()
	switch {
	case wantErr != nil:
		if !errors.Is(err, wantErr) {
			t.Fatalf("err = %v, want %v", err, wantErr)
		}
	case wantAPI != nil:
		var api *llm.APIError
		if !errors.As(err, &api) {
			t.Fatalf("err = %v, want an APIError", err)
		}
		if *api != *wantAPI {
			t.Fatalf("err = %#v, want %#v", *api, *wantAPI)
		}
	case err != nil:
		t.Fatalf("err = %v", err)
	}
}

// CompareGolden compares the JSON request body got, indented, with
// testdata/name; with update it first rewrites the file. Callers pass
// their package's -update flag.
func CompareGolden(t testing.TB, name, got string, update bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("request is not JSON: %v", err)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	pretty = append(pretty, '\n')
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(pretty, want) {
		t.Errorf("request differs from %s (run with -update to accept):\n%s", path, pretty)
	}
}
