package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/openai"
)

func ExampleNew() {
	// A stand-in for Ollama, llama.cpp or OpenAI.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi!\"},\"finish_reason\":\"stop\"}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	key, _ := llm.SecretFromEnv("DSHD_EXAMPLE_KEY", openai.APIKeyEnv)
	p := openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: key, Model: "qwen3"})
	resp, err := p.Stream(context.Background(), &llm.Request{
		System:   "You are terse.",
		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: "Hello"}}}},
	}, func(e llm.Event) {
		if d, ok := e.(llm.TextDelta); ok {
			fmt.Printf("delta %q\n", d.Text)
		}
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Message.Text(), resp.StopReason, resp.Usage.Input, resp.Usage.Output)
	// Output:
	// delta "Hi!"
	// Hi! end_turn 9 2
}
