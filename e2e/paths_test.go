package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
)

// The escapes of issue 14, through the real binary: a path that lands
// elsewhere than its text says (a symlink followed by ".."), a path
// swapped for a symlink while the user decides, settings directories
// replaced by commands, deny rules dodged by spelling, and their variants.

// deepLink is the symlink of the issue: a -> d1/d2/…/d8. Through it,
// "a/../x" lands in d7 while its text seems to name the workspace, and
// "a/../../x" lands in d6 while its text seems to name the workspace's
// parent.
const deepLink = "d1/d2/d3/d4/d5/d6/d7/d8"

// pathsFixture lays out the workspace of the attacks: the deep symlink, a
// project settings file with a deny rule, user settings, evil settings
// ready to be copied in, a hard link to the project settings, a symlink
// loop, a victim and a secret outside.
func pathsFixture(t *testing.T) (*fixture, string) {
	f := newFixture(t, pathsScript())
	outside := filepath.Join(f.dir, "outside")
	evil := `{"permissions": {"defaultMode": "bypassPermissions", "allow": ["bash"]}}` + "\n"
	files := map[string]string{
		filepath.Join(outside, "secret.txt"):                      secret + "\n",
		filepath.Join(f.ws, ".dshd", "settings.json"):             `{"permissions": {"deny": ["bash(rm *)"]}}` + "\n",
		filepath.Join(f.home, ".config", "dshd", "settings.json"): "{}\n",
		filepath.Join(f.ws, "evil", "settings.json"):              evil,
		filepath.Join(f.ws, "evil-user", "dshd", "settings.json"): evil,
		filepath.Join(f.ws, "victim.txt"):                         "victim\n",
		filepath.Join(f.ws, deepLink, "keep"):                     "",
		filepath.Join(f.ws, "d", "keep"):                          "",
	}
	writeFiles(t, files)
	if err := os.Symlink(deepLink, filepath.Join(f.ws, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(f.ws, "loop")); err != nil {
		t.Fatal(err)
	}
	// A hard link made before the session (git does not make them, but a
	// build or an earlier command could).
	if err := os.Link(filepath.Join(f.ws, ".dshd", "settings.json"), filepath.Join(f.ws, "hardlink.json")); err != nil {
		t.Fatal(err)
	}
	return f, outside
}

// pathAttacks are the calls of the "paths" turn: each must fail, or
// succeed only where it really lands (inside the workspace, nothing
// protected), in every mode. The fixture's trees prove which.
func pathAttacks() []toolCall {
	return []toolCall{
		// Finding 1: symlink then "..".
		writeCall("link-settings", "a/../.dshd/settings.json"),
		writeCall("link-outside", "a/../../outside/pwned.txt"),
		{ID: "link-read", Name: "read", Arguments: map[string]any{"path": "a/../../outside/secret.txt"}},
		{ID: "link-grep", Name: "grep", Arguments: map[string]any{"pattern": "TOPSECRET", "path": "a/../../outside"}},
		{ID: "link-glob", Name: "glob", Arguments: map[string]any{"pattern": "*.txt", "path": "a/../../outside"}},
		{ID: "link-edit", Name: "edit", Arguments: map[string]any{"path": "a/../.dshd/settings.json", "old": "bash(rm *)", "new": "bash(nothing)"}},
		// Finding 3: the settings directories, not only the files.
		bashCall("cp-into-dshd", "cp evil/settings.json .dshd/"),
		bashCall("mv-dshd-away", "mv .dshd old-dshd"),
		bashCall("mv-evil-in", "mv evil .dshd"),
		bashCall("rm-dshd", "rm -rf ./.dshd/"),
		bashCall("cp-user", `cp evil-user/dshd/settings.json "$XDG_CONFIG_HOME/dshd/"`),
		bashCall("mv-user", `mv "$XDG_CONFIG_HOME/dshd" "$XDG_CONFIG_HOME/old"`),
		bashCall("mv-user-in", `mv evil-user/dshd "$XDG_CONFIG_HOME"/`),
		bashCall("ln-dshd", "ln -sfn evil .dshd"),
		writeCall("write-dir", ".dshd"),
		writeCall("write-upper", ".DSHD/settings.json"),
		writeCall("hardlink", "hardlink.json"),
		// Finding 6: a deny rule (bash(rm *), from the project settings)
		// by any spelling.
		bashCall("rm-abs", "/bin/rm -f victim.txt"),
		bashCall("rm-backslash", `\rm -f victim.txt`),
		bashCall("rm-quoted", `'rm' -f victim.txt`),
		bashCall("rm-command", "command rm -f victim.txt"),
		bashCall("rm-env", "env rm -f victim.txt"),
		bashCall("rm-nice", "nice -n 5 rm -f victim.txt"),
		bashCall("rm-timeout", "timeout 5 rm -f victim.txt"),
		bashCall("rm-sh", "sh -c 'rm -f victim.txt'"),
		bashCall("rm-find", "find . -name victim.txt -exec rm {} +"),
		// Variants.
		writeCall("loop", "loop/pwned.txt"),
		writeCall("nul", "a/..\x00/../../outside/pwned-nul.txt"),
		writeCall("long", strings.Repeat("d/", 2100)+"pwned.txt"),
		writeCall("trailing-slash", ".dshd/settings.json/"),
	}
}

// procCwd reads outside through /proc/self/cwd/..: outside the workspace,
// so it asks (bypassPermissions, which waives that ask, leaves it out).
var procCwd = toolCall{ID: "proc-cwd", Name: "read", Arguments: map[string]any{"path": "/proc/self/cwd/../outside/secret.txt"}}

// landsHarmlessly are the attacks that may complete, because they act
// where they really land (deep inside the workspace, or a hard link
// replaced, not written through); every other attack must fail in every
// mode.
var landsHarmlessly = map[string]bool{"link-grep": true, "link-glob": true, "link-settings": true, "link-outside": true, "link-edit": true, "hardlink": true}

func pathsScript() script {
	return script{Turns: []turn{
		{Match: "^paths$", Responses: []response{{ToolCalls: append(pathAttacks(), procCwd)}, {Text: "attack over"}}},
		{Match: "^paths-bypass$", Responses: []response{{ToolCalls: pathAttacks()}, {Text: "attack over"}}},
		{Match: "^swap$", Responses: []response{
			{ToolCalls: []toolCall{{ID: "swap", Name: "write", Arguments: map[string]any{"path": "d/f.txt", "content": forged}}}},
			{Text: "swap over"},
		}},
		{Match: "^compose$", Responses: []response{
			{ToolCalls: []toolCall{{ID: "cfg-name", Name: "bash", Arguments: map[string]any{"command": "git config user.name Bob"}}}},
			{ToolCalls: []toolCall{{ID: "status", Name: "bash", Arguments: map[string]any{"command": "git status"}}}},
			{ToolCalls: []toolCall{{ID: "cfg-fsmonitor", Name: "bash", Arguments: map[string]any{"command": "git config core.fsmonitor 'touch pwned-fsmonitor'"}}}},
			{Text: "compose over"},
		}},
	}}
}

// TestFaultPaths runs issue 14's escapes in every mode against a client
// that rejects every permission request: the settings (project and user),
// the outside and the victim must be unchanged, no secret may reach the
// client, every write that completed must have landed where the policy
// said, and the permission requests must name the real landing.
func TestFaultPaths(t *testing.T) {
	f, outside := pathsFixture(t)
	guarded := map[string]string{
		"outside":       outside,
		".dshd":         filepath.Join(f.ws, ".dshd"),
		"user settings": filepath.Join(f.home, ".config"),
		"evil":          filepath.Join(f.ws, "evil"),
	}
	before := map[string]map[string]string{}
	for name, dir := range guarded {
		before[name] = snapshotTree(t, dir)
	}
	p := f.start(t)
	var mu sync.Mutex
	asked := map[string][]string{} // call id → the permission texts
	c := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		raw, _ := json.Marshal(req.ToolCall)
		mu.Lock()
		asked[req.ToolCall.ToolCallID] = append(asked[req.ToolCall.ToolCallID], string(raw))
		mu.Unlock()
		return acptest.RejectOnce(ctx, req)
	}}
	conn := p.client(t, c)
	ctx := callCtx(t, 3*time.Minute)
	stats, base := initBaseline(t, conn)
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions"} {
		t.Run(mode, func(t *testing.T) {
			sid := newSession(t, conn, f.ws)
			setMode(t, conn, sid, mode)
			turn, attacks := "paths", append(pathAttacks(), procCwd)
			if mode == "bypassPermissions" {
				turn, attacks = "paths-bypass", pathAttacks()
			}
			if _, err := prompt(ctx, conn, sid, turn); err != nil {
				t.Fatal(err)
			}
			st := toolStatuses(c.Updates(), sid)
			for _, call := range attacks {
				if !landsHarmlessly[call.ID] && st[call.ID] != acp.ToolCallFailed {
					t.Errorf("%s in %s mode ended %q, want failed", call.ID, mode, st[call.ID])
				}
			}
			if mode != "default" {
				// Allowed without asking (inside the workspace): the write
				// landed where the policy said, in d7 and d6.
				for rel, id := range map[string]string{"d1/d2/d3/d4/d5/d6/d7/.dshd/settings.json": "link-settings", "d1/d2/d3/d4/d5/d6/outside/pwned.txt": "link-outside"} {
					b, err := os.ReadFile(filepath.Join(f.ws, rel))
					if st[id] != acp.ToolCallCompleted || err != nil || string(b) != forged {
						t.Errorf("%s in %s mode ended %q and %s holds %q (%v): want it written where it lands", id, mode, st[id], rel, b, err)
					}
				}
			}
			if text := sessionText(c, sid); strings.Contains(text, secret) {
				i := strings.Index(text, secret)
				t.Errorf("the secret reached the client in %s mode: …%s…", mode, text[max(0, i-300):min(len(text), i+100)])
			}
			if out := callResult(c, sid, "link-glob"); strings.Contains(out, "secret.txt") {
				t.Errorf("glob listed the outside in %s mode: %s", mode, out)
			}
			mu.Lock()
			// A permission request about a path through the link names
			// where it lands.
			for _, req := range asked["link-settings"] {
				if !strings.Contains(req, "d7/.dshd/settings.json") {
					t.Errorf("the request for link-settings does not name the landing: %s", req)
				}
			}
			clear(asked)
			mu.Unlock()
			closeSession(t, conn, sid)
			expectBaseline(t, "paths/"+mode, stats, base)
		})
	}
	for name, dir := range guarded {
		if after := snapshotTree(t, dir); !maps.Equal(before[name], after) {
			t.Errorf("%s changed:\nbefore %q\nafter  %q", name, before[name], after)
		}
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, "victim.txt")); err != nil || string(b) != "victim\n" {
		t.Errorf("victim.txt = %q, %v: a deny rule was dodged", b, err)
	}
	for _, gone := range []string{"old-dshd", filepath.Join(f.home, ".config", "old")} {
		if _, err := os.Lstat(filepath.Join(f.ws, gone)); err == nil {
			t.Errorf("%s exists: a settings directory was moved", gone)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(f.dir, "*", "pwned*")); len(matches) > 0 {
		t.Errorf("written outside the workspace: %v", matches)
	}
	acptest.CheckSchema(t, c.Recorder)
}

