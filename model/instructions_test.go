package model_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/instructions"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/internal/looptest"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/script"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// projectHarness is a bridge agent with Options.Instructions running a
// model.Loop over a recording provider, in a repository with a .git
// directory and a user configuration directory.
type projectHarness struct {
	t      *testing.T
	rec    *looptest.Recorder
	reg    *registry.Registry
	lib    *instructions.Library
	client *acptest.Client
	conn   *acp.AgentConn
	repo   string
	user   string
}

type projectOptions struct {
	script string
	budget int
	fs     acptest.FS // the editor's buffers; nil: no fs capability
	files  map[string]string
	images bool
	rules  policy.RuleSet // configured permission rules
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// peekArgs are the arguments of the peek tool, a read tool that names its
// path for policy.
type peekArgs struct {
	Path string `json:"path" desc:"a path"`
}

func peekTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[peekArgs]{
		Name: "peek", Description: "Read a file.", Kind: presentation.KindRead,
		Subjects: func(_ registry.Call, a peekArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path}}
		},
	}, func(_ context.Context, _ registry.Call, a peekArgs) (registry.Result, error) {
		return registry.TextResult("peeked at " + a.Path), nil
	})
}

func newProjectHarness(t *testing.T, po projectOptions) *projectHarness {
	t.Helper()
	base := t.TempDir()
	h := &projectHarness{t: t, repo: filepath.Join(base, "repo"), user: filepath.Join(base, "config", "dshd")}
	for _, d := range []string{filepath.Join(h.repo, ".git"), h.user} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for rel, text := range po.files {
		dir := h.repo
		if strings.HasPrefix(rel, "~/") {
			dir, rel = h.user, rel[2:]
		}
		writeFile(t, filepath.Join(dir, rel), text)
	}
	h.rec = &looptest.Recorder{Provider: scriptProvider(t, po.script)}
	reg := registry.New()
	if err := reg.SetGlobal(peekTool()); err != nil {
		t.Fatal(err)
	}
	h.reg = reg
	loop := model.New(model.Options{Provider: h.rec, Registry: reg, Logger: looptest.Quiet(), Images: po.images})
	h.lib = instructions.NewLibrary(instructions.Options{UserDir: h.user, Budget: po.budget, Logger: looptest.Quiet()})
	agent := bridge.New(bridge.Options{
		Loop: loop, Registry: reg, Prompt: loop.PromptCapabilities(), Logger: looptest.Quiet(),
		Instructions: h.lib, Rules: po.rules,
	})
	h.client = &acptest.Client{FS: po.fs}
	caps := acp.ClientCapabilities{}
	if po.fs != nil {
		caps.FS = &acp.FileSystemCapabilities{ReadTextFile: true}
	}
	h.conn, _ = looptest.ConnectWith(t, agent, h.client, caps)
	return h
}

func scriptProvider(t *testing.T, text string) llm.Provider {
	if text == "" {
		text = `{"turns":[{"responses":[{"text":"ok"}]}]}`
	}
	return script.New(mustScript(t, text))
}

func (h *projectHarness) session(cwd string) string {
	h.t.Helper()
	return looptest.NewSession(h.t, h.conn, cwd)
}

func (h *projectHarness) prompt(sid string, blocks ...acp.ContentBlock) {
	h.t.Helper()
	resp, err := h.conn.Prompt(context.Background(), &acp.PromptRequest{SessionID: sid, Prompt: blocks})
	if err != nil || resp.StopReason != acp.StopEndTurn {
		h.t.Fatalf("prompt: %+v %v", resp, err)
	}
}

func (h *projectHarness) waitUpdate(what string, ok func(acp.SessionUpdateVariant) bool) {
	h.t.Helper()
	looptest.WaitUpdate(h.t, h.client, what, ok)
}

