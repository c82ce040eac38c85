// Package httpx is the HTTP plumbing shared by the streaming model
// adapters: their [Transport] settings, a client without an overall
// timeout, the POST that opens an event stream, an idle-read watchdog,
// error responses turned into [llm.APIError], and the retry loop with
// cancellation turned into [llm.StopCancelled].
//
// An adapter's Stream is RunStream around one attempt that opens the
// stream with OpenPost and parses it; retries, the idle watchdog and
// error mapping are the same for every provider:
//
//	return httpx.RunStream(ctx, p.transport, "openai", func(ctx context.Context) (*llm.Response, bool, error) {
//		s, err := httpx.OpenPost(ctx, p.transport, post)
//		if err != nil {
//			return nil, false, err
//		}
//		defer s.Close()
//		return parse(s, emit) // the provider's own event decoding
//	})
package httpx
