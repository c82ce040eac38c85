package bridge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/tools"
)

// BenchmarkFileCalls runs the built-in read and write tools through the
// bridge and its pipeline (listeners, guards, the tool, the cards) in an
// acceptEdits session, 100 calls per turn, on a small file in a real
// workspace a few directories deep: the cost of landing each path and
// opening it beneath its root (issue 14) is in these figures. The noop
// sub-benchmark is the same turn with a tool that touches no file, the
// reference measured in the same run. Run it on two commits back to back
// to compare them (bench/results.md has the figures).
func BenchmarkFileCalls(b *testing.B) {
	const calls = 100
	ws := filepath.Join(b.TempDir(), "home", "u", "src", "project")
	file := filepath.Join("internal", "pkg", "small.go")
	if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(file)), 0o755); err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("package pkg // a line of Go\n", 40)
	if err := os.WriteFile(filepath.Join(ws, file), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	noop := registry.MustDefine(registry.Spec[struct{}]{Name: "noop", Description: "Do nothing.", Kind: presentation.KindRead},
		func(context.Context, registry.Call, struct{}) (registry.Result, error) {
			return registry.TextResult("ok"), nil
		})
	for _, bc := range []struct {
		name, tool string
		args       any
	}{
		{"noop", "noop", map[string]any{}},
		{"read", "read", map[string]any{"path": file}},
		{"write", "write", map[string]any{"path": file, "content": content}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args, _ := json.Marshal(bc.args)
			reg := registry.New()
			if err := reg.SetGlobal(append(tools.Builtin(tools.Options{}), noop)...); err != nil {
				b.Fatal(err)
			}
			agent := bridge.New(bridge.Options{Loop: callsLoop(calls, bc.tool, args), Registry: reg, Logger: discardLogger()})
			conn, sid := benchSetup(b, agent, &acptest.Client{Permission: acptest.AllowOnce}, ws)
			ctx := context.Background()
			if _, err := conn.SetSessionMode(ctx, &acp.SetSessionModeRequest{SessionID: sid, ModeID: string(policy.ModeAcceptEdits)}); err != nil {
				b.Fatal(err)
			}
			cpu0 := processCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.Text("go")}})
				if err != nil || resp.StopReason != acp.StopEndTurn {
					b.Fatalf("prompt: %v %v", resp, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*calls), "cpu-ns/call")
		})
	}
}
