package providers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/model/anthropic"
	"github.com/dsh-tools/dshd/model/openai"
	"github.com/dsh-tools/dshd/model/script"
)

func TestNew(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "s.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"turns": []}`), 0o644)
	os.WriteFile(bad, []byte("{\"turns\": [\n  {\"respones\": []}]}"), 0o644)
	env := map[string]string{"OPENAI_API_KEY": "sk-openai-secret", "MY_KEY": "sk-mine-secret", "ANTHROPIC_BASE_URL": "http://proxy"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name     string
		o        Options
		wantType string
		want     Info
		wantErr  string
	}{
		{"default is the demo", Options{}, "*script.Provider", Info{Provider: "script", Script: "embedded demo"}, ""},
		{"script file", Options{Provider: "script", Script: good}, "*script.Provider", Info{Provider: "script", Script: good}, ""},
		{"bad script file", Options{Provider: "script", Script: bad}, "", Info{}, bad + `:2:4: unknown field "respones"`},
		{"openai with the default key", Options{Provider: "openai", Model: "gpt"}, "*openai.Provider", Info{Provider: "openai", Model: "gpt", BaseURL: openai.DefaultBaseURL, KeyFrom: "OPENAI_API_KEY"}, ""},
		{"ollama without a key", Options{Provider: "openai", Model: "qwen3", BaseURL: "http://localhost:11434/v1", Getenv: func(string) string { return "" }}, "*openai.Provider", Info{Provider: "openai", Model: "qwen3", BaseURL: "http://localhost:11434/v1"}, ""},
		{"anthropic with --api-key-env", Options{Provider: "anthropic", Model: "claude", APIKeyEnv: "MY_KEY"}, "*anthropic.Provider", Info{Provider: "anthropic", Model: "claude", BaseURL: "http://proxy", KeyFrom: "MY_KEY"}, ""},
		{"anthropic without a key", Options{Provider: "anthropic", Model: "claude"}, "", Info{}, "needs an API key in " + anthropic.APIKeyEnv},
		{"empty --api-key-env", Options{Provider: "openai", Model: "m", APIKeyEnv: "NOPE"}, "", Info{}, "NOPE (--api-key-env) is empty"},
		{"no model", Options{Provider: "openai"}, "", Info{}, "needs a model"},
		{"unknown provider", Options{Provider: "gemini"}, "", Info{}, `unknown provider "gemini"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.o.Getenv == nil {
				tc.o.Getenv = getenv
			}
			p, info, err := New(tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				var se *script.Error
				if !errors.As(err, &se) && !errors.Is(err, ErrConfig) {
					t.Errorf("err %v is neither a script error nor ErrConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%T", p); got != tc.wantType {
				t.Errorf("type = %s, want %s", got, tc.wantType)
			}
			if info != tc.want {
				t.Errorf("info = %+v, want %+v", info, tc.want)
			}
			if s := fmt.Sprintf("%+v %#v", p, p); strings.Contains(s, "secret") {
				t.Errorf("the key prints: %s", s)
			}
		})
	}
}
