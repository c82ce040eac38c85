// Package ssetest is the scaffolding of the adapters' tests: httptest
// servers that replay hand-written SSE bodies in small random-sized chunks,
// as real servers and proxies split them; a [Collector] that checks the
// emitted events against the final response; and the shared checks of
// errors, retry delays, key leaks and request goldens.
//
//	srv := ssetest.New(t, 1, ssetest.Step{Body: ssetest.Lines(`data: {"choices":[]}`, "data: [DONE]")})
//	// point the adapter at srv.URL; srv.Requests() is what it sent
package ssetest
