package bridge

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
)

// What the bridge writes to a session's durable log (DESIGN.md "Durable
// session log"), one record per event, in the order things happened:
//
//	header           cwd, additional directories, creation time
//	prompt           the prompt's content blocks
//	update           every session/update actually sent, as sent
//	history          a record the loop stored with Turn.Remember
//	tool/call        frozen execution identity and canonical arguments
//	tool/result      the normalised, frozen result
//	permission       the outcome of a permission request
//	rule/remembered  an allow_always / reject_always grant
//	rule/revoked     a grant revoked with /revoke
//	mode             a mode change
//	config           a change of one of the loop's config options
//	title            the session title
//	compaction       a finished compaction of the model's context
//	turn/end         the stop reason; the log is synced right after
const (
	evUpdate     = sessionlog.KindUpdate
	evPrompt     = sessionlog.KindPrompt
	evHistory    = sessionlog.KindHistory
	evToolCall   = sessionlog.KindToolCall
	evToolResult = sessionlog.KindToolResult
	evPermission = sessionlog.KindPermission
	evRule       = sessionlog.KindRuleRemembered
	evRevoke     = sessionlog.KindRuleRevoked
	evMode       = sessionlog.KindMode
	evTitle      = sessionlog.KindTitle
	evConfig     = sessionlog.KindConfig
	evTurnEnd    = "turn/end"
)

// logEvent is one event to record; Kind says which other field is the
// payload.
type logEvent struct {
	Kind       string
	Update     *acp.SessionUpdate
	Prompt     []acp.ContentBlock
	Record     json.RawMessage
	Tool       *toolEvent
	Permission *permissionEvent
	Decision   string
	Rule       string
	Mode       string
	Title      string
	StopReason string
	Config     *configEvent
	Compaction *compactionEvent
}

// toolEvent is the payload of tool/call and tool/result.
type toolEvent struct {
	CallID string `json:"callId"`
	Tool   string `json:"tool"`
	Token  string `json:"token,omitempty"`
	Parent string `json:"parent,omitempty"`
	// ParentCall is the call id of the parent execution (the task call of
	// a subagent's call): unlike Parent, it names the parent across
	// processes.
	ParentCall string          `json:"parentCall,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
}

// permissionEvent is the payload of permission.
type permissionEvent struct {
	CallID  string   `json:"callId"`
	Outcome string   `json:"outcome"` // an option id, "cancelled" or "error"
	Rules   []string `json:"rules,omitempty"`
}

type ruleEvent struct {
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
}

type modeEvent struct {
	Mode string `json:"mode"`
}

type turnEndEvent struct {
	StopReason string `json:"stopReason"`
}

func (e logEvent) payload() any {
	switch e.Kind {
	case evUpdate:
		return e.Update
	case evPrompt:
		return e.Prompt
	case evHistory, evFileChange, evUndo, evUndoTold:
		return e.Record
	case evToolCall, evToolResult:
		return e.Tool
	case evPermission:
		return e.Permission
	case evRule, evRevoke:
		return ruleEvent{Decision: e.Decision, Rule: e.Rule}
	case evMode:
		return modeEvent{Mode: e.Mode}
	case evTitle:
		return sessionlog.Title{Title: e.Title}
	case evConfig:
		return e.Config
	case evTurnEnd:
		return turnEndEvent{StopReason: e.StopReason}
	case evCompaction:
		return e.Compaction
	}
	return nil
}

// logWriter appends a session's events. A failing append is logged, not
// returned to the turn: the editor session goes on even when the disk is
// full, and the failure is on stderr.
type logWriter struct {
	l   *sessionlog.Log
	log *slog.Logger

	mu     sync.Mutex
	failed bool
}

func (w *logWriter) append(e logEvent) error {
	return w.failed1(w.l.Append(e.Kind, e.payload()))
}

// appendEntries appends records in order, in one write.
func (w *logWriter) appendEntries(entries []sessionlog.Entry) error {
	return w.failed1(w.l.AppendAll(entries...))
}

func (w *logWriter) failed1(err error) error {
	if err != nil {
		w.mu.Lock()
		first := !w.failed
		w.failed = true
		w.mu.Unlock()
		if first {
			w.log.Error("session log append failed; the session will not be fully durable", "session", w.l.ID(), "err", err)
		}
	}
	return err
}

func (w *logWriter) sync() error  { return w.l.Sync() }
func (w *logWriter) close() error { return w.l.Close() }

// header is the session's log header.
func (s *session) header() sessionlog.Header {
	return sessionlog.Header{SessionID: s.id, Cwd: s.cwd, AdditionalDirectories: s.extra, Created: s.created}
}

// store is the state directory of durable sessions.
type store struct {
	dir string
	log *slog.Logger
}

func (st *store) create(h sessionlog.Header) (*logWriter, error) {
	l, err := sessionlog.Create(st.dir, h)
	if err != nil {
		return nil, err
	}
	return &logWriter{l: l, log: st.log}, nil
}

func (st *store) open(id string) (*logWriter, []sessionlog.Record, error) {
	l, err := sessionlog.Open(st.dir, id)
	if err != nil {
		return nil, nil, err
	}
	recs, err := l.Read()
	if err != nil {
		l.Close()
		return nil, nil, fmt.Errorf("reading session log: %w", err)
	}
	return &logWriter{l: l, log: st.log}, recs, nil
}
