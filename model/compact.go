package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/model/llm"
)

// Compaction keeps a long session inside the model's context window.
// Before each request of a prompt turn the loop estimates the request's
// size (the previous response's real prompt size plus an estimate of what
// was added since); when it would not leave the reserved output room
// ([DefaultReservedOutput]) free, the loop compacts:
//
//  1. Prune: every large tool result outside the recent part of the
//     conversation is replaced by a one-line note saying the call can be
//     made again; the call itself stays. When that brings the request well
//     under the limit, it is enough.
//  2. Summarise: otherwise the older part of the conversation is
//     summarised by the same model, in a request without tools that sees
//     the older part as a transcript, and the conversation becomes the
//     summary followed by the recent turns verbatim.
//
// A provider's context-overflow error (see [llm.IsContextOverflow])
// summarises at once and retries the request, once. The /compact command
// ([CommandCompact]) summarises on request, with an optional focus.
//
// The new conversation is a history record ({"compaction": {...}}) that
// replaces everything before it when the history is rebuilt, so a loaded
// or resumed session continues from the summary; a compaction that fails
// or is cancelled leaves the history as it was.

// CommandCompact is the loop's slash command: /compact [focus].
const CommandCompact = "compact"

// Commands implements [bridge.Commander].
func (l *Loop) Commands() []acp.AvailableCommand {
	return []acp.AvailableCommand{{Name: CommandCompact,
		Description: "Summarise the conversation so far to free the model's context.",
		Input:       &acp.AvailableCommandInput{Hint: "optional: what the summary should focus on"}}}
}

var _ bridge.Commander = (*Loop)(nil)

// compactionRecord is the history record of a compaction: the
// conversation from then on.
type compactionRecord struct {
	ID       string        `json:"id,omitempty"`
	Trigger  string        `json:"trigger"`
	Messages []llm.Message `json:"messages"`
}

// Tuning of compaction, as fractions of the limit (the window minus the
// reserved output).
const (
	// recentShare is how much of the limit the recent, untouched part of
	// the conversation may take.
	recentShare = 0.3
	// pruneEnough: pruning alone is enough when it brings the request
	// under this share of the limit.
	pruneEnough = 0.7
	// prunableTokens is the size above which an old tool result is
	// pruned.
	prunableTokens = 200
	// maxSummaryTokens caps the summary's length.
	maxSummaryTokens = 4096
)

// prunedNote replaces a pruned tool result.
func prunedNote(name string) string {
	if name == "" {
		name = "the tool"
	}
	return fmt.Sprintf("[This old result was cleared to save context; call %s again if you need it.]", name)
}

// summaryIntro opens the message that carries a summary.
const summaryIntro = "<system-reminder>The conversation so far was compacted to save context; this summary replaces its earlier part, and the most recent messages follow unchanged.</system-reminder>"

const summarySystem = `You write the summary that lets an AI coding agent continue a session after its earlier conversation is removed to save context. You see that conversation as a transcript. Write the summary in Markdown with these sections:

## Goal
The user's requests and intent, quoted where the wording matters. Keep every requirement and constraint the user gave.
## Decisions
What was decided, and why.
## Files
Every file read, created or changed, with what changed in it.
## Progress
What is done, what was in progress when the transcript ends, the commands run and their outcomes.
## Open problems
Errors not yet fixed, open questions, and the next steps.

Keep exact paths, identifiers, commands and error messages. Be complete but concise. Answer with the summary only; you cannot call tools.`

// limit is the largest request that leaves the reserved output free.
func (r *run) limit() int { return r.window - reserve(r.window, r.opts) }

// promptEstimate estimates the size of a request with msgs: calibrated by
// the last response's real prompt size when there is one.
func (r *run) promptEstimate(msgs []llm.Message) int {
	var est int
	if len(msgs) == len(r.msgs) && (len(msgs) == 0 || &msgs[0] == &r.msgs[0]) {
		est = r.fixedTokens + r.conversationTokens()
	} else {
		est = r.fixedTokens + estimateMessages(msgs)
	}
	if r.lastActual > 0 {
		return max(0, r.lastActual+est-r.lastEstimate)
	}
	return est
}

