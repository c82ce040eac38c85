package sessionlog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultListLimit is the page size of List when limit is not positive.
const DefaultListLimit = 50

// ErrBadCursor: List was given a cursor it did not issue.
var ErrBadCursor = errors.New("sessionlog: invalid cursor")

// Info describes a stored session for session/list.
type Info struct {
	SessionID             string
	Cwd                   string
	AdditionalDirectories []string
	// Title is the latest title record's title ("" when none).
	Title string
	// Created is the header's creation time.
	Created time.Time
	// UpdatedAt is the log file's modification time: the last time a
	// record was made durable.
	UpdatedAt time.Time
	// Prompted reports whether the log holds a prompt record.
	Prompted bool
	// FirstPrompt is the payload of the first prompt record when the log
	// has no title record (so the caller can name the session after it),
	// and when it is at most maxFirstPrompt bytes; nil otherwise.
	FirstPrompt json.RawMessage
}

// maxFirstPrompt bounds the first prompt List keeps per session: a prompt
// with large embedded files is not worth holding for a title.
const maxFirstPrompt = 64 << 10

// Page is one page of List.
type Page struct {
	Sessions []Info
	// NextCursor continues the listing; empty on the last page.
	NextCursor string
}

type listEntry struct {
	id      string
	path    string
	modTime time.Time
}

// List returns the sessions stored in dir, most recently updated first
// (ties by id), optionally only those whose header cwd equals cwdFilter
// (compared after filepath.Clean). cursor is "" for the first page or a
// Page.NextCursor; limit bounds the page (DefaultListLimit when not
// positive). Pagination is by position in that order, so sessions created
// while a client pages do not shift later pages. A missing dir lists
// nothing. Logs without a readable header are skipped with a warning.
// List never modifies a log.
func List(dir, cwdFilter, cursor string, limit int) (Page, error) {
	return list(dir, cwdFilter, cursor, limit, false)
}

// ListPrompted is [List] of only the sessions with at least one prompt
// record: what a person would call a conversation, not a session that was
// created and abandoned (or is being created by the caller right now).
func ListPrompted(dir, cwdFilter, cursor string, limit int) (Page, error) {
	return list(dir, cwdFilter, cursor, limit, true)
}

func list(dir, cwdFilter, cursor string, limit int, onlyPrompted bool) (Page, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return Page{}, err
	}
	dirEntries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Page{Sessions: []Info{}}, nil
	}
	if err != nil {
		return Page{}, fmt.Errorf("sessionlog: listing sessions: %w", err)
	}
	entries := make([]listEntry, 0, len(dirEntries))
	for _, de := range dirEntries {
		id, ok := strings.CutSuffix(de.Name(), fileSuffix)
		if !ok || !de.Type().IsRegular() || ValidateID(id) != nil {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		entries = append(entries, listEntry{id: id, path: filepath.Join(dir, de.Name()), modTime: fi.ModTime()})
	}
	slices.SortFunc(entries, compareEntries)
	if after != nil {
		i, _ := slices.BinarySearchFunc(entries, *after, compareEntries)
		if i < len(entries) && compareEntries(entries[i], *after) == 0 {
			i++
		}
		entries = entries[i:]
	}
	if cwdFilter != "" {
		cwdFilter = filepath.Clean(cwdFilter)
	}
	page := Page{Sessions: []Info{}}
	var last listEntry
	for _, e := range entries {
		info, ok := readInfo(e)
		if !ok || cwdFilter != "" && filepath.Clean(info.Cwd) != cwdFilter {
			continue
		}
		var scan titleEntry
		if onlyPrompted {
			if scan = scanLog(e.path, info.Created); !scan.prompted {
				continue
			}
		}
		if len(page.Sessions) == limit {
			page.NextCursor = encodeCursor(last)
			break
		}
		if !onlyPrompted {
			scan = scanLog(e.path, info.Created)
		}
		info.Title, info.Prompted = scan.title, scan.prompted
		if !scan.titled {
			info.FirstPrompt = scan.firstPrompt
		}
		page.Sessions = append(page.Sessions, info)
		last = e
	}
	return page, nil
}

// compareEntries orders newest first, then by id.
func compareEntries(a, b listEntry) int {
	if c := b.modTime.Compare(a.modTime); c != 0 {
		return c
	}
	// File times are only as fine as the kernel's clock tick (a few ms),
	// so sessions touched together tie. Descending ids keep the order
	// stable, and put the later of sequentially numbered sessions first,
	// as their times would if they were finer.
	return strings.Compare(b.id, a.id)
}

func readInfo(e listEntry) (Info, bool) {
	f, err := os.Open(e.path)
	if err != nil {
		return Info{}, false
	}
	defer f.Close()
	h, err := readHeader(f)
	if err != nil {
		slog.Warn("sessionlog: skipping log without a header", "session", e.id, "err", err)
		return Info{}, false
	}
	return Info{
		SessionID:             e.id,
		Cwd:                   h.Cwd,
		AdditionalDirectories: h.AdditionalDirectories,
		Created:               h.Created,
		UpdatedAt:             e.modTime,
	}, true
}

