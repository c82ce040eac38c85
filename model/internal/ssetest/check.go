package ssetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// Delays returns the delays recorded so far.
func (s *Sleeper) Delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// CheckError fails the test unless err wraps wantErr (when set), or is an
// *llm.APIError equal to wantAPI (when set), or else is nil.
func CheckError(t testing.TB, err, wantErr error, wantAPI *llm.APIError) {
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

// CheckNoLeak fails the test if key appears in the logs or in err.
func CheckNoLeak(t testing.TB, key, logs string, err error) {
	t.Helper()
	if strings.Contains(logs, key) || err != nil && strings.Contains(err.Error(), key) {
		t.Errorf("the API key leaked: %s %v", logs, err)
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
