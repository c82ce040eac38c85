// Package model is dshd's built-in agent side: the loop that drives a
// language model through the bridge, and its providers.
//
// To run it, give [New] a provider and the registry of tools and hand the
// loop to the bridge (Example runs this against the script provider):
//
//	reg := registry.New()
//	loop := model.New(model.Options{Provider: provider, Registry: reg})
//	agent := bridge.New(bridge.Options{Loop: loop, Registry: reg, Prompt: loop.PromptCapabilities()})
//	err := agent.Serve(ctx, acp.Stdio(os.Stdin, os.Stdout))
//
// [Loop] implements [bridge.Loop] over an [llm.Provider]. Each prompt turn
// it rebuilds the conversation from the records it stored earlier with
// [bridge.Turn.Remember] (so a loaded or resumed session continues where
// it was, even in another daemon), turns the prompt's content blocks into
// model context ([PromptMessageRead]: text; resource links, selections
// such as file:///abs#L10:20 and directories read through
// [bridge.Turn.ReadMention], or the reason they could not be; embedded
// files; images when the provider takes them), and then repeats: send the
// system prompt ([System]: fixed guidance, working directory and roots,
// project instructions, skills, instructions — a byte-stable prefix, with
// the session mode told in the conversation instead), the history and the
// tool schemas; stream text and reasoning deltas to the editor as they arrive;
// run the response's tool calls through [bridge.Turn.Execute] (read-only
// ones concurrently, [MaxConcurrentCalls] at a time, the others in order);
// hand the results back. It stops
// when a response has no tool calls (its stop reason mapped to ACP's),
// when the request cap is hit (max_turn_requests) or when the editor
// cancels. A model error after something was shown ends the turn with a
// visible message; before that it fails the prompt.
//
// Structured turns: when the client sent an output schema
// ([bridge.Turn.OutputSchema]), the loop adds a forced final tool,
// [FinalToolName], whose parameters are the schema verbatim, and the turn
// ends only through it: a value that fails structured.Validate (or a
// response that ends without the call) goes back to the model with every
// violation, at most [MaxStructuredAttempts] times; the validated value is
// handed to [bridge.Turn.SetStructured] and shown as the final message.
//
// Sub-turns: [Loop.RunSubturn] runs a nested turn inside a tool call of a
// prompt turn (the task tool's subagents, package
// [github.com/dsh-tools/dshd/model/task]): its own conversation, the tools
// of a child scope, its calls made through the same [bridge.Turn.Execute]
// with the parent token, prefixed ids and titles, and the same structured
// final tool when asked for. A sub-turn's conversation is not part of the
// session's history; its calls are in the durable log.
//
// The loop also offers the `model` config option (see
// [Loop.SessionConfigOptions]); the bridge offers `mode`.
//
// The provider half lives in subpackages that do not depend on the bridge:
//
//   - [github.com/dsh-tools/dshd/model/llm]: the provider-neutral request,
//     message, event and response types and the [llm.Provider] interface.
//   - [github.com/dsh-tools/dshd/model/openai]: OpenAI Chat Completions
//     streaming (OpenAI, OpenRouter, Ollama /v1, llama.cpp, vLLM, LM Studio).
//   - [github.com/dsh-tools/dshd/model/anthropic]: Anthropic Messages
//     streaming, with thinking blocks sent back unchanged.
//   - [github.com/dsh-tools/dshd/model/script]: the scripted model, including
//     the embedded demo script used when no provider is configured.
//
// Shared plumbing (the SSE reader, retries, the idle-read watchdog) is in
// model/internal and is not part of the API.
package model
