package presentation

import (
	"hash/maphash"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// DefaultContext is the number of unchanged lines shown around each change,
// as in diff -U3.
const DefaultContext = 3

// Fallback says why Hunks returned one whole-file diff instead of hunks.
// The empty Fallback means the diffs are real hunks (or the change is a
// create or a delete, which is whole-file by nature).
type Fallback string

const (
	// FallbackNotUTF8: an image is not valid UTF-8, so it is treated as
	// binary. The bytes are kept as they are in the FileDiff, but note that
	// encoding/json replaces invalid bytes with U+FFFD.
	FallbackNotUTF8 Fallback = "not UTF-8"
	// FallbackTooLarge: an image exceeds Limits.MaxBytes.
	FallbackTooLarge Fallback = "too large"
	// FallbackTooManyLines: the changed region spans more than Limits.MaxLines.
	FallbackTooManyLines Fallback = "too many lines"
	// FallbackTooDifferent: the estimated diff cost exceeds Limits.MaxCost
	// (for example two completely different large files).
	FallbackTooDifferent Fallback = "too different"
	// FallbackTimeout: the diff did not finish within Limits.Timeout.
	FallbackTimeout Fallback = "timeout"
)

// Limits bound the work Hunks does; past any of them it returns a
// whole-file diff and says which limit tripped. A zero field takes its
// default.
type Limits struct {
	// MaxBytes bounds each image. Default 16 MiB.
	MaxBytes int
	// MaxLines bounds the changed middle of both images together, after
	// common leading and trailing lines are trimmed. go-diff's line mode
	// encodes each distinct line as one rune, so it cannot go beyond about
	// 1.1 million distinct lines; the default is 1,000,000.
	MaxLines int
	// MaxCost bounds the estimated work, the product of a lower bound of the
	// edit distance (lines present on one side only) and the number of
	// changed-middle lines, as Myers' algorithm is O((N+M)·D). It is a
	// cheap early exit for files that share (almost) nothing, decided
	// before any diffing; the anchoring Hunks does makes the real cost of
	// most other inputs far lower. Default 4e9.
	MaxCost int64
	// Timeout bounds the time spent in go-diff, summed over the gaps
	// between anchor lines (see Hunks). Default 1 s. It is wall-clock time,
	// so a loaded machine trips it sooner.
	Timeout time.Duration
}

// Default limits; see Limits.
const (
	DefaultMaxBytes = 16 << 20
	DefaultMaxLines = 1_000_000
	DefaultMaxCost  = 4_000_000_000
	DefaultTimeout  = time.Second
)

// HunkOption adjusts Hunks.
type HunkOption func(*hunkConfig)

type hunkConfig struct {
	context int
	limits  Limits
}

// WithContext sets the number of unchanged lines around each change
// (default DefaultContext); a negative number means none.
func WithContext(lines int) HunkOption {
	return func(c *hunkConfig) { c.context = max(lines, 0) }
}

// WithLimits replaces the default limits; zero fields keep their default.
func WithLimits(l Limits) HunkOption {
	return func(c *hunkConfig) { c.limits = l }
}

// DiffResult is what Hunks computed.
type DiffResult struct {
	// Diffs holds one FileDiff per hunk, in file order; empty when nothing
	// changed.
	Diffs []FileDiff
	// Fallback is non-empty when Diffs is one whole-file diff because a
	// limit tripped or an image is not UTF-8.
	Fallback Fallback
	// InvalidUTF8 reports that an image (and so possibly a snippet) holds
	// bytes that are not valid UTF-8. The bytes are preserved in Diffs, but
	// a JSON encoder will replace them; a caller may prefer to show a
	// "binary file" note.
	InvalidUTF8 bool
}

// Card returns a diff card showing the result.
func (r DiffResult) Card(title string) *DiffCard {
	return &DiffCard{Title: title, Diffs: r.Diffs}
}

// Locations returns one location per hunk (the line where it starts in the
// new file), for follow-along. A deleted file's location has no line.
func (r DiffResult) Locations() []FileLocation {
	locs := make([]FileLocation, 0, len(r.Diffs))
	for _, d := range r.Diffs {
		loc := FileLocation{Path: d.Path}
		if d.Line > 0 {
			line := d.Line
			loc.Line = &line
		}
		locs = append(locs, loc)
	}
	return locs
}

// Hunks computes the applied hunks of a change to the file at path, from
// its before-image to its after-image. Common leading and trailing lines
// are trimmed, lines occurring exactly once on each side are pinned in
// order (as patience diff does), and go-diff diffs each gap between pins in
// line mode; the pins keep the cost near-linear in the file size. Each
// hunk is a FileDiff whose OldText and NewText are the old and new lines
// with up to N context lines around the changes (WithContext; default 3)
// and whose Line is the 1-based line where NewText starts in the new file.
// Changes closer than 2N unchanged lines share a hunk, as in unified diff.
//
// A nil before is a create: one whole-file diff with a nil OldText. A nil
// after is a delete: one diff with the whole old text, an empty NewText and
// no line. Identical images give no diffs. Lines are split after "\n" only,
// so "\r\n" endings, a missing final newline and any other bytes are kept
// exactly; snippets are substrings of the images.
//
// Past a limit (see Limits) or when an image is not valid UTF-8, the result
// is one whole-file diff and Fallback says why.
func Hunks(path string, before, after *string, opts ...HunkOption) DiffResult {
	cfg := hunkConfig{context: DefaultContext}
	for _, o := range opts {
		o(&cfg)
	}
	lim := cfg.limits.withDefaults()

	var res DiffResult
	switch {
	case before == nil && after == nil:
		return res
	case before == nil:
		res.InvalidUTF8 = !utf8.ValidString(*after)
		res.Diffs = []FileDiff{{Path: path, NewText: *after, Line: 1}}
		return res
	case after == nil:
		res.InvalidUTF8 = !utf8.ValidString(*before)
		res.Diffs = []FileDiff{{Path: path, OldText: before}}
		return res
	case *before == *after:
		return res
	}
	whole := func(why Fallback) DiffResult {
		res.Fallback = why
		res.Diffs = []FileDiff{{Path: path, OldText: before, NewText: *after, Line: 1}}
		return res
	}
	if len(*before) > lim.MaxBytes || len(*after) > lim.MaxBytes {
		return whole(FallbackTooLarge)
	}
	if !utf8.ValidString(*before) || !utf8.ValidString(*after) {
		res.InvalidUTF8 = true
		return whole(FallbackNotUTF8)
	}

	sc := getScratch()
	defer scratchPool.Put(sc)
	a, b := newLines(*before, &sc.startA), newLines(*after, &sc.startB)
	regions, why := diffLines(a, b, lim, sc)
	if why != "" {
		return whole(why)
	}
	res.Diffs = groupHunks(path, a, b, regions, cfg.context)
	return res
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxLines <= 0 || l.MaxLines > DefaultMaxLines {
		// Beyond this go-diff's line alphabet overflows (it panics).
		l.MaxLines = DefaultMaxLines
	}
	if l.MaxCost <= 0 {
		l.MaxCost = DefaultMaxCost
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// lines is a text split after each "\n"; the last line may lack one.
// Line i is text[start[i]:start[i+1]].
type lines struct {
	text  string
	start []int
}

// newLines splits text, reusing *buf for the line starts (and keeping the
// grown buffer there).
func newLines(text string, buf *[]int) lines {
	// A recycled buffer usually fits (a daemon diffs files of similar
	// sizes) and append grows it when not, so only a fresh one is sized by
	// counting: that pass reads the whole text once more.
	start := (*buf)[:0]
	if cap(start) == 0 {
		start = make([]int, 0, strings.Count(text, "\n")+2)
	}
	start = append(start, 0)
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			i = len(text)
		} else {
			i += j + 1
		}
		start = append(start, i)
	}
	*buf = start
	return lines{text: text, start: start}
}

func (l lines) len() int             { return len(l.start) - 1 }
func (l lines) line(i int) string    { return l.text[l.start[i]:l.start[i+1]] }
func (l lines) span(i, j int) string { return l.text[l.start[i]:l.start[j]] }

// region is one change: old lines [oldStart, oldEnd) became new lines
// [newStart, newEnd). Between regions, lines are unchanged.
type region struct{ oldStart, oldEnd, newStart, newEnd int }

// diffLines returns the changed regions between a and b, or why it gave up.
// Its working buffers come from sc and are only valid until sc is put back.
func diffLines(a, b lines, lim Limits, sc *scratch) ([]region, Fallback) {
	n, m := a.len(), b.len()
	// Trim common leading and trailing lines first: cheap, and it keeps
	// go-diff's work (and the budget checks) to the changed middle.
	pre := 0
	for pre < n && pre < m && a.line(pre) == b.line(pre) {
		pre++
	}
	suf := 0
	for suf < n-pre && suf < m-pre && a.line(n-1-suf) == b.line(m-1-suf) {
		suf++
	}
	na, nb := n-suf-pre, m-suf-pre
	if na == 0 || nb == 0 {
		// A pure insertion or deletion; nothing to align.
		return []region{{pre, n - suf, pre, m - suf}}, ""
	}
	if na+nb > lim.MaxLines {
		return nil, FallbackTooManyLines
	}

	// Line mode: each distinct line becomes one rune, and go-diff diffs the
	// rune strings. We encode the lines ourselves instead of calling
	// DiffLinesToRunes: we already have them split, and its growing map and
	// string round-trips were 70% of the profile on a 10,000-line file.
	ra, rb, top := lineRunes(a, b, pre, n-suf, pre, m-suf, sc)

	// How often each distinct line occurs on each side, and where in b a
	// line occurring once there is.
	// Counts must start at zero; posB is only read where countB is 1, so
	// whatever a recycled buffer holds is overwritten before it is read.
	countA := grow(&sc.countA, int(top)+1)
	countB := grow(&sc.countB, int(top)+1)
	clear(countA)
	clear(countB)
	posB := grow(&sc.posB, int(top)+1)
	for _, r := range ra {
		countA[r]++
	}
	for j, r := range rb {
		countB[r]++
		posB[r] = int32(j)
	}

	// A lower bound of the edit distance: lines that occur on one side only
	// must be deleted or inserted.
	var dmin int64
	for _, r := range ra {
		if countB[r] == 0 {
			dmin++
		}
	}
	for _, r := range rb {
		if countA[r] == 0 {
			dmin++
		}
	}
	if dmin*int64(na+nb) > lim.MaxCost {
		return nil, FallbackTooDifferent
	}

	// Myers' algorithm costs O((N+M)·D): with edits spread over a file, ten
	// times the lines and ten times the edits cost a hundred times more.
	// So, as patience diff does, first pin the lines that occur exactly once
	// on each side and keep the longest run of them in the same order; they
	// cut the problem into small gaps, and go-diff diffs each gap.
	// The time budget covers go-diff's work, summed over the gaps; our own
	// passes are linear and bounded by the size limits.
	g := gapDiffer{dmp: diffmatchpatch.New(), budget: lim.Timeout}
	g.dmp.DiffTimeout = 0 // see bisect
	i, j := 0, 0          // next unpinned line of ra, rb
	for _, pin := range uniqueAnchors(ra, countA, countB, posB, sc) {
		pi, pj := int(pin.i), int(pin.j)
		if !g.diff(ra[i:pi], rb[j:pj], pre+i, pre+j) {
			return nil, FallbackTimeout
		}
		i, j = pi+1, pj+1
	}
	if !g.diff(ra[i:], rb[j:], pre+i, pre+j) {
		return nil, FallbackTimeout
	}
	return g.regions, ""
}

// anchor pairs line i of a with the equal line j of b.
type anchor struct{ i, j int32 }

// uniqueAnchors returns the lines that occur exactly once in ra and once in
// rb, paired, keeping the longest sequence of pairs that is increasing on
// both sides (patience sorting, O(U log U) for U such lines).
func uniqueAnchors(ra []rune, countA, countB, posB []int32, sc *scratch) []anchor {
	cands := sc.cands[:0]
	for i, r := range ra {
		if countA[r] == 1 && countB[r] == 1 {
			cands = append(cands, anchor{int32(i), posB[r]})
		}
	}
	sc.cands = cands
	if len(cands) == 0 {
		return nil
	}
	// tails[k] is the candidate ending the best increasing run of length
	// k+1 found so far, tailJ[k] its line in b; prev links each candidate
	// to its predecessor. In files with scattered edits nearly every
	// candidate extends the longest run, so that case skips the binary
	// search.
	tails := sc.tails[:0]
	tailJ := sc.tailJ[:0]
	prev := grow(&sc.prev, len(cands))
	for c, cand := range cands {
		lo := len(tails)
		if lo > 0 && tailJ[lo-1] >= cand.j {
			lo, hi := 0, len(tails)-1
			for lo < hi {
				mid := int(uint(lo+hi) >> 1)
				if tailJ[mid] < cand.j {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			prev[c] = -1
			if lo > 0 {
				prev[c] = tails[lo-1]
			}
			tails[lo], tailJ[lo] = int32(c), cand.j
			continue
		}
		prev[c] = -1
		if lo > 0 {
			prev[c] = tails[lo-1]
		}
		tails = append(tails, int32(c))
		tailJ = append(tailJ, cand.j)
	}
	sc.tails, sc.tailJ = tails, tailJ
	out := grow(&sc.anchors, len(tails))
	for k, c := len(tails)-1, tails[len(tails)-1]; k >= 0; k, c = k-1, prev[c] {
		out[k] = cands[c]
	}
	return out
}

// bisect diffs two trimmed, non-empty gaps with go-diff's bisection
// (Myers), which checks the deadline as it goes. DiffMain would first try
// its half-match speed-up, which is quadratic on repetitive text and never
// looks at the deadline (a 400,000-line file of alternating lines took
// minutes); with DiffTimeout 0 (set where g is made) the recursion skips
// it too.
func (g *gapDiffer) bisect(ga, gb []rune, deadline time.Time) []diffmatchpatch.Diff {
	return g.dmp.DiffBisect(string(ga), string(gb), deadline)
}

// gapDiffer diffs the gaps between anchors with go-diff, collecting the
// changed regions and spending a time budget.
type gapDiffer struct {
	dmp     *diffmatchpatch.DiffMatchPatch
	budget  time.Duration
	regions []region
}

// diff appends the changed regions between ga and gb, which start at lines
// i and j of the files. It returns false when the budget ran out: past its
// deadline go-diff returns a coarse (valid but unhelpful) diff.
func (g *gapDiffer) diff(ga, gb []rune, i, j int) bool {
	switch {
	case len(ga) == 0 && len(gb) == 0:
		return true
	case len(ga) == 0 || len(gb) == 0:
		g.regions = append(g.regions, region{i, i + len(ga), j, j + len(gb)})
		return true
	}
	// Most gaps between pins are one small edit, often a single changed
	// line. Trim their common ends and, when what is left is one line on
	// a side that the other side lacks, record the replacement directly:
	// that is the answer go-diff would give, after the same trimming,
	// without its allocations.
	pre := 0
	for pre < len(ga) && pre < len(gb) && ga[pre] == gb[pre] {
		pre++
	}
	ga, gb, i, j = ga[pre:], gb[pre:], i+pre, j+pre
	suf := 0
	for suf < len(ga) && suf < len(gb) && ga[len(ga)-1-suf] == gb[len(gb)-1-suf] {
		suf++
	}
	ga, gb = ga[:len(ga)-suf], gb[:len(gb)-suf]
	switch {
	case len(ga) == 0 && len(gb) == 0:
		return true
	case len(ga) == 0 || len(gb) == 0,
		len(ga) == 1 && !slices.Contains(gb, ga[0]),
		len(gb) == 1 && !slices.Contains(ga, gb[0]):
		g.regions = append(g.regions, region{i, i + len(ga), j, j + len(gb)})
		return true
	}
	begin := time.Now()
	diffs := g.bisect(ga, gb, begin.Add(g.budget))
	g.budget -= time.Since(begin)
	if g.budget <= 0 {
		return false
	}
	// Each rune of a diff's text is one line; count them to walk both files.
	open := false
	for _, d := range diffs {
		k := utf8.RuneCountInString(d.Text)
		if d.Type == diffmatchpatch.DiffEqual {
			if open {
				g.regions[len(g.regions)-1].oldEnd, g.regions[len(g.regions)-1].newEnd = i, j
				open = false
			}
			i, j = i+k, j+k
			continue
		}
		if !open {
			g.regions = append(g.regions, region{oldStart: i, newStart: j})
			open = true
		}
		if d.Type == diffmatchpatch.DiffDelete {
			i += k
		} else {
			j += k
		}
	}
	if open {
		g.regions[len(g.regions)-1].oldEnd, g.regions[len(g.regions)-1].newEnd = i, j
	}
	return true
}

// lineRunes encodes a's lines [ia, ja) and b's lines [ib, jb) as runes,
// one per distinct line, as go-diff's line mode does, and returns the
// largest rune used. Runes skip the surrogate range (go-diff turns runes
// into strings, where a surrogate would not survive); the caller keeps the
// line count below what fits (MaxLines). The rune slices are sc's buffers.
func lineRunes(a, b lines, ia, ja, ib, jb int, sc *scratch) (ra, rb []rune, top rune) {
	// An open-addressing table, at most half full, of uint32 entries that
	// pack a line's id+1 with 11 more bits of its hash: a probe is one
	// memory access and a string comparison only confirms a likely hit. A Go
	// map keyed by the lines cost about twice as much on 100,000-line files.
	// It is sized for a's lines, not for both sides: lines of b that match
	// in lockstep (below) are never added, and a smaller table is fewer
	// cache misses per probe. Should b bring many new lines, it doubles.
	size := 1
	for size < 2*(ja-ia) {
		size <<= 1
	}
	table := grow(&sc.table, size)
	clear(table)
	mask := uint64(size - 1)
	// distinct[n] locates the n-th distinct line: below len(a.start) it is
	// a line of a, else of b (offset by len(a.start)). Integers, not
	// strings, so that the GC has nothing to scan.
	distinct := sc.distinct[:0]
	bOffset := len(a.start)
	lineAt := func(ref uint32) string {
		if int(ref) < bOffset {
			return a.line(int(ref))
		}
		return b.line(int(ref) - bOffset)
	}
	seed := maphash.MakeSeed()
	next := rune(0)
	// lookup returns the rune of line k of l (offset places it in distinct),
	// adding the line to the table if it is new, and the distinct index.
	lookup := func(l lines, k, offset int, h uint64) (rune, int) {
		check := uint32(h>>(64-checkBits)) << idBits
		for slot := h & mask; ; slot = (slot + 1) & mask {
			e := table[slot]
			if e == 0 {
				n := len(distinct)
				table[slot] = check | uint32(n+1)
				distinct = append(distinct, uint32(offset+k))
				r := next
				next++
				if next == 0xD800 {
					next = 0xE000
				}
				return r, n
			}
			if e&^idMask == check {
				if n := int(e&idMask) - 1; lineAt(distinct[n]) == l.line(k) {
					return idRune(n), n
				}
			}
		}
	}
	ra = grow(&sc.ra, ja-ia)
	// Lines of a go into the table in the order of their home slot's
	// region, one region of about partitionSlots slots after another, so
	// that the probes of a large file stay within a cache-sized part of
	// the table instead of missing the cache on nearly every line. Equal
	// lines share a region and keep their order, so the first occurrence
	// is still the one recorded. Which id a line gets does not matter, only
	// that equal lines get equal ones.
	hashes := grow(&sc.hashes, ja-ia)
	for k := ia; k < ja; k++ {
		hashes[k-ia] = maphash.String(seed, a.line(k))
	}
	if parts := size / partitionSlots; parts <= 1 {
		for k := ia; k < ja; k++ {
			ra[k-ia], _ = lookup(a, k, 0, hashes[k-ia])
		}
	} else {
		shift := bits.TrailingZeros(uint(size)) - bits.TrailingZeros(uint(parts))
		fill := grow(&sc.partStart, parts+1)
		clear(fill)
		for _, h := range hashes {
			fill[(h&mask)>>shift+1]++
		}
		for p := 1; p <= parts; p++ {
			fill[p] += fill[p-1]
		}
		order := grow(&sc.order, ja-ia)
		for x, h := range hashes {
			p := (h & mask) >> shift
			order[fill[p]] = int32(x)
			fill[p]++
		}
		for _, x := range order {
			ra[x], _ = lookup(a, ia+int(x), 0, hashes[x])
		}
	}
	// Most lines of b equal the line of a at the same offset from the last
	// match: comparing with that line is a sequential read where a table
	// probe is a cache miss, and an equal line has that line's rune. Only
	// the other lines are looked up; a hit on a line of a resynchronizes
	// the offset.
	rb = grow(&sc.rb, jb-ib)
	delta := ia - ib // b's line k is expected at a's line k+delta
	for k := ib; k < jb; k++ {
		if p := k + delta; p >= ia && p < ja && a.line(p) == b.line(k) {
			rb[k-ib] = ra[p-ia]
			continue
		}
		if 2*(len(distinct)+1) > size {
			size *= 2
			table = grow(&sc.table, size)
			clear(table)
			mask = uint64(size - 1)
			for n, ref := range distinct {
				h := maphash.String(seed, lineAt(ref))
				slot := h & mask
				for table[slot] != 0 {
					slot = (slot + 1) & mask
				}
				table[slot] = uint32(h>>(64-checkBits))<<idBits | uint32(n+1)
			}
		}
		r, n := lookup(b, k, bOffset, maphash.String(seed, b.line(k)))
		rb[k-ib] = r
		if ref := int(distinct[n]); ref < bOffset {
			delta = ref - k
		}
	}
	sc.distinct = distinct
	return ra, rb, next
}

// Table entries: the low idBits hold a distinct line's index+1 (0 marks an
// empty slot; MaxLines keeps indexes below 1<<idBits - 1), the high
// checkBits hold the top bits of its hash.
const (
	idBits    = 21
	checkBits = 32 - idBits
	idMask    = 1<<idBits - 1
)

// partitionSlots is the size of the table regions that lineRunes fills one
// at a time: 32,768 uint32 slots, 128 KiB, which a core's L2 cache holds.
const partitionSlots = 1 << 15

// scratch holds the working buffers of one Hunks call. A daemon diffs file
// after file, and fresh multi-megabyte allocations cost more in page
// faults, zeroing and GC work than reusing recycled ones. Each call takes
// its own scratch from the pool, so concurrent calls never share one;
// nothing returned by Hunks points into it.
type scratch struct {
	startA, startB     []int
	ra, rb             []rune
	table, distinct    []uint32
	countA, countB     []int32
	posB, tails, tailJ []int32
	prev               []int32
	hashes             []uint64
	order, partStart   []int32
	cands, anchors     []anchor
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// grow returns *buf resliced to length n, replacing it with a bigger
// buffer when its capacity is short. The contents are not cleared: callers
// clear what they read before writing.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// idRune is the rune of the n-th distinct line: n, skipping the surrogate
// range.
func idRune(n int) rune {
	if n >= 0xD800 {
		return rune(n + (0xE000 - 0xD800))
	}
	return rune(n)
}

// groupHunks turns change regions into hunks with context lines, merging
// regions whose gap is at most 2*context unchanged lines.
func groupHunks(path string, a, b lines, regions []region, context int) []FileDiff {
	var diffs []FileDiff
	for k := 0; k < len(regions); {
		first, last := k, k
		for last+1 < len(regions) && regions[last+1].oldStart-regions[last].oldEnd <= 2*context {
			last++
		}
		k = last + 1
		f, l := regions[first], regions[last]
		// Context never reaches past the previous or next hunk (they are more
		// than 2*context away) and lines before the first change and after
		// the last are unchanged, so old and new context lengths agree.
		lead := min(context, f.oldStart)
		trail := min(context, a.len()-l.oldEnd)
		oldText := a.span(f.oldStart-lead, l.oldEnd+trail)
		diffs = append(diffs, FileDiff{
			Path:    path,
			OldText: &oldText,
			NewText: b.span(f.newStart-lead, l.newEnd+trail),
			Line:    f.newStart - lead + 1,
		})
	}
	return diffs
}
