package providers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/model/script"
)

func TestNew(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "s.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"turns": []}`), 0o644)
	os.WriteFile(bad, []byte("{\"turns\": [\n  {\"respones\": []}]}"), 0o644)
	env := map[string]string{"OPENAI_API_KEY": "sk-openai-secret", "MY_KEY": " sk-mine-secret\n"}
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
		{"openai with the default key", Options{Provider: "openai", Model: "gpt"}, "*openai.Provider", Info{Provider: "openai", Model: "gpt", KeyFrom: "OPENAI_API_KEY", Images: true}, ""},
		{"ollama without a key", Options{Provider: "openai", Model: "qwen3", BaseURL: "http://localhost:11434/v1", Getenv: func(string) string { return "" }}, "*openai.Provider", Info{Provider: "openai", Model: "qwen3", BaseURL: "http://localhost:11434/v1", Images: true}, ""},
		{"anthropic with --api-key-env", Options{Provider: "anthropic", Model: "claude", APIKeyEnv: "MY_KEY"}, "*anthropic.Provider", Info{Provider: "anthropic", Model: "claude", KeyFrom: "MY_KEY", Images: true}, ""},
		{"a stored key wins", Options{Provider: "anthropic", Model: "claude", APIKey: "sk-stored-secret", APIKeyEnv: "MY_KEY"}, "*anthropic.Provider", Info{Provider: "anthropic", Model: "claude", KeyFrom: "credentials", Images: true}, ""},
		{"anthropic without a key starts (and warns)", Options{Provider: "anthropic", Model: "claude", APIKeyEnv: "NOPE"}, "*anthropic.Provider", Info{Provider: "anthropic", Model: "claude", Images: true}, ""},
		{"no model", Options{Provider: "openai"}, "", Info{}, "the openai provider needs a model name"},
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
				if errors.As(err, &se) != (tc.o.Script != "") {
					t.Errorf("err %v: a script error only for a script file", err)
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
