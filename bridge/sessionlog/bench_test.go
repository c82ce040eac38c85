package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBenchSession writes a 10,000-record session shaped like a real one:
// mostly message chunks, plus tool calls with diffs, pipeline events and
// history entries.
func writeBenchSession(b *testing.B, dir string, n int) int64 {
	b.Helper()
	l, err := Create(dir, Header{SessionID: "bench", Cwd: "/home/ann/proj"})
	if err != nil {
		b.Fatal(err)
	}
	diff := strings.Repeat("\tfmt.Println(\"hello, world\")\n", 12)
	for i := range n {
		var kind, payload string
		switch i % 10 {
		case 0, 1, 2, 3, 4, 5:
			kind, payload = KindUpdate, fmt.Sprintf(`{"sessionId":"bench","update":{"sessionUpdate":"agent_message_chunk","messageId":"m%d","content":{"type":"text","text":"Some streamed words of the answer, number %d. "}}}`, i/50, i)
		case 6:
			kind, payload = KindUpdate, fmt.Sprintf(`{"sessionId":"bench","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_%d","status":"completed","content":[{"type":"diff","path":"/home/ann/proj/main.go","oldText":%q,"newText":%q}],"rawOutput":{"ok":true}}}`, i, diff, diff+"\t// done\n")
		case 7:
			kind, payload = KindToolCall, fmt.Sprintf(`{"id":"call_%d","tool":"edit","scope":"bench","arguments":{"path":"main.go","old":"a","new":"b"}}`, i)
		case 8:
			kind, payload = KindToolResult, fmt.Sprintf(`{"id":"call_%d","result":{"content":[{"type":"text","text":"Edited main.go (1 hunk)."}]}}`, i)
		case 9:
			kind, payload = KindHistory, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Turn %d done."}],"toolCalls":[{"id":"call_%d","name":"edit","arguments":"{\"path\":\"main.go\"}"}]}`, i, i)
		}
		if err := l.Append(kind, json.RawMessage(payload)); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(l.Path())
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// BenchmarkRead10k is the sessionlog part of session/load: Open (tail
// check, header) and Read of a 10,000-record log.
func BenchmarkRead10k(b *testing.B) {
	dir := b.TempDir()
	size := writeBenchSession(b, dir, 10_000)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		l, err := Open(dir, "bench")
		if err != nil {
			b.Fatal(err)
		}
		records, err := l.Read()
		if err != nil || len(records) != 10_001 {
			b.Fatal(len(records), err)
		}
		l.Close()
	}
}

// BenchmarkReadReference10k is the same-run reference: os.ReadFile and a
// bare json.Unmarshal of every line into the envelope.
func BenchmarkReadReference10k(b *testing.B) {
	dir := b.TempDir()
	size := writeBenchSession(b, dir, 10_000)
	path := filepath.Join(dir, "bench.jsonl")
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for len(data) > 0 {
			var line []byte
			line, data, _ = bytes.Cut(data, []byte{'\n'})
			var env struct {
				T  string          `json:"t"`
				TS int64           `json:"ts"`
				D  json.RawMessage `json:"d"`
			}
			if err := json.Unmarshal(line, &env); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 10_001 {
			b.Fatal(n)
		}
	}
}

// BenchmarkAppend appends one typical update (one write to the file, no
// fsync).
func BenchmarkAppend(b *testing.B) {
	l, err := Create(b.TempDir(), Header{SessionID: "append", Cwd: "/w"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	payload := json.RawMessage(`{"sessionId":"append","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Some streamed words of the answer. "}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Append(KindUpdate, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalReference is the same-run reference for BenchmarkAppend:
// json.Marshal of the same payload wrapped in an envelope struct.
func BenchmarkMarshalReference(b *testing.B) {
	payload := json.RawMessage(`{"sessionId":"append","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Some streamed words of the answer. "}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(struct {
			T  string          `json:"t"`
			TS int64           `json:"ts"`
			D  json.RawMessage `json:"d"`
		}{KindUpdate, 1764536400123, payload}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSync is the cost of a turn of ten appends made durable (the
// writes and the fsync).
func BenchmarkSync(b *testing.B) {
	l, err := Create(b.TempDir(), Header{SessionID: "sync", Cwd: "/w"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		for range 10 {
			l.Append(KindUpdate, json.RawMessage(`{"x":1}`))
		}
		if err := l.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}
