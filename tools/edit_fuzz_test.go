package tools

import (
	"errors"
	"strings"
	"testing"
)

// FuzzApplyEdits checks the edit tool's core on up to three edits:
//   - it never panics, and fails with an *EditError naming an edit of the
//     batch (or -1 for none) and returning nothing else;
//   - the batch is all or nothing and equals applying its edits one at a
//     time: it fails exactly where that would, with the same count;
//   - on success the size and the replacement count add up;
//   - undoing a successful batch (each New back to its Old, last edit
//     first) restores the original whenever each New is non-empty and
//     occurs exactly once where it was put.
func FuzzApplyEdits(f *testing.F) {
	f.Add("a := 1\nb := a + 1\n", "a := 1", "a := 2", false, "b := a + 1", "b := a + 2", false, "", "", false, uint8(2))
	f.Add("f(x)\nf(x)\n", "f(x)", "g(x)", false, "", "", false, "", "", false, uint8(1))
	f.Add("f(x)\nf(x)\n", "f(x)", "g(x)", true, "g(x)\ng", "h", false, "", "", false, uint8(2))
	f.Add("a\n\tb := 1\nc\n", "    2\t\tb := 1", "x", false, "", "", false, "", "", false, uint8(1))
	f.Add("a\n\tb := 1\nc\n", "b := 1\nd", "x", false, "", "", false, "", "", false, uint8(1))
	f.Add("abc", "", "x", false, "", "", false, "", "", false, uint8(1))
	f.Add("abc", "b", "b", false, "", "", false, "", "", false, uint8(1))
	f.Add("abc", "b", "", false, "ac", "ca", false, "ca", "ab", false, uint8(3))
	f.Add("aaaa", "aa", "a", true, "a", "aa", true, "", "", false, uint8(2))
	f.Add("x", "x", "xx", false, "x", "y", false, "", "", false, uint8(2))
	f.Add("héllo\r\nwörld", "é", "e", false, "\r\n", "\n", false, "ö", "o", false, uint8(3))
	f.Add("", "a", "b", false, "", "", false, "", "", false, uint8(0))
	f.Fuzz(func(t *testing.T, content, old1, new1 string, all1 bool, old2, new2 string, all2 bool, old3, new3 string, all3 bool, n uint8) {
		edits := []Edit{
			{Old: old1, New: new1, ReplaceAll: &all1},
			{Old: old2, New: new2, ReplaceAll: &all2},
			{Old: old3, New: new3, ReplaceAll: &all3},
		}[:n%4]
		out, count, err := ApplyEdits(content, edits)

		// The batch is its edits applied one at a time.
		cur, total, failed := content, 0, -1
		var singleErr error
		var steps []string // content after each edit
		for i, e := range edits {
			next, c, err := ApplyEdits(cur, []Edit{e})
			if err != nil {
				failed, singleErr = i, err
				break
			}
			if c < 1 || !(c == 1 || *e.ReplaceAll) || c != strings.Count(cur, e.Old) {
				t.Fatalf("edit %d replaced %d of %d occurrences", i, c, strings.Count(cur, e.Old))
			}
			if len(next) != len(cur)+c*(len(e.New)-len(e.Old)) {
				t.Fatalf("edit %d: %d bytes became %d", i, len(cur), len(next))
			}
			cur, total = next, total+c
			steps = append(steps, cur)
		}

		if err != nil {
			var ee *EditError
			if !errors.As(err, &ee) {
				t.Fatalf("error %T %v is not an *EditError", err, err)
			}
			if out != "" || count != 0 || ee.Message == "" {
				t.Fatalf("failed batch returned %q, %d, %q", out, count, ee.Message)
			}
			if len(edits) == 0 {
				if ee.Index != -1 {
					t.Fatalf("no edits: index %d", ee.Index)
				}
				return
			}
			var se *EditError
			if failed != ee.Index || !errors.As(singleErr, &se) || se.Count != ee.Count {
				t.Fatalf("batch failed at edit %d (count %d), one at a time at %d: %v", ee.Index, ee.Count, failed, singleErr)
			}
			return
		}
		if failed >= 0 || len(edits) == 0 {
			t.Fatalf("batch succeeded, one at a time edit %d failed: %v", failed, singleErr)
		}
		if out != cur || count != total {
			t.Fatalf("batch gave %q (%d), one at a time %q (%d)", out, count, cur, total)
		}

		// Undo, last edit first, where each New marks its place.
		for i, e := range edits {
			if e.New == "" || strings.Count(steps[i], e.New) != 1 {
				return
			}
		}
		undone := out
		for i := len(edits) - 1; i >= 0; i-- {
			e := edits[i]
			back, _, err := ApplyEdits(undone, []Edit{{Old: e.New, New: e.Old}})
			if err != nil {
				t.Fatalf("undoing edit %d: %v", i, err)
			}
			undone = back
		}
		if undone != content {
			t.Fatalf("undoing %+v gave %q, want %q", edits, undone, content)
		}
	})
}
