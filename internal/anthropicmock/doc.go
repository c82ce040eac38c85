// Package anthropicmock is a stand-in for the Anthropic Messages API in
// tests: an HTTP server on loopback that answers /v1/messages with a
// streamed reply chosen by the test, and emulates the prompt cache the way
// Anthropic documents it, reporting usage as the API does.
//
// The cache: a request is a sequence of blocks (each tool definition, each
// system block, each content block of each message, in that order). A
// block marked cache_control is a breakpoint; at most 4 are accepted. For
// each breakpoint the server looks for a cached prefix ending at the
// breakpoint or at one of the 19 blocks before it (the 20-block lookback)
// and reads the longest one found (cache_read_input_tokens); it then
// caches the prefix at every breakpoint after that point whose size
// reaches the minimum (cache_creation_input_tokens). Entries live 5
// minutes from their last use, on the server's clock. The rest of the
// prompt is input_tokens. A token is 4 bytes of a block's JSON.
//
// A prompt larger than Window is refused with the API's real error: HTTP
// 400, invalid_request_error, "prompt is too long: N tokens > W maximum".
//
//	srv := anthropicmock.New(t, func(r *anthropicmock.Request) anthropicmock.Reply {
//		return anthropicmock.Reply{Text: "hello"}
//	})
//	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k", Model: "claude-sonnet-4-5"})
package anthropicmock
