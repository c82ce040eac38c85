// Package acp speaks the Agent Client Protocol (ACP) v1: every stable message type, and a
// JSON-RPC 2.0 connection over newline-delimited stdio for the agent side and for Go clients.
//
// An agent is a [Router]: one [Route] per client→agent method. [ConnectClient] serves it and
// hands the routes the [*ClientConn] they use to stream session updates and call the client:
//
//	client := acp.ConnectClient(ctx, acp.Stdio(os.Stdin, os.Stdout), func(c *acp.ClientConn) acp.Router {
//		return acp.Router{
//			acp.MethodInitialize: acp.SyncRoute(initialize),
//			acp.MethodSessionNew: acp.SyncRoute(newSession),
//			acp.MethodSessionPrompt: acp.StagedRoute(func(ctx context.Context, req *acp.PromptRequest) (acp.Reply[acp.PromptResponse], error) {
//				return acp.Later(func() (*acp.PromptResponse, error) { // the turn, on its own goroutine
//					err := c.SessionUpdate(ctx, &acp.SessionNotification{SessionID: req.SessionID, Update: acp.AgentMessage("Hello!")})
//					return &acp.PromptResponse{StopReason: acp.StopEndTurn}, err
//				}), nil
//			}),
//		}
//	})
//	<-client.Done()
//
// A Go client implements [Client] and connects with [ConnectAgent], which returns the
// [*AgentConn] (Initialize, NewSession, Prompt, …). Package acptest has a scriptable client and
// the schema checks for tests.
//
// # Types
//
// Params and results are plain structs named after the schema's $defs with Go initialisms
// (NewSessionRequest.Cwd, ToolCall.ToolCallID, ImageContent.MIMEType). Tagged unions are a
// one-field wrapper around a sealed interface ([ContentBlock], [SessionUpdate],
// [ToolCallContent], [RequestPermissionOutcome], [SessionConfigOption], [MCPServer],
// [AuthMethod], [ElicitationPropertySchema]): build them with the variant pointer
// (acp.SessionUpdate{Value: &acp.ToolCall{…}}) or a constructor ([Text], [Diff],
// [AgentMessage], [Update], [Selected]) and decode them with a type switch on Value. A tag
// this package does not know decodes into an Unknown* variant that re-encodes verbatim; a
// missing tag is an error; a zero wrapper fails to marshal. Required arrays never marshal as
// null; optional fields the schema forbids as null are omitted when unset; [Optional] is the
// three-state field (absent / null / value); `_meta`, rawInput and rawOutput are raw JSON.
// Decoding is lenient: unknown fields are ignored.
//
// # Routes and ordering
//
// Each route has a start function that runs on the connection's read goroutine, in arrival
// order (decode, validate, register state), and may return a continuation that runs on its
// own goroutine and whose result becomes the reply ([SyncRoute], [AsyncRoute], [StagedRoute],
// [NotificationRoute]). So a session/cancel never overtakes the prompt it cancels, and a turn
// may call back into the client (permission, fs, terminals) without blocking the reader.
// Every request is answered exactly once; its context is cancelled by an inbound
// $/cancel_request for its id (return the context's error for -32800). Outbound calls take a
// context: cancelling it sends $/cancel_request and returns an error matching both the
// context's error and [ErrRequestCancelled]. A handler error is converted to a JSON-RPC error
// once, at the edge: return an [*Error] or wrap a sentinel such as [ErrInvalidParams] with %w.
//
// The connection reads lines of any length. A line that is not JSON or not UTF-8 is answered
// with -32700 and the connection keeps serving; a structurally invalid request gets -32600,
// an unknown method -32601; unknown notifications ("_" extensions included) are ignored.
// Every line written is valid UTF-8 (raw JSON holding other bytes goes out with each as
// \ufffd).
//
// # What it relies on in jsonrpc2
//
// The protocol runs on github.com/sourcegraph/jsonrpc2 (v0.2.3) through a jsonrpc2.ObjectStream
// codec that frames lines, answers the lines jsonrpc2 must never see (-32700, -32600) and
// hands it every other message in canonical form. The code depends on three documented
// guarantees, each pinned by a test:
//
//  1. Handler: while Handle runs, the connection processes no other request or response. Route
//     start functions therefore run one at a time in arrival order, and must not wait for a
//     response from the peer (TestJSONRPC2HandlesInArrivalOrder).
//  2. Reply, ReplyWithError and Notify return after writing the message to the ObjectStream,
//     and the connection writes only through WriteObject. Updates a turn sends before it
//     returns are on the wire before its response (TestConnUpdatesBeforeResponse).
//  3. PickID sets a call's id and Waiter.Wait returns the context's error when it is
//     cancelled first: outgoing calls pick their own ids, so $/cancel_request names the call
//     (TestConnOutboundCancel).
//
// Limits that come from jsonrpc2: a request with "id":null is treated as a notification;
// negative integer ids are rejected with -32600 (jsonrpc2 would wrap them); a call cancelled
// by its context stays in jsonrpc2's table until the peer answers it or the connection
// closes.
//
// Fast paths, each through jsonrpc2's exported API and measured. Inbound params do not go
// through jsonrpc2, whose Request decoding turns them into a map[string]any and encodes them
// again (some 30 µs for each session/update a Go client receives, 10x the rest of receiving
// it, BenchmarkReceive10k): the codec hands jsonrpc2 a token string in their place and routes
// get the exact bytes of the line by that token, which relies only on jsonrpc2 passing a
// string through unchanged, not on when the handler runs (TestCodecParamsByToken). Results of
// the connection's own calls come the same way, by the call's id, because jsonrpc2 decodes
// each result into an interface{} to tell a response from a request (a 4 KiB
// fs/read_text_file answer: 290 → 105 µs of CPU, BenchmarkCall; TestCodecResultByID).
// WriteObject uses the MarshalJSON of jsonrpc2's message as it is, valid JSON by
// encoding/json's contract, instead of having json.Marshal validate and compact it again
// (TestWriteObjectMatchesMarshal, FuzzWriteObject: the same bytes). And notifications
// ([Conn.Notify], [ClientConn.SessionUpdate]) are written by the codec with their params
// encoded once, under the write lock jsonrpc2's own writes take, because through
// jsonrpc2.Conn.Notify they cost the daemon 12% of its CPU time in the 1,000-call turn
// through the binary (params marshalled, re-marshalled through a map, then compacted twice
// more).
//
// Kept costs, against the hand-written codecs this package had until issue 18 removed them
// (same run, CPU time): the tagged unions go through encoding/json, which validates a
// Marshaler's output and an Unmarshaler's input once more at every union level, so a
// tool_call_update with a diff encodes and decodes in about 2x the time
// (BenchmarkToolCallUpdateEncode, BenchmarkToolCallUpdateDecode) and typed notifications cost
// 11x (BenchmarkNotify10k; the bridge's pre-encoded ones 1.2x, BenchmarkNotify10kPreEncoded),
// and a Go client pays jsonrpc2's map-based decoding of every message, some 30 allocations
// each, on top: 5x in BenchmarkReceive10k.
//
// Spec: https://agentclientprotocol.com/protocol/v1/overview
package acp
