package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
	"github.com/dsh-tools/dshd/policy"
)

// restored is a session rebuilt from its log.
type restored struct {
	s       *session
	records []sessionlog.Record
}

// reopen validates a load or resume request and rebuilds the session from
// its log. It runs off the read goroutine.
func (c *conn) reopen(ctx context.Context, id, cwd string, extra []string, servers []acp.MCPServer) (*restored, error) {
	a := c.agent
	if a.store == nil {
		return nil, acp.NewError(acp.CodeMethodNotFound, "sessions cannot be loaded without a state directory")
	}
	if err := a.checkAuth(); err != nil {
		return nil, err
	}
	if err := checkDirs(cwd, extra); err != nil {
		return nil, err
	}
	if err := sessionlog.ValidateID(id); err != nil {
		return nil, acp.NewError(acp.CodeResourceNotFound, fmt.Sprintf("unknown session %q", id))
	}
	// A session still active (here or on another connection) is closed
	// first: it continues here, with one writer to its log.
	a.mu.Lock()
	old := a.sessions[id]
	a.mu.Unlock()
	if old != nil {
		old.mu.Lock()
		busy := old.turn != nil
		old.mu.Unlock()
		if busy {
			return nil, errBusy
		}
		old.close()
		old.conn.detach(old)
	}
	w, recs, err := a.store.open(id)
	if errors.Is(err, sessionlog.ErrNotFound) {
		return nil, acp.NewError(acp.CodeResourceNotFound, fmt.Sprintf("unknown session %q", id))
	}
	if errors.Is(err, sessionlog.ErrLocked) {
		// Two daemons appending to one log interleave their turns.
		return nil, acp.NewError(acp.CodeInvalidRequest, fmt.Sprintf(
			"session %q is open in another dshd process, and a session has one writer: close it there first (or start a new session)", id))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: opening the session log: %v", acp.ErrInternal, err)
	}
	h := w.l.Header()
	if filepath.Clean(h.Cwd) != filepath.Clean(cwd) {
		w.close()
		return nil, invalidParams("session %q belongs to %s, not %s", id, h.Cwd, cwd)
	}
	// additionalDirectories is the complete new list: stored roots are not
	// restored.
	s := newSession(a, c, id, filepath.Clean(cwd), cleanAll(extra), h.Created)
	s.log = w
	s.restore(recs)
	failures := append(c.attach(ctx, s, servers), s.grantProblems()...)
	for _, f := range failures {
		s.sendUpdate(&acp.AgentMessageChunk{Content: acp.Text("⚠ " + f.Error())})
	}
	return &restored{s: s, records: recs}, nil
}

// restore rebuilds the session's state from its log records.
func (s *session) restore(recs []sessionlog.Record) {
	for _, r := range recs {
		switch r.Kind {
		case evMode:
			var e modeEvent
			if r.Decode(&e) == nil && policy.Mode(e.Mode).Valid() {
				s.mode = policy.Mode(e.Mode)
			}
		case evConfig:
			var e configEvent
			if r.Decode(&e) == nil {
				s.restoreLoopOption(e)
			}
		case evTitle:
			var e sessionlog.Title
			if r.Decode(&e) == nil {
				s.title = e.Title
			}
		case evHistory:
			s.history = append(s.history, json.RawMessage(r.Payload))
		case evRule, evRevoke:
			var e ruleEvent
			if r.Decode(&e) != nil {
				continue
			}
			rule, err := policy.ParseRule(e.Rule)
			var d policy.Decision
			if err != nil || d.UnmarshalText([]byte(e.Decision)) != nil {
				continue
			}
			if r.Kind == evRule {
				s.remembered.Add(d, rule)
			} else {
				list := &s.remembered.Allow
				if d == policy.Deny {
					list = &s.remembered.Deny
				}
				for i, x := range *list {
					if x == rule {
						*list = append((*list)[:i:i], (*list)[i+1:]...)
						break
					}
				}
			}
		case evToolCall:
			var e toolEvent
			if r.Decode(&e) == nil {
				s.callIDs[e.CallID] = struct{}{}
			}
		case evPrompt:
			s.undo.turn++
		case evFileChange:
			var e fileChange
			if r.Decode(&e) == nil {
				e.turn = s.undo.turn
				s.undo.changes = append(s.undo.changes, e)
			}
		case evUndo:
			var e undoEvent
			if r.Decode(&e) == nil {
				s.undo.addUndo(e)
				s.callIDs[e.CardID] = struct{}{}
			}
		case evUndoTold:
			s.undo.note = ""
		case evCompaction:
			var e compactionEvent
			if r.Decode(&e) == nil {
				s.compactions++
				s.callIDs[e.ID] = struct{}{}
			}
		case evUpdate:
			// Message ids continue where the log left off.
			if n := messageNumber(r.Payload); n > s.nextMsg {
				s.nextMsg = n
			}
		}
		if !r.Time.IsZero() && r.Time.After(s.updatedAt) {
			s.updatedAt = r.Time
		}
	}
}

