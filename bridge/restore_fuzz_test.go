package bridge

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
	"github.com/dsh-tools/dshd/policy"
)

// configuringLoop accepts its one option, "model", with any non-empty
// value, as a loop's model selector would.
type configuringLoop struct{ set map[string]string }

func (l *configuringLoop) Turn(context.Context, *Turn) (acp.StopReason, error) {
	return acp.StopEndTurn, nil
}

func (l *configuringLoop) SessionConfigOptions(string) []acp.SessionConfigOption { return nil }

func (l *configuringLoop) SetSessionConfigOption(_, id, value string) (bool, error) {
	if id != "model" {
		return false, nil
	}
	if value == "" {
		return true, io.ErrUnexpectedEOF
	}
	l.set[id] = value
	return true, nil
}

// restoreSeeds are logs as "kind<TAB>payload" lines: what the bridge writes,
// and what a damaged or hand-edited log could hold instead.
var restoreSeeds = []string{
	"mode\t{\"mode\":\"plan\"}\nmode\t{\"mode\":\"no-such-mode\"}\nmode\t\"plan\"",
	"config\t{\"configId\":\"model\",\"value\":\"m2\"}\nconfig\t{\"configId\":\"model\",\"value\":\"\"}\nconfig\t{\"configId\":\"other\",\"value\":\"x\"}\nconfig\tnull",
	"title\t{\"title\":\"Fix the build\"}\ntitle\t{\"title\":7}\ntitle\t{\"title\":\"\"}",
	"history\t{\"message\":{\"role\":\"user\"}}\nhistory\tnull\nhistory\t",
	"rule/remembered\t{\"decision\":\"allow\",\"rule\":\"bash(go test:*)\"}\nrule/remembered\t{\"decision\":\"deny\",\"rule\":\"read(**/.env)\"}\nrule/revoked\t{\"decision\":\"allow\",\"rule\":\"bash(go test:*)\"}\nrule/revoked\t{\"decision\":\"deny\",\"rule\":\"nope(\"}\nrule/remembered\t{\"decision\":\"maybe\",\"rule\":\"bash\"}",
	"prompt\t[]\nfile/change\t{\"callId\":\"w1\",\"files\":[{\"path\":\"/ws/a\",\"existed\":true,\"before\":\"b25lCg==\",\"after\":\"ab\"}]}\nfile/change\t{\"files\":7}\nundo\t{\"calls\":[\"w1\"],\"cardId\":\"undo\",\"note\":\"n\"}\nundo\t[]\nundo/told\t{}",
	"tool/call\t{\"callId\":\"c1\",\"tool\":\"read\",\"arguments\":{\"path\":\"a\"}}\ntool/call\t{\"callId\":1}\ntool/result\t{\"callId\":\"c1\"}",
	"update\t{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"hi\"},\"messageId\":\"m3\"}\n" +
		"update\t{\"sessionUpdate\":\"agent_thought_chunk\",\"content\":{\"type\":\"text\",\"text\":\"hm\"},\"messageId\":\"m12\"}\n" +
		"update\t{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"x\"},\"messageId\":\"m5\"}",
	// messageId values the bridge never writes: in a tool's raw input, too
	// large for an int, not a number, negative, a different case of key.
	"update\t{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"c\",\"title\":\"t\",\"rawInput\":{\"messageId\":\"m99\"}}",
	"update\t{\"sessionUpdate\":\"agent_message_chunk\",\"messageId\":\"m99999999999999999999999\"}",
	"update\t{\"sessionUpdate\":\"agent_message_chunk\",\"messageId\":\"m9223372036854775807\"}",
	"update\t{\"messageId\":\"m\"}\nupdate\t{\"messageId\":\"m-4\"}\nupdate\t{\"messageId\":\"m7x\"}\nupdate\t{\"MessageId\":\"m8\"}\nupdate\t{\"messageId\":\"m0009\"}",
	"update\t{\"messageId\":\"m5\",\"x\":\"a\"}\nupdate\t{\"messageId\":\"m6\",\"x\":\"\\\"messageId\\\":\\\"m7\"}",
	"update\t{\"messageId\":\"m4\"\nprompt\t[{\"type\":\"text\",\"text\":\"hi\"}]\nx-unknown/kind\t{}\n\t{}",
}

