package presentation

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr(s string) *string { return &s }

// applyHunks applies diffs computed from before and returns the after-image,
// checking that every hunk's old text is really there. It inverts Hunks:
// a hunk starts in the old file at its new-file line minus the net number of
// lines the earlier hunks added.
func applyHunks(before *string, diffs []FileDiff) (string, error) {
	if before == nil {
		if len(diffs) == 0 {
			return "", nil
		}
		if len(diffs) != 1 || diffs[0].OldText != nil {
			return "", fmt.Errorf("create must be one diff with nil OldText, got %d diffs", len(diffs))
		}
		return diffs[0].NewText, nil
	}
	old := newLines(*before, new([]int))
	var out strings.Builder
	cursor, delta := 0, 0
	for k, d := range diffs {
		if d.OldText == nil {
			return "", fmt.Errorf("hunk %d: nil OldText for an existing file", k)
		}
		oldCount := newLines(*d.OldText, new([]int)).len()
		newCount := newLines(d.NewText, new([]int)).len()
		line := max(d.Line, 1) // a deleted file's diff has no line
		start := line - 1 - delta
		if start < cursor || start+oldCount > old.len() {
			return "", fmt.Errorf("hunk %d: old lines [%d,%d) out of order or range (cursor %d, %d lines)", k, start, start+oldCount, cursor, old.len())
		}
		if got := old.span(start, start+oldCount); got != *d.OldText {
			return "", fmt.Errorf("hunk %d: old text %q does not match before-image %q", k, *d.OldText, got)
		}
		out.WriteString(old.span(cursor, start))
		out.WriteString(d.NewText)
		cursor = start + oldCount
		delta += newCount - oldCount
	}
	out.WriteString(old.span(cursor, old.len()))
	return out.String(), nil
}