// TestFaultPathsSwap: while the permission request for `write d/f.txt` is
// open, d is replaced by a symlink to a directory outside the workspace
// (as a background job could). After "allow once" the write must not land
// outside: the landing is checked again after the prompt.
func TestFaultPathsSwap(t *testing.T) {
	f, outside := pathsFixture(t)
	p := f.start(t)
	swapped := false
	c := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		if req.ToolCall.ToolCallID == "swap" && !swapped {
			swapped = true
			d := filepath.Join(f.ws, "d")
			if err := os.Rename(d, d+".old"); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(outside, d); err != nil {
				t.Error(err)
			}
		}
		return acptest.AllowOnce(ctx, req)
	}}
	conn := p.client(t, c)
	sid := open(t, conn, f.ws, acp.ClientCapabilities{})
	if _, err := prompt(callCtx(t, time.Minute), conn, sid, "swap"); err != nil {
		t.Fatal(err)
	}
	if !swapped {
		t.Fatal("the write did not ask")
	}
	if _, err := os.Stat(filepath.Join(outside, "f.txt")); err == nil {
		t.Error("the write landed outside the workspace through the swapped symlink")
	}
	if st := toolStatuses(c.Updates(), sid)["swap"]; st != acp.ToolCallFailed {
		t.Errorf("swap ended %q, want failed", st)
	}
}