// messageNumber extracts N from a logged update's own "messageId":"mN" (0
// when it has none); payload is valid JSON, as sessionlog's Read returns.
// The update is decoded, not searched: a messageId inside a tool's raw
// input or content is not the update's. N beyond 31 bits is not a number
// the bridge wrote (two billion messages) and is ignored, so the next id
// cannot overflow.
func messageNumber(payload []byte) int {
	// The bridge writes messageId last: in valid JSON, a trailing
	// ,"messageId":"mN"} is the object's own last member, which is what
	// decoding would keep.
	const key = `"messageId":"m`
	if rest, ok := bytes.CutSuffix(payload, []byte(`"}`)); ok {
		j := len(rest)
		for j > 0 && rest[j-1] >= '0' && rest[j-1] <= '9' {
			j--
		}
		if head := rest[:j]; j < len(rest) && len(head) > len(key) && bytes.HasSuffix(head, []byte(key)) {
			if c := head[len(head)-len(key)-1]; c == ',' || c == '{' {
				return parseMessageNumber(string(rest[j:]))
			}
		}
	}
	if !hasMDigit(payload) && !bytes.Contains(payload, []byte(`\u`)) {
		return 0 // no string value can be "mN": most tool updates
	}
	var u struct {
		MessageID string `json:"messageId"`
	}
	if json.Unmarshal(payload, &u) != nil {
		return 0
	}
	digits, ok := strings.CutPrefix(u.MessageID, "m")
	if !ok {
		return 0
	}
	return parseMessageNumber(digits)
}

// hasMDigit reports whether b holds "m followed by a digit.
func hasMDigit(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`"m`))
		if i < 0 {
			return false
		}
		b = b[i+2:]
		if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
			return true
		}
	}
}

func parseMessageNumber(digits string) int {
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return 0
	}
	return int(n)
}

// replay streams the session's history as it was sent: the user's prompts
// as user_message_chunks, then every update in order, with terminal cards
// as their recorded output (see replayCards). Replayed updates are not
// logged again.
func (s *session) replay(ctx context.Context, recs []sessionlog.Record) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	cards := replayCardsOf(recs)
	prompt := 0
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch r.Kind {
		case evPrompt:
			prompt++
			var blocks []acp.ContentBlock
			if err := r.Decode(&blocks); err != nil {
				s.agent.log.Warn("skipping undecodable prompt in session log", "session", s.id, "err", err)
				continue
			}
			id := "u" + strconv.Itoa(prompt)
			for _, b := range blocks {
				u := acp.SessionUpdate{Value: &acp.UserMessageChunk{Content: b, MessageID: &id}}
				if err := s.conn.peer().SessionUpdate(ctx, &acp.SessionNotification{SessionID: s.id, Update: u}); err != nil {
					return err
				}
			}
		case evUpdate:
			update, send := cards.rewrite(r.Payload)
			if !send {
				continue
			}
			if err := s.conn.sendRawUpdate(ctx, s.id, update); err != nil {
				return err
			}
		case evCompaction:
			for _, u := range s.replayCompaction(r.Payload) {
				if err := s.conn.peer().SessionUpdate(ctx, &acp.SessionNotification{SessionID: s.id, Update: acp.SessionUpdate{Value: u}}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (c *conn) loadSession(ctx context.Context, p *acp.LoadSessionRequest) (acp.Reply[acp.LoadSessionResponse], error) {
	return acp.Later(func() (*acp.LoadSessionResponse, error) {
		r, err := c.reopen(ctx, p.SessionID, p.Cwd, p.AdditionalDirectories, p.MCPServers)
		if err != nil {
			return nil, err
		}
		if err := r.s.replay(ctx, r.records); err != nil {
			return nil, fmt.Errorf("replaying session: %w", err)
		}
		if r.s.project != nil {
			// The replay showed the commands of the session's past; the
			// project's files may have changed since.
			r.s.advertise(true)
		}
		return &acp.LoadSessionResponse{Modes: r.s.modeState(), ConfigOptions: r.s.configOptions()}, nil
	}), nil
}

func (c *conn) resumeSession(ctx context.Context, p *acp.ResumeSessionRequest) (acp.Reply[acp.ResumeSessionResponse], error) {
	return acp.Later(func() (*acp.ResumeSessionResponse, error) {
		r, err := c.reopen(ctx, p.SessionID, p.Cwd, p.AdditionalDirectories, p.MCPServers)
		if err != nil {
			return nil, err
		}
		// No replay; the editor knows the session, so its commands may go
		// out before the response.
		r.s.advertise(true)
		return &acp.ResumeSessionResponse{Modes: r.s.modeState(), ConfigOptions: r.s.configOptions()}, nil
	}), nil
}