func hasCommand(name, hint string) func(acp.SessionUpdateVariant) bool {
	return func(u acp.SessionUpdateVariant) bool {
		ac, ok := u.(*acp.AvailableCommandsUpdate)
		if !ok {
			return false
		}
		for _, c := range ac.AvailableCommands {
			if c.Name == name && (hint == "" || c.Input != nil && c.Input.Hint == hint) {
				return true
			}
		}
		return false
	}
}

func agentText(u acp.SessionUpdateVariant, want string) bool {
	if m, ok := u.(*acp.AgentMessageChunk); ok {
		if tc, ok := m.Content.Value.(*acp.TextContent); ok {
			return strings.Contains(tc.Text, want)
		}
	}
	return false
}

func (h *projectHarness) validate() { looptest.Validate(h.t, h.client) }

func inOrder(t *testing.T, text string, parts ...string) {
	t.Helper()
	at := -1
	for _, p := range parts {
		i := strings.Index(text, p)
		if i < 0 {
			t.Fatalf("%q missing from:\n%s", p, text)
		}
		if i < at {
			t.Fatalf("%q out of order in:\n%s", p, text)
		}
		at = i
	}
}

func TestAgentsChainInSystemPromptAndLiveEdit(t *testing.T) {
	h := newProjectHarness(t, projectOptions{
		script: `{"turns":[{"responses":[{"text":"one"}]},{"responses":[{"text":"two"}]}]}`,
		files: map[string]string{
			"~/AGENTS.md":          "USER: answer in English.\n",
			"AGENTS.md":            "ROOT: run go test.\n",
			"svc/CLAUDE.md":        "SVC-CLAUDE: services use slog.\n",
			"svc/api/AGENTS.md":    "API: handlers return errors.\n",
			"svc/api/v2/AGENTS.md": "V2: nested, not in the prompt.\n",
		},
	})
	cwd := filepath.Join(h.repo, "svc", "api")
	sid := h.session(cwd)
	h.prompt(sid, acp.Text("hi"))
	sys := h.rec.Requests()[0].System
	inOrder(t, sys, "# Environment", "USER: answer in English.", "ROOT: run go test.", "SVC-CLAUDE: services use slog.", "API: handlers return errors.")
	if strings.Contains(sys, "V2:") {
		t.Errorf("a nested file is in the system prompt:\n%s", sys)
	}

	// An edit applies to the next request.
	changed := make(chan struct{}, 8)
	watch := h.lib.Open(cwd, func(*instructions.Snapshot) { changed <- struct{}{} })
	defer watch.Close()
	writeFile(t, filepath.Join(h.repo, "AGENTS.md"), "ROOT: run go test -race.\n")
	// A save may be seen in steps (truncate, write): wait for its end.
	for deadline := time.After(20 * time.Second); !strings.Contains(watch.Snapshot().Prompt(), "-race"); {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the edit was not seen")
		}
	}
	h.prompt(sid, acp.Text("again"))
	if sys := h.rec.Requests()[1].System; !strings.Contains(sys, "ROOT: run go test -race.") {
		t.Errorf("the edit did not reach the next request:\n%s", sys)
	}
	h.validate()
}

func TestInstructionsBudget(t *testing.T) {
	h := newProjectHarness(t, projectOptions{budget: 2000, files: map[string]string{
		"AGENTS.md": strings.Repeat("A long root instruction line.\n", 200),
	}})
	h.prompt(h.session(h.repo), acp.Text("hi"))
	sys := h.rec.Requests()[0].System
	if n := strings.Count(sys, "A long root instruction line."); n == 0 || n*30 > 2000 {
		t.Errorf("%d lines of the file in the prompt, want some within 2000 bytes", n)
	}
	if !strings.Contains(sys, "was cut to") || !strings.Contains(sys, "instructions.budgetBytes") {
		t.Errorf("the cut is not said:\n%s", sys)
	}
}