// errNothingToCompact: the conversation has no older part to summarise.
var errNothingToCompact = errors.New("there is nothing older to summarise")

// maybeCompact compacts before a request that would not fit. It reports
// false when the turn was cancelled meanwhile.
func (r *run) maybeCompact(ctx context.Context) bool {
	if r.sub != nil || r.opts.NoAutoCompact || r.autoCompactFailed {
		return true
	}
	if r.promptEstimate(r.msgs) <= r.limit() {
		return true
	}
	err := r.compact(ctx, bridge.CompactionAuto, "")
	if err != nil && ctx.Err() == nil {
		// Not again in this turn: every later request would fail the same
		// way, each shown to the editor. A provider's overflow error still
		// compacts once more (see steps).
		r.autoCompactFailed = true
		r.opts.Logger.Warn("compaction failed; sending the request as it is", "session", r.sessionID, "err", err)
	}
	return ctx.Err() == nil
}

// compact compacts the conversation (see above): auto prunes first; manual
// and overflow summarise.
func (r *run) compact(ctx context.Context, trigger, focus string) error {
	pre := r.promptEstimate(r.msgs)
	c := r.t.StartCompaction(trigger, pre)
	msgs, pruned := r.msgs, 0
	if trigger == bridge.CompactionAuto {
		msgs, pruned = prune(r.msgs, r.recentStart(r.msgs))
	}
	var summarised bool
	if trigger != bridge.CompactionAuto || r.fixedTokens+estimateMessages(msgs) > int(pruneEnough*float64(r.limit())) {
		var err error
		keep := r.recentStart(msgs)
		if trigger == bridge.CompactionManual {
			keep = len(msgs) // the user asked for all of it
		}
		msgs, err = r.summarise(ctx, c, msgs, keep, focus)
		switch {
		case ctx.Err() != nil:
			c.End(acp.CompactionCancelled, 0, "")
			return ctx.Err()
		case err != nil && pruned == 0:
			c.End(acp.CompactionFailed, 0, err.Error())
			return err
		case err != nil:
			// The pruning stands even though the summary failed.
			msgs, _ = prune(r.msgs, r.recentStart(r.msgs))
			r.opts.Logger.Warn("summary failed; keeping the pruned conversation", "session", r.sessionID, "err", err)
		default:
			summarised = true
		}
	}
	if !summarised {
		c.Summary(fmt.Sprintf("Cleared %d old tool results; their calls remain and can be made again.", pruned))
	}
	if ctx.Err() != nil {
		c.End(acp.CompactionCancelled, 0, "")
		return ctx.Err()
	}
	r.replace(msgs, trigger, c)
	return nil
}

// replace makes msgs the conversation, records it and reports the new
// size.
func (r *run) replace(msgs []llm.Message, trigger string, c *bridge.Compaction) {
	r.msgs = msgs
	r.msgTokens = nil
	r.lastActual, r.lastEstimate = 0, 0
	post := r.promptEstimate(msgs)
	rec, err := json.Marshal(record{Compaction: &compactionRecord{Trigger: trigger, Messages: msgs}})
	if err == nil {
		err = r.t.Remember(rec)
	}
	if err != nil {
		r.opts.Logger.Error("compaction record not stored", "session", r.sessionID, "err", err)
	}
	c.End(acp.CompactionCompleted, post, "")
	r.reportUsage(post, r.loop.costOf(r.sessionID, nil))
}

// recentStart is the index where the recent part of msgs begins: the
// earliest message at which a conversation may start (an assistant
// message, or a user message that is not tool results) such that what
// follows fits in the recent share of the limit; at least the last such
// start before the end.
func (r *run) recentStart(msgs []llm.Message) int {
	budget := int(recentShare * float64(r.limit()))
	best := -1
	tail := 0
	for i := len(msgs) - 1; i >= 1; i-- {
		tail += estimateTokens(msgs[i]) + 4
		if !canStart(msgs[i]) {
			continue
		}
		if best >= 0 && tail > budget {
			break
		}
		best = i
	}
	if best < 0 {
		return len(msgs)
	}
	return best
}

