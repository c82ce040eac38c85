package openai_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/model/openai"
)

func TestProbeWindow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		routes map[string]string // "METHOD path" → JSON body
		want   int
		ok     bool
	}{
		{"llama.cpp", map[string]string{"GET /props": `{"default_generation_settings":{"n_ctx":16384},"total_slots":1}`}, 16384, true},
		{"ollama loaded", map[string]string{"GET /api/ps": `{"models":[{"name":"qwen3:8b","model":"qwen3:8b","context_length":40960}]}`}, 40960, true},
		{"ollama num_ctx", map[string]string{"POST /api/show": `{"parameters":"stop \"<|im_end|>\"\nnum_ctx 32768","model_info":{"qwen3.context_length":40960}}`}, 32768, true},
		{"ollama default", map[string]string{"POST /api/show": `{"parameters":"","model_info":{"qwen3.context_length":40960}}`}, openai.OllamaDefaultContext, true},
		{"vllm", map[string]string{"GET /v1/models": `{"data":[{"id":"other","max_model_len":1},{"id":"qwen3:8b","max_model_len":65536}]}`}, 65536, true},
		{"lm studio", map[string]string{"GET /api/v0/models/qwen3:8b": `{"id":"qwen3:8b","loaded_context_length":8192,"max_context_length":40960}`}, 8192, true},
		{"nothing", map[string]string{}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					b, _ := io.ReadAll(r.Body)
					if !strings.Contains(string(b), `"model":"qwen3:8b"`) {
						t.Errorf("show body %s", b)
					}
				}
				body, ok := tc.routes[r.Method+" "+r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, body)
			}))
			defer srv.Close()
			p := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "qwen3:8b"})
			n, ok := p.ProbeWindow(context.Background(), "")
			if n != tc.want || ok != tc.ok {
				t.Errorf("ProbeWindow = %d, %v; want %d, %v", n, ok, tc.want, tc.ok)
			}
		})
	}
	// OpenAI itself is never asked.
	if _, ok := openai.New(openai.Config{}).ProbeWindow(context.Background(), "gpt-4o"); ok {
		t.Error("probed api.openai.com")
	}
}