func TestNestedInstructionsAttachedOnceToTheFirstResult(t *testing.T) {
	h := newProjectHarness(t, projectOptions{
		script: `{"turns":[{"responses":[
		  {"toolCalls":[{"id":"c1","name":"peek","arguments":{"path":"README.md"}}]},
		  {"toolCalls":[{"id":"c2","name":"peek","arguments":{"path":"pkg/a.go"}}]},
		  {"toolCalls":[{"id":"c3","name":"peek","arguments":{"path":"pkg/b.go"}}]},
		  {"text":"done"}]}]}`,
		files: map[string]string{
			"AGENTS.md":     "ROOT\n",
			"pkg/AGENTS.md": "PKG: exported names need doc comments.\n",
			"pkg/a.go":      "package pkg\n",
			"pkg/b.go":      "package pkg\n",
			"README.md":     "readme\n",
		},
	})
	h.prompt(h.session(h.repo), acp.Text("look"))
	reqs := h.rec.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if strings.Contains(reqs[0].System, "PKG:") {
		t.Error("the nested file is in the system prompt")
	}
	texts := make([]string, 3)
	for i := range texts {
		rs := looptest.ToolResults(reqs[i+1])
		texts[i] = looptest.ResultText(rs[len(rs)-1])
	}
	if strings.Contains(texts[0], "PKG:") {
		t.Errorf("a file outside pkg got pkg's instructions: %q", texts[0])
	}
	want := "which govern the files under " + filepath.Join(h.repo, "pkg")
	if !strings.Contains(texts[1], "PKG: exported names need doc comments.") || !strings.Contains(texts[1], want) {
		t.Errorf("first result under pkg: %q", texts[1])
	}
	if strings.Contains(texts[2], "PKG:") {
		t.Errorf("pkg's instructions attached twice: %q", texts[2])
	}
	h.validate()
}

const skillMD = "---\nname: release-notes\ndescription: Write release notes from the git log.\n---\n# Release notes\nGroup the changes by package.\n"

func TestSkillsListedLoadedAndInvoked(t *testing.T) {
	h := newProjectHarness(t, projectOptions{
		script: `{"turns":[
		  {"responses":[{"toolCalls":[{"id":"s1","name":"skill","arguments":{"name":"release-notes"}}]},{"text":"loaded"}]},
		  {"responses":[{"text":"writing notes"}]}]}`,
		files: map[string]string{
			".agents/skills/release-notes/SKILL.md":    skillMD,
			".agents/skills/release-notes/template.md": "## Changes\n",
			".claude/skills/broken/SKILL.md":           "---\nname: broken\n---\n",
			"~/skills/release-notes/SKILL.md":          "---\nname: release-notes\ndescription: the user's copy\n---\nUSER COPY\n",
		},
	})
	sid := h.session(h.repo)
	h.waitUpdate("the skill's command", hasCommand("release-notes", ""))
	h.waitUpdate("the invalid skill reported", func(u acp.SessionUpdateVariant) bool { return agentText(u, "broken/SKILL.md: skill skipped") })
	h.waitUpdate("the duplicate reported", func(u acp.SessionUpdateVariant) bool {
		return agentText(u, `skill "release-notes" skipped`)
	})
	h.prompt(sid, acp.Text("notes please"))
	reqs := h.rec.Requests()
	if !strings.Contains(reqs[0].System, "- release-notes: Write release notes from the git log.") || strings.Contains(reqs[0].System, "Group the changes") {
		t.Errorf("system prompt must list the skill without its body:\n%s", reqs[0].System)
	}
	found := false
	for _, tool := range reqs[0].Tools {
		found = found || tool.Name == instructions.SkillToolName
	}
	if !found {
		t.Errorf("no skill tool in %+v", reqs[0].Tools)
	}
	res := looptest.ToolResults(reqs[1])
	if got := looptest.ResultText(res[0]); !strings.Contains(got, "Group the changes by package.") || !strings.Contains(got, "- template.md") || strings.Contains(got, "USER COPY") {
		t.Errorf("skill tool result: %q", got)
	}

	// /release-notes starts a turn with the skill loaded.
	h.prompt(sid, acp.Text("/release-notes for v1.2"))
	last := h.rec.Requests()[2].Messages
	first := last[len(last)-1].Text()
	if !strings.Contains(first, "Group the changes by package.") || !strings.Contains(first, "The user's request: for v1.2") {
		t.Errorf("the skill command's prompt: %q", first)
	}
	h.validate()
}

