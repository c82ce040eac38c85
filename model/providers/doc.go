// Package providers builds the [llm.Provider] that settings name: the
// embedded demo or a script file, an OpenAI-compatible server, or
// Anthropic, with the API key from a caller's store or the environment.
// It is the one place that knows every adapter; dshd's command line uses
// it, and so can a program embedding the bridge that lets its users pick
// a provider in their settings.
//
//	p, info, err := providers.New(providers.Options{Provider: "openai", Model: "qwen3", BaseURL: "http://localhost:11434/v1"})
//	if err != nil {
//		return err
//	}
//	log.Info("provider", "name", info.Provider, "key from", info.KeyFrom)
package providers
