package bridge

import (
	"context"
	"encoding/json"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/instructions"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/registry"
)

// Loop is the agent loop: it turns one prompt into model requests, tool
// calls and a reply. Embedders implement it (the model package's built-in
// loop does too) and hand it to [New]; the bridge does everything else of
// ACP: sessions, the durable log, cards, the ask channel, cancellation.
//
// The bridge calls Turn once per session/prompt, never concurrently for one
// session (a second prompt while a turn runs is refused with a JSON-RPC
// error); turns of different sessions run concurrently, so a Loop shared
// between sessions must be safe for concurrent use.
type Loop interface {
	// Turn runs one prompt turn and says why it stopped.
	//
	// ctx is cancelled when the editor cancels the turn (session/cancel,
	// session/close, $/cancel_request of the prompt) or the connection
	// ends. A cancelled turn may return any stop reason or error: the
	// bridge answers the prompt with stopReason "cancelled" whatever Turn
	// returns, after marking every open tool call failed. Return as soon as
	// possible after ctx is done; nothing the loop emits after that reaches
	// the editor.
	//
	// A non-nil error (with ctx not cancelled) fails the prompt with a
	// JSON-RPC internal error carrying the error text. Tool failures are
	// never errors: [Turn.Execute] returns them as isError results.
	Turn(ctx context.Context, t *Turn) (acp.StopReason, error)
}

// SessionConfigurer is implemented by a [Loop] that has config options of
// its own (the built-in loop's model selector, for example). The bridge
// offers them after its own `mode` option in every config option list,
// routes session/set_config_option for their ids to the loop, records each
// change in the durable log and replays it on load and resume.
type SessionConfigurer interface {
	// SessionConfigOptions returns the loop's options for a session, with
	// their current values.
	SessionConfigOptions(sessionID string) []acp.SessionConfigOption
	// SetSessionConfigOption changes one; handled is false for an id the
	// loop does not know. An error rejects the value (invalid params).
	SetSessionConfigOption(sessionID, configID, value string) (handled bool, err error)
}

// LoopFunc adapts a function to [Loop].
type LoopFunc func(ctx context.Context, t *Turn) (acp.StopReason, error)

// Turn calls f.
func (f LoopFunc) Turn(ctx context.Context, t *Turn) (acp.StopReason, error) { return f(ctx, t) }

// ToolCall is one tool call the model asked for.
type ToolCall struct {
	// ID is the call's id, unique within the session (the model's id is
	// fine; the bridge uses it as the ACP toolCallId).
	ID string
	// Name is the tool name the model called.
	Name string
	// Arguments are the raw JSON arguments as the model produced them.
	// They need not be valid: invalid JSON becomes an isError result the
	// model can correct from.
	Arguments json.RawMessage
	// Parent, optional, is the token of the call on whose behalf this one
	// is made (a subagent's calls name the task call that started it); it
	// is recorded with the call's frozen identity.
	Parent pipeline.Token
	// Scope, optional, runs the call in a child scope of the session
	// ("<session id>/<child>", for example a subagent whose tools were
	// restricted with registry.Restrict). Policy, modes and asks are the
	// session's. Empty, or a scope outside the session, means the session's
	// own scope.
	Scope string
	// TitlePrefix, optional, is put before the call's title in the editor
	// (a subagent's calls: "task ‹name›: "), so a person sees on whose
	// behalf the call runs.
	TitlePrefix string
}

// SessionInfo is what a loop may know about its session, for example to
// write a system prompt.
type SessionInfo struct {
	// ID is the ACP session id.
	ID string
	// Cwd is the session's absolute working directory.
	Cwd string
	// Roots are the directories tools may touch without asking: Cwd first,
	// then the session's additional directories.
	Roots []string
	// Mode is the current session mode (a row of [policy.Modes]).
	Mode policy.Mode
	// Title is the session title, empty until the first exchange.
	Title string
}

