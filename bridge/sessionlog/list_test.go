package sessionlog

import (
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
	// s0 oldest … s5 newest; s3 and s4 share a modification time.
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
	if got, want := ids(all), []string{"s5", "s3", "s4", "s2", "s1", "s0"}; !slices.Equal(got, want) || all.NextCursor != "" {
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
	first, _ := List(dir, "", "", 2) // s5, s3
	if err := Delete(dir, "s3"); err != nil {
		t.Fatal(err)
	}
	rest, _ := List(dir, "", first.NextCursor, 10)
	if !slices.Equal(ids(rest), []string{"s4", "s2", "s1", "s0"}) {
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
