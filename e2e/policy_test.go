package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

const (
	secret = "TOPSECRET-7d1f"
	forged = "FORGED-RECORD-51c2"
)

// policyFixture lays out a project whose state directory and --config
// settings file lie inside the project (so that only the protection, not
// the root confinement, keeps them safe), a .git directory, a directory
// outside the project with a secret, and symlinks pointing out.
func policyFixture(t *testing.T) (*fixture, string) {
	f := newFixture(t, policyScript(""))
	outside := filepath.Join(f.dir, "outside")
	files := map[string]string{
		filepath.Join(outside, "secret.txt"):           secret + "\n",
		filepath.Join(f.ws, "small.txt"):               "small\n",
		filepath.Join(f.ws, "victim.txt"):              "victim\n",
		filepath.Join(f.ws, ".env"):                    secret + "\n",
		filepath.Join(f.ws, ".git", "config"):          "[core]\n",
		filepath.Join(f.ws, ".git", "hooks", "README"): "hooks\n",
		filepath.Join(f.ws, ".dshd", "settings.json"):  "{}\n",
	}
	writeFiles(t, files)
	for link, target := range map[string]string{"link-out": outside, "link-secret": filepath.Join(outside, "secret.txt"), "link-git": ".git"} {
		if err := os.Symlink(target, filepath.Join(f.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	f.state = filepath.Join(f.ws, "state")
	if err := os.MkdirAll(filepath.Join(f.ws, "cfg"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.config = filepath.Join(f.ws, "cfg", "settings.json")
	// The allow rules name the symlinks as written: rules judge a path
	// where it lands too, so they must not let a write escape the project.
	// Answers are remembered for the session here, so that nothing may
	// change under .dshd/: the project's remembered answers are the
	// daemon's to write (TestRememberedAcrossDaemons), never a tool's.
	settings := `{"permissions": {"remember": "session", "deny": ["bash(rm *)", "read(**/.env)", "write(**/victim.txt)", "edit(**/victim.txt)"],
		"allow": ["write(link-out/**)", "write(link-secret)", "edit(link-secret)"]}}` + "\n"
	if err := os.WriteFile(f.config, []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	f.writeScript(t, policyScript(f.state))
	return f, outside
}

// attacks are the calls of the "files" turn; every one of them must fail
// (a denial, a rejected ask or invalid arguments) in every mode.
func fileAttacks(state string) []toolCall {
	return []toolCall{
		writeCall("dotdot", "../outside/pwned.txt"),
		writeCall("dotdot-deep", "sub/../../../outside/pwned.txt"),
		writeCall("absolute", filepath.Join(filepath.Dir(state), "..", "outside", "pwned-abs.txt")),
		writeCall("symlink-dir", "link-out/pwned.txt"),
		writeCall("symlink-file", "link-secret"),
		{ID: "edit-symlink", Name: "edit", Arguments: map[string]any{"path": "link-secret", "old": "SECRET-7d1f", "new": forged}},
		writeCall("git-config", ".git/config"),
		writeCall("git-hook", ".git/hooks/pre-commit"),
		writeCall("git-upper", ".GIT/hooks/post-checkout"),
		writeCall("git-symlink", "link-git/config"),
		writeCall("settings-config", "cfg/settings.json"),
		{ID: "settings-edit", Name: "edit", Arguments: map[string]any{"path": "cfg/settings.json", "old": "bash(rm *)", "new": "bash(nothing)"}},
		writeCall("settings-project", ".dshd/settings.json"),
		writeCall("grants-project", ".dshd/settings.local.json"),
		writeCall("state-forge", "state/forged.jsonl"),
		writeCall("state-abs", filepath.Join(state, "forged2.jsonl")),
		writeCall("nul-byte", "small.txt\x00/../../outside/pwned-nul.txt"),
		{ID: "dup-keys", Name: "write", RawArguments: `{"path":"inside-dup.txt","path":"../outside/pwned-dup.txt","content":"` + forged + `"}`},
		{ID: "dup-keys-rev", Name: "write", RawArguments: `{"path":"../outside/pwned-dup2.txt","path":"inside-dup2.txt","content":"` + forged + `"}`},
		{ID: "case-keys", Name: "write", RawArguments: `{"Path":"../outside/pwned-case.txt","path":"inside-case.txt","content":"` + forged + `"}`},
		{ID: "read-out", Name: "read", Arguments: map[string]any{"path": "../outside/secret.txt"}},
		{ID: "read-symlink", Name: "read", Arguments: map[string]any{"path": "link-secret"}},
		{ID: "read-env", Name: "read", Arguments: map[string]any{"path": ".env"}},
		{ID: "grep-out", Name: "grep", Arguments: map[string]any{"pattern": "TOPSECRET", "path": "../outside"}},
		{ID: "victim-write", Name: "write", Arguments: map[string]any{"path": "victim.txt", "content": forged}},
		{ID: "victim-rm", Name: "bash", Arguments: map[string]any{"command": "rm -f victim.txt"}},
		{ID: "victim-rm-chain", Name: "bash", Arguments: map[string]any{"command": "true && rm -f victim.txt"}},
		// Commands are opaque, but the protected guard refuses any that
		// names a protected path, in every mode.
		bashCall("sh-settings", `echo '{}' > cfg/settings.json`),
		bashCall("sh-settings-cd", `cd cfg && echo '{}' >settings.json`),
		bashCall("sh-settings-glob", `cp small.txt cfg/*.json`),
		bashCall("sh-user-settings", `mkdir -p "$XDG_CONFIG_HOME/dshd" && echo '{}' > "$XDG_CONFIG_HOME/dshd/settings.json"`),
		bashCall("sh-user-settings-tilde", `echo '{}' > ~/.config/dshd/settings.json`),
		bashCall("sh-project-settings", `tee .dshd/settings.json < small.txt`),
		bashCall("sh-project-grants", `echo '{"permissions":{"allow":["bash"]}}' > .dshd/settings.local.json`),
		bashCall("sh-git", `echo '[core]' >> .git/config`),
		bashCall("sh-git-hook", `printf '#!/bin/sh\n' > .git/hooks/pre-commit`),
		bashCall("sh-state", `cp small.txt `+filepath.Join(state, "forged3.jsonl")),
	}
}

// rootEscapes are the file attacks that only the root confinement stops
// (nothing protected is involved).
var rootEscapes = map[string]bool{
	"dotdot": true, "dotdot-deep": true, "absolute": true, "symlink-dir": true, "symlink-file": true,
	"edit-symlink": true, "read-out": true, "read-symlink": true, "grep-out": true,
}

func filterCalls(calls []toolCall, keep func(toolCall) bool) []toolCall {
	var out []toolCall
	for _, c := range calls {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// lookAlikes are paths that only look like escapes: written (if at all)
// inside the project, so they may succeed; the outside must stay intact.
func lookAlikes() []toolCall {
	var out []toolCall
	for i, p := range []string{"\u2025/outside/pwned-u1.txt", "\uff0e\uff0e/outside/pwned-u2.txt", "..\u2215outside\u2215pwned-u3.txt", ".g\u0456t/config"} {
		out = append(out, toolCall{ID: "lookalike-" + string(rune('a'+i)), Name: "write", Arguments: map[string]any{"path": p, "content": "harmless"}})
	}
	return out
}

// chainAttempts follow an allow_always on "go version".
var chainAttempts = []string{
	"go version && touch pwned-and",
	"go version; touch pwned-semi",
	"go version || touch pwned-or",
	"go version | tee pwned-pipe",
	"go version & touch pwned-bg",
	"go version $(touch pwned-subst)",
	"go version `touch pwned-backtick`",
	"go version\ntouch pwned-newline",
	"go version > pwned-redirect",
	"go version <(touch pwned-procsubst)",
	"go  version;touch pwned-spaces",
}

func policyScript(state string) script {
	var chain []toolCall
	for i, c := range chainAttempts {
		chain = append(chain, toolCall{ID: "chain-" + string(rune('a'+i)), Name: "bash", Arguments: map[string]any{"command": c}})
	}
	return script{Turns: []turn{
		{Match: "^files$", Responses: []response{{ToolCalls: append(fileAttacks(state), lookAlikes()...)}, {Text: "attack over"}}},
		{Match: "^files-guarded$", Responses: []response{
			{ToolCalls: append(filterCalls(fileAttacks(state), func(c toolCall) bool { return !rootEscapes[c.ID] }), lookAlikes()...)},
			{Text: "attack over"},
		}},
		{Match: "^escapes$", Responses: []response{
			{ToolCalls: filterCalls(fileAttacks(state), func(c toolCall) bool { return rootEscapes[c.ID] })},
			{Text: "attack over"},
		}},
		{Match: "^chain$", Responses: []response{
			{ToolCalls: []toolCall{{ID: "allowed", Name: "bash", Arguments: map[string]any{"command": "go version"}}}},
			{ToolCalls: chain},
			{Text: "chain over"},
		}},
		{Match: "^limits$", Responses: []response{
			{ToolCalls: []toolCall{
				{ID: "big-read", Name: "read", Arguments: map[string]any{"path": "big.txt"}},
				{ID: "big-output", Name: "bash", Arguments: map[string]any{"command": "head -c 3000000 /dev/zero | tr '\\0' a"}},
				{ID: "big-grep", Name: "grep", Arguments: map[string]any{"pattern": "a", "path": "big.txt"}},
			}},
			{Text: "limits over"},
		}},
	}}
}

// asksRecorder answers permission requests: allow_always for the ids in
// allow, reject otherwise; it records who asked.
type asksRecorder struct {
	mu    sync.Mutex
	asked map[string]int
	allow map[string]bool
}

func (a *asksRecorder) policy(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked[req.ToolCall.ToolCallID]++
	if a.allow[req.ToolCall.ToolCallID] {
		return acptest.AllowAlways(ctx, req)
	}
	return acptest.RejectOnce(ctx, req)
}

// sessionText is every tool result sent about sid (the updates that end a
// call: what the model gets back) and every agent message, to look for
// leaked secrets. The diff preview shown with a permission request is left
// out: it is the user's, not the model's, to see.
func sessionText(c *acptest.Client, sid string) string {
	var b strings.Builder
	for _, n := range c.Updates() {
		if n.SessionID != sid {
			continue
		}
		switch u := n.Update.Value.(type) {
		case *acp.ToolCallUpdate:
			if u.Status == nil || (*u.Status != acp.ToolCallCompleted && *u.Status != acp.ToolCallFailed) {
				continue
			}
		case *acp.AgentMessageChunk:
		default:
			continue
		}
		raw, _ := json.Marshal(n)
		b.Write(raw)
	}
	return b.String()
}

// TestFaultPolicy attacks the policy from the model's side in every mode
// with a client that rejects every permission request: escapes from the
// roots, the daemon's settings, state and .git, duplicate and case-folded
// keys, deny rules that bypass mode must keep, shell chains past a
// remembered prefix rule, and outputs beyond the size limits. The
// protected trees must be byte for byte unchanged, every attack call must
// fail, and no secret may reach the client.
func TestFaultPolicy(t *testing.T) {
	f, outside := policyFixture(t)
	protected := map[string]string{"outside": outside, ".git": filepath.Join(f.ws, ".git"), "cfg": filepath.Join(f.ws, "cfg"), ".dshd": filepath.Join(f.ws, ".dshd")}
	before := map[string]map[string]string{}
	for name, dir := range protected {
		before[name] = snapshotTree(t, dir)
	}
	p := f.start(t)
	asks := &asksRecorder{asked: map[string]int{}, allow: map[string]bool{"allowed": true}}
	c := &acptest.Client{Permission: asks.policy}
	conn := p.client(t, c)
	ctx := callCtx(t, 2*time.Minute)
	stats, base := initBaseline(t, conn)
	newSession := func(mode string) string {
		sid := newSession(t, conn, f.ws)
		setMode(t, conn, sid, mode)
		return sid
	}
	run := func(sid, text string) {
		t.Helper()
		resp, err := prompt(ctx, conn, sid, text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if resp.StopReason != acp.StopEndTurn {
			t.Errorf("%s: stop reason %s", text, resp.StopReason)
		}
	}

	// bypassPermissions does not ask, so only the guards and deny rules
	// stand; the root escapes in that mode are TestFaultPolicyBypassRoots.
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions"} {
		t.Run("files/"+mode, func(t *testing.T) {
			sid := newSession(mode)
			turn, attacks := "files", fileAttacks(f.state)
			if mode == "bypassPermissions" {
				turn = "files-guarded"
				attacks = filterCalls(attacks, func(c toolCall) bool { return !rootEscapes[c.ID] })
			}
			run(sid, turn)
			st := toolStatuses(c.Updates(), sid)
			for _, call := range attacks {
				if st[call.ID] != acp.ToolCallFailed {
					t.Errorf("%s in %s mode ended %q, want failed", call.ID, mode, st[call.ID])
				}
			}
			if leak := sessionText(c, sid); strings.Contains(leak, secret) {
				i := strings.Index(leak, secret)
				t.Errorf("the secret reached the client in %s mode: …%s…", mode, leak[max(0, i-600):min(len(leak), i+100)])
			}
			asks.mu.Lock()
			t.Logf("%s mode: asked for %v", mode, slices.Sorted(maps.Keys(asks.asked)))
			clear(asks.asked)
			asks.mu.Unlock()
			closeSession(t, conn, sid)
			expectBaseline(t, "files/"+mode, stats, base)
		})
	}

	t.Run("chain", func(t *testing.T) {
		sid := newSession("default")
		run(sid, "chain")
		st := toolStatuses(c.Updates(), sid)
		if st["allowed"] != acp.ToolCallCompleted {
			t.Errorf("go version itself ended %q", st["allowed"])
		}
		asks.mu.Lock()
		for i, cmd := range chainAttempts {
			id := "chain-" + string(rune('a'+i))
			if st[id] != acp.ToolCallFailed {
				t.Errorf("%q after allow_always on `go version` ended %q (asked %d times), want failed", cmd, st[id], asks.asked[id])
			}
		}
		asks.mu.Unlock()
		closeSession(t, conn, sid)
		expectBaseline(t, "chain", stats, base)
	})

	t.Run("limits", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(f.ws, "big.txt"), []byte(strings.Repeat(strings.Repeat("a", 99)+"\n", 40_000)), 0o644); err != nil {
			t.Fatal(err)
		}
		sid := newSession("bypassPermissions")
		run(sid, "limits")
		// The limits are those of tools.Options' defaults: read's output
		// 256 KiB, a command's output 30,000 bytes; a little is allowed for
		// notes such as "output truncated". An update may carry the text
		// more than once (content, rawOutput, the card), each within limit.
		limits := map[string]int{"big-read": 256<<10 + 1024, "big-output": 30_000 + 1024, "big-grep": 256<<10 + 1024}
		longest, sizes := map[string]int{}, map[string]int{}
		for _, n := range c.Updates() {
			if n.SessionID != sid {
				continue
			}
			if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok {
				raw, _ := json.Marshal(n)
				var v any
				_ = json.Unmarshal(raw, &v)
				longest[u.ToolCallID] = max(longest[u.ToolCallID], longestString(v))
				sizes[u.ToolCallID] = max(sizes[u.ToolCallID], len(raw))
			}
		}
		for id, limit := range limits {
			if longest[id] == 0 || longest[id] > limit {
				t.Errorf("%s: longest text %d bytes, want 1..%d", id, longest[id], limit)
			}
		}
		t.Logf("longest texts %v; largest updates in bytes %v", longest, sizes)
		closeSession(t, conn, sid)
		expectBaseline(t, "limits", stats, base)
	})

	for name, dir := range protected {
		after := snapshotTree(t, dir)
		if !maps.Equal(before[name], after) {
			t.Errorf("%s changed:\nbefore %q\nafter  %q", name, before[name], after)
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, "victim.txt")); err != nil || string(b) != "victim\n" {
		t.Errorf("victim.txt = %q, %v", b, err)
	}
	matches, _ := filepath.Glob(filepath.Join(f.ws, "pwned*"))
	if len(matches) > 0 {
		t.Errorf("chained commands ran: %v", matches)
	}
	// Only the daemon's own session logs (which record the attacks'
	// arguments, forged text included) may be in the state directory.
	ents, _ := os.ReadDir(f.state)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jsonl") || strings.Contains(e.Name(), "forged") {
			t.Errorf("state directory holds %s", e.Name())
		}
	}
	acptest.CheckSchema(t, c.Recorder)
}

// longestString is the length of the longest string in a JSON value.
func longestString(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range x {
			n = max(n, longestString(e))
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n = max(n, longestString(e))
		}
		return n
	case string:
		return len(x)
	}
	return 0
}

// TestFaultPolicyBypassRoots: bypassPermissions is the user's explicit
// waiver of asks, so calls on paths outside the session's roots (..,
// absolute paths, symlinks pointing out) run without asking there, as the
// tools issue specifies ("a path outside ... becomes an ask that names the
// path, and in bypassPermissions it is allowed"). What bypass never skips —
// protected paths, deny rules, argument checks — TestFaultPolicy checks in
// every mode.
func TestFaultPolicyBypassRoots(t *testing.T) {
	f, _ := policyFixture(t)
	p := f.start(t)
	asks := &asksRecorder{asked: map[string]int{}}
	c := &acptest.Client{Permission: asks.policy}
	conn := p.client(t, c)
	stats, base := initBaseline(t, conn)
	sid := newSession(t, conn, f.ws)
	setMode(t, conn, sid, "bypassPermissions")
	resp, err := prompt(callCtx(t, time.Minute), conn, sid, "escapes")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopEndTurn {
		t.Errorf("stop reason %s", resp.StopReason)
	}
	st := toolStatuses(c.Updates(), sid)
	for id := range rootEscapes {
		if asks.asked[id] != 0 {
			t.Errorf("%s asked %d times in bypassPermissions mode", id, asks.asked[id])
		}
		// edit-symlink edits text that symlink-file has already replaced,
		// so it fails as an edit, not by policy.
		if id != "edit-symlink" && st[id] != acp.ToolCallCompleted {
			t.Errorf("%s in bypassPermissions mode ended %q, want completed", id, st[id])
		}
	}
	closeSession(t, conn, sid)
	expectBaseline(t, "bypass roots", stats, base)
}