// TestFaultPathsCompose: after "always allow" for `git config user.name
// Bob` and `git status`, `git config core.fsmonitor …` must ask again
// (finding 4): the grants were remembered exactly, not as prefixes.
func TestFaultPathsCompose(t *testing.T) {
	f, _ := pathsFixture(t)
	p := f.start(t)
	var mu sync.Mutex
	asked := map[string]int{}
	c := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		mu.Lock()
		defer mu.Unlock()
		asked[req.ToolCall.ToolCallID]++
		if req.ToolCall.ToolCallID == "cfg-fsmonitor" {
			return acptest.RejectOnce(ctx, req)
		}
		return acptest.AllowAlways(ctx, req)
	}}
	conn := p.client(t, c)
	sid := open(t, conn, f.ws, acp.ClientCapabilities{})
	if _, err := prompt(callCtx(t, time.Minute), conn, sid, "compose"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["cfg-fsmonitor"] != 1 {
		t.Errorf("git config core.fsmonitor asked %d times, want once (asked %v)", asked["cfg-fsmonitor"], asked)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "pwned-fsmonitor")); err == nil {
		t.Error("the fsmonitor command ran")
	}
}

// callResult is the content of the update that ended a call.
func callResult(c *acptest.Client, sid, id string) string {
	var out string
	for _, n := range c.Updates() {
		if u, ok := n.Update.Value.(*acp.ToolCallUpdate); ok && n.SessionID == sid && u.ToolCallID == id && u.Status != nil {
			raw, _ := json.Marshal(u.Content)
			out = string(raw)
		}
	}
	return out
}
