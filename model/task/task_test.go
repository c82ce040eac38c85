package task_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/model/internal/looptest"
	"github.com/dsh-tools/dshd/model/task"
	"github.com/dsh-tools/dshd/registry"
)

// The scripted model is stateless: it finds a request's script turn from
// the request's first user message. A subagent's requests start with the
// task prompt, so every test script has one turn matching the user's prompt
// and one per subagent prompt.

const restrictedScript = `{"turns": [
  {"match": "^Fix the greeting", "responses": [
    {"toolCalls": [{"id": "t1", "name": "task", "arguments": {"prompt": "Subagent: fix hello.txt", "name": "fixer", "tools": {"allow": ["read", "edit"]}}}]},
    {"text": "The subagent fixed it."}
  ]},
  {"match": "^Subagent: fix hello.txt", "responses": [
    {"toolCalls": [{"id": "r", "name": "read", "arguments": {"path": "hello.txt"}}]},
    {"toolCalls": [{"id": "b", "name": "bash", "arguments": {"command": "echo hi"}}]},
    {"toolCalls": [{"id": "e", "name": "edit", "arguments": {"path": "hello.txt", "old": "helo", "new": "hello"}}]},
    {"text": "Fixed the typo in hello.txt."}
  ]}
]}`

func TestSubagentRestrictedTools(t *testing.T) {
	h := newHarness(t, harnessOptions{script: restrictedScript})
	if err := os.WriteFile(filepath.Join(h.cwd, "hello.txt"), []byte("helo world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := h.newSession()
	resp, err := h.prompt(context.Background(), sid, "Fix the greeting", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	if b, _ := os.ReadFile(filepath.Join(h.cwd, "hello.txt")); string(b) != "hello world\n" {
		t.Fatalf("hello.txt = %q, want the subagent's edit", b)
	}

	// The subagent saw only its subset (plus nothing of the parent's).
	var sub []string
	for _, req := range h.provider.Requests() {
		if firstPrompt(req) == "Subagent: fix hello.txt" && sub == nil {
			for _, tool := range req.Tools {
				sub = append(sub, tool.Name)
			}
		}
	}
	if strings.Join(sub, ",") != "edit,read" {
		t.Fatalf("subagent tools = %v, want [edit read]", sub)
	}

	// The parent got the subagent's answer as the task result.
	reqs := h.provider.Requests()
	last := reqs[len(reqs)-1]
	if firstPrompt(last) != "Fix the greeting" {
		t.Fatalf("last request is not the parent's: %q", firstPrompt(last))
	}
	res := looptest.ToolResults(last)
	if len(res) != 1 || res[0].IsError || looptest.ResultText(res[0]) != "Fixed the typo in hello.txt." {
		t.Fatalf("task result = %+v", res)
	}

	// In the editor: the subagent's calls are the session's, titled and
	// numbered as the task's; the call outside the subset failed.
	cs := cards(h.client.Updates())
	taskCard := findCard(cs, func(c *card) bool { return c.id == "t1" })
	if taskCard == nil || taskCard.title != "task ‹fixer›" || taskCard.status != "completed" {
		t.Fatalf("task card = %+v", taskCard)
	}
	if len(taskCard.content) != 1 || taskCard.content[0] != "Fixed the typo in hello.txt." {
		t.Fatalf("task result card = %q", taskCard.content)
	}
	for _, id := range []string{"t1/r", "t1/b", "t1/e"} {
		c := findCard(cs, func(c *card) bool { return c.id == id })
		if c == nil || !hasPrefix(c.title, "task ‹fixer›: ") {
			t.Fatalf("card %s = %+v, want a title prefixed with the task", id, c)
		}
	}
	if c := findCard(cs, func(c *card) bool { return c.id == "t1/b" }); c.status != "failed" || !strings.Contains(strings.Join(c.content, ""), "bash") {
		t.Fatalf("bash outside the subset = %+v, want failed (unknown tool)", c)
	}
	if c := findCard(cs, func(c *card) bool { return c.id == "t1/e" }); c.status != "completed" {
		t.Fatalf("edit = %+v", c)
	}
	// The permission request for the subagent's edit says whose it is.
	if asked := h.askedTitles(); len(asked) != 1 || !hasPrefix(asked[0], "task ‹fixer›: ") {
		t.Fatalf("permission requests = %q, want the edit's, prefixed", asked)
	}
	// The task card showed progress while the subagent worked.
	progressed := false
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.ToolCallID == "t1" && u.Status == nil && len(u.Content) > 0 {
			b, _ := json.Marshal(u.Content)
			progressed = progressed || strings.Contains(string(b), "✓ read")
		}
	}
	if !progressed {
		t.Fatal("the task card never showed the subagent's progress")
	}
	h.validate()

	// Durable: the child calls are recorded with their parent call, and a
	// second daemon replays them as shown.
	children := 0
	taskToken := ""
	for _, rec := range logRecords(t, h.stateDir, sid) {
		var kind string
		_ = json.Unmarshal(rec["t"], &kind)
		if kind != "tool/call" {
			continue
		}
		var ev struct {
			CallID, Token, Parent, ParentCall string
		}
		if err := json.Unmarshal(rec["d"], &ev); err != nil {
			t.Fatalf("tool/call record %s: %v", rec["d"], err)
		}
		if ev.CallID == "t1" {
			taskToken = ev.Token
		}
		if strings.HasPrefix(ev.CallID, "t1/") {
			children++
			if ev.ParentCall != "t1" || ev.Parent == "" {
				t.Fatalf("child record %+v: want parentCall t1 and a parent token", ev)
			}
			if taskToken != "" && ev.Parent != taskToken {
				t.Fatalf("child record %+v: parent token is not the task's %s", ev, taskToken)
			}
		}
	}
	if children != 3 {
		t.Fatalf("%d child tool/call records, want 3", children)
	}

	// The first daemon lets go of the session (one writer per session).
	if _, err := h.conn.CloseSession(context.Background(), &acp.CloseSessionRequest{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, harnessOptions{script: restrictedScript, stateDir: h.stateDir, cwd: h.cwd})
	if _, err := h2.conn.LoadSession(context.Background(), &acp.LoadSessionRequest{SessionID: sid, Cwd: h.cwd, MCPServers: []acp.MCPServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	replayed := cards(h2.client.Updates())
	if len(replayed) != len(cs) {
		t.Fatalf("replayed %d cards, shown %d", len(replayed), len(cs))
	}
	for i := range cs {
		if replayed[i].id != cs[i].id || replayed[i].title != cs[i].title || replayed[i].status != cs[i].status {
			t.Fatalf("replayed card %d = %+v, shown %+v", i, replayed[i], cs[i])
		}
	}
	h2.validate()
}

const structuredScript = `{"turns": [
  {"match": "^Count the files", "responses": [
    {"toolCalls": [{"id": "t1", "name": "task", "arguments": {"prompt": "Subagent: count", "name": "counter",
      "outputSchema": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 0}, "names": {"type": "array", "items": {"type": "string"}}}, "required": ["count", "names"], "additionalProperties": false}}}]},
    {"text": "There are 2 files."}
  ]},
  {"match": "^Subagent: count", "responses": [
    {"toolCalls": [{"id": "f1", "name": "final_answer", "arguments": {"count": -1, "extra": true}}]},
    {"toolCalls": [{"id": "f2", "name": "final_answer", "arguments": {"count": 2, "names": ["a", "b"]}}]}
  ]}
]}`

func TestSubagentStructuredRetry(t *testing.T) {
	h := newHarness(t, harnessOptions{script: structuredScript})
	sid := h.newSession()
	if _, err := h.prompt(context.Background(), sid, "Count the files", nil); err != nil {
		t.Fatal(err)
	}
	var subReqs, parentReqs []*struct{}
	var retry string
	var finalParams json.RawMessage
	for _, req := range h.provider.Requests() {
		switch firstPrompt(req) {
		case "Subagent: count":
			subReqs = append(subReqs, nil)
			for _, tool := range req.Tools {
				if tool.Name == "final_answer" {
					finalParams = tool.Parameters
				}
			}
			if rs := looptest.ToolResults(req); len(rs) == 1 {
				if !rs[0].IsError {
					t.Fatalf("the invalid answer was accepted: %+v", rs[0])
				}
				retry = looptest.ResultText(rs[0])
			}
		case "Count the files":
			parentReqs = append(parentReqs, nil)
		}
	}
	if len(subReqs) != 2 || len(parentReqs) != 2 {
		t.Fatalf("%d subagent and %d parent requests, want 2 and 2", len(subReqs), len(parentReqs))
	}
	// Every violation went back to the model.
	for _, want := range []string{"/count: minimum", "required", "names", "additionalProperties", "extra", "attempt 1 of 3"} {
		if !strings.Contains(retry, want) {
			t.Errorf("retry feedback lacks %q:\n%s", want, retry)
		}
	}
	// The schema travelled verbatim.
	if !strings.Contains(string(finalParams), `"minimum":0`) {
		t.Fatalf("final_answer parameters = %s", finalParams)
	}
	reqs := h.provider.Requests()
	res := looptest.ToolResults(reqs[len(reqs)-1])
	if len(res) != 1 || res[0].IsError || looptest.ResultText(res[0]) != `{"count":2,"names":["a","b"]}` {
		t.Fatalf("task result = %+v %q", res, looptest.ResultText(res[0]))
	}
	// The structured value is the task's Structured result (rawOutput).
	found := false
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.ToolCallID == "t1" && u.Status != nil && *u.Status == acp.ToolCallCompleted {
			var out struct {
				Structured json.RawMessage `json:"structured"`
			}
			_ = json.Unmarshal(u.RawOutput, &out)
			found = string(out.Structured) == `{"count":2,"names":["a","b"]}`
		}
	}
	if !found {
		t.Fatal("the task's rawOutput lacks the structured value")
	}
	h.validate()
}

const failingStructuredScript = `{"turns": [
  {"match": "^Classify", "responses": [
    {"toolCalls": [{"id": "t1", "name": "task", "arguments": {"prompt": "Subagent: classify", "outputSchema": {"type": "object", "properties": {"kind": {"enum": ["bug", "feature"]}}, "required": ["kind"]}}}]},
    {"text": "It failed."}
  ]},
  {"match": "^Subagent: classify", "responses": [
    {"toolCalls": [{"name": "final_answer", "arguments": {"kind": "question"}}]},
    {"text": "I think it is a question."}
  ]},
  {"match": "^You ended your turn without calling final_answer", "responses": [
    {"toolCalls": [{"name": "final_answer", "arguments": {}}]}
  ]}
]}`

// The reminder after a text-only answer is a new user message, so the
// scripted model answers it from the turn matching the reminder.
func TestSubagentStructuredGivesUp(t *testing.T) {
	h := newHarness(t, harnessOptions{script: failingStructuredScript})
	sid := h.newSession()
	if _, err := h.prompt(context.Background(), sid, "Classify", nil); err != nil {
		t.Fatal(err)
	}
	reqs := h.provider.Requests()
	res := looptest.ToolResults(reqs[len(reqs)-1])
	if len(res) != 1 || !res[0].IsError || !strings.Contains(looptest.ResultText(res[0]), "after 3 attempts") || !strings.Contains(looptest.ResultText(res[0]), `missing required property "kind"`) {
		t.Fatalf("task result = %q", looptest.ResultText(res[0]))
	}
	var errOut struct {
		Error registry.ToolError `json:"error"`
	}
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && u.ToolCallID == "t1" && u.Status != nil {
			_ = json.Unmarshal(u.RawOutput, &errOut)
		}
	}
	if errOut.Error.Code != task.CodeStructuredOutput || !strings.Contains(string(errOut.Error.Details), `"violations"`) {
		t.Fatalf("structured error = %+v", errOut.Error)
	}
	h.validate()
}

const unsupportedScript = `{"turns": [
  {"match": "^Summarise", "responses": [
    {"toolCalls": [{"id": "t1", "name": "task", "arguments": {"prompt": "Subagent: summarise", "outputSchema": {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}]}, "b": {"type": "string", "format": "email"}}, "$ref": "#/x"}}}]},
    {"text": "Could not start it."}
  ]},
  {"match": "^Subagent", "responses": [{"text": "must never run"}]}
]}`

func TestSubagentUnsupportedSchema(t *testing.T) {
	h := newHarness(t, harnessOptions{script: unsupportedScript})
	sid := h.newSession()
	if _, err := h.prompt(context.Background(), sid, "Summarise", nil); err != nil {
		t.Fatal(err)
	}
	for _, req := range h.provider.Requests() {
		if firstPrompt(req) != "Summarise" {
			t.Fatalf("a subagent request was made: %q", firstPrompt(req))
		}
	}
	reqs := h.provider.Requests()
	res := looptest.ToolResults(reqs[len(reqs)-1])
	text := looptest.ResultText(res[0])
	if !res[0].IsError {
		t.Fatalf("unsupported schema accepted: %q", text)
	}
	for _, want := range []string{"anyOf", "format", "$ref"} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks the %s violation:\n%s", want, text)
		}
	}
	h.validate()
}

const nestingScript = `{"turns": [
  {"match": "^Go deep", "responses": [
    {"toolCalls": [{"id": "t1", "name": "task", "arguments": {"prompt": "Level 1"}}]},
    {"text": "done"}
  ]},
  {"match": "^Level 1", "responses": [
    {"toolCalls": [{"id": "t2", "name": "task", "arguments": {"prompt": "Level 2"}}]},
    {"text": "level 1 done"}
  ]},
  {"match": "^Level 2", "responses": [{"text": "must never run"}]}
]}`

func TestSubagentNestingTooDeep(t *testing.T) {
	h := newHarness(t, harnessOptions{script: nestingScript, maxDepth: 1})
	sid := h.newSession()
	if _, err := h.prompt(context.Background(), sid, "Go deep", nil); err != nil {
		t.Fatal(err)
	}
	var nested *string
	for _, req := range h.provider.Requests() {
		if firstPrompt(req) == "Level 2" {
			t.Fatal("the too-deep subagent made a model request")
		}
		if firstPrompt(req) == "Level 1" {
			if rs := looptest.ToolResults(req); len(rs) == 1 {
				s := looptest.ResultText(rs[0])
				nested = &s
				if !rs[0].IsError {
					t.Fatalf("nested task accepted: %q", s)
				}
			}
		}
	}
	if nested == nil || !strings.Contains(*nested, "at most 1 deep") {
		t.Fatalf("nested task result = %v", nested)
	}
	cs := cards(h.client.Updates())
	c := findCard(cs, func(c *card) bool { return c.id == "t1/t2" })
	if c == nil || c.status != "failed" || !hasPrefix(c.title, "task ‹Level 1›: task ‹Level 2›") {
		t.Fatalf("nested task card = %+v", c)
	}
	h.validate()
}

const cancelScript = `{"turns": [
  {"match": "^Run the slow thing", "responses": [
    {"toolCalls": [{"id": "t1", "name": "task", "arguments": {"prompt": "Subagent: sleep", "name": "sleeper"}}]},
    {"text": "unreachable"}
  ]},
  {"match": "^Subagent: sleep", "responses": [
    {"toolCalls": [{"id": "s", "name": "bash", "arguments": {"command": "sleep 30"}}]},
    {"text": "unreachable"}
  ]}
]}`

func TestSubagentCancelled(t *testing.T) {
	h := newHarness(t, harnessOptions{script: cancelScript})
	sid := h.newSession()
	done := make(chan *acp.PromptResponse, 1)
	go func() {
		resp, err := h.prompt(context.Background(), sid, "Run the slow thing", nil)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	looptest.WaitUpdates(t, h.client, "the subagent's command to run", func(ns []acp.SessionNotification) bool {
		c := findCard(cards(ns), func(c *card) bool { return c.id == "t1/s" })
		return c != nil && c.status == "in_progress"
	})
	if err := h.conn.Cancel(context.Background(), &acp.CancelNotification{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	resp := <-done
	if resp == nil || resp.StopReason != acp.StopCancelled {
		t.Fatalf("response = %+v, want cancelled", resp)
	}
	for _, c := range cards(h.client.Updates()) {
		if c.status != "failed" {
			t.Errorf("card %s (%s) ended %s, want failed", c.id, c.title, c.status)
		}
	}
	// Nothing of the subagent ran after the cancellation.
	for _, req := range h.provider.Requests() {
		if firstPrompt(req) == "Subagent: sleep" && len(looptest.ToolResults(req)) > 0 {
			t.Fatal("the subagent's model was asked again after the cancellation")
		}
	}
	h.validate()
}

// Structured turns over ACP: the whole prompt turn answers with a value.
const structuredTurnScript = `{"turns": [
  {"match": "^Which version", "responses": [
    {"text": "Let me answer.", "toolCalls": [{"name": "final_answer", "arguments": {"version": "1.2"}}]},
    {"toolCalls": [{"name": "final_answer", "arguments": {"version": "1.2.3"}}]}
  ]}
]}`

func TestStructuredTurn(t *testing.T) {
	h := newHarness(t, harnessOptions{script: structuredTurnScript})
	var caps struct {
		Dshd struct {
			StructuredTurns bool `json:"structuredTurns"`
		} `json:"dshd"`
	}
	if err := json.Unmarshal(h.init.AgentCapabilities.Meta, &caps); err != nil || !caps.Dshd.StructuredTurns {
		t.Fatalf("agentCapabilities._meta = %s", h.init.AgentCapabilities.Meta)
	}
	sid := h.newSession()
	meta := acp.Meta(`{"dshd": {"outputSchema": {"type": "object", "properties": {"version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"}}, "required": ["version"]}}}`)
	resp, err := h.prompt(context.Background(), sid, "Which version is this?", meta)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Dshd struct {
			Structured json.RawMessage `json:"structured"`
		} `json:"dshd"`
	}
	if err := json.Unmarshal(resp.Meta, &out); err != nil || string(out.Dshd.Structured) != `{"version":"1.2.3"}` {
		t.Fatalf("response _meta = %s", resp.Meta)
	}
	// The value is also the final message text.
	var msg string
	for _, n := range h.client.Updates() {
		if u, ok := n.Update.Value.(*acp.AgentMessageChunk); ok {
			if tc, ok := u.Content.Value.(*acp.TextContent); ok {
				msg += tc.Text
			}
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(msg), "\"version\": \"1.2.3\"\n}\n```") {
		t.Fatalf("message text = %q", msg)
	}
	// An unsupported schema is refused before the turn starts.
	bad := acp.Meta(`{"dshd": {"outputSchema": {"type": "string"}}}`)
	if _, err := h.prompt(context.Background(), sid, "Which version is this?", bad); err == nil || !strings.Contains(err.Error(), "outputSchema") {
		t.Fatalf("unsupported schema: err = %v", err)
	}
	h.validate()
}

// An ordinary prompt has no structured _meta.
func TestOrdinaryTurnHasNoStructuredMeta(t *testing.T) {
	h := newHarness(t, harnessOptions{script: `{"turns": [{"responses": [{"text": "hi"}]}]}`})
	sid := h.newSession()
	resp, err := h.prompt(context.Background(), sid, "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Meta) != 0 {
		t.Fatalf("_meta = %s", resp.Meta)
	}
	acptest.CheckSchema(t, h.client.Recorder)
}

const structuredTurnFailScript = `{"turns": [
  {"match": "^Which version", "responses": [
    {"toolCalls": [{"name": "final_answer", "arguments": {"version": 1}}]},
    {"toolCalls": [{"name": "final_answer", "arguments": {"version": 2}}]},
    {"toolCalls": [{"name": "final_answer", "arguments": {}}]},
    {"text": "must never run"}
  ]}
]}`

func TestStructuredTurnGivesUp(t *testing.T) {
	h := newHarness(t, harnessOptions{script: structuredTurnFailScript})
	sid := h.newSession()
	meta := acp.Meta(`{"dshd": {"outputSchema": {"type": "object", "properties": {"version": {"type": "string"}}, "required": ["version"]}}}`)
	resp, err := h.prompt(context.Background(), sid, "Which version is this?", meta)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.provider.Requests()); n != 3 {
		t.Fatalf("%d model requests, want 3", n)
	}
	var out struct {
		Dshd struct {
			Structured      json.RawMessage `json:"structured"`
			StructuredError *struct {
				Message    string
				Violations []struct{ Path, Keyword, Message string }
			} `json:"structuredError"`
		} `json:"dshd"`
	}
	if err := json.Unmarshal(resp.Meta, &out); err != nil || out.Dshd.Structured != nil || out.Dshd.StructuredError == nil ||
		len(out.Dshd.StructuredError.Violations) != 1 || out.Dshd.StructuredError.Violations[0].Keyword != "required" {
		t.Fatalf("response _meta = %s", resp.Meta)
	}
	h.validate()
}

const stepCapScript = `{"turns": [
  {"match": "^Loop", "responses": [
    {"toolCalls": [{"id": "t1", "name": "task", "arguments": {"prompt": "Subagent: loop", "maxSteps": 2}}]},
    {"text": "ok"}
  ]},
  {"match": "^Subagent: loop", "responses": [
    {"text": "looking", "toolCalls": [{"name": "glob", "arguments": {"pattern": "*"}}]},
    {"text": "still looking", "toolCalls": [{"name": "glob", "arguments": {"pattern": "*"}}]},
    {"text": "must never run"}
  ]}
]}`

func TestSubagentStepCap(t *testing.T) {
	h := newHarness(t, harnessOptions{script: stepCapScript})
	sid := h.newSession()
	if _, err := h.prompt(context.Background(), sid, "Loop", nil); err != nil {
		t.Fatal(err)
	}
	reqs := h.provider.Requests()
	res := looptest.ToolResults(reqs[len(reqs)-1])
	if len(res) != 1 || !res[0].IsError || !strings.Contains(looptest.ResultText(res[0]), "cap of 2 steps") {
		t.Fatalf("task result = %+v", res)
	}
	h.validate()
}
