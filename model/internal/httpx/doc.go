// Package httpx is the HTTP plumbing shared by the streaming model
// adapters: their [Transport] settings, a client without an overall
// timeout, the POST that opens an event stream, an idle-read watchdog,
// error responses turned into [llm.APIError], and the retry loop with
// cancellation turned into [llm.StopCancelled].
package httpx