// canStart reports whether a conversation may begin with m: not with tool
// results, whose calls would be gone.
func canStart(m llm.Message) bool {
	return m.Role == llm.RoleAssistant || !m.HasToolResults()
}

// prune returns msgs with the large tool results before index keep
// replaced by a note, and how many it replaced. msgs is not modified.
func prune(msgs []llm.Message, keep int) ([]llm.Message, int) {
	out := make([]llm.Message, len(msgs))
	copy(out, msgs)
	n := 0
	for i := 0; i < keep && i < len(out); i++ {
		m := out[i]
		if !m.HasToolResults() {
			continue
		}
		var parts []llm.Part
		for j, p := range m.Parts {
			tr, ok := p.(*llm.ToolResult)
			if !ok || estimateTokens(tr.Content) < prunableTokens || isPruned(tr) {
				continue
			}
			if parts == nil {
				parts = append([]llm.Part(nil), m.Parts...)
			}
			parts[j] = &llm.ToolResult{CallID: tr.CallID, Name: tr.Name, IsError: tr.IsError,
				Content: []llm.Part{&llm.Text{Text: prunedNote(tr.Name)}}}
			n++
		}
		if parts != nil {
			out[i] = llm.Message{Role: m.Role, Parts: parts}
		}
	}
	return out, n
}

func isPruned(tr *llm.ToolResult) bool {
	if len(tr.Content) != 1 {
		return false
	}
	t, ok := tr.Content[0].(*llm.Text)
	return ok && t.Text == prunedNote(tr.Name)
}

// summarise replaces msgs[:keep] by a summary the model writes, streamed
// to c. The summary request must fit the window itself: the transcript's
// tool output is cut shorter, and then its oldest part dropped (the
// user's first request stays), until it does.
func (r *run) summarise(ctx context.Context, c *bridge.Compaction, msgs []llm.Message, keep int, focus string) ([]llm.Message, error) {
	if keep <= 0 || keep > len(msgs) {
		return nil, errNothingToCompact
	}
	older, recent := msgs[:keep], msgs[keep:]
	outTokens := min(maxSummaryTokens, reserve(r.window, r.opts))
	room := r.window - outTokens - estimateTokens(summarySystem) - 200
	var text string
	for _, limit := range []int{2000, 600, 150, 0} {
		text = transcript(older, limit)
		if len(text)*2/7 <= room {
			break
		}
	}
	if n := len(text) * 2 / 7; n > room {
		text = shorten(text, room*7/2)
	}
	ask := "Here is the transcript of the conversation so far:\n\n<transcript>\n" + text + "\n</transcript>\n\nWrite the summary now."
	if f := strings.TrimSpace(focus); f != "" {
		ask += " Pay particular attention to: " + f
	}
	req := &llm.Request{
		Model:     r.model,
		System:    summarySystem,
		Messages:  []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: ask}}}},
		MaxTokens: outTokens,
	}
	resp, err := r.opts.Provider.Stream(ctx, req, func(ev llm.Event) {
		if d, ok := ev.(llm.TextDelta); ok {
			c.Summary(d.Text)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("summary request: %w", err)
	}
	if resp != nil && resp.Usage != (llm.Usage{}) {
		if p := pricing(r.model, r.opts); p != nil {
			r.loop.addCost(r.sessionID, p.Cost(resp.Usage))
			r.rememberCost(p.Cost(resp.Usage))
		}
	}
	summary := strings.TrimSpace(resp.Message.Text())
	if summary == "" {
		return nil, errors.New("the model returned an empty summary")
	}
	body := summaryIntro + "\n\n" + summary
	if last := lastRequest(older); last != "" {
		body += "\n\nThe user's latest request, verbatim:\n" + last
	}
	out := []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{&llm.Text{Text: body}}}}
	return append(out, recent...), nil
}