func TestCustomCommandsAdvertisedExpandedAndLive(t *testing.T) {
	h := newProjectHarness(t, projectOptions{
		script: `{"turns":[{"responses":[{"text":"reviewing"}]},{"responses":[{"text":"hello"}]}]}`,
		files: map[string]string{
			".dshd/commands/review.md": "---\ndescription: Review a file\nargument-hint: <file> [focus]\n---\nReview $1, focusing on $2. (all: $ARGUMENTS)\n",
			".dshd/commands/mode.md":   "---\ndescription: clashes\n---\nnever\n",
		},
	})
	sid := h.session(h.repo)
	h.waitUpdate("review with its hint", hasCommand("review", "<file> [focus]"))
	h.waitUpdate("the clash refused", func(u acp.SessionUpdateVariant) bool {
		return agentText(u, "command /mode refused: /mode is a built-in command")
	})
	for _, note := range h.client.Updates() {
		u := note.Update.Value
		if ac, ok := u.(*acp.AvailableCommandsUpdate); ok {
			n := 0
			for _, c := range ac.AvailableCommands {
				if c.Name == "mode" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("/mode listed %d times", n)
			}
			if !hasCommand("permissions", "")(u) {
				t.Errorf("the built-in commands are missing: %+v", ac.AvailableCommands)
			}
		}
	}
	h.prompt(sid, acp.Text(`/review main.go "error paths"`))
	msgs := h.rec.Requests()[0].Messages
	if got := msgs[len(msgs)-1].Text(); !strings.Contains(got, `Review main.go, focusing on error paths. (all: main.go "error paths")`) {
		t.Errorf("expanded prompt: %q", got)
	}

	// A new command file is advertised without a restart.
	writeFile(t, filepath.Join(h.repo, ".dshd", "commands", "hello.md"), "---\ndescription: Greet\n---\nSay hello to $ARGUMENTS.\n")
	h.waitUpdate("the new command", hasCommand("hello", ""))
	h.prompt(sid, acp.Text("/hello world"))
	msgs = h.rec.Requests()[1].Messages
	if got := msgs[len(msgs)-1].Text(); !strings.Contains(got, "Say hello to world.") {
		t.Errorf("expanded prompt: %q", got)
	}
	h.validate()
}

