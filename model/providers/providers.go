package providers

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

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

// Options are the provider settings. Empty fields fall back to the
// environment:
//
//   - BaseURL: OPENAI_BASE_URL or ANTHROPIC_BASE_URL, then the vendor's URL.
//   - the key: the variable named by APIKeyEnv, else OPENAI_API_KEY or
//     ANTHROPIC_API_KEY. OpenAI-compatible servers may need no key (Ollama,
//     llama.cpp); Anthropic requires one.
//   - Provider: "script" when empty; with no Script file that is the
//     embedded demo.
type Options struct {
	Provider  string // script | openai | anthropic
	Model     string
	BaseURL   string
	APIKeyEnv string // name of the environment variable holding the key
	Script    string // script file, for the script provider
	MaxTokens int
	Logger    *slog.Logger
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Info describes the built provider for logs; it never holds the key.
type Info struct {
	Provider string
	Model    string
	BaseURL  string
	KeyFrom  string // the environment variable the key came from, if any
	Script   string // "embedded demo" or the file
}

// ErrConfig marks a settings problem (unknown provider, missing model or
// key), as opposed to a failure reading a script file.
var ErrConfig = errors.New("provider configuration")

// New builds the provider o describes.
func New(o Options) (llm.Provider, Info, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
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
		return nil, info, fmt.Errorf("%w: unknown provider %q (want script, openai or anthropic)", ErrConfig, o.Provider)
	}
	if o.Model == "" {
		return nil, info, fmt.Errorf("%w: provider %s needs a model (--model)", ErrConfig, o.Provider)
	}
	defaultKeyEnv, baseEnv := openai.APIKeyEnv, "OPENAI_BASE_URL"
	if o.Provider == Anthropic {
		defaultKeyEnv, baseEnv = anthropic.APIKeyEnv, "ANTHROPIC_BASE_URL"
	}
	if info.BaseURL == "" {
		info.BaseURL = getenv(baseEnv)
	}
	keyEnv := o.APIKeyEnv
	if keyEnv == "" {
		keyEnv = defaultKeyEnv
	}
	key := llm.Secret(getenv(keyEnv))
	if key != "" {
		info.KeyFrom = keyEnv
	} else if o.APIKeyEnv != "" {
		return nil, info, fmt.Errorf("%w: environment variable %s (--api-key-env) is empty", ErrConfig, o.APIKeyEnv)
	}
	if o.Provider == OpenAI {
		if info.BaseURL == "" {
			info.BaseURL = openai.DefaultBaseURL
		}
		return openai.New(openai.Config{BaseURL: info.BaseURL, APIKey: key, Model: o.Model, MaxTokens: o.MaxTokens, Transport: openai.Transport{Logger: o.Logger}}), info, nil
	}
	if key == "" {
		return nil, info, fmt.Errorf("%w: provider anthropic needs an API key in %s", ErrConfig, keyEnv)
	}
	if info.BaseURL == "" {
		info.BaseURL = anthropic.DefaultBaseURL
	}
	return anthropic.New(anthropic.Config{BaseURL: info.BaseURL, APIKey: key, Model: o.Model, MaxTokens: o.MaxTokens, Transport: anthropic.Transport{Logger: o.Logger}}), info, nil
}