// titleCache remembers, per log file, the latest title and how far the
// file was scanned, so listing again only scans what was appended since.
// An entry is trusted only for the same header creation time and a size
// that has not shrunk (logs are append-only; Open's repair only drops a
// torn tail, which holds no complete title).
var titleCache = struct {
	sync.Mutex
	entries map[string]titleEntry
}{entries: map[string]titleEntry{}}

type titleEntry struct {
	created time.Time
	scanned int64 // bytes scanned, ending after a newline
	title   string
	titled  bool // a title record was seen
	// prompted: a prompt record was seen; firstPrompt is its payload
	// (kept until a title is seen, nil when larger than maxFirstPrompt).
	prompted    bool
	firstPrompt json.RawMessage
}

const maxTitleCacheEntries = 4096

// scanLog returns what List needs of a log's records (its latest title,
// whether it has a prompt), scanning only what was appended since the
// last scan.
func scanLog(path string, created time.Time) titleEntry {
	titleCache.Lock()
	entry, ok := titleCache.entries[path]
	titleCache.Unlock()
	if !ok || !entry.created.Equal(created) {
		entry = titleEntry{created: created}
	}
	f, err := os.Open(path)
	if err != nil {
		return titleEntry{}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return titleEntry{}
	}
	if fi.Size() < entry.scanned {
		entry = titleEntry{created: created}
	}
	data := make([]byte, fi.Size()-entry.scanned)
	n, _ := f.ReadAt(data, entry.scanned)
	data = data[:n]
	if end := bytes.LastIndexByte(data, '\n'); end >= 0 {
		data = data[:end+1] // a torn or growing last line is scanned next time
	} else {
		data = nil
	}
	entry.scanned += int64(len(data))
	scanRecords(data, &entry)
	if entry.titled {
		entry.firstPrompt = nil
	}
	titleCache.Lock()
	if len(titleCache.entries) >= maxTitleCacheEntries {
		clear(titleCache.entries)
	}
	titleCache.entries[path] = entry
	titleCache.Unlock()
	return entry
}

// forgetTitle drops a deleted log's cache entry.
func forgetTitle(path string) {
	titleCache.Lock()
	delete(titleCache.entries, path)
	titleCache.Unlock()
}

// scanTitle returns the last title record's title in data, as decoding
// every line would. Lines that start as canonical records of another kind
// are skipped undecoded unless they could still name the kind "title"
// (through a second "t" member that only a hand-edited log would hold).
func scanTitle(data []byte) (title string, found bool) {
	var e titleEntry
	scanRecords(data, &e)
	return e.title, e.titled
}

// scanRecords updates e with the title and prompt records of data (whole
// lines). Canonical lines of other kinds are skipped undecoded, and so are
// prompts once one was seen.
func scanRecords(data []byte, e *titleEntry) {
	canonicalTitle := []byte(canonicalStart + KindTitle + `"`)
	canonicalPrompt := []byte(canonicalStart + KindPrompt + `"`)
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		canonical := bytes.HasPrefix(line, []byte(canonicalStart))
		prompt := !e.prompted && (!canonical || bytes.HasPrefix(line, canonicalPrompt))
		if canonical && !prompt && !bytes.HasPrefix(line, canonicalTitle) &&
			!mayNameTitle(line[len(canonicalStart):]) {
			continue
		}
		rec, err := decodeRecord(line)
		if err != nil {
			continue
		}
		switch rec.Kind {
		case KindTitle:
			var t Title
			if rec.Decode(&t) == nil {
				e.title, e.titled = t.Title, true
			}
		case KindPrompt:
			if !e.prompted {
				e.prompted = true
				if len(rec.Payload) <= maxFirstPrompt {
					e.firstPrompt = bytes.Clone(rec.Payload)
				}
			}
		}
	}
}

// mayNameTitle reports whether b could hold the JSON string "title" as a
// member's value: literally after a colon, or with a letter escaped
// (\u00XX). The "title" keys of tool calls do not count, so ordinary
// updates take the fast path.
func mayNameTitle(b []byte) bool {
	if bytes.Contains(b, []byte(`\u00`)) {
		return true
	}
	for {
		i := bytes.IndexByte(b, ':')
		if i < 0 {
			return false
		}
		b = b[i+1:]
		v := b
		for len(v) > 0 && isJSONSpace(v[0]) {
			v = v[1:]
		}
		if bytes.HasPrefix(v, []byte(`"title"`)) {
			return true
		}
	}
}

const cursorVersion = "v1"

func encodeCursor(e listEntry) string {
	raw := cursorVersion + ":" + strconv.FormatInt(e.modTime.UnixNano(), 10) + ":" + e.id
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(cursor string) (*listEntry, error) {
	if cursor == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCursor, err)
	}
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 || parts[0] != cursorVersion || ValidateID(parts[2]) != nil {
		return nil, ErrBadCursor
	}
	nanos, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCursor, err)
	}
	return &listEntry{id: parts[2], modTime: time.Unix(0, nanos)}, nil
}

// Delete removes the log of session id from dir. It returns an error
// wrapping ErrNotFound when there is none (ACP's session/delete should
// then succeed anyway). The caller closes an open Log first.
func Delete(dir, id string) error {
	path, err := logPath(dir, id)
	if err != nil {
		return err
	}
	forgetTitle(path)
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		return fmt.Errorf("sessionlog: deleting session: %w", err)
	}
	return nil
}
