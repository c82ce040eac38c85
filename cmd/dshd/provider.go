package main

import (
	"fmt"
	"log/slog"

	"github.com/dsh-tools/dshd/config"
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
func loopOptions(s config.Settings, log *slog.Logger) (model.Options, error) {
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
		if o.Model == "" {
			o.Model = "script"
		}
	case "openai":
		if m.Name == "" {
			return o, fmt.Errorf("the openai provider needs a model name (--model or model.name)")
		}
		key, from := llm.SecretFromEnv(keyEnv(m.APIKeyEnv, "OPENAI_API_KEY"))
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
		key, from := llm.SecretFromEnv(env)
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