func TestMentionsResolvedThroughTheEditor(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "secret.txt")
	writeFile(t, outside, "secret\n")
	var h *projectHarness
	fs := &bufferFS{buffers: map[string]string{}}
	h = newProjectHarness(t, projectOptions{fs: fs, files: map[string]string{
		"main.go":      "package main\n\nfunc main() {}\n",
		"pkg/x.go":     "package pkg\n",
		"pkg/sub/y.go": "package sub\n",
		"logo.png":     "\x89PNG\r\n\x1a\n",
	}})
	// The editor holds an unsaved edit of main.go.
	fs.buffers[filepath.Join(h.repo, "main.go")] = "package main\n\n// unsaved\nfunc main() { run() }\nfunc run() {}\n"
	link := func(path, frag, name string) acp.ContentBlock {
		uri := "file://" + filepath.ToSlash(path)
		if frag != "" {
			uri += "#" + frag
		}
		return acp.ContentBlock{Value: &acp.ResourceLink{URI: uri, Name: name}}
	}
	h.prompt(h.session(h.repo), acp.Text("look at these"),
		link(filepath.Join(h.repo, "main.go"), "", "main.go"),
		link(filepath.Join(h.repo, "main.go"), "L3:4", "main"),
		link(filepath.Join(h.repo, "pkg"), "", "pkg"),
		link(filepath.Join(h.repo, "logo.png"), "", "logo.png"),
		link(filepath.Join(h.repo, "gone.go"), "", "gone.go"),
		link(outside, "", "secret.txt"),
		acp.ContentBlock{Value: &acp.ResourceLink{URI: "https://example.com/x", Name: "web"}},
	)
	msgs := h.rec.Requests()[0].Messages
	user := msgs[len(msgs)-1]
	// The prompt's blocks, then the mode reminder.
	if n := len(user.Parts); n == 9 && user.Parts[8].(*llm.Text).Text == model.ModeReminder(policy.ModeDefault) {
		user.Parts = user.Parts[:8]
	}
	if len(user.Parts) != 8 {
		t.Fatalf("%d parts, want 8: %+v", len(user.Parts), user.Parts)
	}
	text := func(i int) string {
		if p, ok := user.Parts[i].(*llm.Text); ok {
			return p.Text
		}
		return ""
	}
	for i, want := range map[int][]string{
		1: {"// unsaved", "func run() {}"},
		2: {"(lines 3-4)", "// unsaved\nfunc main() { run() }\n"},
		3: {"directory `" + filepath.Join(h.repo, "pkg") + "`", "sub/\nx.go"},
		4: {"logo.png", "cannot see"},
		5: {"gone.go", "could not read", "does not exist"},
		6: {"secret.txt", "outside the session's workspace"},
		7: {"https://example.com/x", "not a local file"},
	} {
		for _, w := range want {
			if !strings.Contains(text(i), w) {
				t.Errorf("part %d lacks %q: %q", i, w, text(i))
			}
		}
	}
	if strings.Contains(text(2), "func run") {
		t.Errorf("the selection has more than its lines: %q", text(2))
	}
	if strings.Contains(text(6), "secret\n") {
		t.Error("a file outside the roots was read")
	}
	h.validate()
}

// bufferFS is an editor's file system: its buffers, else the disk.
type bufferFS struct{ buffers map[string]string }

func (b *bufferFS) ReadFile(_ context.Context, path string) (string, error) {
	if text, ok := b.buffers[path]; ok {
		return text, nil
	}
	data, err := os.ReadFile(path)
	return string(data), err
}

func (b *bufferFS) WriteFile(context.Context, string, string) error { return nil }

func TestSkillToolFollowsTheToolSettings(t *testing.T) {
	h := newProjectHarness(t, projectOptions{files: map[string]string{
		".agents/skills/release-notes/SKILL.md": skillMD,
	}})
	h.reg.SetRestrictions(registry.DenyOnly(instructions.SkillToolName))
	h.prompt(h.session(h.repo), acp.Text("hi"))
	for _, tool := range h.rec.Requests()[0].Tools {
		if tool.Name == instructions.SkillToolName {
			t.Fatal("the skill tool is offered although the settings deny it")
		}
	}
}

// A mention is read only where the read tool could read without asking:
// a deny or ask rule for read stops it too (regression: a mention must not
// be a way around the permission rules).
func TestMentionsFollowTheReadRules(t *testing.T) {
	rules, err := policy.ParseRuleSet(nil, []string{"read(ask/**)"}, []string{"read(**/.env)"})
	if err != nil {
		t.Fatal(err)
	}
	h := newProjectHarness(t, projectOptions{rules: rules, files: map[string]string{
		".env":      "TOKEN=hunter2\n",
		"ask/a.txt": "ASKED-CONTENT\n",
	}})
	link := func(rel string) acp.ContentBlock {
		return acp.ContentBlock{Value: &acp.ResourceLink{URI: "file://" + filepath.ToSlash(filepath.Join(h.repo, rel)), Name: rel}}
	}
	h.prompt(h.session(h.repo), acp.Text("see"), link(".env"), link("ask/a.txt"))
	msgs := h.rec.Requests()[0].Messages
	got := msgs[len(msgs)-1].Text()
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "denies reading it") {
		t.Errorf("a denied file was read or the denial not said: %q", got)
	}
	if strings.Contains(got, "ASKED-CONTENT") || !strings.Contains(got, "asks before reading it") {
		t.Errorf("a file behind an ask rule was read or not said: %q", got)
	}
	h.validate()
}
