package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp/acptest"
)

// rawMsg is any JSON-RPC message, decoded just enough to route it.
type rawMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (m *rawMsg) sessionID() string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.SessionID
}

// wire is a raw newline-delimited JSON-RPC client that writes whatever it
// is told, one message per line, and accounts for every response by id.
type wire struct {
	wmu sync.Mutex
	w   io.Writer

	mu         sync.Mutex
	must       map[string]bool // ids of well-formed requests: answered exactly once
	sentLines  map[string]string
	maybe      map[string]bool // ids inside malformed messages: answered at most once
	answers    map[string]int  // id → responses seen
	unexpected []string        // responses to ids never sent in a request
	nullErrors int
	created    []string // sessions the responses created (or loaded), to close at the end
	waiters    map[string]chan rawMsg
	good       string          // the well-behaved session, whose messages are recorded
	goodIDs    map[string]bool // ids of the well-behaved client's own requests
	entries    []acptest.Entry // the well-behaved session's transcript
	onRequest  func(m rawMsg, line []byte)
	readErr    error
	answered   chan struct{} // closed at the next response read
	done       chan struct{}
}

func newWire(w io.Writer, r io.Reader) *wire {
	c := &wire{
		w: w, must: map[string]bool{}, sentLines: map[string]string{}, maybe: map[string]bool{}, answers: map[string]int{},
		waiters: map[string]chan rawMsg{}, goodIDs: map[string]bool{}, answered: make(chan struct{}), done: make(chan struct{}),
	}
	go c.read(r)
	return c
}

func (c *wire) read(r io.Reader) {
	defer close(c.done)
	in := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(bytes.TrimSpace(line))
		}
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			return
		}
	}
}

func (c *wire) dispatch(line []byte) {
	var m rawMsg
	if err := json.Unmarshal(line, &m); err != nil {
		c.mu.Lock()
		c.unexpected = append(c.unexpected, "undecodable line from the daemon: "+abbrev(line))
		c.mu.Unlock()
		return
	}
	if m.Method != "" {
		c.mu.Lock()
		good := c.good != "" && m.sessionID() == c.good
		if good {
			c.entries = append(c.entries, acptest.Entry{Dir: acptest.AgentToClient, Msg: bytes.Clone(line)})
		}
		on := c.onRequest
		c.mu.Unlock()
		if len(m.ID) > 0 && on != nil {
			on(m, line)
		}
		return
	}
	id := string(m.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case id == "" || id == "null":
		c.nullErrors++
		return
	case !c.must[id] && !c.maybe[id]:
		c.unexpected = append(c.unexpected, "response to an id never sent in a request: "+abbrev(line))
	}
	c.answers[id]++
	close(c.answered)
	c.answered = make(chan struct{})
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(m.Result, &created) == nil && created.SessionID != "" && created.SessionID != c.good {
		c.created = append(c.created, created.SessionID)
	}
	if c.goodIDs[id] {
		c.entries = append(c.entries, acptest.Entry{Dir: acptest.AgentToClient, Msg: bytes.Clone(line)})
	}
	if ch, ok := c.waiters[id]; ok {
		delete(c.waiters, id)
		ch <- m
	}
}

// waitAnswers waits until cond, called with c.mu held, holds; every
// response read wakes it. It reports false when d passed first (a failure
// deadline).
func (c *wire) waitAnswers(d time.Duration, cond func() bool) bool {
	deadline := time.After(d)
	for {
		c.mu.Lock()
		ok, answered := cond(), c.answered
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-answered:
		case <-deadline:
			return false
		}
	}
}

func abbrev(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// write sends one line (a newline is appended).
func (c *wire) write(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(line, '\n'))
	return err
}

// request sends a well-formed request; id is the JSON text of its id.
// good marks the well-behaved client's requests (recorded for the schema
// check). The returned channel receives the response.
func (c *wire) request(id, method string, params any, good bool) (<-chan rawMsg, error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params}
	line, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	ch := make(chan rawMsg, 1)
	c.mu.Lock()
	c.must[id] = true
	c.waiters[id] = ch
	if good {
		c.goodIDs[id] = true
		c.entries = append(c.entries, acptest.Entry{Dir: acptest.ClientToAgent, Msg: line})
	}
	c.mu.Unlock()
	return ch, c.write(line)
}

