package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/dsh-tools/dshd/config"
	"github.com/dsh-tools/dshd/internal/credentials"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/anthropic"
	"github.com/dsh-tools/dshd/model/catalog"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/openai"
	"github.com/dsh-tools/dshd/model/script"
)

// loopOptions builds the agent loop's options from the effective
// settings: the provider (the embedded demo script when none is
// configured), the model names and the per-turn limits.
// A non-empty key (from the stored credentials) is used in place of the
// provider's API key variable.
func loopOptions(s config.Settings, key llm.Secret, log *slog.Logger) (model.Options, error) {
	m := s.Model
	o := model.Options{
		Model:           m.Name,
		Models:          m.Models,
		MaxTokens:       m.MaxTokens,
		MaxTurnRequests: s.MaxTurnRequests,
		ContextWindow:   m.ContextWindow,
		NoAutoCompact:   m.AutoCompact != nil && !*m.AutoCompact,
		Logger:          log,
	}
	if p := m.Pricing; p != nil {
		o.Pricing = &catalog.Pricing{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
		// Unset cache prices are the input price: no discount, no
		// surcharge.
		if o.Pricing.CacheRead == 0 {
			o.Pricing.CacheRead = p.Input
		}
		if o.Pricing.CacheWrite == 0 {
			o.Pricing.CacheWrite = p.Input
		}
	}
	switch m.Provider {
	case "", "script":
		sc := script.Demo()
		if m.Script != "" {
			var err error
			if sc, err = script.Load(m.Script); err != nil {
				return o, err
			}
		}
		o.Provider = script.New(sc)
		if m.Provider == "" && m.Script == "" {
			o.Provider = demoNotice{o.Provider}
		}
		if o.Model == "" {
			o.Model = "script"
		}
	case "openai":
		if m.Name == "" {
			return o, fmt.Errorf("the openai provider needs a model name (--model or model.name)")
		}
		key, from := secretOr(key, keyEnv(m.APIKeyEnv, "OPENAI_API_KEY"))
		if from == "" {
			log.Info("no API key for the openai provider; requests go without one (fine for Ollama and llama.cpp)", "env", keyEnv(m.APIKeyEnv, "OPENAI_API_KEY"))
		}
		o.Provider = openai.New(openai.Config{BaseURL: m.BaseURL, APIKey: key, Model: m.Name, MaxTokens: m.MaxTokens, Transport: openai.Transport{Logger: log}})
		o.Images = true
	case "anthropic":
		if m.Name == "" {
			return o, fmt.Errorf("the anthropic provider needs a model name (--model or model.name)")
		}
		env := keyEnv(m.APIKeyEnv, "ANTHROPIC_API_KEY")
		key, from := secretOr(key, env)
		if from == "" {
			log.Warn("no API key for the anthropic provider: requests will be refused", "env", env)
		}
		o.Provider = anthropic.New(anthropic.Config{BaseURL: m.BaseURL, APIKey: key, Model: m.Name, MaxTokens: m.MaxTokens, Transport: anthropic.Transport{Logger: log}})
		o.Images = true
	default:
		return o, fmt.Errorf("unknown provider %q (want script, openai or anthropic)", m.Provider)
	}
	return o, nil
}

func keyEnv(configured, def string) string {
	if configured != "" {
		return configured
	}
	return def
}

// secretOr is key when there is one (from the stored credentials), else
// the value of the environment variable env; from names where it came
// from, "" when nowhere.
func secretOr(key llm.Secret, env string) (llm.Secret, string) {
	if key != "" {
		return key, "credentials"
	}
	return llm.SecretFromEnv(env)
}

// withCredentials fills in the provider that `dshd auth` stored when
// neither a flag, its environment variable nor a settings file names one:
// those always win. A model name or endpoint given there is kept too. The
// returned key is the stored one, "" when the credentials do not apply.
func withCredentials(s config.Settings, c *credentials.Credentials) (config.Settings, llm.Secret) {
	if c == nil || s.Model.Provider != "" || s.Model.Script != "" {
		return s, ""
	}
	s.Model.Provider = c.Provider()
	if s.Model.Name == "" {
		s.Model.Name = c.Model
	}
	if s.Model.BaseURL == "" {
		s.Model.BaseURL = c.Endpoint()
	}
	return s, c.APIKey
}

// demoNoticeText opens every turn of the embedded demo: a user who has
// not set up a provider learns how.
const demoNoticeText = "(dshd is playing its built-in demo: no model provider is set up. " +
	"To use a real model, run `dshd auth` in a terminal — your editor may offer it as \"Set up a model provider\" — " +
	"or start dshd with --provider and --model; see `dshd --help`.)\n\n"

// demoNotice is the embedded demo script with [demoNoticeText] before the
// first reply of each turn.
type demoNotice struct{ llm.Provider }

func (d demoNotice) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleUser && !req.Messages[n-1].HasToolResults() {
		emit(llm.TextDelta{Text: demoNoticeText})
	}
	return d.Provider.Stream(ctx, req, emit)
}
