package sessionlog

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"
	"time"
)

// FuzzDecodeCursor checks the session/list cursor, which clients send back
// as they like: any string decodes to a position or fails with
// ErrBadCursor, never both; a decoded position names a valid session id
// and survives encode→decode unchanged; and List given the cursor returns
// a page (of sessions after that position) or ErrBadCursor.
func FuzzDecodeCursor(f *testing.F) {
	for _, c := range []string{
		"", "!!", "eA", "djI6MTpz" /* v2:1:s */, "djE6eDpz", /* v1:x:s */
		encodeCursor(listEntry{id: "../x"}),
		encodeCursor(listEntry{id: "s3", modTime: time.Unix(0, 1767323045000000000)}),
		encodeCursor(listEntry{id: "a", modTime: time.Unix(0, -1)}),
		base64.RawURLEncoding.EncodeToString([]byte("v1:9223372036854775808:s")),
		base64.RawURLEncoding.EncodeToString([]byte("v1:+01:s:extra")),
		base64.StdEncoding.EncodeToString([]byte("v1:1:s")), // padded
	} {
		f.Add(c)
	}
	dir := f.TempDir()
	for _, id := range []string{"s0", "s1", "s2"} {
		l, err := Create(dir, Header{SessionID: id, Cwd: "/w"})
		if err != nil {
			f.Fatal(err)
		}
		l.Close()
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		e, err := decodeCursor(cursor)
		switch {
		case e != nil && err != nil:
			t.Fatalf("decodeCursor(%q) = %+v and %v", cursor, e, err)
		case err != nil && !errors.Is(err, ErrBadCursor):
			t.Fatalf("decodeCursor(%q): %v does not wrap ErrBadCursor", cursor, err)
		case cursor == "" && (e != nil || err != nil):
			t.Fatalf(`decodeCursor("") = %+v, %v; want the first page`, e, err)
		case cursor != "" && e == nil && err == nil:
			t.Fatalf("decodeCursor(%q) = nil, nil", cursor)
		}
		if e != nil {
			if ValidateID(e.id) != nil {
				t.Fatalf("decodeCursor(%q) accepted id %q", cursor, e.id)
			}
			again, err := decodeCursor(encodeCursor(*e))
			if err != nil || again.id != e.id || !again.modTime.Equal(e.modTime) {
				t.Fatalf("re-encoded cursor of %+v decodes to %+v, %v", *e, again, err)
			}
		}
		p, err := List(dir, "", cursor, 2)
		if err != nil {
			if !errors.Is(err, ErrBadCursor) || e != nil {
				t.Fatalf("List with cursor %q: %v", cursor, err)
			}
			return
		}
		if e == nil && cursor != "" {
			t.Fatalf("List accepted cursor %q that does not decode", cursor)
		}
		if len(p.Sessions) > 2 {
			t.Fatalf("page of %d sessions, limit 2", len(p.Sessions))
		}
		for _, s := range p.Sessions {
			got := listEntry{id: s.SessionID, modTime: s.UpdatedAt}
			if e != nil && compareEntries(got, *e) <= 0 {
				t.Fatalf("session %s is not after the cursor %+v", s.SessionID, *e)
			}
		}
	})
}

// FuzzScanTitle checks the title scan List uses, which skips canonical
// lines of other kinds without decoding them, against decoding every line:
// both must find the same last title, whatever the lines hold.
func FuzzScanTitle(f *testing.F) {
	var log []byte
	ts := time.UnixMilli(1767323045123)
	log = appendRecord(log, KindHeader, ts, []byte(`{"sessionId":"s","cwd":"/w","created":"2026-01-02T03:04:05Z"}`))
	log = appendRecord(log, KindTitle, ts, []byte(`{"title":"Fix the build"}`))
	log = appendRecord(log, KindUpdate, ts, []byte(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"{\"t\":\"title\"}"}}}`))
	f.Add(log)
	f.Add(appendRecord(nil, KindTitle, ts, []byte(`{"title":""}`)))
	for _, s := range []string{
		`{"t":"title","ts":1,"d":{"title":"a"}}` + "\n" + `{"t":"title","ts":1,"d":{"title":1}}` + "\n",
		`{"t":"title","d":{"title":"no ts"}}`,
		`{"ts":1,"t":"title","d":{"title":"reordered"}}`,
		`{"t":"titl\u0065","ts":1,"d":{"title":"escaped kind"}}`,
		`{"t":"mode","ts":1,"d":"plan","t":"title","d":{"title":"duplicate keys"}}`,
		`{"t":"mode","ts":1,"d":{"title":"x"}}` + "\n" + `{"T":"title","D":{"title":"case"}}`,
		`{"t":"title","ts":01,"d":{"title":"leading zero"}}`,
		`{"t":"title","ts":1,"d":{"title":"torn`,
		"\n\n{}\n[]\nnull\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		title, found := scanTitle(data)
		var want string
		wantFound := false
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			rec, err := decodeRecord(line)
			if err != nil || rec.Kind != KindTitle {
				continue
			}
			var tt Title
			if rec.Decode(&tt) == nil {
				want, wantFound = tt.Title, true
			}
		}
		if title != want || found != wantFound {
			t.Fatalf("scanTitle = %q, %v; decoding every line gives %q, %v", title, found, want, wantFound)
		}
	})
}