// call is request + wait.
func (c *wire) call(t *testing.T, id, method string, params any, good bool) rawMsg {
	t.Helper()
	ch, err := c.request(id, method, params, good)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	select {
	case m := <-ch:
		return m
	case <-time.After(60 * time.Second):
		t.Fatalf("%s (id %s) never answered", method, id)
		return rawMsg{}
	}
}

// answer sends a response to an agent request; good ones are recorded.
func (c *wire) answer(id json.RawMessage, result any, good bool) error {
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if err != nil {
		return err
	}
	if good {
		c.mu.Lock()
		c.entries = append(c.entries, acptest.Entry{Dir: acptest.ClientToAgent, Msg: line})
		c.mu.Unlock()
	}
	return c.write(line)
}

// hostile builds the hostile client's messages.
type hostile struct {
	rng      *rand.Rand
	next     int
	ws       string
	sessions []string // the hostile client's own sessions
}

func (h *hostile) id() string {
	h.next++
	if h.next%3 == 0 { // numeric ids too, far from the daemon's own
		return fmt.Sprint(7_000_000_000 + h.next)
	}
	return fmt.Sprintf(`"h-%d"`, h.next)
}

func (h *hostile) session() string {
	if len(h.sessions) == 0 || h.rng.IntN(4) == 0 {
		return fmt.Sprintf("no-such-session-%d", h.rng.IntN(100))
	}
	return h.sessions[h.rng.IntN(len(h.sessions))]
}

func (h *hostile) garbage(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		for {
			b[i] = byte(h.rng.IntN(256))
			if b[i] != '\n' {
				break
			}
		}
	}
	return b
}

// kind of a hostile message, for the accounting.
const (
	noAnswer = iota // a notification or a response: must not be answered by id
	mustAnswer
	maybeAnswer
)

