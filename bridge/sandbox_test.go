package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/sandbox"
)

type shellArgs struct {
	Command       string  `json:"command"`
	Escalate      *bool   `json:"escalate,omitempty"`
	Justification *string `json:"justification,omitempty"`
}

// shellTool is a command tool like bash: its result is the sandbox
// policy the host gave it, or the host's refusal.
func shellTool() *registry.Definition {
	return mustDefine(registry.Define(registry.Spec[shellArgs]{
		Name: "shell", Description: "Run a command.", Kind: presentation.KindExecute,
		PresentCall: func(_ registry.Call, a shellArgs) presentation.CallView {
			return presentation.CallView{Title: "Run `" + a.Command + "`"}
		},
		Subjects: func(_ registry.Call, a shellArgs) []registry.Subject {
			s := registry.Subject{Kind: registry.SubjectCommand, Value: a.Command, Unsandboxed: a.Escalate != nil && *a.Escalate}
			if a.Justification != nil {
				s.Justification = *a.Justification
			}
			return []registry.Subject{s}
		},
	}, func(ctx context.Context, call registry.Call, a shellArgs) (registry.Result, error) {
		h := call.Host()
		p, ok, err := h.(host.Sandboxing).Sandbox()
		if err != nil {
			return registry.ErrorResult(registry.CodeToolError, err.Error()), nil
		}
		return registry.TextResult(fmt.Sprintf("sandboxed=%v %s", ok, p.Encode())), nil
	}))
}

func escalated(command, why string) shellArgs {
	yes := true
	a := shellArgs{Command: command, Escalate: &yes}
	if why != "" {
		a.Justification = &why
	}
	return a
}

var available = func() sandbox.Availability { return sandbox.Availability{LandlockABI: 7, Namespaces: true} }

type sandboxRun struct {
	asked   []*acp.RequestPermissionRequest
	results []string
	client  *acptest.Client
}

// runShell runs one shell call per args in a session of an agent built
// with adjust, answering every permission request with allow_once.
func runShell(t *testing.T, adjust func(*bridge.Options), calls ...shellArgs) *sandboxRun {
	t.Helper()
	var mu sync.Mutex
	run := &sandboxRun{}
	loop := bridge.LoopFunc(func(ctx context.Context, turn *bridge.Turn) (acp.StopReason, error) {
		for i, a := range calls {
			raw, _ := json.Marshal(a)
			out := turn.Execute(ctx, bridge.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "shell", Arguments: raw})
			text := ""
			for _, c := range out.Content {
				text += c.Text
			}
			mu.Lock()
			run.results = append(run.results, text)
			mu.Unlock()
		}
		return acp.StopEndTurn, nil
	})
	agent, err := buildTestAgentWith(loop, t.TempDir(), adjust)
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Registry().SetGlobal(append(testTools(), shellTool())...); err != nil {
		t.Fatal(err)
	}
	run.client = &acptest.Client{Permission: func(ctx context.Context, req *acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		mu.Lock()
		run.asked = append(run.asked, req)
		mu.Unlock()
		return acptest.AllowOnce(ctx, req)
	}}
	conn := connect(t, agent, run.client, acp.ClientCapabilities{})
	sid := newSession(t, conn, "/ws/project")
	if _, err := prompt(conn, sid, "go"); err != nil {
		t.Fatal(err)
	}
	return run
}

func requestText(req *acp.RequestPermissionRequest) string {
	var sb strings.Builder
	for _, c := range req.ToolCall.Content {
		if tc, ok := c.Value.(*acp.ToolCallContentBlock); ok {
			if tb, ok := tc.Content.Value.(*acp.TextContent); ok {
				sb.WriteString(tb.Text + "\n")
			}
		}
	}
	return sb.String()
}

func sandboxMetaOf(t *testing.T, meta acp.Meta) map[string]any {
	t.Helper()
	var m struct {
		Dshd struct {
			Sandbox map[string]any `json:"sandbox"`
		} `json:"dshd"`
	}
	if err := json.Unmarshal(meta, &m); err != nil || m.Dshd.Sandbox == nil {
		t.Fatalf("no _meta.dshd.sandbox in %s (%v)", meta, err)
	}
	return m.Dshd.Sandbox
}

