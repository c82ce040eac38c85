package bridge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/policy"
)

var update = flag.Bool("update", false, "rewrite the transcript goldens under fixtures/transcripts from what the bridge sends")

// transcriptDir holds the protocol fixtures (see fixtures/README.md).
const transcriptDir = "../fixtures/transcripts"

// fixtureLine is one line of a transcript: the recorder's envelope
// {"dir", "msg"}, a harness setup line, or a client line sent verbatim
// (raw) because it is not JSON.
type fixtureLine struct {
	Dir   string          `json:"dir"`
	Msg   json.RawMessage `json:"msg,omitempty"`
	Raw   *string         `json:"raw,omitempty"`
	Setup *fixtureSetup   `json:"setup,omitempty"`
}

// fixtureSetup configures the agent of a scenario.
type fixtureSetup struct {
	// Turns are the scripted loop's turns, one per (non-command) prompt.
	Turns [][]step `json:"turns,omitempty"`
	// Rules are configured permission rules.
	Rules *struct {
		Allow []string `json:"allow,omitempty"`
		Ask   []string `json:"ask,omitempty"`
		Deny  []string `json:"deny,omitempty"`
	} `json:"rules,omitempty"`
}

const harnessDir = "harness"

// anyValue in a golden matches any value the agent sent (timestamps that
// come from file modification times).
const anyValue = "<any>"

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(transcriptDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no transcripts in %s", transcriptDir)
	}
	validator, schemaErr := acptest.LoadValidator()
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The scenario runs in a bubble so that synctest.Wait tells
			// when the agent has sent all it will (see wire.quiet).
			var w *wire
			synctest.Test(t, func(t *testing.T) { w = runTranscript(t, file) })
			t.Run("schema", func(t *testing.T) {
				if schemaErr != nil {
					t.Skipf("ACP schema not available (%v): agent messages not validated", schemaErr)
				}
				validateAgentMessages(t, validator, w)
			})
		})
	}
}

func readTranscript(t *testing.T, file string) (fixtureSetup, []fixtureLine) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var setup fixtureSetup
	var lines []fixtureLine
	for i, raw := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l fixtureLine
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("%s:%d: %v", file, i+1, err)
		}
		switch l.Dir {
		case harnessDir:
			if l.Setup != nil {
				setup = *l.Setup
			}
		case acptest.ClientToAgent, acptest.AgentToClient:
			lines = append(lines, l)
		default:
			t.Fatalf("%s:%d: unknown dir %q", file, i+1, l.Dir)
		}
	}
	return setup, lines
}

// wire is the client end of the pipe: it records every agent message.
type wire struct {
	conn net.Conn

	mu       sync.Mutex
	got      []json.RawMessage // agent->client messages
	order    []fixtureLine     // everything, in observed order
	readDone chan struct{}
}

func newWire(c net.Conn) *wire {
	w := &wire{conn: c, readDone: make(chan struct{})}
	go w.read()
	return w
}

func (w *wire) read() {
	defer close(w.readDone)
	r := bufio.NewReaderSize(w.conn, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			msg := json.RawMessage(bytes.TrimSpace(line))
			w.mu.Lock()
			w.got = append(w.got, msg)
			w.order = append(w.order, fixtureLine{Dir: acptest.AgentToClient, Msg: msg})
			w.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (w *wire) snapshot() []json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]json.RawMessage(nil), w.got...)
}

// quiet waits until every goroutine of the scenario's bubble (agent and
// wire) is blocked: the agent has sent all it will send until the client
// says more. It fails when that is fewer than n messages.
func (w *wire) quiet(t *testing.T, n int, before string) {
	t.Helper()
	synctest.Wait()
	if got := w.snapshot(); len(got) < n {
		t.Fatalf("the agent went quiet after %d messages, want %d before %s; got:\n%s", len(got), n, before, joinMsgs(got))
	}
}

// expectedUnlessUpdate is n, or 0 with -update, where the golden being
// rewritten does not say how many messages to expect.
func expectedUnlessUpdate(n int) int {
	if *update {
		return 0
	}
	return n
}

