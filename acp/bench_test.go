package acp_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"github.com/dsh-tools/dshd/acp"
)

// benchUpdate is a session/update tool_call_update carrying a diff, as the bridge sends after
// an edit.
func benchUpdate() acp.SessionUpdate {
	return acp.Update(&acp.ToolCallUpdate{
		ToolCallID: "call-42",
		Status:     acp.Ptr(acp.ToolCallCompleted),
		Title:      acp.Ptr("Edit main.go"),
		Content: []acp.ToolCallContent{acp.Diff("/work/cmd/main.go", acp.Ptr("func main() {\n\tfmt.Println(\"hi\")\n}\n"),
			"func main() {\n\tfmt.Println(\"hello\")\n}\n")},
		Locations: []acp.ToolCallLocation{{Path: "/work/cmd/main.go", Line: acp.Ptr(uint32(3))}},
	})
}

// Flat equivalents: the same JSON with plain structs and explicit type fields, the reference
// the union codec is measured against.
type flatDiff struct {
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

type flatLocation struct {
	Path string  `json:"path"`
	Line *uint32 `json:"line,omitempty"`
}

type flatToolCallUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	ToolCallID    string         `json:"toolCallId"`
	Title         *string        `json:"title,omitempty"`
	Status        *string        `json:"status,omitempty"`
	Content       []flatDiff     `json:"content,omitzero"`
	Locations     []flatLocation `json:"locations,omitzero"`
}

// reportCPU adds a cpu-ns/op metric (process CPU time per op), a figure that other processes
// on the machine do not inflate; call it as defer reportCPU(b)().
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkToolCallUpdateEncode is the union codec as encoding/json drives it: json.Marshal of
// the wrapper. Compare with BenchmarkToolCallUpdateEncodeFlat.
func BenchmarkToolCallUpdateEncode(b *testing.B) {
	u := benchUpdate()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := json.Marshal(u); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToolCallUpdateEncodeFlat(b *testing.B) {
	data, _ := json.Marshal(benchUpdate())
	var f flatToolCallUpdate
	if err := json.Unmarshal(data, &f); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := json.Marshal(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolCallUpdateEncodeDirect is the union codec alone: the wrapper's MarshalJSON,
// without the validating compaction encoding/json v1 applies to every Marshaler's output.
func BenchmarkToolCallUpdateEncodeDirect(b *testing.B) {
	u := benchUpdate()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		out, err := u.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		encodeSink = out
	}
}

var encodeSink []byte

// precomputed is a json.Marshaler that does no work at all.
type precomputed []byte

func (p precomputed) MarshalJSON() ([]byte, error) { return p, nil }

// BenchmarkToolCallUpdateEncodeFloor is the least json.Marshal can cost for any json.Marshaler
// producing this update: v1 validates and compacts whatever MarshalJSON returns. It bounds
// BenchmarkToolCallUpdateEncode from below.
func BenchmarkToolCallUpdateEncodeFloor(b *testing.B) {
	data, _ := json.Marshal(benchUpdate())
	p := precomputed(data)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToolCallUpdateDecode(b *testing.B) {
	data, _ := json.Marshal(benchUpdate())
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var u acp.SessionUpdate
		if err := json.Unmarshal(data, &u); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToolCallUpdateDecodeFlat(b *testing.B) {
	data, _ := json.Marshal(benchUpdate())
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		var f flatToolCallUpdate
		if err := json.Unmarshal(data, &f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoundTrip: one request from client to agent and its reply, over an in-memory pipe.
func BenchmarkRoundTrip(b *testing.B) {
	_, newAgent := newTestAgent(endTurn)
	agentEnd, clientEnd := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent := acp.ConnectClient(ctx, agentEnd, newAgent)
	conn := acp.ConnectAgent(ctx, clientEnd, acp.UnimplementedClient{})
	defer agent.Close()
	defer conn.Close()
	req := &acp.PromptRequest{SessionID: "s1", Prompt: []acp.ContentBlock{acp.Text("hello")}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Prompt(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
