// Command echo is the floor of the end-to-end benchmarks: a process that
// reads newline-delimited JSON-RPC requests on stdin and answers each at
// once with an empty result, over the same pipes the daemon uses. It
// decodes only the id, as any JSON-RPC peer must. Built with -tags
// jsonschema it also links santhosh-tekuri/jsonschema/v6 (see jsonschema.go).
//
//	go build -o echo ./e2e/internal/echo
//	printf '{"jsonrpc":"2.0","id":1,"method":"initialize"}\n' | ./echo
//	# {"jsonrpc":"2.0","id":1,"result":{}}
package main
