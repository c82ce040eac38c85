// Package httpx is the shell shared by the streaming model adapters, so
// that each adapter holds only what is its provider's (the request body,
// the authentication headers, the error body's format, what each event
// means and when a message is complete): their [Transport] settings, a
// client without an overall timeout, the request encoded once and retried
// ([StreamJSON], with cancellation turned into [llm.StopCancelled]), the
// POST that opens an event stream ([OpenPost]) behind an idle-read
// watchdog, error responses turned into [llm.APIError] and classified for
// retry, and the event loop with its end-of-stream handling
// ([ReadEvents]):
//
//	func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Event)) (*llm.Response, error) {
//		return httpx.StreamJSON(ctx, p.transport, "openai", p.buildRequest(req), func() *state { return newState(emit) }, p.attempt)
//	}
//
//	func (p *Provider) attempt(ctx context.Context, body []byte, s *state) error {
//		st, err := httpx.OpenPost(ctx, p.transport, httpx.Post{Provider: "openai", URL: p.url, Body: body})
//		if err != nil {
//			return err
//		}
//		defer st.Close()
//		return httpx.ReadEvents(ctx, "openai", st.Body, s.event, s.end) // the provider's own event decoding
//	}
package httpx
