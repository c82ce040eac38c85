package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
)

// modelLoop is a loop with a config option of its own, as the built-in
// loop's model selector.
type modelLoop struct {
	bridge.LoopFunc
	mu     sync.Mutex
	models map[string]string // session -> model
}

func (l *modelLoop) SessionConfigOptions(sessionID string) []acp.SessionConfigOption {
	l.mu.Lock()
	defer l.mu.Unlock()
	current := l.models[sessionID]
	if current == "" {
		current = "small"
	}
	return []acp.SessionConfigOption{{Value: &acp.SelectConfigOption{
		ID: "model", Name: "Model", Category: acp.Ptr(acp.ConfigCategoryModel), CurrentValue: current,
		Options: acp.SelectOptions{Flat: []acp.SelectOption{{Value: "small", Name: "Small"}, {Value: "large", Name: "Large"}}},
	}}}
}

func (l *modelLoop) SetSessionConfigOption(sessionID, configID, value string) (bool, error) {
	if configID != "model" {
		return false, nil
	}
	if value != "small" && value != "large" {
		return true, fmt.Errorf("no model %q", value)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.models[sessionID] = value
	return true, nil
}

func newModelLoop() *modelLoop {
	return &modelLoop{
		LoopFunc: func(context.Context, *bridge.Turn) (acp.StopReason, error) { return acp.StopEndTurn, nil },
		models:   map[string]string{},
	}
}

func currentValue(opts []acp.SessionConfigOption, id string) string {
	for _, o := range opts {
		if s, ok := o.Value.(*acp.SelectConfigOption); ok && s.ID == id {
			return s.CurrentValue
		}
	}
	return ""
}

// TestLoopConfigOption: a loop's own option is listed after mode, set
// through session/set_config_option, recorded, and restored by a later
// daemon's session/load.
func TestLoopConfigOption(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	loop := newModelLoop()
	var closed []string
	client := &acptest.Client{Recorder: acptest.NewRecorder()}
	conn := connect(t, withCloseHook(t, loop, state, &closed), client, acp.ClientCapabilities{})
	ctx := context.Background()
	s, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := currentValue(s.ConfigOptions, "model"); got != "small" {
		t.Fatalf("session/new model option = %q, want small", got)
	}
	if currentValue(s.ConfigOptions, bridge.ConfigMode) == "" {
		t.Fatal("the mode option is gone")
	}
	resp, err := conn.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{SessionID: s.SessionID, ConfigID: "model", Value: acp.ConfigValue{ID: "large"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := currentValue(resp.ConfigOptions, "model"); got != "large" {
		t.Fatalf("after set, model = %q", got)
	}
	_, err = conn.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{SessionID: s.SessionID, ConfigID: "model", Value: acp.ConfigValue{ID: "huge"}})
	if !errors.Is(err, acp.ErrInvalidParams) {
		t.Fatalf("bad value: err = %v, want invalid params", err)
	}
	_, err = conn.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{SessionID: s.SessionID, ConfigID: "temperature", Value: acp.ConfigValue{ID: "1"}})
	if !errors.Is(err, acp.ErrInvalidParams) {
		t.Fatalf("unknown option: err = %v, want invalid params", err)
	}
	if _, err := conn.CloseSession(ctx, &acp.CloseSessionRequest{SessionID: s.SessionID}); err != nil {
		t.Fatal(err)
	}
	if len(closed) != 1 || closed[0] != s.SessionID {
		t.Fatalf("OnSessionClose saw %v, want [%s]", closed, s.SessionID)
	}
	acptest.CheckSchema(t, client.Recorder)

	// A fresh loop in a later daemon learns the recorded choice on load.
	later := newModelLoop()
	conn2 := connect(t, withCloseHook(t, later, state, &closed), &acptest.Client{}, acp.ClientCapabilities{})
	loaded, err := conn2.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: s.SessionID, Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := currentValue(loaded.ConfigOptions, "model"); got != "large" {
		t.Fatalf("after load, model = %q, want the recorded large", got)
	}
}

func withCloseHook(t *testing.T, loop bridge.Loop, state string, closed *[]string) *bridge.Agent {
	t.Helper()
	a, err := buildTestAgentWith(loop, state, func(o *bridge.Options) {
		o.OnSessionClose = func(info bridge.SessionInfo) { *closed = append(*closed, info.ID) }
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSecondInitializeRefused: capabilities are negotiated once per
// connection; a second initialize is refused and changes nothing.
func TestSecondInitializeRefused(t *testing.T) {
	agent := newTestAgent(t, newModelLoop(), t.TempDir())
	conn := connect(t, agent, &acptest.Client{}, acp.ClientCapabilities{Terminal: true})
	_, err := conn.Initialize(context.Background(), &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{}})
	if !errors.Is(err, acp.ErrInvalidRequest) {
		t.Fatalf("second initialize: err = %v, want invalid request", err)
	}
}
