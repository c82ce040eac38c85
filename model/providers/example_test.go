package providers_test

import (
	"fmt"

	"github.com/dsh-tools/dshd/model/providers"
)

// A provider from settings: an OpenAI-compatible local server, which needs
// no key, and the embedded demo when nothing is configured.
func ExampleNew() {
	noEnv := func(string) string { return "" }
	for _, o := range []providers.Options{
		{Provider: "openai", Model: "qwen3", BaseURL: "http://localhost:11434/v1", Getenv: noEnv},
		{Getenv: noEnv},
	} {
		p, info, err := providers.New(o)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%T %s %q images=%v\n", p, info.Provider, info.KeyFrom, info.Images)
	}
	// Output:
	// *openai.Provider openai "" images=true
	// *script.Provider script "" images=false
}
