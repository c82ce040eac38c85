package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge/sessionlog"
)

// forkSession answers session/fork (UNSTABLE in ACP v1, advertised as
// sessionCapabilities.fork): a new session with the original's history,
// mode, config options, remembered rules and compactions up to now — its
// log records copied into a new log — which is then opened like a resumed
// session. The original is only read, never changed (it may be live, here
// or in another daemon). A turn still running in the original is not part
// of the fork: the copy ends before its prompt.
func (c *conn) forkSession(ctx context.Context, p *acp.ForkSessionRequest) (acp.Reply[acp.ForkSessionResponse], error) {
	return acp.Later(func() (*acp.ForkSessionResponse, error) {
		id, err := c.agent.fork(p.SessionID, p.Cwd, cleanAll(p.AdditionalDirectories))
		if err != nil {
			return nil, err
		}
		r, err := c.reopen(ctx, id, p.Cwd, p.AdditionalDirectories, p.MCPServers)
		if err != nil {
			return nil, err
		}
		s := r.s
		// Like a new session, the fork's commands follow its response.
		c.whenAnswered(s.id, func() {
			s.advertise(true)
		})
		return &acp.ForkSessionResponse{SessionID: s.id, Modes: s.modeState(), ConfigOptions: s.configOptions()}, nil
	}), nil
}

// forkMeta is what a fork's log header keeps of its origin.
type forkMeta struct {
	ForkOf string `json:"forkOf"`
}

// fork writes the log of a new session copied from the log of session src
// and returns the new session's id.
func (a *Agent) fork(src, cwd string, extra []string) (string, error) {
	if a.store == nil {
		return "", acp.NewError(acp.CodeMethodNotFound, "sessions cannot be forked without a state directory")
	}
	if err := a.checkAuth(); err != nil {
		return "", err
	}
	if err := checkDirs(cwd, extra); err != nil {
		return "", err
	}
	if err := sessionlog.ValidateID(src); err != nil {
		return "", acp.NewError(acp.CodeResourceNotFound, fmt.Sprintf("unknown session %q", src))
	}
	h, recs, err := sessionlog.ReadFile(a.store.dir, src)
	if errors.Is(err, sessionlog.ErrNotFound) {
		return "", acp.NewError(acp.CodeResourceNotFound, fmt.Sprintf("unknown session %q", src))
	}
	if err != nil {
		return "", fmt.Errorf("%w: reading the session log: %v", acp.ErrInternal, err)
	}
	if filepath.Clean(h.Cwd) != filepath.Clean(cwd) {
		// Remembered path rules and the history name the original's
		// files: a fork works in the same directory.
		return "", invalidParams("session %q belongs to %s, not %s", src, h.Cwd, cwd)
	}
	recs = completeTurns(recs[1:])
	meta, _ := json.Marshal(forkMeta{ForkOf: src})
	var id string
	var l *sessionlog.Log
	// An id already taken (a generator that restarted, a clash) is not
	// this fork's: take the next one.
	for range 16 {
		id = a.opts.NewSessionID()
		l, err = sessionlog.Create(a.store.dir, sessionlog.Header{SessionID: id, Cwd: h.Cwd, AdditionalDirectories: extra, Created: a.opts.Now(), Meta: meta})
		if !errors.Is(err, sessionlog.ErrExists) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("%w: creating the fork's log: %v", acp.ErrInternal, err)
	}
	title := ""
	for _, r := range recs {
		if r.Kind == evTitle {
			var t sessionlog.Title
			if r.Decode(&t) == nil {
				title = t.Title
			}
		}
		// Every kind is copied as it is, also kinds this version does not
		// know: what the original would restore, the fork restores.
		if err = l.Append(r.Kind, r.Payload); err != nil {
			break
		}
	}
	if err == nil && title != "" {
		err = l.Append(evTitle, sessionlog.Title{Title: forkTitle(title)})
	}
	if err == nil {
		err = l.Sync()
	}
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = sessionlog.Delete(a.store.dir, id)
		return "", fmt.Errorf("%w: writing the fork's log: %v", acp.ErrInternal, err)
	}
	return id, nil
}

// completeTurns drops a turn still running at the end of a log: the
// records from its prompt on, which have no turn/end yet.
func completeTurns(recs []sessionlog.Record) []sessionlog.Record {
	cut := len(recs)
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == evTurnEnd {
			break
		}
		if recs[i].Kind == evPrompt {
			cut = i
		}
	}
	return recs[:cut]
}

// forkTitle names a fork after its original.
func forkTitle(title string) string {
	const suffix = " (fork)"
	if r := []rune(title); len(r)+len([]rune(suffix)) > 80 {
		title = string(r[:80-len([]rune(suffix))-1]) + "…"
	}
	return title + suffix
}
