package bridge

import (
	"encoding/json"
	"testing"
)

// TestDiffWithoutOldText: only an update holding a diff that lacks
// "oldText" (a log written before a new file's diff said null) is
// re-encoded on replay; today's diffs go out as they were logged.
func TestDiffWithoutOldText(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload string
		want    bool
	}{
		{"new file, today", `{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"diff","path":"/ws/a","oldText":null,"newText":"x"}]}`, false},
		{"changed file", `{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"diff","path":"/ws/a","oldText":"a","newText":"b"}]}`, false},
		{"new file, old log", `{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"diff","path":"/ws/a","newText":"x"}]}`, true},
		{"one of two", `{"sessionUpdate":"tool_call","toolCallId":"c1","title":"t","content":[{"type":"diff","path":"/ws/a","oldText":"a","newText":"b"},{"type":"diff","path":"/ws/b","newText":"x"}]}`, true},
		{"oldText elsewhere", `{"sessionUpdate":"tool_call","toolCallId":"c1","title":"t","rawInput":{"oldText":"a"},"content":[{"type":"diff","path":"/ws/b","newText":"x"}]}`, true},
		{"text that says diff", `{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"content","content":{"type":"text","text":"\"diff\""}}]}`, false},
		{"not JSON", `{"content":[`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := diffWithoutOldText(json.RawMessage(tc.payload)); got != tc.want {
				t.Errorf("diffWithoutOldText(%s) = %v, want %v", tc.payload, got, tc.want)
			}
		})
	}
}
