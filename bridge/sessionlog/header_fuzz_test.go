package sessionlog

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReadHeader: any first line is read without panicking, and whatever
// is not a decodable header record is ErrNoHeader. (The session id a
// header names is informational: the file's name is the session's id, so
// a copied log opens as the copy.)
func FuzzReadHeader(f *testing.F) {
	for _, s := range []string{
		`{"t":"header","ts":1,"d":{"sessionId":"s1","cwd":"/w","created":"2026-01-01T00:00:00Z"}}` + "\n",
		`{"t":"header","ts":1,"d":{}}` + "\n", `{"t":"update","ts":1,"d":{}}` + "\n", "", "\n", "{", `{"t":"header","d":{"sessionId":"../x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := readHeader(bytes.NewReader(data))
		if err != nil && !errors.Is(err, ErrNoHeader) {
			t.Fatalf("readHeader(%q): %v, want ErrNoHeader", data, err)
		}
	})
}