// TestEscalatedCommandAlwaysAsks: a command the model wants to run
// outside the sandbox asks a person in every mode, bypassPermissions
// included, even when an allow rule covers the tool, offers nothing to
// remember, and says plainly that it runs unsandboxed and why.
func TestEscalatedCommandAlwaysAsks(t *testing.T) {
	allowAll, err := policy.ParseRuleSet([]string{"shell"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []policy.Mode{policy.ModeDefault, policy.ModeAcceptEdits, policy.ModeBypassPermissions} {
		t.Run(string(mode), func(t *testing.T) {
			run := runShell(t, func(o *bridge.Options) {
				o.DefaultMode, o.Rules = mode, allowAll
				o.Sandbox.Probe = available
			},
				escalated("make install", "installs into /usr/local"),
				escalated("make install", "installs into /usr/local"),
				shellArgs{Command: "make"})
			if len(run.asked) != 2 {
				t.Fatalf("%d permission requests, want one per escalated call (2)", len(run.asked))
			}
			for _, req := range run.asked {
				text := requestText(req)
				if !strings.Contains(text, "UNSANDBOXED") || !strings.Contains(text, "installs into /usr/local") {
					t.Errorf("permission text does not say it runs unsandboxed and why:\n%s", text)
				}
				for _, o := range req.Options {
					if o.Kind == acp.PermissionAllowAlways || o.Kind == acp.PermissionRejectAlways {
						t.Errorf("an escalated call offers %q", o.OptionID)
					}
				}
				if m := sandboxMetaOf(t, req.ToolCall.Meta); m["escalated"] != true || m["mode"] != "off" {
					t.Errorf("_meta.dshd.sandbox = %v", m)
				}
			}
			if !strings.HasPrefix(run.results[2], "sandboxed=true") {
				t.Errorf("the plain call was not sandboxed: %s", run.results[2])
			}
		})
	}
}

func TestEscalationNeedsJustification(t *testing.T) {
	run := runShell(t, func(o *bridge.Options) { o.DefaultMode = policy.ModeBypassPermissions; o.Sandbox.Probe = available },
		escalated("make install", ""))
	if len(run.asked) != 0 || !strings.Contains(run.results[0], "justification") {
		t.Errorf("asked %d times; result %q", len(run.asked), run.results[0])
	}
}

// TestSandboxedCommandSaysSo: a sandboxed command's card and permission
// request carry _meta.dshd.sandbox, and the request says where it may write.
func TestSandboxedCommandSaysSo(t *testing.T) {
	run := runShell(t, func(o *bridge.Options) {
		o.Sandbox = bridge.SandboxOptions{NoNetwork: true, WritableRoots: []string{"/opt/cache"}, Protected: []string{"/home/u/.config/dshd"}, Probe: available}
	}, shellArgs{Command: "go test ./..."})
	if len(run.asked) != 1 {
		t.Fatalf("%d permission requests", len(run.asked))
	}
	if text := requestText(run.asked[0]); !strings.Contains(text, "runs sandboxed: writes limited to /ws/project, /opt/cache, the temp directory; no network") {
		t.Errorf("permission text:\n%s", text)
	}
	want := map[string]any{"mode": "workspace-write", "network": false, "writableRoots": []any{"/ws/project", "/opt/cache"}}
	if got := sandboxMetaOf(t, run.asked[0].ToolCall.Meta); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("request _meta.dshd.sandbox = %v, want %v", got, want)
	}
	var card *acp.ToolCall
	for _, n := range run.client.Updates() {
		if tc, ok := n.Update.Value.(*acp.ToolCall); ok {
			card = tc
		}
	}
	if card == nil {
		t.Fatal("no tool_call")
	}
	if got := sandboxMetaOf(t, card.Meta); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("card _meta.dshd.sandbox = %v, want %v", got, want)
	}
	p, err := sandbox.DecodePolicy(strings.TrimPrefix(run.results[0], "sandboxed=true "))
	if err != nil {
		t.Fatalf("%s: %v", run.results[0], err)
	}
	for _, path := range []string{"/ws/project/.git", "/ws/project/.dshd", "/home/u/.config/dshd"} {
		if !strings.Contains(strings.Join(p.Protected, " "), path) {
			t.Errorf("protected %v lacks %s", p.Protected, path)
		}
	}
}

func TestSandboxUnavailable(t *testing.T) {
	missing := func() sandbox.Availability { return sandbox.Availability{Reason: "the kernel offers no Landlock"} }
	run := runShell(t, func(o *bridge.Options) { o.Sandbox.Probe = missing }, shellArgs{Command: "make"})
	if !strings.HasPrefix(run.results[0], "sandboxed=false") {
		t.Errorf("result %s", run.results[0])
	}
	if text := requestText(run.asked[0]); !strings.Contains(text, "without the OS sandbox") || !strings.Contains(text, "no Landlock") {
		t.Errorf("permission text:\n%s", text)
	}
	run = runShell(t, func(o *bridge.Options) { o.Sandbox = bridge.SandboxOptions{Required: true, Probe: missing} }, shellArgs{Command: "make"})
	if !strings.Contains(run.results[0], "sandbox.required") {
		t.Errorf("required sandbox: result %s", run.results[0])
	}
}

