package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/internal/atomicfile"
	"github.com/dsh-tools/dshd/internal/openfile"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Undo: every call that changes files (see changesFiles: write, edit, any
// tool of kind edit/delete/move over written paths) is run inside the
// WrapperUndo wrapper, which records the files' before-images and the hash
// of their after-images in the session log (file/change). /undo N puts
// back the before-images of the last N turns that changed files, after
// checking that nobody changed a file since (its content still hashes to
// the last recorded after-image), all or nothing; it shows the restored
// diffs as a card, records what it undid (undo), and the next prompt that
// reaches the loop starts with a note telling the model (undo/told once
// delivered). Commands (bash) are opaque and are not undone.

// WrapperUndo records the before- and after-images of file changes.
const WrapperUndo = "bridge/undo-images"

// CommandUndo is the slash command that reverts file changes.
const CommandUndo = "undo"

// Session log kinds of undo.
const (
	evFileChange = "file/change"
	evUndo       = "undo"
	evUndoTold   = "undo/told"
)

// undoMaxBytes is the largest before-image recorded; a larger file's
// change is recorded as not undoable.
const undoMaxBytes = 4 << 20

// fileChange is the payload of file/change: one call's changed files.
type fileChange struct {
	CallID string      `json:"callId"`
	Files  []fileImage `json:"files"`
	turn   int         // the prompt number it belongs to (not logged)
}

// fileImage is one file of a change.
type fileImage struct {
	// Path is where the call landed (absolute, symlinks resolved).
	Path string `json:"path"`
	// Existed tells whether the file existed before the call; Before is
	// its content then and Mode its permissions.
	Existed bool   `json:"existed"`
	Before  []byte `json:"before,omitempty"`
	Mode    uint32 `json:"mode,omitempty"`
	// TooLarge: the before-image was not recorded (over undoMaxBytes).
	TooLarge bool `json:"tooLarge,omitempty"`
	// After is the SHA-256 (hex) of the file after the call, "" when the
	// call left no file.
	After string `json:"after"`
}

// undoEvent is the payload of undo.
type undoEvent struct {
	// Calls are the call ids whose changes were undone.
	Calls []string `json:"calls"`
	// CardID is the id of the card that showed the undo.
	CardID string `json:"cardId"`
	// Note is what the model is told at the next prompt.
	Note string `json:"note"`
}

// undoState is a session's record of file changes.
type undoState struct {
	turn    int // prompts so far
	changes []fileChange
	undone  map[string]bool // call ids
	note    string          // for the model, not yet delivered
}

func (u *undoState) addUndo(e undoEvent) {
	if u.undone == nil {
		u.undone = map[string]bool{}
	}
	for _, id := range e.Calls {
		u.undone[id] = true
	}
	u.note = strings.TrimSpace(u.note + "\n\n" + e.Note)
}

// undoImages is the WrapperUndo wrapper.
func (a *Agent) undoImages(ctx context.Context, exec *pipeline.Execution, next func(context.Context) registry.Result) registry.Result {
	s := a.sessionFor(exec.Scope())
	subjects := exec.Subjects()
	if s == nil || s.log == nil || !changesFiles(exec.Kind(), subjects) {
		return next(ctx)
	}
	var images []fileImage
	// The images are of the files the call acts on: where the policy
	// landed its paths (one that did not land is not a file to keep).
	for _, subj := range s.landing(exec, subjects).Subjects(subjects) {
		abs := subj.Value
		if !filepath.IsAbs(abs) || slices.ContainsFunc(images, func(im fileImage) bool { return im.Path == abs }) {
			continue
		}
		im := fileImage{Path: abs}
		switch fi, b, err := openfile.ReadRegular(abs, undoMaxBytes); {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil || !fi.Mode().IsRegular():
			continue // not a file we can put back
		case b == nil:
			im.Existed, im.TooLarge, im.Mode = true, true, uint32(fi.Mode().Perm())
		default:
			im.Existed, im.Before, im.Mode = true, b, uint32(fi.Mode().Perm())
		}
		images = append(images, im)
	}
	res := next(ctx)
	change := fileChange{CallID: exec.CallID()}
	for _, im := range images {
		after, _ := hashFile(im.Path)
		before := ""
		if im.Existed && !im.TooLarge {
			before = hashBytes(im.Before)
		}
		if after == before && !im.TooLarge {
			continue // unchanged (the call failed, or wrote the same bytes)
		}
		im.After = after
		change.Files = append(change.Files, im)
	}
	if len(change.Files) > 0 {
		s.mu.Lock()
		change.turn = s.undo.turn
		s.undo.changes = append(s.undo.changes, change)
		s.mu.Unlock()
		s.log.append(logEvent{Kind: evFileChange, Record: recordJSON(change)})
	}
	return res
}

func hashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// hashFile hashes a regular file's content; "" when there is none (the
// file does not exist, or is not a regular file, which is not read).
func hashFile(path string) (string, []byte) {
	_, b, err := openfile.ReadRegular(path, math.MaxInt64)
	if err != nil || b == nil {
		return "", nil
	}
	return hashBytes(b), b
}

// restoreFile is one file /undo puts back.
type restoreFile struct {
	img     fileImage // the before-image of its first undone change
	current string    // the hash it must have now (its last change's after)
}

// undoCommand runs /undo [N].
func (s *session) undoCommand(t *Turn, args []string) string {
	n := 1
	if len(args) > 1 {
		return "Usage: `/undo` or `/undo N` (the file changes of the last N turns)."
	}
	if len(args) == 1 {
		v, err := strconv.Atoi(args[0])
		if err != nil || v < 1 {
			return "Usage: `/undo` or `/undo N` (the file changes of the last N turns), N a positive number."
		}
		n = v
	}
	if s.log == nil {
		return "Nothing can be undone: this session has no durable log to keep before-images in."
	}
	s.mu.Lock()
	var turns []int
	for i := len(s.undo.changes) - 1; i >= 0 && len(turns) < n; i-- {
		c := s.undo.changes[i]
		if !s.undo.undone[c.CallID] && !slices.Contains(turns, c.turn) {
			turns = append(turns, c.turn)
		}
	}
	var changes []fileChange
	for _, c := range s.undo.changes {
		if !s.undo.undone[c.CallID] && slices.Contains(turns, c.turn) {
			changes = append(changes, c)
		}
	}
	s.mu.Unlock()
	if len(changes) == 0 {
		return "Nothing to undo: no turn of this session changed files with write or edit (changes made by commands cannot be undone)."
	}
	// Per file: the before-image of the first change, the after-image of
	// the last.
	var order []string
	files := map[string]*restoreFile{}
	for _, c := range changes {
		for _, im := range c.Files {
			if rf := files[im.Path]; rf != nil {
				rf.current = im.After
				continue
			}
			files[im.Path] = &restoreFile{img: im, current: im.After}
			order = append(order, im.Path)
		}
	}
	var refused []string
	nows := map[string][]byte{}
	for _, p := range order {
		rf := files[p]
		now, content := hashFile(p)
		nows[p] = content
		switch {
		case rf.img.TooLarge:
			refused = append(refused, fmt.Sprintf("%s: it was over %d MiB before the change, so no copy was kept", relPath(s.cwd, p), undoMaxBytes>>20))
		case now != rf.current:
			refused = append(refused, fmt.Sprintf("%s: it was changed since by someone else", relPath(s.cwd, p)))
		}
	}
	what := fmt.Sprintf("the last %d turns", len(turns))
	if len(turns) == 1 {
		what = "the last turn"
	}
	if len(refused) > 0 {
		return fmt.Sprintf("Nothing was undone. The file changes of %s cannot be undone safely:\n- %s\nUndo fewer turns, or restore these files yourself.", what, strings.Join(refused, "\n- "))
	}
	var content []acp.ToolCallContent
	var locs []acp.ToolCallLocation
	var done, failed []string
	for _, p := range order {
		rf := files[p]
		rel := relPath(s.cwd, p)
		var err error
		var after *string
		if rf.img.Existed {
			err = writeFileAtomic(p, rf.img.Before, fs.FileMode(rf.img.Mode))
			a := string(rf.img.Before)
			after = &a
			done = append(done, rel+" restored")
		} else {
			err = os.Remove(p)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
			done = append(done, rel+" removed (it did not exist before)")
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", rel, err))
			done = done[:len(done)-1]
			continue
		}
		var before *string
		if nows[p] != nil || rf.current != "" {
			b := string(nows[p])
			before = &b
		}
		m := s.conn.features.mapCard(s.cwd, &openCall{}, presentation.Hunks(p, before, after).Card(""))
		content = append(content, m.content...)
		locs = append(locs, m.locations...)
	}
	var calls []string
	for _, c := range changes {
		calls = append(calls, c.CallID)
	}
	note := fmt.Sprintf("[dshd] The user ran /undo: the file changes of your %s were reverted (%s). The files are as they were before those turns; take this into account.", what, strings.Join(done, "; "))
	cardID := s.claimCallID("undo")
	e := undoEvent{Calls: calls, CardID: cardID, Note: note}
	s.mu.Lock()
	s.undo.addUndo(e)
	s.mu.Unlock()
	s.log.append(logEvent{Kind: evUndo, Record: recordJSON(e)})
	title := fmt.Sprintf("Undo %s: %d file(s)", what, len(done))
	status := acp.ToolCallCompleted
	if len(failed) > 0 {
		status = acp.ToolCallFailed
		content = append(content, acp.ToolText("Not restored:\n"+strings.Join(failed, "\n")))
	}
	t.send(&acp.ToolCall{ToolCallID: cardID, Title: title, Kind: acp.ToolKindEdit, Status: status, Content: content, Locations: locs})
	reply := fmt.Sprintf("Undid the file changes of %s: %s. The agent will be told at your next prompt.", what, strings.Join(done, "; "))
	if len(failed) > 0 {
		reply += "\n⚠ Not restored: " + strings.Join(failed, "; ")
	}
	return reply
}

// takeUndoNote returns the undo note the model has not been told yet and
// records that it is being told.
func (s *session) takeUndoNote() string {
	s.mu.Lock()
	note := s.undo.note
	s.undo.note = ""
	s.mu.Unlock()
	if note != "" && s.log != nil {
		s.log.append(logEvent{Kind: evUndoTold, Record: []byte("{}")})
	}
	return note
}

// writeFileAtomic puts content at path (creating its directory), so an
// undo interrupted by a crash leaves the old or the new content, never
// half of one.
func writeFileAtomic(path string, content []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	return atomicfile.Write(path, content, mode)
}

// recordJSON encodes an undo payload; the types encode without error.
func recordJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("bridge: encoding %T: %v", v, err))
	}
	return b
}
