package main

import (
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/config"
	"github.com/dsh-tools/dshd/model/catalog"
	"github.com/dsh-tools/dshd/policy"
)

func TestParseFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    flags
		wantErr string
	}{
		{name: "defaults", want: flags{logLevel: "warn"}},
		{name: "flags", args: []string{"--provider", "openai", "--model", "m", "--base-url", "http://x/v1", "--api-key-env", "K", "--state-dir", "/s", "--log-level", "debug"},
			want: flags{provider: "openai", model: "m", baseURL: "http://x/v1", apiKeyEnv: "K", stateDir: "/s", logLevel: "debug"}},
		{name: "environment", env: map[string]string{"DSHD_PROVIDER": "anthropic", "DSHD_MODEL": "claude", "DSHD_STATE_DIR": "/e", "DSHD_LOG_LEVEL": "debug"},
			want: flags{provider: "anthropic", model: "claude", stateDir: "/e", logLevel: "debug"}},
		{name: "flag beats environment", args: []string{"--model", "flag"}, env: map[string]string{"DSHD_MODEL": "env"},
			want: flags{model: "flag", logLevel: "warn"}},
		{name: "bad provider", args: []string{"--provider", "gemini"}, wantErr: "want script, openai or anthropic"},
		{name: "bad provider from env", env: map[string]string{"DSHD_PROVIDER": "x"}, wantErr: "want script"},
		{name: "bad level", args: []string{"--log-level", "loud"}, wantErr: "--log-level"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "unknown flag"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			got, done, err := parseFlags(tc.args, &out, env(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || done {
				t.Fatalf("err %v done %v", err, done)
			}
			if got != tc.want {
				t.Errorf("flags = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestValidateSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    config.Settings
		bad  string // the value the error names; "" means valid
	}{
		{"empty", config.Settings{}, ""},
		{"rules", config.Settings{Permissions: config.Permissions{Allow: []string{"read", "bash(go test *)"}, Deny: []string{"read(/etc/**)"}, DefaultMode: "plan"}}, ""},
		{"bad rule", config.Settings{Permissions: config.Permissions{Ask: []string{"bash("}}}, "bash("},
		{"bad mode", config.Settings{Permissions: config.Permissions{DefaultMode: "yolo"}}, "yolo"},
		{"bad provider", config.Settings{Model: config.Model{Provider: "gemini"}}, "gemini"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateSettings(&tc.s)
			if tc.bad == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			ve, ok := err.(*config.ValueError)
			if !ok || ve.Value != tc.bad {
				t.Fatalf("err = %#v, want a ValueError for %q", err, tc.bad)
			}
		})
	}
}

func TestOverlayAndRestriction(t *testing.T) {
	files := config.Settings{Model: config.Model{Provider: "openai", Name: "file-model", BaseURL: "http://file"}, Tools: config.Tools{Deny: []string{"bash"}}}
	s := overlay(files, flags{model: "flag-model"})
	if s.Model.Provider != "openai" || s.Model.Name != "flag-model" || s.Model.BaseURL != "http://file" {
		t.Errorf("overlay = %+v", s.Model)
	}
	if s := overlay(config.Settings{}, flags{script: "x.json"}); s.Model.Provider != "script" || s.Model.Script != "x.json" {
		t.Errorf("--script alone = %+v", s.Model)
	}
	r := restriction(s)
	if r.Admits("bash") || !r.Admits("read") {
		t.Errorf("restriction admits bash=%v read=%v", r.Admits("bash"), r.Admits("read"))
	}
	only := restriction(config.Settings{Tools: config.Tools{Allow: []string{"read"}}})
	if only.Admits("bash") || !only.Admits("read") {
		t.Error("allow-list not applied")
	}
}

func TestLoopOptions(t *testing.T) {
	log := quietLog()
	if o, err := loopOptions(config.Settings{}, "", log); err != nil || o.Provider == nil || o.Model != "script" {
		t.Errorf("default = %+v, %v", o, err)
	}
	if _, err := loopOptions(config.Settings{Model: config.Model{Provider: "openai"}}, "", log); err == nil {
		t.Error("openai without a model name accepted")
	}
	t.Setenv("TEST_KEY", "sk-secret")
	o, err := loopOptions(config.Settings{Model: config.Model{Provider: "anthropic", Name: "c", APIKeyEnv: "TEST_KEY"}, MaxTurnRequests: 7}, "", log)
	if err != nil || o.Provider == nil || !o.Images || o.MaxTurnRequests != 7 {
		t.Errorf("anthropic = %+v, %v", o, err)
	}
	off := false
	o, err = loopOptions(config.Settings{Model: config.Model{ContextWindow: 32_000, AutoCompact: &off, Pricing: &config.Pricing{Input: 2, Output: 8}}}, "", log)
	if err != nil || o.ContextWindow != 32_000 || !o.NoAutoCompact || o.Pricing == nil || *o.Pricing != (catalog.Pricing{Input: 2, Output: 8, CacheRead: 2, CacheWrite: 2}) {
		t.Errorf("window, compaction and pricing settings = %+v, %v", o, err)
	}
	if _, err := loopOptions(config.Settings{Model: config.Model{Provider: "script", Script: "/does/not/exist.json"}}, "", log); err == nil {
		t.Error("missing script file accepted")
	}
}

// FuzzValidateSettings feeds arbitrary settings files through the parser
// and the validator: neither may panic, and whatever the validator accepts
// compiles into rules without error.
func FuzzValidateSettings(f *testing.F) {
	f.Add([]byte(`{"permissions":{"allow":["read"],"deny":["bash(rm *)"],"defaultMode":"plan"}}`))
	f.Add([]byte(`{"permissions":{"ask":["bash("]}}`))
	f.Add([]byte(`{"model":{"provider":"gemini"}}`))
	f.Add([]byte(`{"tools":{"allow":["read"],"deny":["bash"]},"maxTurnRequests":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := config.Parse("settings.json", data)
		if err != nil {
			return
		}
		if validateSettings(&s) != nil {
			return
		}
		if _, err := policy.ParseRuleSet(s.Permissions.Allow, s.Permissions.Ask, s.Permissions.Deny); err != nil {
			t.Fatalf("validated rules do not compile: %v", err)
		}
	})
}