// TestSandboxConfigOption: the sandbox picker shows the session's mode,
// changes it for the session's next command, refuses bad values and
// shows where the sandbox cannot run.
func TestSandboxConfigOption(t *testing.T) {
	for _, probe := range []func() sandbox.Availability{available, func() sandbox.Availability { return sandbox.Availability{Reason: "macOS"} }} {
		agent, err := buildTestAgentWith(bridge.LoopFunc(func(context.Context, *bridge.Turn) (acp.StopReason, error) { return acp.StopEndTurn, nil }),
			t.TempDir(), func(o *bridge.Options) { o.Sandbox.Probe = probe })
		if err != nil {
			t.Fatal(err)
		}
		conn := connect(t, agent, &acptest.Client{}, acp.ClientCapabilities{})
		ctx := context.Background()
		s, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/ws/project", MCPServers: []acp.MCPServer{}})
		if err != nil {
			t.Fatal(err)
		}
		opt := findSelect(s.ConfigOptions, bridge.ConfigSandbox)
		if opt == nil || opt.CurrentValue != "workspace-write" || len(opt.Options.Flat) != 3 {
			t.Fatalf("sandbox option %+v", opt)
		}
		unavailable := strings.Contains(opt.Options.Flat[0].Name, "unavailable") && strings.Contains(*opt.Description, "macOS")
		if unavailable != !probe().Available() {
			t.Errorf("available=%v but option %q / %q", probe().Available(), opt.Options.Flat[0].Name, *opt.Description)
		}
		resp, err := conn.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{SessionID: s.SessionID, ConfigID: bridge.ConfigSandbox, Value: acp.ConfigValue{ID: "read-only"}})
		if err != nil {
			t.Fatal(err)
		}
		if opt := findSelect(resp.ConfigOptions, bridge.ConfigSandbox); opt == nil || opt.CurrentValue != "read-only" {
			t.Errorf("after set: %+v", opt)
		}
		if _, err := conn.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{SessionID: s.SessionID, ConfigID: bridge.ConfigSandbox, Value: acp.ConfigValue{ID: "sideways"}}); err == nil {
			t.Error("a bad sandbox value was accepted")
		}
	}
}

func findSelect(opts []acp.SessionConfigOption, id string) *acp.SelectConfigOption {
	for _, o := range opts {
		if s, ok := o.Value.(*acp.SelectConfigOption); ok && s.ID == id {
			return s
		}
	}
	return nil
}

