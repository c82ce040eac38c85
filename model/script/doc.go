// Package script is the scripted model: an [llm.Provider] that plays
// responses from a JSON script instead of calling a model, used for demos,
// tests and the embedded default (see [Demo]).
//
// The format (keep it so; extend only compatibly):
//
//	{"turns": [
//	  {"match": "optional Go regexp",
//	   "responses": [
//	     {"delayMs": 0,
//	      "thought": "string or array of strings",
//	      "text": "string or array of strings",
//	      "toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "README.md"}},
//	                    {"id": "call_2", "name": "edit", "rawArguments": "{\"path\": 1"}],
//	      "usage": {"input": 120, "output": 30},
//	      "stopReason": "end_turn"}]}]}
//
// A prompt takes the first unused turn whose match fits its text (without
// the <system-reminder> notes dshd adds to it; a turn
// without match fits any prompt). Each response is one model response; a
// response without tool calls ends the turn with its stopReason (default
// end_turn); running out of responses after tool calls ends the turn with
// end_turn; running out of turns answers with a message saying the script
// is exhausted. delayMs waits, cancellably, before the response.
//
// The provider keeps no state: which turn and which response a request
// gets is derived from the request's messages (every user message without
// tool results is a prompt; assistant messages after the last prompt are
// responses already given). One Provider therefore serves any number of
// sessions, and a session rebuilt from its log continues where it was.
package script