func TestHunks(t *testing.T) {
	abcde := "a\nb\nc\nd\ne\n"
	twenty := numbered(20)
	tests := []struct {
		name          string
		before, after *string
		opts          []HunkOption
		want          []FileDiff
	}{
		{"identical", ptr(abcde), ptr(abcde), nil, nil},
		{"both absent", nil, nil, nil, nil},
		{"create", nil, ptr("x\ny\n"), nil,
			[]FileDiff{{Path: "f", OldText: nil, NewText: "x\ny\n", Line: 1}}},
		{"create empty", nil, ptr(""), nil,
			[]FileDiff{{Path: "f", NewText: "", Line: 1}}},
		{"delete file", ptr(abcde), nil, nil,
			[]FileDiff{{Path: "f", OldText: ptr(abcde), NewText: ""}}},
		{"insert at start", ptr(abcde), ptr("x\n" + abcde), nil,
			[]FileDiff{{Path: "f", OldText: ptr("a\nb\nc\n"), NewText: "x\na\nb\nc\n", Line: 1}}},
		{"insert at end", ptr(abcde), ptr(abcde + "f\n"), nil,
			[]FileDiff{{Path: "f", OldText: ptr("c\nd\ne\n"), NewText: "c\nd\ne\nf\n", Line: 3}}},
		{"delete all lines", ptr(abcde), ptr(""), nil,
			[]FileDiff{{Path: "f", OldText: ptr(abcde), NewText: "", Line: 1}}},
		{"fill empty file", ptr(""), ptr("x\n"), nil,
			[]FileDiff{{Path: "f", OldText: ptr(""), NewText: "x\n", Line: 1}}},
		{"change middle", ptr(twenty), ptr(withLines(20, map[int]string{10: "ten\n"})), nil,
			[]FileDiff{{Path: "f", OldText: ptr("7\n8\n9\n10\n11\n12\n13\n"), NewText: "7\n8\n9\nten\n11\n12\n13\n", Line: 7}}},
		{"context 0 deletion", ptr(abcde), ptr("a\nb\nd\ne\n"), []HunkOption{WithContext(0)},
			[]FileDiff{{Path: "f", OldText: ptr("c\n"), NewText: "", Line: 3}}},
		{"negative context is 0", ptr(abcde), ptr("a\nb\nC\nd\ne\n"), []HunkOption{WithContext(-1)},
			[]FileDiff{{Path: "f", OldText: ptr("c\n"), NewText: "C\n", Line: 3}}},
		{"CRLF kept", ptr("a\r\nb\r\nc\r\n"), ptr("a\r\nB\r\nc\r\n"), []HunkOption{WithContext(0)},
			[]FileDiff{{Path: "f", OldText: ptr("b\r\n"), NewText: "B\r\n", Line: 2}}},
		{"LF to CRLF is a change", ptr("a\nb\n"), ptr("a\r\nb\n"), []HunkOption{WithContext(1)},
			[]FileDiff{{Path: "f", OldText: ptr("a\nb\n"), NewText: "a\r\nb\n", Line: 1}}},
		{"add final newline", ptr("a\nb"), ptr("a\nb\n"), nil,
			[]FileDiff{{Path: "f", OldText: ptr("a\nb"), NewText: "a\nb\n", Line: 1}}},
		{"append to unterminated line", ptr("a\nb"), ptr("a\nb\nc"), []HunkOption{WithContext(0)},
			[]FileDiff{{Path: "f", OldText: ptr("b"), NewText: "b\nc", Line: 2}}},
		{"unicode", ptr("héllo\n世界\n🙂\n"), ptr("héllo\n世界!\n🙂\n"), []HunkOption{WithContext(0)},
			[]FileDiff{{Path: "f", OldText: ptr("世界\n"), NewText: "世界!\n", Line: 2}}},
		{"one line", ptr("a"), ptr("b"), nil,
			[]FileDiff{{Path: "f", OldText: ptr("a"), NewText: "b", Line: 1}}},
		{"one terminated line", ptr("a\n"), ptr("b\n"), nil,
			[]FileDiff{{Path: "f", OldText: ptr("a\n"), NewText: "b\n", Line: 1}}},
		{"far apart: two hunks", ptr(twenty), ptr(withLines(20, map[int]string{2: "two\n", 18: "eighteen\n"})), nil,
			[]FileDiff{
				{Path: "f", OldText: ptr("1\n2\n3\n4\n5\n"), NewText: "1\ntwo\n3\n4\n5\n", Line: 1},
				{Path: "f", OldText: ptr("15\n16\n17\n18\n19\n20\n"), NewText: "15\n16\n17\neighteen\n19\n20\n", Line: 15},
			}},
		{"gap of 2*context merges", ptr(twenty), ptr(withLines(20, map[int]string{5: "five\n", 12: "twelve\n"})), nil,
			[]FileDiff{{Path: "f",
				OldText: ptr("2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"),
				NewText: "2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\ntwelve\n13\n14\n15\n", Line: 2}}},
		{"gap of 2*context+1 splits", ptr(twenty), ptr(withLines(20, map[int]string{5: "five\n", 13: "thirteen\n"})), nil,
			[]FileDiff{
				{Path: "f", OldText: ptr("2\n3\n4\n5\n6\n7\n8\n"), NewText: "2\n3\n4\nfive\n6\n7\n8\n", Line: 2},
				{Path: "f", OldText: ptr("10\n11\n12\n13\n14\n15\n16\n"), NewText: "10\n11\n12\nthirteen\n14\n15\n16\n", Line: 10},
			}},
		{"line numbers shift after an insertion", ptr(twenty), ptr(withLines(20, map[int]string{2: "2\nnew\nnew\n", 18: "eighteen\n"})), []HunkOption{WithContext(0)},
			[]FileDiff{
				{Path: "f", OldText: ptr(""), NewText: "new\nnew\n", Line: 3},
				{Path: "f", OldText: ptr("18\n"), NewText: "eighteen\n", Line: 20},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Hunks("f", tt.before, tt.after, tt.opts...)
			if got.Fallback != "" || got.InvalidUTF8 {
				t.Errorf("Fallback = %q, InvalidUTF8 = %v; want neither", got.Fallback, got.InvalidUTF8)
			}
			if !reflect.DeepEqual(got.Diffs, tt.want) {
				t.Errorf("Diffs:\n got %s\nwant %s", showDiffs(got.Diffs), showDiffs(tt.want))
			}
			checkApplies(t, tt.before, tt.after, got.Diffs)
		})
	}
}