// FuzzRestore rebuilds a session from arbitrary log records and checks it
// never panics, keeps a known mode, takes the last decodable title, keeps
// every history record, knows every logged call id, and numbers the next
// message after every message id the log's updates carry, without
// overflowing.
func FuzzRestore(f *testing.F) {
	for _, s := range restoreSeeds {
		f.Add(s)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, log string) {
		loop := &configuringLoop{set: map[string]string{}}
		a := New(Options{Loop: loop, Logger: logger})
		var recs []sessionlog.Record
		for i, line := range strings.Split(log, "\n") {
			kind, payload, _ := strings.Cut(line, "\t")
			r := sessionlog.Record{Kind: kind, Time: time.UnixMilli(int64(i) * 1000)}
			if payload != "" {
				r.Payload = json.RawMessage(payload)
			}
			recs = append(recs, r)
		}
		s := newSession(a, nil, "s1", "/ws", nil, time.UnixMilli(0))
		s.restore(recs)

		if !policy.Mode(s.mode).Valid() {
			t.Errorf("restored mode %q is unknown", s.mode)
		}
		wantTitle, histories, maxMsg := "", 0, 0
		for _, r := range recs {
			switch r.Kind {
			case evTitle:
				var e sessionlog.Title
				if json.Unmarshal(r.Payload, &e) == nil {
					wantTitle = e.Title
				}
			case evHistory:
				histories++
			case evUndo:
				var e undoEvent
				if json.Unmarshal(r.Payload, &e) == nil {
					if _, ok := s.callIDs[e.CardID]; !ok {
						t.Errorf("logged undo card %q is not known", e.CardID)
					}
				}
			case evToolCall:
				var e toolEvent
				if json.Unmarshal(r.Payload, &e) == nil {
					if _, ok := s.callIDs[e.CallID]; !ok {
						t.Errorf("logged call %q is not known", e.CallID)
					}
				}
			case evUpdate:
				// Read returns valid JSON only; anything else must not
				// panic and must not yield a number that overflows.
				n := messageNumber(r.Payload)
				if json.Valid(r.Payload) {
					if want := referenceMessageNumber(r.Payload); n != want {
						t.Errorf("messageNumber(%s) = %d, want %d", r.Payload, n, want)
					}
				} else if n < 0 || n > math.MaxInt32 {
					t.Errorf("messageNumber(%s) = %d", r.Payload, n)
				}
				maxMsg = max(maxMsg, n)
			}
		}
		if s.title != wantTitle {
			t.Errorf("title %q, want %q", s.title, wantTitle)
		}
		if len(s.history) != histories {
			t.Errorf("%d history entries from %d records", len(s.history), histories)
		}
		if s.nextMsg != maxMsg {
			t.Errorf("next message number continues from %d, want %d", s.nextMsg, maxMsg)
		}
		next, ok := strings.CutPrefix(s.newMessageID(), "m")
		if n, err := strconv.Atoi(next); !ok || err != nil || n <= maxMsg || n <= 0 {
			t.Errorf("next message id m%s after m%d", next, maxMsg)
		}
		for _, rule := range append(s.remembered.Allow, s.remembered.Deny...) {
			if _, err := policy.ParseRule(rule.String()); err != nil {
				t.Errorf("remembered rule %v does not parse again: %v", rule, err)
			}
		}
	})
}

// referenceMessageNumber is messageNumber's specification: N of the
// update's own "messageId":"mN", N a decimal number of at most 31 bits; 0
// otherwise.
func referenceMessageNumber(payload []byte) int {
	var u struct {
		MessageID string `json:"messageId"`
	}
	if json.Unmarshal(payload, &u) != nil {
		return 0
	}
	digits, ok := strings.CutPrefix(u.MessageID, "m")
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return 0
	}
	return int(n)
}
