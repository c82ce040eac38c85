package sessionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Record kinds the bridge writes. Kinds are open-ended: readers skip kinds
// they do not know.
const (
	// KindHeader is the first record of every log: a [Header].
	KindHeader = "header"
	// KindPrompt is a session/prompt request's prompt.
	KindPrompt = "prompt"
	// KindUpdate is the params of one session/update notification exactly
	// as it was sent; session/load replays these in order.
	KindUpdate = "update"
	// KindToolCall is the pipeline's frozen call (identity, arguments).
	KindToolCall = "tool/call"
	// KindToolResult is the pipeline's normalised result of a call.
	KindToolResult = "tool/result"
	// KindPermission is a permission request's outcome.
	KindPermission = "permission"
	// KindRuleRemembered is an allow_always or reject_always rule.
	KindRuleRemembered = "rule/remembered"
	// KindRuleRevoked revokes a remembered rule.
	KindRuleRevoked = "rule/revoked"
	// KindMode is a mode change.
	KindMode = "mode"
	// KindConfig is a config option change.
	KindConfig = "config"
	// KindTitle is a [Title]; the latest one names the session in lists.
	KindTitle = "title"
	// KindHistory is an opaque model-history entry the loop needs to
	// continue the conversation.
	KindHistory = "history"
	// KindCompaction is a finished compaction of the model's context, as
	// the editor was shown it.
	KindCompaction = "compaction"
)

// Header is the payload of the first record.
type Header struct {
	SessionID             string    `json:"sessionId"`
	Cwd                   string    `json:"cwd"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
	Created               time.Time `json:"created"`
	// MCPServers is the session/new request's mcpServers, verbatim.
	MCPServers json.RawMessage `json:"mcpServers,omitempty"`
	// Meta holds anything else the bridge wants to keep with the header.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// Title is the payload of a title record. An empty title clears it.
type Title struct {
	Title string `json:"title"`
}

// Record is one line of a log.
type Record struct {
	// Kind is the envelope's t.
	Kind string
	// Time is when the record was appended (millisecond precision).
	Time time.Time
	// Payload is the envelope's d, compact JSON; nil when d was absent.
	// Records returned by Read share one buffer: do not modify payloads.
	Payload json.RawMessage
}

// Decode unmarshals the payload into v.
func (r Record) Decode(v any) error {
	if r.Payload == nil {
		return fmt.Errorf("sessionlog: %s record has no payload", r.Kind)
	}
	if err := json.Unmarshal(r.Payload, v); err != nil {
		return fmt.Errorf("sessionlog: decoding %s record: %w", r.Kind, err)
	}
	return nil
}

// knownKinds interns the kinds of this package, so decoding them does not
// allocate.
var knownKinds = map[string]string{}

func init() {
	for _, k := range []string{KindHeader, KindPrompt, KindUpdate, KindToolCall, KindToolResult,
		KindPermission, KindRuleRemembered, KindRuleRevoked, KindMode, KindConfig, KindTitle, KindHistory} {
		knownKinds[k] = k
	}
}

// ErrBadRecord marks a line that is not a record.
var ErrBadRecord = errors.New("sessionlog: bad record")

// validKind reports whether a kind can be written into the envelope without
// escaping.
func validKind(kind string) bool {
	if kind == "" {
		return false
	}
	for i := 0; i < len(kind); i++ {
		if c := kind[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendRecord appends the envelope line (with its newline) for a payload
// that is already compact JSON.
func appendRecord(buf []byte, kind string, ts time.Time, payload []byte) []byte {
	buf = append(buf, `{"t":"`...)
	buf = append(buf, kind...)
	buf = append(buf, `","ts":`...)
	buf = strconv.AppendInt(buf, ts.UnixMilli(), 10)
	buf = append(buf, `,"d":`...)
	buf = append(buf, payload...)
	return append(buf, "}\n"...)
}

// decodeRecord decodes one line (without its newline). Lines in the exact
// form the package writes take a fast path that only validates the
// payload; anything else goes through encoding/json.
func decodeRecord(line []byte) (Record, error) {
	if r, ok := decodeCanonical(line); ok {
		return r, nil
	}
	var env struct {
		T  *string         `json:"t"`
		TS *int64          `json:"ts"`
		D  json.RawMessage `json:"d"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return Record{}, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	if env.T == nil || *env.T == "" {
		return Record{}, fmt.Errorf("%w: no kind (t)", ErrBadRecord)
	}
	r := Record{Kind: *env.T, Payload: env.D}
	if env.TS != nil {
		r.Time = time.UnixMilli(*env.TS)
	}
	return r, nil
}

const (
	canonicalStart = `{"t":"`
	canonicalTS    = `","ts":`
	canonicalData  = `,"d":`
)

// decodeCanonical parses {"t":"<kind>","ts":<int>,"d":<json>} without
// copying: the payload aliases line.
func decodeCanonical(line []byte) (Record, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(canonicalStart))
	if !ok {
		return Record{}, false
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return Record{}, false
	}
	kind, known := knownKinds[string(rest[:end])] // no allocation for known kinds
	if !known {
		if !validKind(string(rest[:end])) {
			return Record{}, false
		}
		kind = string(rest[:end])
	}
	rest, ok = bytes.CutPrefix(rest[end:], []byte(canonicalTS))
	if !ok {
		return Record{}, false
	}
	n := 0
	if n < len(rest) && rest[n] == '-' {
		n++
	}
	digits := n
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == digits || rest[digits] == '0' && n > digits+1 {
		return Record{}, false // no digits, or a leading zero
	}
	ts, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	if err != nil {
		return Record{}, false
	}
	rest, ok = bytes.CutPrefix(rest[n:], []byte(canonicalData))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return Record{}, false
	}
	payload := rest[:len(rest)-1]
	if isJSONSpace(payload[0]) || isJSONSpace(payload[len(payload)-1]) || !json.Valid(payload) {
		return Record{}, false
	}
	return Record{Kind: kind, Time: time.UnixMilli(ts), Payload: payload}, true
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