func TestHunksFallback(t *testing.T) {
	// Two completely different multi-megabyte files.
	var x, y strings.Builder
	for i := range 50_000 {
		fmt.Fprintf(&x, "left side line %d with some padding text\n", i)
		fmt.Fprintf(&y, "right side line %d with other padding\n", i)
	}
	// Every line occurs twice on each side: no anchors, so go-diff works on
	// the whole, and only the deadline can stop it.
	twice := numbered(1000) + numbered(1000)
	reversed := reverseLines(twice)
	huge := strings.Repeat("x", 3<<20)
	tests := []struct {
		name          string
		before, after string
		opts          []HunkOption
		want          Fallback
		invalidUTF8   bool
	}{
		{"completely different multi-MB files", x.String(), y.String(), nil, FallbackTooDifferent, false},
		{"too large", "a\n", "b\nc\nd\n", []HunkOption{WithLimits(Limits{MaxBytes: 4})}, FallbackTooLarge, false},
		{"too many lines", numbered(20), reverseLines(numbered(20)), []HunkOption{WithLimits(Limits{MaxLines: 10})}, FallbackTooManyLines, false},
		{"too different", numbered(20), "x\n", []HunkOption{WithLimits(Limits{MaxCost: 10})}, FallbackTooDifferent, false},
		{"timeout", twice, reversed, []HunkOption{WithLimits(Limits{Timeout: time.Nanosecond})}, FallbackTimeout, false},
		{"invalid UTF-8", "a\n\xff\xfe\n", "a\n\xff\n", nil, FallbackNotUTF8, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Hunks("f", &tt.before, &tt.after, tt.opts...)
			if got.Fallback != tt.want || got.InvalidUTF8 != tt.invalidUTF8 {
				t.Errorf("Fallback = %q, InvalidUTF8 = %v; want %q, %v", got.Fallback, got.InvalidUTF8, tt.want, tt.invalidUTF8)
			}
			want := []FileDiff{{Path: "f", OldText: &tt.before, NewText: tt.after, Line: 1}}
			if !reflect.DeepEqual(got.Diffs, want) {
				t.Errorf("want one whole-file diff, got %d diffs", len(got.Diffs))
			}
		})
	}

	// A huge single line is no trouble in line mode: it is one changed line.
	t.Run("huge single line", func(t *testing.T) {
		before, after := huge+"\n", huge+"y\n"
		got := Hunks("f", &before, &after)
		if got.Fallback != "" || len(got.Diffs) != 1 {
			t.Fatalf("Fallback = %q, %d diffs; want one hunk", got.Fallback, len(got.Diffs))
		}
		checkApplies(t, &before, &after, got.Diffs)
	})

	// A create or delete of a non-UTF-8 file is whole-file anyway: it is
	// reported, not a fallback.
	t.Run("binary create", func(t *testing.T) {
		got := Hunks("f", nil, ptr("\x00\xff"))
		if got.Fallback != "" || !got.InvalidUTF8 || len(got.Diffs) != 1 || got.Diffs[0].NewText != "\x00\xff" {
			t.Errorf("got %+v", got)
		}
	})
}

// Repetitive text without a unique line gives no anchors; go-diff's
// half-match speed-up was quadratic on it (and blind to the deadline), so
// this once fell back on "timeout" after seconds. Myers finds the shift.
func TestHunksRepetitiveText(t *testing.T) {
	before := strings.Repeat("x\ny\n", 25_000)
	after := strings.Repeat("y\nx\n", 25_000) + "z\n"
	got := Hunks("f", &before, &after) // the default budget: 1 s

	if got.Fallback != "" || len(got.Diffs) != 2 {
		t.Fatalf("Fallback = %q, %d diffs; want two hunks (the first line gone, two lines added at the end)", got.Fallback, len(got.Diffs))
	}
	checkApplies(t, &before, &after, got.Diffs)
}

func TestHunksLargeFile(t *testing.T) {
	const n = 100_000
	before := numbered(n)
	lines := strings.SplitAfter(before, "\n")
	lines = lines[:len(lines)-1]
	edited := map[int]bool{0: true, 500: true, 50_000: true, 99_999: true}
	for i := range edited {
		lines[i] = "edited " + lines[i]
	}
	after := strings.Join(lines, "")
	// A generous deadline: this test is about results, and -race on a busy
	// machine is slow.
	got := Hunks("big", &before, &after, WithLimits(Limits{Timeout: time.Minute}))
	if got.Fallback != "" {
		t.Fatalf("Fallback = %q", got.Fallback)
	}
	var starts []int
	for _, d := range got.Diffs {
		starts = append(starts, d.Line)
	}
	if want := []int{1, 498, 49_998, 99_997}; !reflect.DeepEqual(starts, want) {
		t.Errorf("hunk lines = %v, want %v", starts, want)
	}
	checkApplies(t, &before, &after, got.Diffs)
}

