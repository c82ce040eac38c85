package sessionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Errors callers branch on. Returned errors wrap them.
var (
	// ErrInvalidID: the session id is not a safe file name.
	ErrInvalidID = errors.New("sessionlog: invalid session id")
	// ErrNotFound: no log exists for the session id.
	ErrNotFound = errors.New("sessionlog: session not found")
	// ErrExists: Create found a log for the session id.
	ErrExists = errors.New("sessionlog: session already exists")
	// ErrNoHeader: the log does not start with a header record (for
	// example a crash right after the file was created).
	ErrNoHeader = errors.New("sessionlog: log has no header")
	// ErrClosed: the Log was closed.
	ErrClosed = errors.New("sessionlog: log closed")
	// ErrLocked: another open Log (usually another dshd process) holds
	// the session; see [Open].
	ErrLocked = errors.New("sessionlog: session is open in another process")
)

const (
	fileSuffix = ".jsonl"
	maxIDLen   = 128
	// maxKeptLine bounds the line buffer a Log keeps between appends, so
	// one huge record does not pin its size for the session's lifetime.
	maxKeptLine = 64 << 10
)

// ValidateID reports (wrapping ErrInvalidID) whether id is usable as a
// session id: 1 to 128 bytes of ASCII letters, digits, '.', '_' and '-',
// starting with a letter or digit. Such an id is a plain file name: it
// cannot name a parent directory, a hidden file or a path.
func ValidateID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return fmt.Errorf("%w: length %d (want 1 to %d)", ErrInvalidID, len(id), maxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		switch {
		case alnum:
		case i == 0:
			return fmt.Errorf("%w: %q must start with a letter or digit", ErrInvalidID, id)
		case c != '.' && c != '_' && c != '-':
			return fmt.Errorf("%w: %q: byte %d is not a letter, digit, '.', '_' or '-'", ErrInvalidID, id, i)
		}
	}
	return nil
}

func logPath(dir, id string) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", err
	}
	return filepath.Join(dir, id+fileSuffix), nil
}

// syncFile is (*os.File).Sync; tests that simulate thousands of crashes
// replace it to avoid paying for real fsyncs.
var syncFile = (*os.File).Sync

// writeFile is (*os.File).Write; tests replace it to simulate a short
// write (a full disk).
var writeFile = (*os.File).Write

// Log is one session's open log. Its methods are safe for concurrent use.
type Log struct {
	id     string
	path   string
	header Header

	mu      sync.Mutex
	file    *os.File
	line    []byte       // the record being written, reused
	scratch bytes.Buffer // compaction of raw payloads, reused
	// torn: a failed write left part of a line in the file; the next
	// record starts with a newline so the fragment stays a line of its
	// own (skipped on reading) instead of spoiling that record.
	torn   bool
	closed bool
	now    func() time.Time
	// created, until the first Sync consumes it, yields the result of
	// the fsyncs that make a new log's header and directory entry
	// durable; Create runs them in the background.
	created <-chan error
}

// Create creates the log of a new session in dir (created 0700 if
// missing) and writes the header through to the file, so the session is
// listed even if the process dies before its first turn ends. The file is
// named after h.SessionID; a zero h.Created is set to now.
//
// Surviving a machine crash takes fsyncs of the file and of dir, which
// cost more than the rest of session/new together on common disks; they
// run in the background, and the first [Log.Sync] (the end of the first
// turn) and [Log.Close] wait for them and report their error.
func Create(dir string, h Header) (*Log, error) {
	path, err := logPath(dir, h.SessionID)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sessionlog: creating state directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %s", ErrExists, h.SessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("sessionlog: creating log: %w", err)
	}
	if err := lockFile(f, h.SessionID); err != nil {
		f.Close()
		return nil, err
	}
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	l := newLog(h.SessionID, path, f, h)
	if err := l.Append(KindHeader, h); err != nil {
		f.Close()
		return nil, err
	}
	created := make(chan error, 1)
	syncFile := syncFile // tests swap the variable between runs
	go func() {
		err := syncFile(f)
		if err != nil {
			err = fmt.Errorf("sessionlog: syncing log: %w", err)
		} else {
			err = syncDir(dir)
		}
		created <- err
	}()
	l.created = created
	return l, nil
}

