package credentials

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/dsh-tools/dshd/internal/atomicfile"
	"github.com/dsh-tools/dshd/model/llm"
)

// FileName is the credentials file's name in dshd's configuration directory.
const FileName = "credentials.json"

// Service is a provider `dshd auth` can set up.
type Service struct {
	ID   string // stored in the file: anthropic, openai, openrouter, local
	Name string // shown in the prompt
	// Provider is the wire protocol dshd speaks to it: anthropic or openai.
	Provider string
	// BaseURL is the default endpoint (the local one is asked for).
	BaseURL string
	// DefaultModel is offered when the user just presses Enter; "" means
	// the model must be named (or is taken from the server's list).
	DefaultModel string
	// KeyHelp says where to get a key; "" means the key is optional.
	KeyHelp string
}

// Services are the providers `dshd auth` offers, in its order.
var Services = []Service{
	{ID: "anthropic", Name: "Anthropic", Provider: "anthropic", BaseURL: "https://api.anthropic.com",
		DefaultModel: "claude-sonnet-4-5", KeyHelp: "create one at https://console.anthropic.com/settings/keys"},
	{ID: "openai", Name: "OpenAI", Provider: "openai", BaseURL: "https://api.openai.com/v1",
		DefaultModel: "gpt-5", KeyHelp: "create one at https://platform.openai.com/api-keys"},
	{ID: "openrouter", Name: "OpenRouter", Provider: "openai", BaseURL: "https://openrouter.ai/api/v1",
		DefaultModel: "anthropic/claude-sonnet-4.5", KeyHelp: "create one at https://openrouter.ai/settings/keys"},
	{ID: "local", Name: "A local OpenAI-compatible server (Ollama, llama.cpp, LM Studio, vLLM)", Provider: "openai",
		BaseURL: "http://localhost:11434/v1"},
}

// Lookup returns the service with id.
func Lookup(id string) (Service, bool) {
	for _, s := range Services {
		if s.ID == id {
			return s, true
		}
	}
	return Service{}, false
}

// Credentials are what `dshd auth` stored.
type Credentials struct {
	Service string
	BaseURL string // "" = the service's default
	Model   string
	APIKey  llm.Secret
}

// Endpoint is the base URL requests go to.
func (c *Credentials) Endpoint() string {
	if c.BaseURL != "" {
		return c.BaseURL
	}
	s, _ := Lookup(c.Service)
	return s.BaseURL
}

// Provider is the wire protocol of the service: anthropic or openai.
func (c *Credentials) Provider() string {
	s, _ := Lookup(c.Service)
	return s.Provider
}

// file is the JSON form; the key is plain text only here.
type file struct {
	Service string `json:"service"`
	BaseURL string `json:"baseURL,omitempty"`
	Model   string `json:"model"`
	APIKey  string `json:"apiKey,omitempty"`
}

// Load reads the credentials at path: nil and no error when there are
// none. A file that is not valid is an error naming it, so that a user can
// run `dshd auth` again (or `dshd logout`).
func Load(path string) (*Credentials, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("credentials %s: not valid JSON (run dshd auth again): %w", path, err)
	}
	if _, ok := Lookup(f.Service); !ok {
		return nil, fmt.Errorf("credentials %s: unknown service %q (run dshd auth again)", path, f.Service)
	}
	if f.Model == "" {
		return nil, fmt.Errorf("credentials %s: no model (run dshd auth again)", path)
	}
	return &Credentials{Service: f.Service, BaseURL: f.BaseURL, Model: f.Model, APIKey: llm.Secret(f.APIKey)}, nil
}

// Save writes c to path, readable and writable only by the user (0600;
// the directory is made 0700 when it is created). It writes a temporary
// file beside it and renames it over: a crash leaves the old credentials
// or the new ones, never half of either.
func Save(path string, c *Credentials) error {
	if _, ok := Lookup(c.Service); !ok {
		return fmt.Errorf("unknown service %q", c.Service)
	}
	data, err := json.MarshalIndent(file{Service: c.Service, BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey.Reveal()}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	return nil
}

// Remove deletes the credentials at path and reports whether there were
// any.
func Remove(path string) (bool, error) {
	err := os.Remove(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("credentials: %w", err)
}

// ErrRejected is wrapped by Check's error when the service refused the key.
var ErrRejected = errors.New("the key was rejected")

// Check makes one cheap authenticated request to the service at baseURL
// with key: the model list (Anthropic, OpenAI, a local server) or the
// key's own endpoint (OpenRouter, whose model list needs no key). It
// returns the model ids the list named, if any. A 401 or 403 is
// ErrRejected; anything else that is not a success says what happened.
func Check(ctx context.Context, client *http.Client, s Service, baseURL string, key llm.Secret) ([]string, error) {
	if baseURL == "" {
		baseURL = s.BaseURL
	}
	base := strings.TrimRight(baseURL, "/")
	var url string
	switch {
	case s.Provider == "anthropic":
		url = base + "/v1/models?limit=1000"
	case s.ID == "openrouter":
		url = base + "/key"
	default:
		url = base + "/models"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", baseURL, err)
	}
	if s.Provider == "anthropic" {
		req.Header.Set("x-api-key", key.Reveal())
		req.Header.Set("anthropic-version", "2023-06-01")
	} else if key != "" {
		req.Header.Set("Authorization", "Bearer "+key.Reveal())
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("could not reach %s: %w", base, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%w (%s%s)", ErrRejected, resp.Status, apiMessage(body))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fmt.Errorf("%s answered %s%s", base, resp.Status, apiMessage(body))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	var ids []string
	if json.Unmarshal(body, &list) == nil {
		for _, m := range list.Data {
			if m.ID != "" {
				ids = append(ids, m.ID)
			}
		}
	}
	return ids, nil
}

// apiMessage is the error message of an API's JSON error body, if any,
// as ": message".
func apiMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Error) == 0 {
		return ""
	}
	var msg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Error, &msg) == nil && msg.Message != "" {
		return ": " + msg.Message
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil && s != "" {
		return ": " + s
	}
	return ""
}