// SessionInfo returns the session's identity, roots and current mode. The
// mode may change during the turn (session/set_mode may arrive mid-turn).
func (t *Turn) SessionInfo() SessionInfo { return t.sess.info() }

// Prompt returns the content blocks of the user's prompt, as the editor
// sent them: text, resource_link, and (when the loop's [PromptSupport]
// says so) image, audio and embedded resource blocks. A prompt that starts
// with a custom command or a skill's command ([Options.Instructions]) comes
// expanded: its first block is the command's prompt. The slice must not be
// modified.
func (t *Turn) Prompt() []acp.ContentBlock { return t.prompt }

// History returns, oldest first, the records the loop stored with
// [Turn.Remember] in earlier turns of this session — including turns run by
// an earlier daemon before the session was loaded or resumed. It is the
// loop's own memory of the conversation; the bridge does not interpret it.
// The records of the current turn are not included.
func (t *Turn) History() []json.RawMessage { return t.history }

// Remember appends a record to the session's history: whatever the loop
// needs to continue the conversation in a later turn (the user prompt as
// the model saw it, the assistant's messages, tool results). The record is
// written to the durable session log and made durable at the end of the
// turn at the latest. It must be valid JSON.
func (t *Turn) Remember(record json.RawMessage) error { return t.remember(record) }

// Tools returns the model-facing schemas of the tools this session may
// call: the deployment's tools (after restrictions) and the session's own
// (MCP servers, session-scoped tools), sorted by name.
func (t *Turn) Tools() []registry.ToolSchema { return t.sess.toolSchemas() }

// Execute runs one tool call through the pipeline (policy, the ask channel,
// guards, the tool) and shows it to the editor: a tool_call (pending) with
// the call's title, kind, locations and rawInput before anything else, an
// in_progress update when the tool starts, and a final completed or failed
// update with the result card and rawOutput. It always returns a result:
// unknown tools, invalid arguments, denials, timeouts, panics and
// cancellation are isError results the model can read. Calls may run
// concurrently; each ID must be unique within the session.
func (t *Turn) Execute(ctx context.Context, call ToolCall) registry.Result {
	return t.execute(ctx, call)
}

// Text streams text of the agent's reply (an agent_message_chunk). Chunks
// of one reply share a messageId; a tool call, a thought or [Turn.NewMessage]
// starts a new message.
func (t *Turn) Text(text string) { t.Message(acp.Text(text)) }

// Message streams content blocks of the agent's reply.
func (t *Turn) Message(blocks ...acp.ContentBlock) { t.message(blocks) }

// Thought streams reasoning text (an agent_thought_chunk). Consecutive
// thought chunks share a messageId.
func (t *Turn) Thought(text string) { t.thought(text) }

// NewMessage makes the next [Turn.Text] or [Turn.Message] start a new
// message (a fresh messageId).
func (t *Turn) NewMessage() { t.newMessage() }

// Plan replaces the session's plan (the complete list each time).
func (t *Turn) Plan(entries []acp.PlanEntry) { t.plan(entries) }

// Usage reports context-window usage: tokens used, the window size, and
// optionally the cumulative session cost.
func (t *Turn) Usage(used, size uint64, cost *acp.Cost) { t.usage(used, size, cost) }

// Project returns what the session's repository and the user's
// configuration tell the agent ([Options.Instructions]): the instruction
// files (AGENTS.md, or CLAUDE.md) from the user's and the repository
// root's down to the cwd's, and the skills. It is the files' current state
// (they are watched), so a loop that calls it for every model request
// applies an edit to the next one; [instructions.Snapshot.Prompt] renders
// it as a section of a system prompt, byte-identical while no file
// changes. It is nil without Options.Instructions.
func (t *Turn) Project() *instructions.Snapshot { return t.sess.projectSnapshot() }

// ClientCapabilities returns what the editor advertised at initialize.
func (t *Turn) ClientCapabilities() acp.ClientCapabilities { return t.sess.conn.clientCaps }
