package sessionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// captureWarnings routes slog to a buffer for the duration of the test.
func captureWarnings(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&syncWriter{w: &buf}, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return &buf
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func newTestLog(t *testing.T, dir, id string) *Log {
	t.Helper()
	l, err := Create(dir, Header{SessionID: id, Cwd: "/w", AdditionalDirectories: []string{"/lib"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func kinds(records []Record) string {
	var ks []string
	for _, r := range records {
		ks = append(ks, r.Kind)
	}
	return strings.Join(ks, ",")
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l := newTestLog(t, dir, "s1")
	update := json.RawMessage("{\n  \"sessionId\": \"s1\",\n  \"update\": {\"sessionUpdate\": \"agent_message_chunk\", \"content\": {\"type\": \"text\", \"text\": \"a\\nb <&>\"}}\n}")
	steps := []struct {
		kind    string
		payload any
		want    string
	}{
		{KindPrompt, json.RawMessage(`[{"type":"text","text":"hi"}]`), `[{"type":"text","text":"hi"}]`},
		{KindUpdate, update, `{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a\nb <&>"}}}`},
		{KindTitle, Title{Title: "Fix the build"}, `{"title":"Fix the build"}`},
		{KindMode, "plan", `"plan"`},
		{"x-custom/kind", nil, `null`},
		{KindHistory, json.RawMessage(nil), `null`},
	}
	for _, s := range steps {
		if err := l.Append(s.kind, s.payload); err != nil {
			t.Fatal(err)
		}
	}
	check := func(l *Log) {
		t.Helper()
		records, err := l.Read()
		if err != nil {
			t.Fatal(err)
		}
		if len(records) != len(steps)+1 || records[0].Kind != KindHeader {
			t.Fatalf("records: %s", kinds(records))
		}
		for i, s := range steps {
			r := records[i+1]
			if r.Kind != s.kind || string(r.Payload) != s.want {
				t.Errorf("record %d = %s %s, want %s %s", i+1, r.Kind, r.Payload, s.kind, s.want)
			}
			if time.Since(r.Time) > time.Hour || r.Time.After(time.Now().Add(time.Second)) {
				t.Errorf("record %d time %v", i+1, r.Time)
			}
		}
		var h Header
		if err := records[0].Decode(&h); err != nil || h.SessionID != "s1" || h.Cwd != "/w" || h.Created.IsZero() {
			t.Errorf("header %+v %v", h, err)
		}
	}
	check(l) // unsynced records are visible to Read
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := Open(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if h := reopened.Header(); h.SessionID != "s1" || h.AdditionalDirectories[0] != "/lib" {
		t.Errorf("Header() = %+v", h)
	}
	if reopened.ID() != "s1" || reopened.Path() != filepath.Join(dir, "s1.jsonl") {
		t.Errorf("ID/Path = %s %s", reopened.ID(), reopened.Path())
	}
	check(reopened)
}

func TestAppendErrors(t *testing.T) {
	l := newTestLog(t, t.TempDir(), "s")
	for _, kind := range []string{"", "a\"b", "a\\b", "a\nb", "é"} {
		if err := l.Append(kind, 1); err == nil {
			t.Errorf("Append accepted kind %q", kind)
		}
	}
	for _, raw := range []string{`{"a":`, ``, ` `, `{} {}`, "\n"} {
		if err := l.Append(KindUpdate, json.RawMessage(raw)); err == nil {
			t.Errorf("Append accepted invalid raw JSON %q", raw)
		}
	}
	if err := l.Append(KindUpdate, func() {}); err == nil {
		t.Error("Append accepted an unencodable payload")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"Append": l.Append(KindMode, "x"),
		"Sync":   l.Sync(),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if _, err := l.Read(); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}

// Create returns before its fsyncs end: the header is in the file at once
// (it survives the process), and a failed fsync is the first Sync's error.
func TestCreateSyncsInBackground(t *testing.T) {
	boom := errors.New("disk gone")
	release := make(chan struct{})
	syncFile = func(*os.File) error { <-release; return boom }
	t.Cleanup(func() { syncFile = (*os.File).Sync })
	dir := t.TempDir()
	l, err := Create(dir, Header{SessionID: "s1", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "s1.jsonl"))
	if err != nil || !bytes.Contains(data, []byte(`"t":"header"`)) {
		t.Fatalf("header not written through before the fsync: %q, %v", data, err)
	}
	close(release)
	if err := l.Sync(); !errors.Is(err, boom) {
		t.Errorf("first Sync: %v, want the background fsync's error", err)
	}
	syncFile = (*os.File).Sync
	if err := l.Close(); err != nil {
		t.Errorf("Close after the error was reported: %v", err)
	}
}

// Every Append reaches the file before it returns (one write to the page
// cache, which outlives the process), so a kill -9 mid-turn loses nothing
// appended; only a machine crash waits for the fsync at Sync.
func TestAppendWritesThrough(t *testing.T) {
	var syncs atomic.Int32
	syncFile = func(*os.File) error { syncs.Add(1); return nil }
	t.Cleanup(func() { syncFile = (*os.File).Sync })
	dir := t.TempDir()
	l := newTestLog(t, dir, "through")
	if err := l.Sync(); err != nil { // consume Create's background fsync
		t.Fatal(err)
	}
	syncs.Store(0)
	path := filepath.Join(dir, "through.jsonl")
	big := strings.Repeat("y", 100<<10) // larger than any buffer
	for i, payload := range []any{"small", map[string]int{"n": 1}, json.RawMessage("{\n \"pretty\": true\n}"), big} {
		if err := l.Append(KindUpdate, payload); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(data, []byte{'\n'}); n != i+2 || data[len(data)-1] != '\n' {
			t.Fatalf("after append %d the file holds %d lines, want %d complete ones: %.200q", i, n, i+2, data)
		}
	}
	if n := syncs.Load(); n != 0 {
		t.Errorf("Append fsynced %d times; fsync belongs to Sync and Close", n)
	}
}

// A write that fails halfway (a full disk) leaves part of a line in the
// file; the next record must still decode.
func TestShortWrite(t *testing.T) {
	warnings := captureWarnings(t)
	dir := t.TempDir()
	l := newTestLog(t, dir, "short")
	full := errors.New("no space left on device")
	failures := []int{10, 0, 1} // bytes written by each failing write
	writeFile = func(f *os.File, b []byte) (int, error) {
		if len(failures) == 0 {
			return f.Write(b)
		}
		n := failures[0]
		failures = failures[1:]
		f.Write(b[:n])
		return n, full
	}
	t.Cleanup(func() { writeFile = (*os.File).Write })
	for _, p := range []string{"lost1", "lost2", "lost3", "kept"} {
		err := l.Append(KindPrompt, p)
		if p == "kept" && err != nil || p != "kept" && !errors.Is(err, full) {
			t.Fatalf("Append(%s) = %v", p, err)
		}
	}
	records, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(records); got != "header,prompt" {
		t.Fatalf("records %s, want header,prompt", got)
	}
	var s string
	if err := records[1].Decode(&s); err != nil || s != "kept" {
		t.Errorf("record after short writes = %q, %v", s, err)
	}
	if !strings.Contains(warnings.String(), "undecodable line") {
		t.Errorf("the fragment was not reported: %s", warnings)
	}
}

func TestCreateExisting(t *testing.T) {
	dir := t.TempDir()
	newTestLog(t, dir, "dup")
	if _, err := Create(dir, Header{SessionID: "dup"}); !errors.Is(err, ErrExists) {
		t.Errorf("Create twice: %v", err)
	}
	if _, err := Open(dir, "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open missing: %v", err)
	}
}

func TestBadIDs(t *testing.T) {
	dir := t.TempDir()
	bad := []string{"", ".", "..", "../x", "a/b", `a\b`, "/abs", ".hidden", "-flag", "a b", "a\x00", "é", strings.Repeat("a", 129)}
	for _, id := range bad {
		if err := ValidateID(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ValidateID(%q) = %v", id, err)
		}
		if _, err := Create(dir, Header{SessionID: id}); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Create(%q) = %v", id, err)
		}
		if _, err := Open(dir, id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Open(%q) = %v", id, err)
		}
		if err := Delete(dir, id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Delete(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"a", "0", "sess_01J.x-y", strings.Repeat("z", 128)} {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v", id, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), fileSuffix) {
			t.Errorf("a bad id escaped the directory: %s", e.Name())
		}
	}
}

func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"a", "..", "a/b", "x.jsonl", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ValidateID(id) != nil {
			return
		}
		name := id + fileSuffix
		if filepath.Base(name) != name || filepath.Join("/d", name) != "/d/"+name || strings.HasPrefix(id, ".") {
			t.Fatalf("id %q accepted but unsafe", id)
		}
	})
}

func TestTornLine(t *testing.T) {
	warnings := captureWarnings(t)
	dir := t.TempDir()
	l := newTestLog(t, dir, "torn")
	l.Append(KindPrompt, "one")
	l.Append(KindPrompt, "two")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of a write leaves a partial line.
	path := filepath.Join(dir, "torn.jsonl")
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"t":"prompt","ts":1,"d":"thr`)
	f.Close()

	// Read without repair skips it with a warning.
	data, _ := os.ReadFile(path)
	if got := kinds(decodeAll(data, "torn")); got != "header,prompt,prompt" {
		t.Errorf("decodeAll: %s", got)
	}
	if !strings.Contains(warnings.String(), "torn last line") {
		t.Errorf("no torn-line warning: %s", warnings)
	}
	warnings.Reset()

	// Open truncates it, and the next append starts on a fresh line.
	l2, err := Open(dir, "torn")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warnings.String(), "dropping torn last line") {
		t.Errorf("no repair warning: %s", warnings)
	}
	if err := l2.Append(KindPrompt, "three"); err != nil {
		t.Fatal(err)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	l3, err := Open(dir, "torn")
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	records, _ := l3.Read()
	var got []string
	for _, r := range records[1:] {
		var s string
		r.Decode(&s)
		got = append(got, s)
	}
	if strings.Join(got, ",") != "one,two,three" {
		t.Errorf("after repair: %v", got)
	}
}

// TestCrashAtEveryByte cuts a log at every byte offset, as a crash during
// a write might, and checks that Open keeps exactly the complete lines
// and that appending afterwards works.
func TestCrashAtEveryByte(t *testing.T) {
	captureWarnings(t)
	syncFile = func(*os.File) error { return nil } // durability is not under test here
	t.Cleanup(func() { syncFile = (*os.File).Sync })
	dir := t.TempDir()
	l := newTestLog(t, dir, "full")
	for i := range 3 {
		l.Append(KindUpdate, map[string]any{"seq": i, "text": strings.Repeat("x", i*7)})
	}
	l.Close()
	full, _ := os.ReadFile(filepath.Join(dir, "full.jsonl"))
	path := filepath.Join(dir, "cut.jsonl")
	for cut := 0; cut <= len(full); cut++ {
		if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		wantLines := bytes.Count(full[:cut], []byte{'\n'})
		cl, err := Open(dir, "cut")
		if wantLines == 0 {
			if !errors.Is(err, ErrNoHeader) {
				t.Fatalf("cut %d: Open = %v, want ErrNoHeader", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if err := cl.Append(KindPrompt, "after"); err != nil {
			t.Fatal(err)
		}
		records, err := cl.Read()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(records) != wantLines+1 || records[len(records)-1].Kind != KindPrompt {
			t.Fatalf("cut %d: %d records (%s), want %d complete lines + 1", cut, len(records), kinds(records), wantLines)
		}
	}
}

func TestConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	l := newTestLog(t, dir, "conc")
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := l.Append(KindUpdate, map[string]int{"w": w, "i": i}); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					if err := l.Sync(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			if _, err := l.Read(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Open(dir, "conc")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	records, _ := l2.Read()
	if len(records) != writers*each+1 {
		t.Fatalf("%d records, want %d", len(records), writers*each+1)
	}
	next := make([]int, writers)
	for _, r := range records[1:] {
		var p struct{ W, I int }
		if err := r.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.I != next[p.W] {
			t.Fatalf("writer %d: record %d after %d", p.W, p.I, next[p.W]-1)
		}
		next[p.W]++
	}
}

func TestDecodeRecord(t *testing.T) {
	tests := []struct {
		line    string
		kind    string
		ts      int64
		payload string
		err     bool
	}{
		{`{"t":"update","ts":1764536400123,"d":{"a":1}}`, "update", 1764536400123, `{"a":1}`, false},
		{`{"t":"x","ts":0,"d":null}`, "x", 0, `null`, false},
		{`{"t":"x","ts":-5,"d":[1, 2]}`, "x", -5, `[1, 2]`, false},
		{`{"ts":3,"t":"x","d":"s"}`, "x", 3, `"s"`, false}, // other key order
		{`{ "t" : "x" , "ts" : 3 , "d" : true }`, "x", 3, `true`, false},
		{`{"t":"x"}`, "x", 0, ``, false},                // no payload, no time
		{`{"t":"x","ts":01,"d":1}`, "", 0, "", true},    // leading zero
		{`{"t":"x","ts":1,"d":{"a":}`, "", 0, "", true}, // bad payload
		{`{"t":"","ts":1,"d":1}`, "", 0, "", true},      // empty kind
		{`{"ts":1,"d":1}`, "", 0, "", true},             // no kind
		{`{"t":"x","ts":1,"d":1`, "", 0, "", true},      // torn
		{`[]`, "", 0, "", true},
		{``, "", 0, "", true},
	}
	for _, tt := range tests {
		r, err := decodeRecord([]byte(tt.line))
		if (err != nil) != tt.err {
			t.Errorf("decodeRecord(%s) error = %v", tt.line, err)
			continue
		}
		if tt.err {
			if !errors.Is(err, ErrBadRecord) {
				t.Errorf("decodeRecord(%s) error %v does not wrap ErrBadRecord", tt.line, err)
			}
			continue
		}
		if r.Kind != tt.kind || string(r.Payload) != tt.payload || (tt.ts != 0 && r.Time.UnixMilli() != tt.ts) {
			t.Errorf("decodeRecord(%s) = %q %d %s", tt.line, r.Kind, r.Time.UnixMilli(), r.Payload)
		}
	}
}

// FuzzDecodeRecord checks the decoder never panics, that the fast path
// agrees with encoding/json whenever it accepts a line, and that what the
// writer produces decodes back.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"t":"update","ts":1764536400123,"d":{"a":1}}`,
		`{"t":"x","ts":-0,"d":null}`,
		`{"t":"x","ts":1,"d":{"a":1},"x":{}}`,
		`{"t":"x","ts":99999999999999999999,"d":1}`,
		`{"t":"x","ts":1,"d": 1 }`,
		`{"t":"x","T":"y","ts":1,"d":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := decodeRecord(line)
		if err != nil {
			return
		}
		if fast, ok := decodeCanonical(line); ok {
			var env struct {
				T  string          `json:"t"`
				TS int64           `json:"ts"`
				D  json.RawMessage `json:"d"`
			}
			if err := json.Unmarshal(line, &env); err != nil {
				t.Fatalf("fast path accepted %q that encoding/json rejects: %v", line, err)
			}
			if env.T != fast.Kind || env.TS != fast.Time.UnixMilli() || !bytes.Equal(env.D, fast.Payload) {
				t.Fatalf("fast path %q %d %s, encoding/json %q %d %s", fast.Kind, fast.Time.UnixMilli(), fast.Payload, env.T, env.TS, env.D)
			}
		}
		if !validKind(r.Kind) || r.Payload == nil {
			return
		}
		var compact bytes.Buffer
		if json.Compact(&compact, r.Payload) != nil {
			t.Fatalf("payload %q is not JSON", r.Payload)
		}
		again, err := decodeRecord(bytes.TrimSuffix(appendRecord(nil, r.Kind, r.Time, compact.Bytes()), []byte("\n")))
		if err != nil || again.Kind != r.Kind || !bytes.Equal(again.Payload, compact.Bytes()) || again.Time.UnixMilli() != r.Time.UnixMilli() {
			t.Fatalf("re-encoded record does not round-trip: %+v %v", again, err)
		}
	})
}

func TestDecodePayloadError(t *testing.T) {
	r := Record{Kind: KindTitle}
	if err := r.Decode(&Title{}); err == nil {
		t.Error("Decode of a missing payload succeeded")
	}
	r.Payload = json.RawMessage(`1`)
	if err := r.Decode(&Title{}); err == nil || !strings.Contains(err.Error(), "title") {
		t.Errorf("Decode error = %v", err)
	}
}

func ExampleLog() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)

	l, err := Create(dir, Header{SessionID: "sess-1", Cwd: "/home/ann/proj"})
	if err != nil {
		panic(err)
	}
	l.Append(KindPrompt, json.RawMessage(`[{"type":"text","text":"Fix the build"}]`))
	l.Append(KindUpdate, json.RawMessage(`{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"On it."}}}`))
	l.Append(KindTitle, Title{Title: "Fix the build"})
	l.Sync() // at the end of the turn
	l.Close()

	// A later daemon lists and loads it.
	page, _ := List(dir, "/home/ann/proj", "", 10)
	fmt.Println(page.Sessions[0].SessionID, page.Sessions[0].Title)
	l, _ = Open(dir, "sess-1")
	defer l.Close()
	records, _ := l.Read()
	for _, r := range records {
		fmt.Println(r.Kind)
	}
	// Output:
	// sess-1 Fix the build
	// header
	// prompt
	// update
	// title
}

// FuzzEncodeRaw checks that any raw payload Append accepts becomes exactly
// one line that decodes back to the same JSON value.
func FuzzEncodeRaw(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "{\n \"a\": [1, 2]\n}", ` "x" `, `{"a":"\n"}`, ``, `nul`, "\"\u2028\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if raw == nil {
			return // nil is null, covered by TestRoundTrip
		}
		var scratch bytes.Buffer
		encoded, err := encodeRaw(raw, &scratch)
		if err != nil {
			if json.Valid(raw) {
				t.Fatalf("valid %q rejected: %v", raw, err)
			}
			return
		}
		line := appendRecord(nil, KindUpdate, time.UnixMilli(42), encoded)
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("line %q is not one line", line)
		}
		r, err := decodeRecord(line[:len(line)-1])
		if err != nil {
			t.Fatalf("line %q does not decode: %v", line, err)
		}
		var want, got bytes.Buffer
		json.Compact(&want, raw)
		json.Compact(&got, r.Payload)
		if !bytes.Equal(want.Bytes(), got.Bytes()) || r.Kind != KindUpdate || r.Time.UnixMilli() != 42 {
			t.Fatalf("round trip of %q gave %q", raw, r.Payload)
		}
	})
}

// TestReadFileWhileOpen: ReadFile reads a log another Log is appending to,
// without disturbing it.
func TestReadFileWhileOpen(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(dir, Header{SessionID: "s1", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(KindPrompt, []string{"hi"}); err != nil {
		t.Fatal(err)
	}
	h, recs, err := ReadFile(dir, "s1")
	if err != nil || h.Cwd != "/w" || len(recs) != 2 || recs[1].Kind != KindPrompt {
		t.Fatalf("ReadFile = %+v, %v, %v", h, recs, err)
	}
	if err := l.Append(KindPrompt, []string{"again"}); err != nil {
		t.Fatalf("append after ReadFile: %v", err)
	}
	if _, _, err := ReadFile(dir, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing session: %v", err)
	}
}

// AppendAll writes its records in order with one write, and nothing when
// one of them cannot be encoded.
func TestAppendAll(t *testing.T) {
	dir := t.TempDir()
	l := newTestLog(t, dir, "batch")
	var writes atomic.Int32
	writeFile = func(f *os.File, b []byte) (int, error) {
		writes.Add(1)
		return f.Write(b)
	}
	t.Cleanup(func() { writeFile = (*os.File).Write })
	if err := l.AppendAll(Entry{KindToolCall, map[string]string{"callId": "c1"}}, Entry{KindToolResult, json.RawMessage("{\n \"callId\": \"c1\"\n}")}); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load(); n != 1 {
		t.Errorf("%d writes for two records, want 1", n)
	}
	if err := l.AppendAll(Entry{KindPrompt, "kept?"}, Entry{"bad\"kind", 1}); err == nil {
		t.Error("AppendAll accepted an invalid kind")
	}
	if err := l.AppendAll(Entry{KindPrompt, "kept?"}, Entry{KindPrompt, json.RawMessage(`{bad`)}); err == nil {
		t.Error("AppendAll accepted an invalid raw payload")
	}
	if err := l.AppendAll(); err != nil {
		t.Error(err)
	}
	records, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(records); got != "header,tool/call,tool/result" {
		t.Fatalf("records %s, want header,tool/call,tool/result", got)
	}
	if string(records[2].Payload) != `{"callId":"c1"}` {
		t.Errorf("raw payload %s, want it compacted", records[2].Payload)
	}
}