func (w *wire) send(t *testing.T, l fixtureLine) {
	t.Helper()
	var line []byte
	if l.Raw != nil {
		line = []byte(*l.Raw)
	} else {
		line = compact(t, l.Msg)
	}
	w.mu.Lock()
	w.order = append(w.order, fixtureLine{Dir: acptest.ClientToAgent, Msg: l.Msg, Raw: l.Raw})
	w.mu.Unlock()
	if _, err := w.conn.Write(append(line, '\n')); err != nil {
		t.Fatalf("writing to the agent: %v", err)
	}
}

func compact(t *testing.T, msg json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, msg); err != nil {
		t.Fatalf("bad message %s: %v", msg, err)
	}
	return b.Bytes()
}

// envelope is the part of a JSON-RPC message the harness looks at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

func parseEnvelope(msg json.RawMessage) envelope {
	var e envelope
	_ = json.Unmarshal(msg, &e)
	return e
}

func runTranscript(t *testing.T, file string) *wire {
	setup, lines := readTranscript(t, file)
	loop := &scriptLoop{turns: setup.Turns}
	agent := newTestAgent(t, loop, t.TempDir())
	if setup.Rules != nil {
		rs, err := policy.ParseRuleSet(setup.Rules.Allow, setup.Rules.Ask, setup.Rules.Deny)
		if err != nil {
			t.Fatal(err)
		}
		agent.SetRules(rs)
	}
	agentEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- agent.Serve(ctx, agentEnd) }()
	w := newWire(clientEnd)
	defer func() {
		cancel()
		clientEnd.Close()
		<-served
		<-w.readDone
	}()

	// The golden's agent requests, in order, so that a client response
	// written against a golden id answers the request the agent really made.
	var goldenReqIDs []string
	for _, l := range lines {
		if l.Dir == acptest.AgentToClient {
			if e := parseEnvelope(l.Msg); e.Method != nil && e.ID != nil {
				goldenReqIDs = append(goldenReqIDs, string(e.ID))
			}
		}
	}
	expected := 0
	for i, l := range lines {
		if l.Dir == acptest.AgentToClient {
			expected++
			continue
		}
		w.quiet(t, expectedUnlessUpdate(expected), fmt.Sprintf("client line %d", i+1))
		if l.Raw == nil && !*update {
			l.Msg = rebind(t, l.Msg, goldenReqIDs, w)
		}
		w.send(t, l)
	}
	// Quiet at the end means the agent has sent everything: anything extra
	// shows in the comparison below.
	w.quiet(t, expectedUnlessUpdate(expected), "the end")
	got := w.snapshot()

	if *update {
		writeTranscript(t, file, lines, w)
	} else {
		var want []json.RawMessage
		for _, l := range lines {
			if l.Dir == acptest.AgentToClient {
				want = append(want, l.Msg)
			}
		}
		compareMessages(t, want, got)
	}
	return w
}

// rebind replaces the id of a client response by the id the agent used for
// the request at the same position.
func rebind(t *testing.T, msg json.RawMessage, golden []string, w *wire) json.RawMessage {
	e := parseEnvelope(msg)
	if e.Method != nil || e.ID == nil {
		return msg
	}
	k := -1
	for i, id := range golden {
		if id == string(e.ID) {
			k = i
			break
		}
	}
	if k < 0 {
		return msg
	}
	got := w.snapshot()
	n := 0
	for _, m := range got {
		if g := parseEnvelope(m); g.Method != nil && g.ID != nil {
			if n == k {
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(msg, &obj); err != nil {
					t.Fatal(err)
				}
				obj["id"] = g.ID
				out, _ := json.Marshal(obj)
				return out
			}
			n++
		}
	}
	return msg
}

