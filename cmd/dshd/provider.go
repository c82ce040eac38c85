package main

import (
	"context"
	"log/slog"

	"github.com/dsh-tools/dshd/config"
	"github.com/dsh-tools/dshd/internal/credentials"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/catalog"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/providers"
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
	p, info, err := providers.New(providers.Options{
		Provider: m.Provider, Model: m.Name, BaseURL: m.BaseURL, APIKey: key, APIKeyEnv: m.APIKeyEnv,
		Script: m.Script, MaxTokens: m.MaxTokens, Logger: log,
	})
	if err != nil {
		return o, err
	}
	o.Provider, o.Images = p, info.Images
	if info.Provider == providers.Script {
		if m.Provider == "" && m.Script == "" {
			o.Provider = demoNotice{o.Provider}
		}
		if o.Model == "" {
			o.Model = "script"
		}
	}
	return o, nil
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