func TestDiffResultLocations(t *testing.T) {
	res := Hunks("/w/f", ptr(numbered(20)), ptr(withLines(20, map[int]string{2: "two\n", 18: "x\n"})))
	locs := res.Locations()
	if len(locs) != 2 || *locs[0].Line != 1 || *locs[1].Line != 15 || locs[1].Path != "/w/f" {
		t.Errorf("Locations = %+v", locs)
	}
	del := Hunks("/w/f", ptr("a\n"), nil).Locations()
	if len(del) != 1 || del[0].Line != nil {
		t.Errorf("deleted file location = %+v, want no line", del)
	}
	if card := res.Card("Edit f"); card.Title != "Edit f" || len(card.Diffs) != 2 {
		t.Errorf("Card = %+v", card)
	}
}

func FuzzHunks(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n", uint8(3), true)
	f.Add("", "x", uint8(0), true)
	f.Add("x", "", uint8(1), false)
	f.Add("a\r\nb\r\n", "a\r\nb", uint8(2), true)
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nX\n4\n5\n6\n7\nY\n9\n", uint8(1), true)
	f.Add("é\n\xff\n", "é\n", uint8(3), true)
	f.Fuzz(func(t *testing.T, before, after string, context uint8, existed bool) {
		var b *string
		if existed {
			b = &before
		}
		res := Hunks("f", b, &after, WithContext(int(context%6)))
		checkApplies(t, b, &after, res.Diffs)
		for k, d := range res.Diffs {
			if d.Line < 1 {
				t.Fatalf("hunk %d has line %d", k, d.Line)
			}
		}
		if existed && before == after && len(res.Diffs) != 0 {
			t.Fatalf("identical images gave %d diffs", len(res.Diffs))
		}
	})
}

func checkApplies(t *testing.T, before, after *string, diffs []FileDiff) {
	t.Helper()
	want := ""
	if after != nil {
		want = *after
	}
	got, err := applyHunks(before, diffs)
	if err != nil {
		t.Fatalf("applying hunks: %v", err)
	}
	if got != want {
		t.Fatalf("applying hunks gave %q, want %q", got, want)
	}
}

// numbered returns n lines "1\n" … "n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// withLines returns numbered(n) with the given 1-based lines replaced.
func withLines(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r)
		} else {
			fmt.Fprintf(&b, "%d\n", i)
		}
	}
	return b.String()
}

func reverseLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return strings.Join(lines, "")
}

func showDiffs(ds []FileDiff) string {
	var b strings.Builder
	for _, d := range ds {
		old := "<nil>"
		if d.OldText != nil {
			old = fmt.Sprintf("%q", *d.OldText)
		}
		fmt.Fprintf(&b, "{%s line %d old %s new %q} ", d.Path, d.Line, old, d.NewText)
	}
	return b.String()
}

// editLines returns a copy of the n-line numbered file with edits lines
// replaced, inserted or deleted at pseudo-random (seeded) positions.
func editLines(n, edits int, seed uint64) (before, after string) {
	before = numberedWide(n)
	lines := strings.SplitAfter(before, "\n")
	lines = lines[:len(lines)-1]
	rng := rand.New(rand.NewPCG(seed, seed))
	for e := range edits {
		i := rng.IntN(len(lines))
		switch e % 3 {
		case 0:
			lines[i] = fmt.Sprintf("\tchanged line %d, edit %d\n", i, e)
		case 1:
			lines = append(lines[:i], append([]string{fmt.Sprintf("\tinserted line, edit %d\n", e)}, lines[i:]...)...)
		case 2:
			lines = append(lines[:i], lines[i+1:]...)
		}
	}
	return before, strings.Join(lines, "")
}

// numberedWide returns n source-like lines of about 40 bytes.
func numberedWide(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\tx := compute(%d, value, other) // %d\n", i%97, i)
	}
	return b.String()
}