// rememberCost records the cost of a request that has no message of its
// own in the history (a summary, a sub-turn's response).
func (r *run) rememberCost(amount float64) {
	rec, err := json.Marshal(record{Cost: &amount})
	if err == nil {
		err = r.t.Remember(rec)
	}
	if err != nil {
		r.opts.Logger.Error("cost record not stored", "session", r.sessionID, "err", err)
	}
}

// lastRequest is the text of the last prompt in msgs (a user message that
// is neither tool results nor a summary), cut to 4,000 bytes.
func lastRequest(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != llm.RoleUser || m.HasToolResults() {
			continue
		}
		text := strings.TrimSpace(userText(m))
		if strings.HasPrefix(text, summaryIntro) || text == "" {
			continue
		}
		return shorten(text, 4000)
	}
	return ""
}

// userText is a user message's text without dshd's reminders.
func userText(m llm.Message) string {
	var parts []string
	for _, p := range m.Parts {
		if t, ok := p.(*llm.Text); ok {
			if _, isMode := parseModeReminder(t.Text); !isMode {
				parts = append(parts, t.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// transcript renders msgs for the summariser, each tool call's arguments
// and each result cut to limit bytes.
func transcript(msgs []llm.Message, limit int) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch v := p.(type) {
			case *llm.Text:
				if m.Role == llm.RoleUser {
					b.WriteString("User: ")
				} else {
					b.WriteString("Assistant: ")
				}
				b.WriteString(v.Text)
				b.WriteString("\n\n")
			case *llm.Image:
				b.WriteString("User: [an image]\n\n")
			case *llm.ToolCall:
				fmt.Fprintf(&b, "Assistant called %s %s\n\n", v.Name, shorten(v.Arguments, max(limit, 200)))
			case *llm.ToolResult:
				var text strings.Builder
				for _, c := range v.Content {
					if t, ok := c.(*llm.Text); ok {
						text.WriteString(t.Text)
					}
				}
				status := "result"
				if v.IsError {
					status = "error"
				}
				fmt.Fprintf(&b, "Tool %s: %s\n\n", status, shorten(text.String(), limit))
			}
		}
	}
	return b.String()
}

// shorten cuts s to about n bytes, keeping its start and end.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return fmt.Sprintf("[%d bytes left out]", len(s))
	}
	head := n * 2 / 3
	tail := n - head
	return fmt.Sprintf("%s\n[… %d bytes left out …]\n%s", strings.ToValidUTF8(s[:head], ""), len(s)-n, strings.ToValidUTF8(s[len(s)-tail:], ""))
}

// compactCommand reports whether a prompt is /compact, and its focus.
func compactCommand(prompt []acp.ContentBlock) (string, bool) {
	if len(prompt) == 0 {
		return "", false
	}
	tc, ok := prompt[0].Value.(*acp.TextContent)
	if !ok {
		return "", false
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(tc.Text), "/"+CommandCompact)
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\n' && rest[0] != '\t' {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// manualCompact answers /compact: it summarises the whole conversation.
// The command is not part of the conversation.
func (r *run) manualCompact(ctx context.Context, focus string) (acp.StopReason, error) {
	if len(r.msgs) == 0 {
		r.t.Text("There is nothing to compact yet.")
		return acp.StopEndTurn, nil
	}
	// The fixed part of a request, for the size estimates.
	r.fixedTokens = estimateTokens(System{Info: r.t.SessionInfo(), Project: r.project, Instructions: r.opts.Instructions}.String()) + estimateTokens(r.t.Tools())
	pre := r.promptEstimate(r.msgs)
	err := r.compact(ctx, bridge.CompactionManual, focus)
	switch {
	case ctx.Err() != nil:
		return acp.StopCancelled, nil
	case err != nil:
		r.t.NewMessage()
		r.t.Text("⚠ The conversation was not compacted: " + err.Error())
	default:
		r.t.NewMessage()
		r.t.Text(fmt.Sprintf("Compacted the conversation: about %d tokens before, %d after.", pre, r.promptEstimate(r.msgs)))
	}
	return acp.StopEndTurn, nil
}