// message returns one random hostile line, its id (JSON text, if any) and
// whether the daemon must answer it.
func (h *hostile) message() (line []byte, id string, kind int) {
	req := func(method string, params any) ([]byte, string, int) {
		id := h.id()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
		return b, id, mustAnswer
	}
	note := func(method string, params any) ([]byte, string, int) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
		return b, "", noAnswer
	}
	switch h.rng.IntN(24) {
	case 0: // random bytes
		return h.garbage(1 + h.rng.IntN(300)), "", noAnswer
	case 1: // a truncated request
		b, _, _ := req("session/prompt", map[string]any{"sessionId": h.session(), "prompt": []any{map[string]any{"type": "text", "text": "hostile"}}})
		return b[:h.rng.IntN(len(b))], "", noAnswer
	case 2:
		return req(fmt.Sprintf("x/unknown-%d", h.rng.IntN(10)), map[string]any{})
	case 3:
		return note("x/unknown-notification", []int{1, 2})
	case 4: // wrong params
		return req("session/new", map[string]any{"cwd": 5, "mcpServers": "none"})
	case 5:
		return req("session/prompt", map[string]any{"sessionId": 7, "prompt": "text"})
	case 6:
		return req("session/load", []any{1, 2, 3})
	case 7:
		return req("session/set_mode", map[string]any{"sessionId": h.session(), "modeId": "godMode"})
	case 8: // out of order: work on sessions that do not exist (or not yet)
		return req("session/prompt", map[string]any{"sessionId": h.session(), "prompt": []any{map[string]any{"type": "text", "text": "hostile"}}})
	case 9:
		return req("session/load", map[string]any{"sessionId": fmt.Sprintf("nope-%d", h.rng.IntN(10)), "cwd": h.ws, "mcpServers": []any{}})
	case 10: // responses to requests never made
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("never-%d", h.rng.IntN(1000)), "result": map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}})
		return b, "", noAnswer
	case 11:
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9_000_000_000 + h.rng.IntN(1000), "error": map[string]any{"code": -32000, "message": "nobody asked"}})
		return b, "", noAnswer
	case 12: // cancels at random points
		return note("session/cancel", map[string]any{"sessionId": h.session()})
	case 13:
		return note("$/cancel_request", map[string]any{"requestId": fmt.Sprintf("h-%d", h.rng.IntN(h.next+1))})
	case 14: // prompts on (likely) busy sessions
		return req("session/prompt", map[string]any{"sessionId": h.session(), "prompt": []any{map[string]any{"type": "text", "text": "hostile again"}}})
	case 15: // envelopes that are wrong with an id inside
		id := h.id()
		forms := []string{
			`{"jsonrpc":"1.0","id":%s,"method":"session/new"}`,
			`{"jsonrpc":"2.0","id":%s}`,
			`{"jsonrpc":"2.0","id":%s,"method":42}`,
			`{"jsonrpc":"2.0","id":%s,"method":"session/new","params":"cwd"}`,
			`{"jsonrpc":"2.0","id":%s,"id":%[1]s,"method":"initialize","method":"x/dup","params":{}}`,
			`{"jsonrpc":"2.0","id":%s,"method":"session/new","params":{"cwd":"/tmp","cwd":"relative","mcpServers":[]}}`,
		}
		return fmt.Appendf(nil, forms[h.rng.IntN(len(forms))], id), id, maybeAnswer
	case 16: // ids and values JSON-RPC cannot carry
		forms := []string{
			`{"jsonrpc":"2.0","id":-1,"method":"initialize","params":{}}`,
			`{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{}}`,
			`{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{}}`,
			`{"jsonrpc":"2.0","id":1e400,"method":"initialize","params":{}}`,
			`{"jsonrpc":"2.0","method":"session/new","params":{"cwd":NaN}}`,
			`[{"jsonrpc":"2.0","id":"batch","method":"initialize","params":{}}]`,
			`[]`, `null`, `42`, `"text"`, `{}`,
			"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
			"{\"jsonrpc\":\"2.0\",\"method\":\"x/\xff\xfe\"}",
			strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		}
		return []byte(forms[h.rng.IntN(len(forms))]), "", noAnswer
	case 17: // a second initialize, mid-stream
		return req("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	case 18:
		return req("session/list", map[string]any{"cursor": "garbage-cursor"})
	case 19:
		return req("session/resume", map[string]any{"sessionId": h.session(), "cwd": "relative/path"})
	case 20:
		return req("session/new", map[string]any{"cwd": "/nonexistent/dir/" + fmt.Sprint(h.rng.IntN(10)), "mcpServers": []any{map[string]any{"name": "x", "command": "/nonexistent/mcp", "args": []any{}, "env": []any{}}}})
	case 21:
		return req("session/set_config_option", map[string]any{"sessionId": h.session(), "configId": "mode", "value": []any{}})
	case 22:
		return req("authenticate", map[string]any{"methodId": "none"})
	default:
		return req("session/delete", map[string]any{"sessionId": fmt.Sprintf("nope-%d", h.rng.IntN(10))})
	}
}

// hostileScript: the well-behaved session's turn reads, writes (asks) and
// plans; the hostile sessions' turns write (asks, answered badly) and wait.
func hostileScript() script {
	s := script{Turns: []turn{{Match: "^good$", Responses: []response{
		{Text: "good start", ToolCalls: []toolCall{
			{ID: "good-read", Name: "read", Arguments: map[string]any{"path": "small.txt"}},
			{ID: "good-write", Name: "write", Arguments: map[string]any{"path": "good.txt", "content": "good content\n"}},
			{ID: "good-plan", Name: "todo", Arguments: map[string]any{"todos": []any{map[string]any{"content": "stay calm", "status": "completed"}}}},
		}},
		{DelayMs: 100, Text: "good end"},
	}}}}
	for range 40 {
		s.Turns = append(s.Turns, turn{Match: "^hostile", Responses: []response{
			{Text: "h", ToolCalls: []toolCall{{ID: "hw", Name: "write", Arguments: map[string]any{"path": "hostile.txt", "content": "h"}}}},
			{DelayMs: 300, Text: "hostile done"},
		}})
	}
	return s
}

