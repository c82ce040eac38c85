package task_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/internal/looptest"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/script"
	"github.com/dsh-tools/dshd/model/task"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/tools"
)

// harness is a bridge agent running the built-in loop over a scripted
// model, with the first-party tools and the task tool, and a test client
// connected over an in-memory pipe. Tools use the local disk (the client
// offers no fs or terminals).
type harness struct {
	t        *testing.T
	provider *looptest.Recorder
	agent    *bridge.Agent
	client   *acptest.Client
	conn     *acp.AgentConn
	cwd      string
	stateDir string
	init     *acp.InitializeResponse

	mu    sync.Mutex
	asked []string // titles of the permission requests
}

func (h *harness) askedTitles() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.asked...)
}

type harnessOptions struct {
	script   string
	maxDepth int
	stateDir string
	cwd      string
}

func newHarness(t *testing.T, ho harnessOptions) *harness {
	t.Helper()
	s, err := script.Parse([]byte(ho.script))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	prov := &looptest.Recorder{Provider: script.New(s)}
	reg := registry.New()
	if err := reg.SetGlobal(tools.Builtin(tools.Options{})...); err != nil {
		t.Fatal(err)
	}
	loop := model.New(model.Options{Provider: prov, Registry: reg, Logger: looptest.Quiet()})
	var agent *bridge.Agent
	taskTool := func() *registry.Definition {
		return task.New(task.Options{Loop: loop, Registry: reg, Pipeline: agent.Pipeline(), MaxDepth: ho.maxDepth})
	}
	if ho.stateDir == "" {
		ho.stateDir = t.TempDir()
	}
	agent = bridge.New(bridge.Options{
		Loop: loop, Registry: reg, StateDir: ho.stateDir, Prompt: loop.PromptCapabilities(),
		Logger: looptest.Quiet(), StructuredTurns: true,
		SessionTools: func(bridge.SessionInfo) []*registry.Definition { return []*registry.Definition{taskTool()} },
	})
	h := &harness{t: t, provider: prov, agent: agent, stateDir: ho.stateDir}
	cl := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		if req.ToolCall.Title != nil {
			h.mu.Lock()
			h.asked = append(h.asked, *req.ToolCall.Title)
			h.mu.Unlock()
		}
		return acptest.AllowOnce(ctx, req)
	}}
	cwd := ho.cwd
	if cwd == "" {
		cwd = t.TempDir()
	}
	h.client, h.cwd = cl, cwd
	h.conn, h.init = looptest.Connect(t, agent, cl)
	return h
}

func (h *harness) newSession() string { return looptest.NewSession(h.t, h.conn, h.cwd) }

func (h *harness) prompt(ctx context.Context, session, text string, meta acp.Meta) (*acp.PromptResponse, error) {
	return h.conn.Prompt(ctx, &acp.PromptRequest{SessionID: session, Prompt: []acp.ContentBlock{acp.Text(text)}, Meta: meta})
}

// validate checks every message of the connection against the schema.
func (h *harness) validate() { looptest.Validate(h.t, h.client) }

// card is what the client saw of one tool call.
type card struct {
	id, title, status string
	content           []string
}

// cards folds the tool_call and tool_call_update notifications into the
// final state of each call, in announcement order.
func cards(ns []acp.SessionNotification) []*card {
	var order []*card
	byID := map[string]*card{}
	texts := func(cs []acp.ToolCallContent) []string {
		var out []string
		b, _ := json.Marshal(cs)
		var raw []struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(b, &raw)
		for _, r := range raw {
			out = append(out, r.Content.Text)
		}
		return out
	}
	for _, n := range ns {
		switch u := n.Update.Value.(type) {
		case *acp.ToolCall:
			c := &card{id: u.ToolCallID, title: u.Title, status: string(u.Status), content: texts(u.Content)}
			byID[c.id] = c
			order = append(order, c)
		case *acp.ToolCallUpdate:
			c := byID[u.ToolCallID]
			if c == nil {
				continue
			}
			if u.Title != nil {
				c.title = *u.Title
			}
			if u.Status != nil {
				c.status = string(*u.Status)
			}
			if u.Content != nil {
				c.content = texts(u.Content)
			}
		}
	}
	return order
}

func findCard(cs []*card, pred func(*card) bool) *card {
	for _, c := range cs {
		if pred(c) {
			return c
		}
	}
	return nil
}

// logRecords reads a session's durable log.
func logRecords(t *testing.T, dir, session string) []map[string]json.RawMessage {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, session+"*"))
	if len(matches) != 1 {
		t.Fatalf("session log of %s: found %v", session, matches)
	}
	f, err := os.Open(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, rec)
	}
	return out
}

// firstPrompt is the first text of a request's first message (a prompt
// turn's message also carries the mode reminder after it).
func firstPrompt(req *llm.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	for _, p := range req.Messages[0].Parts {
		if t, ok := p.(*llm.Text); ok {
			return t.Text
		}
	}
	return ""
}

func hasPrefix(s, p string) bool { return strings.HasPrefix(s, p) }
