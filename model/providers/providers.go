package providers

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/dsh-tools/dshd/model/anthropic"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/openai"
	"github.com/dsh-tools/dshd/model/script"
)

// Kinds of provider.
const (
	Script    = "script"
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// Options are the provider settings.
type Options struct {
	// Provider is script, openai or anthropic; "" is script.
	Provider string
	// Model is the model name (required but for script).
	Model string
	// BaseURL is the API root; "" is the vendor's.
	BaseURL string
	// APIKey, when set (a key the caller stored), is used in place of the
	// environment.
	APIKey llm.Secret
	// APIKeyEnv names the environment variable holding the key; "" is
	// OPENAI_API_KEY or ANTHROPIC_API_KEY. OpenAI-compatible servers may
	// need no key (Ollama, llama.cpp); Anthropic refuses requests without
	// one, which is logged as a warning rather than refused here, so that
	// a daemon still starts and says why its requests fail.
	APIKeyEnv string
	// Script is the script file of the script provider; "" is the
	// embedded demo.
	Script    string
	MaxTokens int
	Logger    *slog.Logger
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Info describes the built provider; it never holds the key.
type Info struct {
	Provider string
	Model    string
	BaseURL  string
	// KeyFrom is where the key came from: "credentials" (Options.APIKey),
	// the environment variable, or "" when there is none.
	KeyFrom string
	// Script is "embedded demo" or the script file (script provider).
	Script string
	// Images reports whether the provider accepts image input.
	Images bool
}

// New builds the provider o describes. A script file that does not load
// fails with its *script.Error; a settings problem (an unknown provider, a
// missing model name) with an error saying which setting to fix.
func New(o Options) (llm.Provider, Info, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	info := Info{Provider: o.Provider, Model: o.Model, BaseURL: o.BaseURL}
	switch o.Provider {
	case "", Script:
		info.Provider = Script
		if o.Script == "" {
			info.Script = "embedded demo"
			return script.New(script.Demo()), info, nil
		}
		s, err := script.Load(o.Script)
		if err != nil {
			return nil, info, err
		}
		info.Script = o.Script
		return script.New(s), info, nil
	case OpenAI, Anthropic:
	default:
		return nil, info, fmt.Errorf("unknown provider %q (want script, openai or anthropic)", o.Provider)
	}
	if o.Model == "" {
		return nil, info, fmt.Errorf("the %s provider needs a model name (--model or model.name)", o.Provider)
	}
	info.Images = true
	keyEnv := o.APIKeyEnv
	if keyEnv == "" {
		keyEnv = openai.APIKeyEnv
		if o.Provider == Anthropic {
			keyEnv = anthropic.APIKeyEnv
		}
	}
	key := o.APIKey
	switch {
	case key != "":
		info.KeyFrom = "credentials"
	default:
		if key = llm.Secret(strings.TrimSpace(getenv(keyEnv))); key != "" {
			info.KeyFrom = keyEnv
		}
	}
	if o.Provider == OpenAI {
		if key == "" {
			log.Info("no API key for the openai provider; requests go without one (fine for Ollama and llama.cpp)", "env", keyEnv)
		}
		p := openai.New(openai.Config{BaseURL: o.BaseURL, APIKey: key, Model: o.Model, MaxTokens: o.MaxTokens, Transport: openai.Transport{Logger: o.Logger}})
		return p, info, nil
	}
	if key == "" {
		log.Warn("no API key for the anthropic provider: requests will be refused", "env", keyEnv)
	}
	p := anthropic.New(anthropic.Config{BaseURL: o.BaseURL, APIKey: key, Model: o.Model, MaxTokens: o.MaxTokens, Transport: anthropic.Transport{Logger: o.Logger}})
	return p, info, nil
}
