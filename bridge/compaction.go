package bridge

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
)

// Compaction triggers, as reported in _meta.contextCompaction.trigger.
const (
	CompactionAuto     = "auto"     // the next request would not fit
	CompactionManual   = "manual"   // the /compact command
	CompactionOverflow = "overflow" // the provider refused a request as too long
)

// CompactionTitle is the title of the tool call that shows a compaction
// to editors without the session.compaction capability.
const CompactionTitle = "Compact conversation"

// evCompaction is the session-log event of a finished compaction (see
// compactionEvent); session/load replays it in the form the loading
// editor understands.
const evCompaction = sessionlog.KindCompaction

// compactionEvent is the payload of a compaction record.
type compactionEvent struct {
	ID         string `json:"id"`
	Trigger    string `json:"trigger"`
	Status     string `json:"status"`
	PreTokens  int    `json:"preTokens"`
	PostTokens int    `json:"postTokens,omitempty"`
	DurationMs int64  `json:"durationMs"`
	Summary    string `json:"summary,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Compaction is one compaction of the model's context, shown to the
// editor while it runs; start one with [Turn.StartCompaction]. An editor
// that advertised clientCapabilities.session.compaction sees
// compaction_update (in_progress, then completed, failed or cancelled)
// and compaction_summary_chunk updates; any other sees a `think` tool call
// titled [CompactionTitle] whose _meta.contextCompaction carries
// {trigger, preTokens, postTokens, durationMs}. The finished compaction is
// an event of the durable session log, and session/load replays it.
type Compaction struct {
	t       *Turn
	ev      compactionEvent
	native  bool
	started time.Time
	summary strings.Builder
	ended   bool
}

// StartCompaction announces a compaction of the model's context
// (trigger: [CompactionAuto], [CompactionManual] or [CompactionOverflow])
// with the context's size before it, in tokens.
func (t *Turn) StartCompaction(trigger string, preTokens int) *Compaction {
	s := t.sess
	s.mu.Lock()
	s.compactions++
	n := s.compactions
	s.mu.Unlock()
	// The id is claimed like a tool call's: the tool-call form must not
	// reuse a call id of the session.
	id := s.claimCallID("compaction-" + strconv.Itoa(n))
	c := &Compaction{t: t, started: time.Now(), native: s.conn.clientCaps.Session != nil && s.conn.clientCaps.Session.Compaction != nil,
		ev: compactionEvent{ID: id, Trigger: trigger, Status: string(acp.CompactionInProgress), PreTokens: preTokens}}
	t.mu.Lock()
	t.msgID, t.thinkID = "", ""
	t.mu.Unlock()
	if c.native {
		t.sendLive(&acp.CompactionUpdate{CompactionID: c.ev.ID, Status: acp.CompactionInProgress})
	} else {
		t.sendLive(compactionCall(c.ev, true))
	}
	return c
}

// Summary streams more of the compaction's summary.
func (c *Compaction) Summary(text string) {
	if c.ended || text == "" {
		return
	}
	c.summary.WriteString(text)
	if c.native {
		c.t.sendLive(&acp.CompactionSummaryChunk{CompactionID: c.ev.ID, Content: acp.Text(text)})
	}
}

// End finishes the compaction: completed (with the context's size after
// it), failed (errText says why) or cancelled. Only the first End counts.
func (c *Compaction) End(status acp.CompactionStatus, postTokens int, errText string) {
	if c.ended {
		return
	}
	c.ended = true
	c.ev.Status = string(status)
	c.ev.PostTokens = postTokens
	c.ev.DurationMs = time.Since(c.started).Milliseconds()
	c.ev.Summary = c.summary.String()
	c.ev.Error = errText
	if c.native {
		u := &acp.CompactionUpdate{CompactionID: c.ev.ID, Status: status}
		if errText != "" {
			u.Error = acp.Some(errText)
		}
		u.Meta = acp.Some(compactionMeta(c.ev))
		c.t.sendLive(u)
	} else {
		c.t.sendLive(compactionCall(c.ev, false))
	}
	if log := c.t.sess.log; log != nil {
		_ = log.append(logEvent{Kind: evCompaction, Compaction: &c.ev})
	}
}

// sendLive sends an update of the turn without logging it: the session
// log keeps the event itself, replayed in the loading editor's form.
func (t *Turn) sendLive(u acp.SessionUpdateVariant) {
	o := t.sess.outgoing(u, false, nil)
	t.mu.Lock()
	defer t.unlock()
	t.postLocked(o)
}

func compactionMeta(ev compactionEvent) acp.Meta {
	m := map[string]any{"trigger": ev.Trigger, "preTokens": ev.PreTokens}
	if ev.Status != string(acp.CompactionInProgress) {
		m["postTokens"] = ev.PostTokens
		m["durationMs"] = ev.DurationMs
	}
	return metaJSON(map[string]any{"contextCompaction": m})
}

// compactionCall is the tool-call form of a compaction: its announcement
// (start) or its final update.
func compactionCall(ev compactionEvent, start bool) acp.SessionUpdateVariant {
	id := ev.ID
	if start {
		st := acp.ToolCallInProgress
		return &acp.ToolCall{ToolCallID: id, Title: CompactionTitle, Kind: acp.ToolKindThink, Status: st,
			RawInput: mustJSON(map[string]any{"trigger": ev.Trigger}), Meta: compactionMeta(ev)}
	}
	st := acp.ToolCallCompleted
	text := ev.Summary
	switch acp.CompactionStatus(ev.Status) {
	case acp.CompactionCompleted:
		if text == "" {
			text = fmt.Sprintf("Compacted the conversation from about %d to %d tokens.", ev.PreTokens, ev.PostTokens)
		}
	case acp.CompactionCancelled:
		st = acp.ToolCallFailed
		text = "Compaction cancelled; the conversation is unchanged."
	default:
		st = acp.ToolCallFailed
		text = "Compaction failed: " + ev.Error
	}
	return &acp.ToolCallUpdate{ToolCallID: id, Status: &st, Content: []acp.ToolCallContent{acp.ToolText(text)}, Meta: compactionMeta(ev)}
}

// replayCompaction sends a logged compaction in the form the editor
// understands.
func (s *session) replayCompaction(payload json.RawMessage) []acp.SessionUpdateVariant {
	var ev compactionEvent
	if json.Unmarshal(payload, &ev) != nil || ev.ID == "" {
		return nil
	}
	if s.conn.clientCaps.Session != nil && s.conn.clientCaps.Session.Compaction != nil {
		u := &acp.CompactionUpdate{CompactionID: ev.ID, Status: acp.CompactionStatus(ev.Status), Meta: acp.Some(compactionMeta(ev))}
		if ev.Summary != "" {
			u.Summary = acp.Some([]acp.ContentBlock{acp.Text(ev.Summary)})
		}
		if ev.Error != "" {
			u.Error = acp.Some(ev.Error)
		}
		return []acp.SessionUpdateVariant{u}
	}
	return []acp.SessionUpdateVariant{compactionCall(ev, true), compactionCall(ev, false)}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
