package sessionlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestList(t *testing.T) {
	warnings := captureWarnings(t)
	dir := t.TempDir()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// s0 oldest … s5 newest; s3 and s4 share a modification time (the
	// tie goes to the greater id).
	mtimes := []time.Duration{0, 1, 2, 3, 3, 5}
	for i, d := range mtimes {
		id := fmt.Sprintf("s%d", i)
		cwd := "/a"
		if i%2 == 1 {
			cwd = "/b"
		}
		l, err := Create(dir, Header{SessionID: id, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		l.Append(KindTitle, Title{Title: "first " + id})
		l.Append(KindUpdate, map[string]string{"x": `{"t":"title"`})
		if i != 2 {
			l.Append(KindTitle, Title{Title: "title " + id})
		}
		l.Close()
		mt := base.Add(d * time.Minute)
		os.Chtimes(filepath.Join(dir, id+fileSuffix), mt, mt)
	}
	// Noise: a headerless log, another file, a directory, a bad id.
	os.WriteFile(filepath.Join(dir, "broken.jsonl"), []byte("{\"t\":\"prompt\"}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600)
	os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700)
	os.WriteFile(filepath.Join(dir, ".x.jsonl"), nil, 0o600)

	ids := func(p Page) []string {
		var out []string
		for _, s := range p.Sessions {
			out = append(out, s.SessionID)
		}
		return out
	}
	all, err := List(dir, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(all), []string{"s5", "s4", "s3", "s2", "s1", "s0"}; !slices.Equal(got, want) || all.NextCursor != "" {
		t.Fatalf("List = %v (cursor %q), want %v", got, all.NextCursor, want)
	}
	if !strings.Contains(warnings.String(), "broken") {
		t.Errorf("no warning for the headerless log: %s", warnings)
	}
	s5 := all.Sessions[0]
	if s5.Title != "title s5" || s5.Cwd != "/b" || !s5.UpdatedAt.Equal(base.Add(5*time.Minute)) || s5.Created.IsZero() {
		t.Errorf("s5 = %+v", s5)
	}
	if all.Sessions[3].Title != "first s2" {
		t.Errorf("s2 title = %q", all.Sessions[3].Title)
	}

	// Pagination walks the same order.
	var walked []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := List(dir, "", cursor, 4)
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, ids(p)...)
		if p.NextCursor == "" {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		cursor = p.NextCursor
	}
	if !slices.Equal(walked, ids(all)) {
		t.Errorf("paged = %v", walked)
	}
	// limit 2 with a filter: /a is s4, s2, s0.
	p1, _ := List(dir, "/a/", "", 2)
	p2, err := List(dir, "/a", p1.NextCursor, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(p1), []string{"s4", "s2"}) || !slices.Equal(ids(p2), []string{"s0"}) || p2.NextCursor != "" {
		t.Errorf("filtered pages %v %v (%q)", ids(p1), ids(p2), p2.NextCursor)
	}
	// A page that ends exactly at the last match has no cursor.
	if p, _ := List(dir, "/b", "", 3); len(p.Sessions) != 3 || p.NextCursor != "" {
		t.Errorf("exact page: %v %q", ids(p), p.NextCursor)
	}
	if p, _ := List(dir, "/nowhere", "", 0); p.Sessions == nil || len(p.Sessions) != 0 {
		t.Errorf("no match: %#v", p.Sessions)
	}
	// A cursor stays valid when its session is deleted meanwhile.
	first, _ := List(dir, "", "", 2) // s5, s4
	if err := Delete(dir, "s4"); err != nil {
		t.Fatal(err)
	}
	rest, _ := List(dir, "", first.NextCursor, 10)
	if !slices.Equal(ids(rest), []string{"s3", "s2", "s1", "s0"}) {
		t.Errorf("after deleting the cursor's session: %v", ids(rest))
	}
}

func TestListEdgeCases(t *testing.T) {
	p, err := List(filepath.Join(t.TempDir(), "missing"), "", "", 0)
	if err != nil || p.Sessions == nil || len(p.Sessions) != 0 {
		t.Errorf("missing dir: %#v %v", p, err)
	}
	for _, c := range []string{"!!", "eA", encodeCursor(listEntry{id: "../x"}), "djI6MTpz" /* v2:1:s */, "djE6eDpz" /* v1:x:s */} {
		if _, err := List(t.TempDir(), "", c, 0); !errors.Is(err, ErrBadCursor) {
			t.Errorf("cursor %q: %v", c, err)
		}
	}
}

func TestDelete(t *testing.T) {
	dir := t.TempDir()
	l := newTestLog(t, dir, "gone")
	l.Close()
	if err := Delete(dir, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := Delete(dir, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	if _, err := Open(dir, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open after Delete: %v", err)
	}
	if p, _ := List(dir, "", "", 0); len(p.Sessions) != 0 {
		t.Errorf("listed after Delete: %+v", p.Sessions)
	}
}

func TestListTitleFollowsAppends(t *testing.T) {
	dir := t.TempDir()
	title := func() string {
		t.Helper()
		p, err := List(dir, "", "", 0)
		if err != nil || len(p.Sessions) != 1 {
			t.Fatalf("List: %+v %v", p, err)
		}
		return p.Sessions[0].Title
	}
	l, err := Create(dir, Header{SessionID: "t", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if got := title(); got != "" {
		t.Errorf("untitled: %q", got)
	}
	for _, step := range []struct {
		name, kind string
		payload    any
		want       string
	}{
		{"after first title", KindTitle, Title{Title: "one"}, "one"},
		{"after an update", KindUpdate, map[string]int{"x": 1}, "one"},
		{"after second title", KindTitle, Title{Title: "two"}, "two"},
	} {
		l.Append(step.kind, step.payload)
		l.Sync()
		if got := title(); got != step.want {
			t.Errorf("%s: %q", step.name, got)
		}
	}
	l.Close()
	// The same id, recreated: the cache must not leak the old title.
	if err := Delete(dir, "t"); err != nil {
		t.Fatal(err)
	}
	l, err = Create(dir, Header{SessionID: "t", Cwd: "/w", Created: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 50 {
		l.Append(KindUpdate, map[string]string{"pad": strings.Repeat("p", 100)})
	}
	l.Sync()
	if got := title(); got != "" {
		t.Errorf("recreated session: %q", got)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	if dir, err := DefaultDir(); err != nil || dir != "/state/dshd/sessions" {
		t.Errorf("DefaultDir = %q, %v", dir, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/ann")
	if dir, err := DefaultDir(); err != nil || dir != "/home/ann/.local/state/dshd/sessions" {
		t.Errorf("DefaultDir = %q, %v", dir, err)
	}
}

// BenchmarkList lists 20 sessions of 2,000 records each, in steady state
// (titles cached, nothing appended since the last listing).
func BenchmarkList(b *testing.B) {
	dir := writeListSessions(b)
	b.ReportAllocs()
	for b.Loop() {
		if p, err := List(dir, "", "", 0); err != nil || len(p.Sessions) != 20 {
			b.Fatal(len(p.Sessions), err)
		}
	}
}

// BenchmarkListUncached is the same-run reference: every listing scans
// every file in full.
func BenchmarkListUncached(b *testing.B) {
	dir := writeListSessions(b)
	b.ReportAllocs()
	for b.Loop() {
		titleCache.Lock()
		clear(titleCache.entries)
		titleCache.Unlock()
		if p, err := List(dir, "", "", 0); err != nil || len(p.Sessions) != 20 {
			b.Fatal(len(p.Sessions), err)
		}
	}
}

func writeListSessions(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	for s := range 20 {
		l, err := Create(dir, Header{SessionID: fmt.Sprintf("s%02d", s), Cwd: "/w"})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 2000 {
			if i == 10 {
				l.Append(KindTitle, Title{Title: "A session"})
			}
			l.Append(KindUpdate, json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Some streamed words of the answer, over and over again."}}}`))
		}
		l.Close()
	}
	return dir
}
