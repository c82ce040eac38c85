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
//	return httpx.StreamJSON(ctx, t, "openai", body, func(ctx context.Context, b []byte) (*llm.Response, bool, error) {
//		st, err := httpx.OpenPost(ctx, t, httpx.Post{Provider: "openai", URL: url, Body: b})
//		if err != nil {
//			return state.response(), false, err
//		}
//		defer st.Close()
//		err = httpx.ReadEvents(ctx, "openai", st.Body, state.event, state.end) // the provider's own event decoding
//		return state.response(), state.emitted, err
//	})
package httpx
