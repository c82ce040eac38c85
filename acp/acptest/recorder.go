package acptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
)

// Directions of a recorded [Entry].
const (
	ClientToAgent = "client->agent"
	AgentToClient = "agent->client"
)

// Entry is one recorded message in the fixture envelope {"dir":…,"msg":…}.
type Entry struct {
	Dir string          `json:"dir"`
	Msg json.RawMessage `json:"msg"`
}

// Recorder keeps every message of a connection in wire order. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	entries []Entry
	changed chan struct{} // closed and replaced on every append
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{changed: make(chan struct{})} }

// ClientTap is an [acp.WithTap] function for the client's side of the connection: inbound
// messages are agent->client, outbound ones client->agent.
func (r *Recorder) ClientTap(dir acp.Direction, msg []byte) {
	d := ClientToAgent
	if dir == acp.Inbound {
		d = AgentToClient
	}
	r.Add(d, msg)
}

// Add appends a message (copied).
func (r *Recorder) Add(dir string, msg []byte) {
	r.mu.Lock()
	r.entries = append(r.entries, Entry{Dir: dir, Msg: bytes.Clone(msg)})
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Entries returns a copy of the messages recorded so far.
func (r *Recorder) Entries() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Entry(nil), r.entries...)
}

// Changed returns a channel closed at the next append.
func (r *Recorder) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// WriteJSONL writes the transcript, one envelope per line.
func (r *Recorder) WriteJSONL(w io.Writer) error {
	for _, e := range r.Entries() {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks every recorded message against its per-method $def and returns all
// violations joined. Responses are matched to the requests they answer by id and direction.
func (r *Recorder) Validate(v *Validator) error {
	return ValidateTranscript(v, r.Entries())
}

// ValidateTranscript checks every entry of a transcript; see [Recorder.Validate].
func ValidateTranscript(v *Validator, entries []Entry) error {
	pending := map[string]map[string]string{ClientToAgent: {}, AgentToClient: {}} // sender → id → method
	var errs []error
	for i, e := range entries {
		var env envelope
		if err := json.Unmarshal(e.Msg, &env); err != nil {
			errs = append(errs, fmt.Errorf("entry %d (%s): %w", i, e.Dir, err))
			continue
		}
		fromAgent := e.Dir == AgentToClient
		method := ""
		if env.Method != nil {
			if env.ID != nil {
				pending[e.Dir][string(env.ID)] = *env.Method
			}
		} else if env.ID != nil {
			requester := AgentToClient
			if fromAgent {
				requester = ClientToAgent
			}
			method = pending[requester][string(env.ID)]
			delete(pending[requester], string(env.ID))
		}
		if err := v.ValidateMessage(e.Msg, fromAgent, method); err != nil {
			errs = append(errs, fmt.Errorf("entry %d (%s) %s: %w", i, e.Dir, abbreviate(e.Msg), err))
		}
	}
	return errors.Join(errs...)
}

func abbreviate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// CheckSchema validates every message r recorded and reports violations with t.Error. When the
// schema file is absent it logs why the check was skipped and lets the rest of the test count
// (unlike [SchemaOrSkip], which skips the whole test).
func CheckSchema(t testing.TB, r *Recorder) {
	t.Helper()
	v, err := LoadValidator()
	if errors.Is(err, ErrNoSchema) {
		t.Logf("ACP schema checks skipped: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(v); err != nil {
		t.Error(err)
	}
}

// CheckUnstableSchema is [CheckSchema] against the unstable schema (see
// [loadUnstableValidator]), for transcripts that use unstable methods such
// as session/fork.
func CheckUnstableSchema(t testing.TB, r *Recorder) {
	t.Helper()
	v, err := loadUnstableValidator()
	if errors.Is(err, ErrNoSchema) {
		t.Logf("ACP unstable schema checks skipped: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(v); err != nil {
		t.Error(err)
	}
}