// TestFaultHostileClient floods one connection with thousands of hostile
// messages while a well-behaved session on the same connection runs a turn
// that reads, writes after a permission request (during which prompts to
// the busy session are refused) and plans. The daemon must not crash or
// hang, must answer every well-formed request exactly once and nothing
// else, the good turn must complete correctly with every message valid
// against the schema, and the daemon's goroutines and file descriptors
// must return to their baseline (after initialize) once every session is
// closed.
func TestFaultHostileClient(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 600
	}
	f := newFixture(t, hostileScript())
	if err := os.WriteFile(filepath.Join(f.ws, "small.txt"), []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := f.start(t)
	c := newWire(p.stdin, p.stdout)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DSHD_E2E_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d", seed)
	h := &hostile{rng: rand.New(rand.NewPCG(seed, 1)), ws: f.ws}

	// The well-behaved client starts.
	if m := c.call(t, `"g-init"`, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, true); m.Error != nil {
		t.Fatalf("initialize: %+v", m.Error)
	}
	stats := c.stats()
	base := statsBaseline(t, stats)
	m := c.call(t, `"g-new"`, "session/new", map[string]any{"cwd": f.ws, "mcpServers": []any{}}, true)
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.SessionID == "" {
		t.Fatalf("session/new: %+v %s", m.Error, m.Result)
	}
	good := created.SessionID
	c.mu.Lock()
	c.good = good
	c.mu.Unlock()

	// Agent requests: the good session's permission request is answered
	// after prompts to the busy session were refused; the hostile sessions'
	// ones get cancelled outcomes, errors, nonsense or no answer at all.
	askRng := rand.New(rand.NewPCG(seed, 2))
	var askMu sync.Mutex
	goodAsked := make(chan rawMsg, 1)
	onRequest := func(m rawMsg, line []byte) {
		if m.sessionID() == good {
			goodAsked <- m
			return
		}
		askMu.Lock()
		r := askRng.IntN(5)
		askMu.Unlock()
		switch r {
		case 0:
			_ = c.answer(m.ID, map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, false)
		case 1:
			_ = c.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"client exploded"}}`, m.ID))
		case 2:
			_ = c.answer(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "no-such-option"}}, false)
		case 3:
			_ = c.answer(m.ID, []int{1, 2, 3}, false)
		default: // never answered: the session's cancel or close must end it
		}
	}
	c.mu.Lock()
	c.onRequest = onRequest
	c.mu.Unlock()

	// The hostile client opens its own sessions, then floods.
	for i := range 5 {
		m := c.call(t, fmt.Sprintf(`"hs-%d"`, i), "session/new", map[string]any{"cwd": f.ws, "mcpServers": []any{}}, false)
		var s struct {
			SessionID string `json:"sessionId"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &s) != nil {
			t.Fatalf("hostile session/new: %+v", m.Error)
		}
		h.sessions = append(h.sessions, s.SessionID)
	}
	flooded := make(chan error, 1)
	go func() {
		flooded <- func() error {
			for i := range n {
				if i == n/3 || i == 2*n/3 { // two oversized (16 MiB) lines
					big := strings.Repeat("A", 16<<20)
					id := h.id()
					if _, err := c.request(id, "session/prompt", map[string]any{"sessionId": "no-such-session", "prompt": []any{map[string]any{"type": "text", "text": big}}}, false); err != nil {
						return err
					}
					if err := c.write([]byte(`{"jsonrpc":"2.0","id":"big-garbage","method":"x","params":"` + big)); err != nil {
						return err
					}
				}
				line, id, kind := h.message()
				c.mu.Lock()
				switch kind {
				case mustAnswer:
					c.must[id] = true
					c.sentLines[id] = abbrev(line)
				case maybeAnswer:
					c.maybe[id] = true
				}
				c.mu.Unlock()
				if err := c.write(line); err != nil {
					return err
				}
			}
			return nil
		}()
	}()

	// Meanwhile the good turn.
	goodDone, err := c.request(`"g-prompt"`, "session/prompt", map[string]any{"sessionId": good, "prompt": []any{map[string]any{"type": "text", "text": "good"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ask := <-goodAsked:
		// The session is busy until this request is answered.
		for i := range 10 {
			m := c.call(t, fmt.Sprintf(`"busy-%d"`, i), "session/prompt", map[string]any{"sessionId": good, "prompt": []any{map[string]any{"type": "text", "text": "good"}}}, false)
			if m.Error == nil {
				t.Errorf("a prompt on the busy good session was accepted: %s", m.Result)
			}
		}
		var req struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		_ = json.Unmarshal(ask.Params, &req)
		option := ""
		for _, o := range req.Options {
			if o.Kind == "allow_once" {
				option = o.OptionID
			}
		}
		if err := c.answer(ask.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": option}}, true); err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the good session never asked to write")
	}
	select {
	case m := <-goodDone:
		var resp struct {
			StopReason string `json:"stopReason"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &resp) != nil || resp.StopReason != "end_turn" {
			t.Errorf("good prompt: %+v %s", m.Error, m.Result)
		}
	case <-time.After(120 * time.Second):
		t.Fatal("the good turn never ended")
	}
	if err := <-flooded; err != nil {
		t.Fatalf("flooding: %v (daemon running: %v)", err, p.running())
	}

	// Some hostile turns wait for permission answers that never come (a
	// user who walked away): cancelling the hostile sessions ends them.
	c.mu.Lock()
	hostileSessions := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(c.created), h.sessions...))))
	c.mu.Unlock()
	for _, s := range hostileSessions {
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": s}})
		if err := c.write(line); err != nil {
			t.Fatal(err)
		}
	}

	// Every well-formed request is answered exactly once, nothing else.
	if !c.waitAnswers(60*time.Second, func() bool {
		for id := range c.must {
			if c.answers[id] == 0 {
				return false
			}
		}
		return true
	}) {
		c.mu.Lock()
		var missing []string
		for id := range c.must {
			if c.answers[id] == 0 {
				missing = append(missing, id)
			}
		}
		c.mu.Unlock()
		t.Errorf("%d requests never answered (daemon running: %v)", len(missing), p.running())
		for _, id := range missing[:min(10, len(missing))] {
			t.Errorf("never answered: %s", c.sentLines[id])
		}
	}
	c.mu.Lock()
	for id, n := range c.answers {
		if n > 1 {
			t.Errorf("id %s answered %d times", id, n)
		}
	}
	for _, u := range c.unexpected {
		t.Error(u)
	}
	t.Logf("%d hostile messages, %d requests that must be answered, %d id-less error responses", n, len(c.must), c.nullErrors)
	c.mu.Unlock()
	if !p.running() {
		t.Fatalf("the daemon died: %v", p.err)
	}

	// The good session's outcome.
	st := toolStatusesRaw(c.snapshotEntries(), good)
	for _, id := range []string{"good-read", "good-write", "good-plan"} {
		if st[id] != "completed" {
			t.Errorf("good tool call %s ended %q", id, st[id])
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, "good.txt")); err != nil || string(b) != "good content\n" {
		t.Errorf("good.txt = %q, %v", b, err)
	}
	if v, err := acptest.LoadValidator(); err == nil {
		if err := acptest.ValidateTranscript(v, c.snapshotEntries()); err != nil {
			t.Errorf("the good session's messages: %v", err)
		}
	} else {
		t.Logf("ACP schema checks skipped: %v", err)
	}

	// Closing every session, the good one's too, brings the goroutines
	// and descriptors back to what they were after initialize.
	// (c.created may hold the good session too: its session/new response
	// can be read before c.good is set.)
	c.mu.Lock() // every answer is in: the complete list of sessions opened
	all := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(c.created), append(h.sessions, good)...))))
	c.mu.Unlock()
	for i, s := range all {
		if m := c.call(t, fmt.Sprintf(`"close-%d"`, i), "session/close", map[string]any{"sessionId": s}, false); m.Error != nil {
			t.Errorf("session/close %s: %+v", s, m.Error)
		}
	}
	if now := expectBaseline(t, "hostile client", stats, base); now.FDs != base.FDs {
		logFDs(t, p.pid())
	}

	_ = p.stdin.Close()
	if !p.waitExit(5 * time.Second) {
		t.Fatal("the daemon did not exit after stdin closed")
	}
}

func (c *wire) snapshotEntries() []acptest.Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acptest.Entry(nil), c.entries...)
}

// toolStatusesRaw maps the tool call ids of sid's recorded updates to
// their last status.
func toolStatusesRaw(entries []acptest.Entry, sid string) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					ToolCallID string `json:"toolCallId"`
					Status     string `json:"status"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(e.Msg, &m) != nil || m.Method != "session/update" || m.Params.SessionID != sid {
			continue
		}
		if u := m.Params.Update; u.ToolCallID != "" && u.Status != "" {
			out[u.ToolCallID] = u.Status
		}
	}
	return out
}

func logFDs(t *testing.T, pid int) {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, e := range ents {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		t.Logf("fd %s -> %s", e.Name(), target)
	}
}
