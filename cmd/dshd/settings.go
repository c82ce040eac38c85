package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-tools/dshd/config"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/sandbox"
	"github.com/dsh-tools/dshd/tools"
)

// validateSettings checks what the JSON decoder cannot: permission rules,
// the default mode and the provider name. A bad value comes back as a
// *config.ValueError so that the file error points at its line and column.
func validateSettings(s *config.Settings) error {
	lists := []struct {
		name  string
		rules []string
	}{{"allow", s.Permissions.Allow}, {"ask", s.Permissions.Ask}, {"deny", s.Permissions.Deny}}
	for _, l := range lists {
		for _, text := range l.rules {
			if _, err := policy.ParseRule(text); err != nil {
				return &config.ValueError{Value: text, Err: fmt.Errorf("permissions.%s: %w", l.name, err)}
			}
		}
	}
	if m := s.Permissions.DefaultMode; m != "" {
		if _, err := policy.ParseMode(m); err != nil {
			return &config.ValueError{Value: m, Err: fmt.Errorf("permissions.defaultMode: %w", err)}
		}
	}
	if r := s.Permissions.Remember; r != "" {
		if _, err := policy.ParseScope(r); err != nil {
			return &config.ValueError{Value: r, Err: fmt.Errorf("permissions.remember: %w", err)}
		}
	}
	switch p := s.Model.Provider; p {
	case "", "script", "openai", "anthropic":
	default:
		return &config.ValueError{Value: p, Err: fmt.Errorf("model.provider: want script, openai or anthropic")}
	}
	if m := s.Sandbox.Mode; m != "" {
		if _, err := sandbox.ParseMode(m); err != nil {
			return &config.ValueError{Value: m, Err: fmt.Errorf("sandbox.mode: %w", err)}
		}
	}
	for _, r := range s.Sandbox.WritableRoots {
		if !filepath.IsAbs(r) && !strings.HasPrefix(r, "~/") {
			return &config.ValueError{Value: r, Err: errors.New("sandbox.writableRoots: want an absolute path or one starting with ~/")}
		}
	}
	if s.Model.ContextWindow < 0 {
		return fmt.Errorf("model.contextWindow must not be negative")
	}
	if p := s.Model.Pricing; p != nil && (p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0) {
		return fmt.Errorf("model.pricing: prices must not be negative")
	}
	if s.MaxTurnRequests < 0 {
		return fmt.Errorf("maxTurnRequests must not be negative")
	}
	if s.Instructions.BudgetBytes < 0 {
		return fmt.Errorf("instructions.budgetBytes must not be negative")
	}
	if s.Bash.MaxBackgroundJobs < 0 {
		return fmt.Errorf("bash.maxBackgroundJobs must not be negative")
	}
	return nil
}

// overlay applies the command line's model settings over the files': flags
// (and their environment variables) win.
func overlay(s config.Settings, f flags) config.Settings {
	m := &s.Model
	if f.provider != "" {
		m.Provider = f.provider
	}
	if f.model != "" {
		m.Name = f.model
	}
	if f.baseURL != "" {
		m.BaseURL = f.baseURL
	}
	if f.apiKeyEnv != "" {
		m.APIKeyEnv = f.apiKeyEnv
	}
	if f.script != "" {
		m.Script = f.script
		if m.Provider == "" {
			m.Provider = "script"
		}
	}
	return s
}

// ruleSet compiles the permission rules of valid settings.
func ruleSet(s config.Settings, home string) policy.RuleSet {
	// validateSettings admitted only valid rules, so there is no error;
	// were there one, the valid rules would still be kept.
	rs, _ := policy.ParseRuleSet(s.Permissions.Allow, s.Permissions.Ask, s.Permissions.Deny)
	rs.Home = home
	return rs
}

// restriction compiles the tools allow and deny lists.
func restriction(s config.Settings) registry.Restriction {
	var allow []string
	if len(s.Tools.Allow) > 0 {
		allow = s.Tools.Allow
	}
	return registry.NewRestriction(allow, s.Tools.Deny)
}

// toolOptions are the built-in tools' options from the bash settings.
func toolOptions(s config.Settings, jobs *tools.Jobs) tools.Options {
	return tools.Options{
		BashTimeout:    time.Duration(s.Bash.DefaultTimeoutMs) * time.Millisecond,
		BashMaxTimeout: time.Duration(s.Bash.MaxTimeoutMs) * time.Millisecond,
		OutputLimit:    s.Bash.OutputLimitBytes,
		Jobs:           jobs,
		MaxJobs:        s.Bash.MaxBackgroundJobs,
	}
}
