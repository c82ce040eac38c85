// Package acp is the Agent Client Protocol (ACP) v1 wire layer: every stable message type,
// the tagged-union codec they share, and a JSON-RPC 2.0 connection over newline-delimited
// stdio for both the agent and the client side.
//
// # Types
//
// Params and results are plain structs named after the schema's $defs with Go initialisms
// (NewSessionRequest.Cwd, ToolCall.ToolCallID, ImageContent.MIMEType). Conventions:
//
//   - Tagged unions are a one-field wrapper around a sealed interface: [ContentBlock],
//     [SessionUpdate], [ToolCallContent], [RequestPermissionOutcome], [SessionConfigOption],
//     [MCPServer], [AuthMethod], [ElicitationPropertySchema]. Build them with the variant
//     pointer (acp.SessionUpdate{Value: &acp.ToolCall{…}}) or a constructor ([Text], [Diff],
//     [AgentMessage], [Update], [Selected]). Decode them with a type switch on Value. A tag this
//     package does not know decodes into an Unknown* variant that re-encodes verbatim; a
//     missing tag is an error; a zero wrapper fails to marshal.
//   - Variants have no tag field: the tag comes from the Go type.
//   - Required arrays never marshal as null (a nil slice goes out as []).
//   - Optional fields the schema forbids as null are omitted when unset (pointers, omitempty).
//     Optional slices use omitzero: nil is omitted, an empty slice is sent as [] (on a
//     ToolCallUpdate that clears the client's list).
//   - Three-state fields (absent / null / value) use [Optional].
//   - `_meta` is [Meta] (raw JSON), as are rawInput and rawOutput: foreign data and its number
//     text pass through untouched.
//   - Decoding is lenient: unknown fields are ignored, a stdio MCP server may carry
//     "type":"stdio", a boolean set_config_option value is accepted without "type".
//
// The hot session/update shapes (tool_call, tool_call_update, message chunks, their content
// and locations) have a hand-written encoder and a single-pass decoder: encoding/json v1
// re-validates the input or output of every nested (Un)MarshalJSON call, which made each union
// level cost a full scan. Both produce exactly what encoding/json would (differential tests);
// input the fast decoder does not handle plainly (case-folded or duplicate keys, nulls,
// surrogate escapes, invalid UTF-8, other variants) takes the generic path.
//
// # Connection
//
// [Serve] runs one connection over an io.ReadWriteCloser (the agent's stdin/stdout, or one end
// of a pipe in tests). Each line is one JSON-RPC message; lines may be of any length. A
// malformed line is answered with -32700 and the connection keeps serving; a structurally
// invalid request gets -32600, an unknown method -32601; unknown notifications (including
// "_"-prefixed extensions) are ignored; every request is answered exactly once.
//
// Inbound requests are routed through a [Router]: each [Route] has a start function that runs
// on the read goroutine, in arrival order (decode, validate, register state), and may return a
// slow continuation that runs on its own goroutine and whose result becomes the reply. A
// handler may therefore call back into the peer (permission, fs, terminal) without
// deadlocking the reader, and a session/cancel never overtakes the prompt it cancels. Every
// request context is cancelled by an inbound $/cancel_request for its id; the request is still
// answered exactly once (with the handler's result, or -32800 if it returns the context's
// error).
//
// Outbound calls take a context: cancelling it sends $/cancel_request for that id and returns
// the context's error. Notifications and replies go through one lock on the stream, in the
// order they are issued, so a goroutine that sends its session/update notifications and then
// returns its result puts every update on the wire before the response.
//
// The agent side is [ServeAgent] with an [Agent] implementation; it returns a [*ClientConn]
// with typed methods for the client's methods (SessionUpdate, RequestPermission,
// ReadTextFile, …). The client side is [ServeClient] with a [Client] implementation,
// returning an [*AgentConn] (Initialize, NewSession, Prompt, Cancel, …).
//
// [Stdio] adapts os.Stdin/os.Stdout; [WithTap] observes every line in wire order (the test
// recorder uses it); [WithRoutes] adds "_" extension methods.
//
// # The engine: jsonrpc2 under an ACP line stream
//
// The protocol runs on github.com/sourcegraph/jsonrpc2 (v0.2.3): its read loop reads each
// message and dispatches it (requests and notifications to the connection's handler, which
// routes them as above), it matches each response to the outgoing call waiting for it (ids
// are picked by the connection, so $/cancel_request can name them), and it sends every
// request and response. Known limits that come from it: a request with "id":null is treated
// as a notification, and negative integer ids are rejected with -32600 (jsonrpc2 would wrap
// them); a call cancelled by its context stays in jsonrpc2's table until the peer answers it
// or the connection closes.
//
// Under jsonrpc2 sits the line stream (a jsonrpc2.ObjectStream) that keeps its generic
// encoding, which costs a map and several passes per message, off the hot paths:
//
//   - Reading: the stream scans each line once (validity, UTF-8, envelope) and hands jsonrpc2
//     a small stand-in with the envelope only: the id and method of a request, the id and a
//     null result of a response. The original params reach the route's decoder as the bytes
//     of the line, and jsonrpc2's OnRecv hook puts a response's original result back before
//     the waiting call decodes it, once. A notification's stand-in is the same for every
//     notification of a method, so it is decoded once per method and reused; a 10,000-update
//     session/load replay costs jsonrpc2 a dispatch per update and no decoding.
//   - Writing: replies and outgoing calls go through jsonrpc2 with their result or params
//     already encoded by this package, and jsonrpc2's OnSend hook builds the line from them
//     (appendRPCMessage), so jsonrpc2's WriteObject writes it without marshalling anything.
//     Notifications, the hot path, do not go through jsonrpc2: the connection builds each line
//     itself and writes it under the same stream lock WriteObject takes, so notifications and
//     jsonrpc2's messages reach the wire in exactly the order they were issued.
//
// Each message is thus encoded exactly once, envelope included (session/update through the
// hand-written encoder). Updates that are already JSON, such as those a durable session log
// replays, go out with [ClientConn.UpdateRaw] or [ClientConn.SessionUpdateRaw] ([Conn.NotifyRaw]
// in general), copied and never re-validated. session/update params are decoded in one pass
// after the envelope scan. Every line written is valid UTF-8: raw JSON (rawInput, rawOutput,
// _meta, raw params) that holds bytes that are not UTF-8, which encoding/json would copy as
// they are, goes out with each such byte as \ufffd.
//
// Errors: return an [*Error] (or wrap one of the sentinels such as [ErrInvalidParams] with
// %w); it is converted to a JSON-RPC error once, at the edge.
//
// Spec: https://agentclientprotocol.com/protocol/v1/overview
package acp