// TestSandboxProbedAtInitialize: the probe (which starts a process) is not
// run when the agent is made, only once a client initializes, and once.
func TestSandboxProbedAtInitialize(t *testing.T) {
	probed := make(chan struct{}, 2)
	agent, err := buildTestAgentWith(bridge.LoopFunc(func(context.Context, *bridge.Turn) (acp.StopReason, error) {
		return acp.StopEndTurn, nil
	}), t.TempDir(), func(o *bridge.Options) {
		o.Sandbox = bridge.SandboxOptions{Probe: func() sandbox.Availability {
			probed <- struct{}{}
			return available()
		}}
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-probed:
		t.Fatal("the sandbox was probed before any client initialized")
	default:
	}
	conn := connect(t, agent, &acptest.Client{}, acp.ClientCapabilities{})
	<-probed // started by initialize, whether or not a session follows
	newSession(t, conn, t.TempDir())
	if a := agent.SandboxAvailability(); !a.Available() {
		t.Errorf("availability %+v", a)
	}
	select {
	case <-probed:
		t.Error("the sandbox was probed twice")
	default:
	}
}

// sandboxOptionMeta is the _meta.dshd of the sandbox config option in opts.
func sandboxOptionMeta(t *testing.T, opts []acp.SessionConfigOption) map[string]any {
	t.Helper()
	for _, o := range opts {
		if sel, ok := o.Value.(*acp.SelectConfigOption); ok && sel.ID == bridge.ConfigSandbox {
			var m map[string]map[string]any
			if err := json.Unmarshal(sel.Meta, &m); err != nil {
				t.Fatal(err)
			}
			return m[bridge.MetaKey]
		}
	}
	t.Fatalf("no sandbox option in %v", opts)
	return nil
}

// TestFirstSessionDoesNotWaitForTheProbe: a session/new that comes while
// the sandbox probe (a start of the launcher) still runs is answered from
// the quick probe, and the options follow once the probe has answered.
// Before, the first session of every daemon waited some 20 ms for it.
func TestFirstSessionDoesNotWaitForTheProbe(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quick sandbox.Availability
	}{
		{"available", sandbox.Availability{LandlockABI: 7}},
		{"unavailable", sandbox.Availability{Reason: "no Landlock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			full := available()
			if !tc.quick.Available() {
				full = tc.quick
			}
			agent, err := buildTestAgentWith(bridge.LoopFunc(func(context.Context, *bridge.Turn) (acp.StopReason, error) {
				return acp.StopEndTurn, nil
			}), t.TempDir(), func(o *bridge.Options) {
				o.Sandbox = bridge.SandboxOptions{
					Probe:      func() sandbox.Availability { <-release; return full },
					QuickProbe: func() sandbox.Availability { return tc.quick },
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			client := &acptest.Client{}
			conn := connect(t, agent, client, acp.ClientCapabilities{})
			t.Cleanup(func() {
				select {
				case <-release:
				default:
					close(release)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The probe is held: on the old code this waited for it.
			resp, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: t.TempDir(), MCPServers: []acp.MCPServer{}})
			if err != nil {
				t.Fatal(err)
			}
			meta := sandboxOptionMeta(t, resp.ConfigOptions)
			if meta["available"] != tc.quick.Available() {
				t.Errorf("session/new: available %v, want %v", meta["available"], tc.quick.Available())
			}
			if _, has := meta["namespaces"]; has == tc.quick.Available() {
				t.Errorf("session/new: namespaces %v present %v; it is known only when the sandbox is unavailable", meta["namespaces"], has)
			}
			close(release)
			if !tc.quick.Available() {
				// Final already: a turn (which waits for the session's
				// announcement) ends with no options sent again.
				if _, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: resp.SessionID, Prompt: []acp.ContentBlock{acp.Text("hi")}}); err != nil {
					t.Fatal(err)
				}
				for _, n := range client.Updates() {
					if _, ok := n.Update.Value.(*acp.ConfigOptionUpdate); ok {
						t.Errorf("options sent again though the quick probe's answer was final: %+v", n)
					}
				}
				return
			}
			err = client.WaitUpdates(ctx, func(ns []acp.SessionNotification) bool {
				for _, n := range ns {
					if u, ok := n.Update.Value.(*acp.ConfigOptionUpdate); ok && n.SessionID == resp.SessionID {
						m := sandboxOptionMeta(t, u.ConfigOptions)
						return m["namespaces"] == true && m["available"] == true
					}
				}
				return false
			})
			if err != nil {
				t.Fatalf("no config_option_update with the probe's answer: %v (updates %+v)", err, client.Updates())
			}
		})
	}
}

// TestConnectionEndWaitsForTheProbe: when the editor goes away while the
// sandbox probe runs, the agent's Serve waits for it to end (up to a
// bound), so that its process does not outlive the daemon and its finding
// is kept for the next one. Before, a daemon closed within ~20 ms of
// initialize left the probe running, and never cached its answer.
func TestConnectionEndWaitsForTheProbe(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release bool // the probe ends; otherwise it hangs past the bound
	}{
		{"probe ends", true},
		{"probe hangs", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				started, release := make(chan struct{}), make(chan struct{})
				agent, err := buildTestAgentWith(bridge.LoopFunc(func(context.Context, *bridge.Turn) (acp.StopReason, error) {
					return acp.StopEndTurn, nil
				}), t.TempDir(), func(o *bridge.Options) {
					o.Sandbox = bridge.SandboxOptions{
						Probe: func() sandbox.Availability {
							close(started)
							<-release
							return available()
						},
						QuickProbe: func() sandbox.Availability { return sandbox.Availability{LandlockABI: 7} },
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				_, hangUp := connectHangUp(t, agent, &acptest.Client{}, acp.ClientCapabilities{})
				<-started
				hungUp := make(chan struct{})
				go func() { hangUp(); close(hungUp) }()
				synctest.Wait()
				select {
				case <-hungUp:
					t.Fatal("Serve returned while the probe was running")
				default:
				}
				start := time.Now()
				if tc.release {
					close(release)
				}
				<-hungUp
				waited := time.Since(start)
				if tc.release && waited != 0 {
					t.Errorf("Serve returned %v after the probe ended, want at once", waited)
				}
				if !tc.release && waited != 2*time.Second {
					t.Errorf("Serve gave a hanging probe %v, want the 2 s bound", waited)
				}
				if !tc.release {
					close(release) // the bubble's goroutines must end
				}
			})
		})
	}
}
