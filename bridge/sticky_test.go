package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/bridge/grants"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
	"github.com/dsh-tools/dshd/policy"
)

// TestRememberScopes: the settings' scope decides where an Always allow
// goes, and the option names say it; a scope switched live applies to the
// next ask.
func TestRememberScopes(t *testing.T) {
	for _, tt := range []struct {
		scope  policy.Scope
		phrase string
	}{
		{policy.ScopeSession, "in this session"},
		{policy.ScopeProject, "in this project"},
		{policy.ScopeUser, "in all your projects"},
		{"", "in this project"}, // the default
	} {
		t.Run(string(tt.scope), func(t *testing.T) {
			cwd, config := t.TempDir(), t.TempDir()
			userFile := filepath.Join(config, "dshd", grants.FileName)
			loop := callsLoop(1, "run", json.RawMessage(`{"command":"go test ./..."}`))
			agent, err := buildTestAgentWith(loop, t.TempDir(), func(o *bridge.Options) {
				o.Grants = grants.New(userFile)
				o.Remember = tt.scope
			})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var names []string
			client := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
				mu.Lock()
				for _, o := range req.Options {
					names = append(names, o.Name)
				}
				mu.Unlock()
				return acptest.AllowAlways(ctx, req)
			}}
			conn := connect(t, agent, client, acp.ClientCapabilities{})
			sid := newSession(t, conn, cwd)
			if _, err := prompt(conn, sid, "go"); err != nil {
				t.Fatal(err)
			}
			if all := strings.Join(names, " | "); !strings.Contains(all, "Always allow") || !strings.Contains(all, tt.phrase) {
				t.Errorf("option names %q do not say %q", all, tt.phrase)
			}
			_, projErr := os.Stat(grants.ProjectFile(cwd))
			_, userErr := os.Stat(userFile)
			wantProj, wantUser := tt.phrase == "in this project", tt.scope == policy.ScopeUser
			if (projErr == nil) != wantProj || (userErr == nil) != wantUser {
				t.Errorf("project file written %v, user file written %v", projErr == nil, userErr == nil)
			}
			// The answer holds in a new session of the same project unless
			// it was for the session only.
			mu.Lock()
			names = nil
			mu.Unlock()
			sid2 := newSession(t, conn, cwd)
			if _, err := prompt(conn, sid2, "go"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			asked := len(names) > 0
			mu.Unlock()
			if asked != (tt.scope == policy.ScopeSession) {
				t.Errorf("a new session asked again: %v", asked)
			}
		})
	}
}

// TestForkCopiesTheLog: a fork's log holds every record of the original up
// to its last complete turn, kinds the bridge does not know included (a
// compaction, say), and not the records of a turn still running; an
// unknown session or another cwd is refused.
func TestForkCopiesTheLog(t *testing.T) {
	state := t.TempDir()
	agent := newTestAgent(t, &scriptLoop{}, state)
	conn, hangUp := connectHangUp(t, agent, &acptest.Client{}, acp.ClientCapabilities{})
	sid := newSession(t, conn, "/ws/project")
	if _, err := prompt(conn, sid, "hello"); err != nil {
		t.Fatal(err)
	}
	hangUp()
	path := filepath.Join(state, sid+".jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`{"t":"compaction","ts":1,"d":{"compactionId":"k1"}}` + "\n" + `{"t":"prompt","ts":2,"d":[{"type":"text","text":"still running"}]}` + "\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	agent2 := newTestAgent(t, &scriptLoop{}, state)
	conn2 := connect(t, agent2, &acptest.Client{}, acp.ClientCapabilities{})
	ctx := context.Background()
	fork, err := conn2.ForkSession(ctx, &acp.ForkSessionRequest{SessionID: sid, Cwd: "/ws/project"})
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := sessionlog.ReadFile(state, fork.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, r.Kind)
		if r.Kind == sessionlog.KindPrompt && strings.Contains(string(r.Payload), "still running") {
			t.Error("the fork copied a turn that had not ended")
		}
	}
	if !strings.Contains(strings.Join(kinds, " "), "compaction") {
		t.Errorf("the fork's records %v lack the compaction", kinds)
	}
	var e *acp.Error
	if _, err := conn2.ForkSession(ctx, &acp.ForkSessionRequest{SessionID: "nope", Cwd: "/ws/project"}); !errors.As(err, &e) || e.Code != acp.CodeResourceNotFound {
		t.Errorf("fork of an unknown session: %v", err)
	}
	if _, err := conn2.ForkSession(ctx, &acp.ForkSessionRequest{SessionID: sid, Cwd: "/elsewhere"}); !errors.As(err, &e) || e.Code != acp.CodeInvalidParams {
		t.Errorf("fork into another cwd: %v", err)
	}
}