func writeTranscript(t *testing.T, file string, old []fixtureLine, w *wire) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// Keep the harness lines as written.
	for _, raw := range bytes.Split(data, []byte("\n")) {
		var l fixtureLine
		if json.Unmarshal(raw, &l) == nil && l.Dir == harnessDir {
			out.Write(raw)
			out.WriteByte('\n')
		}
	}
	w.mu.Lock()
	order := append([]fixtureLine(nil), w.order...)
	w.mu.Unlock()
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	for _, l := range order {
		if l.Msg != nil {
			if l.Dir == acptest.AgentToClient {
				l.Msg = anyUpdatedAt(t, l.Msg)
			}
			l.Msg = compact(t, l.Msg)
		}
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// anyUpdatedAt replaces the updatedAt of session/list entries, which come
// from file modification times, by the wildcard.
func anyUpdatedAt(t *testing.T, msg json.RawMessage) json.RawMessage {
	var m struct {
		Result *struct {
			Sessions []map[string]any `json:"sessions"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Result == nil || m.Result.Sessions == nil {
		return msg
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		t.Fatal(err)
	}
	for _, s := range obj["result"].(map[string]any)["sessions"].([]any) {
		if e := s.(map[string]any); e["updatedAt"] != nil {
			e["updatedAt"] = anyValue
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b.Bytes())
}

// compareMessages compares the agent's messages semantically (key order
// and escaping do not matter) and shows a line diff of indented JSON.
func compareMessages(t *testing.T, want, got []json.RawMessage) {
	t.Helper()
	ok := len(want) == len(got)
	for i := 0; ok && i < len(want); i++ {
		ok = jsonMatch(decode(want[i]), decode(got[i]))
	}
	if ok {
		return
	}
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(indentAll(want), indentAll(got))
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines)
	var sb strings.Builder
	for _, d := range diffs {
		prefix := "  "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			prefix = "- "
		case diffmatchpatch.DiffInsert:
			prefix = "+ "
		}
		for _, line := range strings.SplitAfter(strings.TrimSuffix(d.Text, "\n"), "\n") {
			sb.WriteString(prefix + strings.TrimSuffix(line, "\n") + "\n")
		}
	}
	t.Errorf("agent messages differ from the golden (-want +got; run with -update to accept):\n%s", sb.String())
}

func decode(m json.RawMessage) any {
	var v any
	if err := json.Unmarshal(m, &v); err != nil {
		return string(m)
	}
	return v
}

// jsonMatch is deep equality where the golden value "<any>" matches
// anything.
func jsonMatch(want, got any) bool {
	if s, ok := want.(string); ok && s == anyValue {
		return true
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !jsonMatch(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !jsonMatch(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

func indentAll(ms []json.RawMessage) string {
	var b strings.Builder
	for _, m := range ms {
		var out bytes.Buffer
		if err := json.Indent(&out, m, "", "  "); err != nil {
			out.Write(m)
		}
		b.WriteString(out.String())
		b.WriteString("\n")
	}
	return b.String()
}

func joinMsgs(ms []json.RawMessage) string {
	var b strings.Builder
	for _, m := range ms {
		b.Write(m)
		b.WriteByte('\n')
	}
	return b.String()
}

// validateAgentMessages checks every agent message against the schema
// $def of its method (responses: the method of the request they answer).
func validateAgentMessages(t *testing.T, v *acptest.Validator, w *wire) {
	w.mu.Lock()
	order := append([]fixtureLine(nil), w.order...)
	w.mu.Unlock()
	pending := map[string]string{} // client request id → method
	var errs []error
	for i, l := range order {
		if l.Raw != nil {
			continue
		}
		e := parseEnvelope(l.Msg)
		if l.Dir == acptest.ClientToAgent {
			if e.Method != nil && e.ID != nil {
				pending[string(e.ID)] = *e.Method
			}
			continue
		}
		method := ""
		if e.Method == nil && e.ID != nil {
			method = pending[string(e.ID)]
		}
		if err := v.ValidateMessage(l.Msg, true, method); err != nil {
			errs = append(errs, fmt.Errorf("message %d %s: %w", i, l.Msg, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}
