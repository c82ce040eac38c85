package presentation

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func intPtr(n int) *int { return &n }

// sampleCards are one of each card, fully populated.
func sampleCards() map[string]ResultView {
	return map[string]ResultView{
		"generic": {Card: &GenericCard{
			Title:   "Search results",
			Content: []Content{Text("3 matches"), {Type: ContentResourceLink, URI: "file:///w/a.go", Name: "a.go"}},
		}},
		"generic_empty": {Card: &GenericCard{}},
		"terminal": {Card: &TerminalCard{
			Title: "go test ./...", Output: "ok  \tpkg\t0.01s\n", ExitCode: intPtr(1), Signal: "", TerminalID: "call-7",
		}},
		"terminal_signal": {Card: &TerminalCard{Title: "sleep 100", Signal: "SIGKILL"}},
		"diff": {Card: &DiffCard{Title: "Edit a.go", Diffs: []FileDiff{
			{Path: "/w/a.go", OldText: ptr("a\nb\n"), NewText: "a\nB\n", Line: 4},
			{Path: "/w/new.go", OldText: nil, NewText: "package x\n", Line: 1},
		}}},
	}
}

func TestResultViewGoldens(t *testing.T) {
	for name, view := range sampleCards() {
		t.Run(name, func(t *testing.T) {
			got, err := json.MarshalIndent(view, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "cards", name+".json"), append(got, '\n'))

			var back ResultView
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("decoding own encoding: %v", err)
			}
			if !reflect.DeepEqual(back, view) {
				t.Errorf("round trip:\n got %#v\nwant %#v", back.Card, view.Card)
			}
		})
	}
}

// TestResultViewDecode covers the lenient paths: what an older reader makes
// of cards it does not know. The golden is the re-encoding.
func TestResultViewDecode(t *testing.T) {
	tests := []struct{ name, in string }{
		{"unknown_card", `{"card":"image","title":"Screenshot","content":[{"type":"text","text":"see image"}],"url":"x"}`},
		{"unknown_card_bad_content", `{"card":"chart","title":"Sales","content":"not a list"}`},
		{"unknown_card_bad_title", `{"card":"chart","title":7,"content":[{"type":"text","text":"t"}]}`},
		{"missing_tag", `{"title":"Done","content":[{"type":"text","text":"ok"}]}`},
		{"tag_case_matters", `{"Card":"diff","title":"x"}`},
		{"known_card_extra_fields", `{"card":"terminal","output":"hi\n","exitCode":0,"future":{"a":1}}`},
		{"diff_null_diffs", `{"card":"diff","diffs":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v ResultView
			if err := json.Unmarshal([]byte(tt.in), &v); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			got, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "decode", tt.name+".json"), append(got, '\n'))
		})
	}
}

func TestResultViewDecodeErrors(t *testing.T) {
	for _, in := range []string{
		`[]`, `3`, `"generic"`, `{`,
		`{"card":5}`,
		`{"card":"terminal","exitCode":"one"}`,
		`{"card":"diff","diffs":{}}`,
		`{"card":"generic","content":[{"type":1}]}`,
	} {
		var v ResultView
		if err := json.Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("decoding %s: no error, got %#v", in, v.Card)
		}
	}
}

func TestResultViewNull(t *testing.T) {
	v := ResultView{Card: &GenericCard{Title: "kept"}}
	if err := json.Unmarshal([]byte(`null`), &v); err != nil || v.Tag() != CardGeneric {
		t.Errorf("null: err %v, card %#v; want no error and no change", err, v.Card)
	}
	// Inside a parent, as registry.Result holds it.
	var parent struct {
		View *ResultView `json:"view,omitempty"`
	}
	if err := json.Unmarshal([]byte(`{"view":{"card":"diff","diffs":[]}}`), &parent); err != nil || parent.View.Tag() != CardDiff {
		t.Fatalf("parent: err %v, view %#v", err, parent.View)
	}
	parent.View = nil
	if out, _ := json.Marshal(parent); string(out) != `{}` {
		t.Errorf("nil view encodes as %s", out)
	}
}

func TestResultViewMarshalErrors(t *testing.T) {
	for _, v := range []ResultView{{}, {Card: (*GenericCard)(nil)}, {Card: (*TerminalCard)(nil)}, {Card: (*DiffCard)(nil)}} {
		if _, err := json.Marshal(v); !errors.Is(err, ErrNoCard) {
			t.Errorf("marshal %#v: err = %v, want ErrNoCard", v.Card, err)
		}
	}
}

func FuzzResultViewJSON(f *testing.F) {
	for _, v := range sampleCards() {
		b, _ := json.Marshal(v)
		f.Add(b)
	}
	for _, s := range []string{
		`{"card":"image","title":"t"}`, `{}`, `null`, `{"card":"diff"}`,
		`{"card":"generic","title":"\u00e9\ud800"}`, `{"card":"terminal","exitCode":-1,"output":"<&>"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v ResultView
		if err := json.Unmarshal(data, &v); err != nil || v.Card == nil {
			return
		}
		first, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("encoding a decoded view: %v", err)
		}
		var again ResultView
		if err := json.Unmarshal(first, &again); err != nil {
			t.Fatalf("decoding own encoding %s: %v", first, err)
		}
		second, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("unstable:\n%s\n%s", first, second)
		}
		if again.Tag() != v.Tag() {
			t.Fatalf("tag changed from %q to %q", v.Tag(), again.Tag())
		}
	})
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n got %s\nwant %s", path, got, strings.TrimSpace(string(want)))
	}
}