// TestHunksRandomEdits checks the apply property on larger inputs than the
// fuzzer tends to build: scattered edits over files of unique lines (many
// anchors) and over files of few distinct lines (no anchors at all).
func TestHunksRandomEdits(t *testing.T) {
	for seed := range uint64(12) {
		before, after := editLines(300+int(seed)*20, 1+int(seed), seed)
		for _, context := range []int{0, 1, 3} {
			res := Hunks("f", &before, &after, WithContext(context))
			if res.Fallback != "" {
				t.Fatalf("seed %d: Fallback %q", seed, res.Fallback)
			}
			checkApplies(t, &before, &after, res.Diffs)
		}

		rng := rand.New(rand.NewPCG(seed, 7))
		var x, y strings.Builder
		for range 200 {
			fmt.Fprintf(&x, "%d\n", rng.IntN(4))
			fmt.Fprintf(&y, "%d\n", rng.IntN(4))
		}
		b, a := x.String(), y.String()
		res := Hunks("f", &b, &a)
		checkApplies(t, &b, &a, res.Diffs)
	}
}

// TestLineRunesLarge checks the line encoding where lineRunes fills its
// table region by region (more lines than partitionSlots) and matches b in
// lockstep, and where the table grows: equal lines, on either side, must get equal runes, and
// different lines different runes, including many repeated lines and
// lines of b that are not in a.
func TestLineRunesLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var x, y strings.Builder
	for i := range 40_000 {
		line := fmt.Sprintf("line %d\n", rng.IntN(15_000))
		x.WriteString(line)
		switch rng.IntN(50) {
		case 0: // deleted from b
		case 1: // replaced in b by a line that may or may not be in a
			fmt.Fprintf(&y, "line %d\n", 10_000+rng.IntN(15_000))
		case 2: // a line only b has, inserted before
			fmt.Fprintf(&y, "new %d\n", i)
			y.WriteString(line)
		default:
			y.WriteString(line)
		}
	}
	a, b := newLines(x.String(), new([]int)), newLines(y.String(), new([]int))
	sc := new(scratch)
	// The last span has far more distinct lines in b than in a, so the
	// table, sized for a, must grow while b is encoded.
	for _, span := range [][4]int{{0, a.len(), 0, b.len()}, {7, a.len() - 3, 11, b.len() - 5}, {0, 10, 0, b.len()}} {
		ra, rb, top := lineRunes(a, b, span[0], span[1], span[2], span[3], sc)
		if len(ra) != span[1]-span[0] || len(rb) != span[3]-span[2] {
			t.Fatalf("got %d and %d runes for spans %v", len(ra), len(rb), span)
		}
		runeOf := map[string]rune{}
		lineOf := map[rune]string{}
		check := func(line string, r rune) {
			if r >= top || (r >= 0xD800 && r < 0xE000) {
				t.Fatalf("rune %#x for %q is out of range (top %#x)", r, line, top)
			}
			if prev, ok := runeOf[line]; ok && prev != r {
				t.Fatalf("%q got runes %#x and %#x", line, prev, r)
			}
			if prev, ok := lineOf[r]; ok && prev != line {
				t.Fatalf("rune %#x stands for %q and %q", r, prev, line)
			}
			runeOf[line], lineOf[r] = r, line
		}
		for k, r := range ra {
			check(a.line(span[0]+k), r)
		}
		for k, r := range rb {
			check(b.line(span[2]+k), r)
		}
	}
	before, after := x.String(), y.String()
	res := Hunks("f", &before, &after, WithLimits(Limits{Timeout: time.Minute}))
	if res.Fallback != "" {
		t.Fatalf("Fallback %q", res.Fallback)
	}
	checkApplies(t, &before, &after, res.Diffs)
}

// TestHunksConcurrent runs Hunks on different inputs at once: each call
// takes its own recycled buffers, so no result may show another's lines
// (run with -race).
func TestHunksConcurrent(t *testing.T) {
	const workers = 4
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for round := range 5 {
				before, after := editLines(500+100*w, 5+w+round, uint64(10*w+round))
				res := Hunks("f", &before, &after)
				got, err := applyHunks(&before, res.Diffs)
				if err == nil && got != after {
					err = fmt.Errorf("worker %d round %d: applying the hunks does not give the after text", w, round)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
