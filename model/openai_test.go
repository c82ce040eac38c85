package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/model/internal/looptest"
	"github.com/dsh-tools/dshd/model/openai"
)

// TestLoopOverOpenAIAdapter runs a turn against the real OpenAI adapter and
// a local server speaking Chat Completions SSE: a streamed tool call, then
// an answer. The second request must carry the assistant's call and the
// tool's result.
func TestLoopOverOpenAIAdapter(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" {
			http.NotFound(w, r) // the loop asks local servers for their context size
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta string, finish string) {
			fin := "null"
			if finish != "" {
				fin = `"` + finish + `"`
			}
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, fin)
		}
		if n == 1 {
			chunk(`{"role":"assistant","content":"Let me look."}`, "")
			chunk(`{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"look","arguments":"{\"pa"}}]}`, "")
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"src\"}"}}]}`, "")
			chunk(`{}`, "tool_calls")
		} else {
			chunk(`{"role":"assistant","content":"All good."}`, "")
			chunk(`{}`, "stop")
		}
		fmt.Fprint(w, "data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":5}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	prov := openai.New(openai.Config{BaseURL: srv.URL, Model: "test-model", Transport: openai.Transport{Logger: looptest.Quiet()}})
	h := newHarness(t, harnessOptions{provider: prov})
	stop, err := h.prompt(context.Background(), h.newSession(), acp.Text("check src"))
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	if msg, _ := h.texts(); msg != "Let me look.All good." {
		t.Errorf("message %q", msg)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	second, _ := json.Marshal(bodies[1]["messages"])
	for _, want := range []string{`"tool_call_id":"call_9"`, `looked at src`, `"name":"look"`, `"role":"system"`} {
		if !strings.Contains(string(second), want) {
			t.Errorf("second request lacks %s: %s", want, second)
		}
	}
	h.validate()
}
