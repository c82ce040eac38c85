package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// TestModeTable pins the mode table (policy.Modes, whose descriptions the
// editor and the model read) against what the bridge's listeners do: each
// call runs in a session of each mode, and what happened (ran, asked,
// denied) must be what policy.Decide says and what the table below says.
func TestModeTable(t *testing.T) {
	outside := t.TempDir()
	cwd := t.TempDir()
	rules, err := policy.ParseRuleSet(
		[]string{"read_file(" + filepath.Join(outside, "allowed.txt") + ")", "edit_file(granted.go)"},
		[]string{"read_file(asked.txt)"},
		[]string{"run(rm *)"},
	)
	if err != nil {
		t.Fatal(err)
	}
	type call struct {
		name, tool string
		args       string
		kind       presentation.ToolCallKind
		outside    bool
	}
	calls := []call{
		{"read inside", "read_file", `{"path":"a.txt"}`, presentation.KindRead, false},
		{"read outside", "read_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(outside, "x.txt")), presentation.KindRead, true},
		{"read outside, allow rule", "read_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(outside, "allowed.txt")), presentation.KindRead, true},
		{"read, ask rule", "read_file", `{"path":"asked.txt"}`, presentation.KindRead, false},
		{"edit inside", "edit_file", `{"path":"main.go","new":"x"}`, presentation.KindEdit, false},
		{"edit inside, allow rule", "edit_file", `{"path":"granted.go","new":"x"}`, presentation.KindEdit, false},
		{"edit outside", "edit_file", fmt.Sprintf(`{"path":%q,"new":"x"}`, filepath.Join(outside, "x.go")), presentation.KindEdit, true},
		{"command", "run", `{"command":"go test"}`, presentation.KindExecute, false},
		{"command, deny rule", "run", `{"command":"rm x"}`, presentation.KindExecute, false},
	}
	const A, Q, D = policy.Allow, policy.Ask, policy.Deny
	want := map[policy.Mode][]policy.Decision{
		//                            read in, out, out+allow, ask rule, edit in, in+allow, out, command, deny rule
		policy.ModeDefault:           {A, Q, A, Q, Q, A, Q, Q, D},
		policy.ModeAcceptEdits:       {A, Q, A, Q, A, A, Q, Q, D},
		policy.ModePlan:              {A, Q, A, Q, D, D, D, D, D},
		policy.ModeBypassPermissions: {A, A, A, A, A, A, A, A, D},
	}
	if len(want) != len(policy.Modes()) {
		t.Fatalf("the test covers %d modes, the table has %d", len(want), len(policy.Modes()))
	}
	for _, m := range policy.Modes() {
		t.Run(string(m.ID), func(t *testing.T) {
			results := map[string]registry.Result{}
			loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
				for i, c := range calls {
					results[c.name] = turn.Execute(ctx, bridge.ToolCall{ID: fmt.Sprint("c", i), Name: c.tool, Arguments: json.RawMessage(c.args)})
				}
				return acp.StopEndTurn, nil
			})
			agent, err := buildTestAgentWith(loop, t.TempDir(), func(o *bridge.Options) {
				o.DefaultMode = m.ID
				o.Rules = rules
			})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			asked := map[string]bool{}
			client := &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
				mu.Lock()
				asked[req.ToolCall.ToolCallID] = true
				mu.Unlock()
				return acptest.RejectOnce(ctx, req)
			}}
			conn := connect(t, agent, client, acp.ClientCapabilities{})
			sid := newSession(t, conn, cwd)
			if _, err := prompt(conn, sid, "go"); err != nil {
				t.Fatal(err)
			}
			for i, c := range calls {
				got := A
				switch res := results[c.name]; {
				case asked[fmt.Sprint("c", i)]:
					got = Q
				case res.IsError && res.Error != nil && res.Error.Code == registry.CodeDenied:
					got = D
				case res.IsError:
					t.Errorf("%s: failed: %+v", c.name, res.Error)
				}
				v := rules
				v.Cwd = cwd
				verdict := v.Evaluate(c.tool, subjectsOf(c.kind, c.args))
				if ref := policy.Decide(m.ID, verdict, policy.ModeCall{Kind: c.kind, OutsideRoots: c.outside}); got != ref {
					t.Errorf("%s: the bridge decides %v, policy.Decide %v", c.name, got, ref)
				}
				if got != want[m.ID][i] {
					t.Errorf("%s: the bridge decides %v, the table here says %v", c.name, got, want[m.ID][i])
				}
			}
		})
	}
}

// subjectsOf is what the fake tools (testTools) declare as subjects.
func subjectsOf(kind presentation.ToolCallKind, args string) []registry.Subject {
	var a struct{ Path, Command string }
	_ = json.Unmarshal([]byte(args), &a)
	if kind == presentation.KindExecute {
		return []registry.Subject{{Kind: registry.SubjectCommand, Value: a.Command}}
	}
	return []registry.Subject{{Kind: registry.SubjectPath, Value: a.Path, Writes: kind == presentation.KindEdit}}
}