func newLog(id, path string, f *os.File, h Header) *Log {
	return &Log{id: id, path: path, header: h, file: f, now: time.Now}
}

// syncDir makes a new directory entry durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sessionlog: syncing state directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sessionlog: syncing state directory: %w", err)
	}
	return nil
}

// Open opens the existing log of session id in dir for reading and
// appending. A torn last line left by a crash is truncated away (with a
// warning through slog), so the next append starts on a fresh line.
//
// A session has one writer: the Log holds an exclusive flock on its file
// until Close, and Open of a session another Log holds (in this process
// or another) fails at once with [ErrLocked], before it changes anything.
// The kernel drops the lock of a process that dies, so a crashed daemon's
// session opens normally.
func Open(dir, id string) (*Log, error) {
	path, err := logPath(dir, id)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("sessionlog: opening log: %w", err)
	}
	// Locked first: a torn tail may be a live writer's record in flight.
	if err := lockFile(f, id); err != nil {
		f.Close()
		return nil, err
	}
	if err := repairTail(f, id); err != nil {
		f.Close()
		return nil, err
	}
	h, err := readHeader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return newLog(id, path, f, h), nil
}

// repairTail truncates the file after its last newline.
func repairTail(f *os.File, id string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sessionlog: %w", err)
	}
	size := st.Size()
	if size == 0 {
		return nil
	}
	end, err := lastNewline(f, size)
	if err != nil {
		return fmt.Errorf("sessionlog: scanning log tail: %w", err)
	}
	if end == size {
		return nil
	}
	slog.Warn("sessionlog: dropping torn last line", "session", id, "bytes", size-end)
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("sessionlog: truncating torn tail: %w", err)
	}
	if err := syncFile(f); err != nil {
		return fmt.Errorf("sessionlog: truncating torn tail: %w", err)
	}
	return nil
}

// lastNewline returns the offset just after the file's last newline (0 if
// none).
func lastNewline(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 32<<10)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// readHeader decodes the first line of r as the header.
func readHeader(r io.ReaderAt) (Header, error) {
	line, err := bufio.NewReader(io.NewSectionReader(r, 0, 1<<62)).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if errors.Is(err, io.EOF) {
			return Header{}, ErrNoHeader
		}
		return Header{}, fmt.Errorf("sessionlog: reading header: %w", err)
	}
	rec, err := decodeRecord(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil || rec.Kind != KindHeader {
		return Header{}, ErrNoHeader
	}
	var h Header
	if err := rec.Decode(&h); err != nil {
		return Header{}, fmt.Errorf("%w: %w", ErrNoHeader, err)
	}
	return h, nil
}

// ID returns the session id.
func (l *Log) ID() string { return l.id }

// Path returns the log file's path.
func (l *Log) Path() string { return l.path }

// Header returns the session's header.
func (l *Log) Header() Header { return l.header }

// Append adds a record of the given kind. The payload is encoded with
// encoding/json, except a json.RawMessage, which is validated and
// compacted (so a pretty-printed raw message cannot break the line).
//
// The record reaches the file, in one write, before Append returns: it
// survives the process being killed at any later point. It survives a
// machine crash after the next Sync.
func (l *Log) Append(kind string, payload any) error {
	return l.AppendAll(Entry{Kind: kind, Payload: payload})
}

// Entry is one record for [Log.AppendAll].
type Entry struct {
	Kind    string
	Payload any
}

