package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dsh-tools/dshd/model/llm"
)

// OllamaDefaultContext is the context Ollama runs a model with when
// neither the model's parameters (num_ctx) nor a loaded instance say
// otherwise: Ollama's documented default (docs/faq.md, "How can I specify
// the context window size?").
const OllamaDefaultContext = 4096

var _ llm.WindowProber = (*Provider)(nil)

// ProbeWindow implements [llm.WindowProber] for the local servers that
// can say how large a context they run a model with:
//
//   - llama.cpp: GET /props, default_generation_settings.n_ctx;
//   - Ollama: GET /api/ps (a loaded model's context_length), else POST
//     /api/show (num_ctx among its parameters), else
//     [OllamaDefaultContext] capped by the model's own context_length;
//   - vLLM: GET /v1/models, the model's max_model_len;
//   - LM Studio: GET /api/v0/models/{model}, loaded_context_length or
//     max_context_length.
//
// OpenAI's own API is never asked.
func (p *Provider) ProbeWindow(ctx context.Context, model string) (int, bool) {
	if model == "" {
		model = p.cfg.Model
	}
	base := strings.TrimRight(p.cfg.BaseURL, "/")
	if base == strings.TrimRight(DefaultBaseURL, "/") {
		return 0, false
	}
	root := strings.TrimSuffix(base, "/v1")
	var props struct {
		Default struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if p.getJSON(ctx, http.MethodGet, root+"/props", nil, &props) && props.Default.NCtx > 0 {
		return props.Default.NCtx, true
	}
	if n, ok := p.probeOllama(ctx, root, model); ok {
		return n, true
	}
	var models struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if p.getJSON(ctx, http.MethodGet, base+"/models", nil, &models) {
		for _, m := range models.Data {
			if m.ID == model && m.MaxModelLen > 0 {
				return m.MaxModelLen, true
			}
		}
	}
	var lms struct {
		Loaded int `json:"loaded_context_length"`
		Max    int `json:"max_context_length"`
	}
	if p.getJSON(ctx, http.MethodGet, root+"/api/v0/models/"+url.PathEscape(model), nil, &lms) {
		if lms.Loaded > 0 {
			return lms.Loaded, true
		}
		if lms.Max > 0 {
			return lms.Max, true
		}
	}
	return 0, false
}

func (p *Provider) probeOllama(ctx context.Context, root, model string) (int, bool) {
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if p.getJSON(ctx, http.MethodGet, root+"/api/ps", nil, &ps) {
		for _, m := range ps.Models {
			if (m.Name == model || m.Model == model) && m.ContextLength > 0 {
				return m.ContextLength, true
			}
		}
	}
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	if !p.getJSON(ctx, http.MethodPost, root+"/api/show", body, &show) {
		return 0, false
	}
	for _, line := range strings.Split(show.Parameters, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return n, true
			}
		}
	}
	n := OllamaDefaultContext
	for k, v := range show.ModelInfo {
		if f, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && f > 0 {
			n = min(n, int(f))
		}
	}
	return n, true
}

// getJSON requests url and decodes a 200 JSON answer into v.
func (p *Provider) getJSON(ctx context.Context, method, u string, body []byte, v any) bool {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return false
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.APIKey.Reveal())
	}
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return false
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(v) == nil
}