// AppendAll adds records in order, as [Log.Append] does each, in one
// write: records that are made together (a tool call's and its result's)
// cost one system call. Nothing is written when one cannot be encoded.
func (l *Log) AppendAll(entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	encoded := make([][]byte, len(entries))
	for i, e := range entries {
		if !validKind(e.Kind) {
			return fmt.Errorf("sessionlog: invalid record kind %q", e.Kind)
		}
		if _, isRaw := e.Payload.(json.RawMessage); isRaw {
			continue
		}
		b, err := json.Marshal(e.Payload)
		if err != nil {
			return fmt.Errorf("sessionlog: encoding %s record: %w", e.Kind, err)
		}
		encoded[i] = b
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	line := l.line[:0]
	if l.torn {
		line = append(line, '\n')
	}
	now := l.now()
	for i, e := range entries {
		b := encoded[i]
		if raw, isRaw := e.Payload.(json.RawMessage); isRaw {
			var err error
			if b, err = encodeRaw(raw, &l.scratch); err != nil {
				return fmt.Errorf("sessionlog: %s record payload: %w", e.Kind, err)
			}
		}
		line = appendRecord(line, e.Kind, now, b)
	}
	if cap(line) <= maxKeptLine {
		l.line = line
	} else {
		l.line = nil
	}
	n, err := writeFile(l.file, line)
	if err != nil {
		l.torn = l.torn && n == 0 || n > 0 && n < len(line)
		if len(entries) == 1 {
			return fmt.Errorf("sessionlog: appending %s record: %w", entries[0].Kind, err)
		}
		return fmt.Errorf("sessionlog: appending %d records: %w", len(entries), err)
	}
	l.torn = false
	return nil
}

// encodeRaw returns a raw payload as one compact line: raw itself when it
// already is one, else its compaction into scratch. Invalid JSON is an
// error; nil is null.
func encodeRaw(raw json.RawMessage, scratch *bytes.Buffer) ([]byte, error) {
	if raw == nil {
		return []byte("null"), nil
	}
	if len(raw) > 0 && !bytes.ContainsAny(raw, "\n\r") && !isJSONSpace(raw[0]) && !isJSONSpace(raw[len(raw)-1]) && json.Valid(raw) {
		return raw, nil // already one line and trimmed: validating is enough
	}
	scratch.Reset()
	if err := json.Compact(scratch, raw); err != nil {
		return nil, err
	}
	return scratch.Bytes(), nil
}

// Sync fsyncs the file, making every appended record survive a machine
// crash. The bridge calls it at the end of every turn.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return l.syncLocked()
}

func (l *Log) syncLocked() error {
	if l.created != nil {
		err := <-l.created
		l.created = nil
		if err != nil {
			return err
		}
	}
	if err := syncFile(l.file); err != nil {
		return fmt.Errorf("sessionlog: syncing log: %w", err)
	}
	return nil
}

// Close syncs and closes the log. Closing twice returns nil.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.syncLocked()
	if cerr := l.file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("sessionlog: closing log: %w", cerr)
	}
	return err
}

// Read returns every record of the log in order, the header first,
// including records appended but not yet synced. Lines that do not decode
// (a torn last line, damage) are skipped with a warning through slog.
func (l *Log) Read() ([]Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	data, err := os.ReadFile(l.path)
	if err != nil {
		return nil, fmt.Errorf("sessionlog: reading log: %w", err)
	}
	return decodeAll(data, l.id), nil
}

// decodeAll decodes every line of data, skipping bad ones with a warning.
func decodeAll(data []byte, id string) []Record {
	records := make([]Record, 0, bytes.Count(data, []byte{'\n'})+1)
	for lineNo := 1; len(data) > 0; lineNo++ {
		line, rest, complete := bytes.Cut(data, []byte{'\n'})
		data = rest
		if len(line) == 0 {
			continue
		}
		rec, err := decodeRecord(line)
		if err != nil {
			reason := "undecodable line"
			if !complete {
				reason = "torn last line"
			}
			slog.Warn("sessionlog: skipping "+reason, "session", id, "line", lineNo, "bytes", len(line), "err", err)
			continue
		}
		records = append(records, rec)
	}
	return records
}

// ReadFile returns the records of session id in dir, header first, without
// opening the log for appending, taking its lock or repairing it: for
// reading a session another Log (of this process or another) may be
// writing, such as the source of a fork. A torn last line is skipped like
// any undecodable line.
func ReadFile(dir, id string) (Header, []Record, error) {
	path, err := logPath(dir, id)
	if err != nil {
		return Header{}, nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Header{}, nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Header{}, nil, fmt.Errorf("sessionlog: reading log: %w", err)
	}
	recs := decodeAll(data, id)
	var h Header
	if len(recs) == 0 || recs[0].Kind != KindHeader || recs[0].Decode(&h) != nil {
		return Header{}, nil, fmt.Errorf("session %s: %w", id, ErrNoHeader)
	}
	return h, recs, nil
}
