package host

import (
	"context"
	"io"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/sandbox"
)

// Host is what a running tool may ask of the session that runs it. The
// bridge implements it per session and hands it to every execution, where
// tools, presenters and hooks find it as the call's Host method
// (registry.Call).
type Host interface {
	// SessionID is the ACP session id.
	SessionID() string
	// Cwd is the session's absolute working directory.
	Cwd() string
	// Roots are the absolute directories tools may touch without asking:
	// Cwd first, then the session's additionalDirectories.
	Roots() []string
	// Land returns where path, a path argument of the running call as the
	// model wrote it, lands: the landing the session's policy judged (and
	// judged again after a permission prompt). A tool opens that landing
	// and nothing else; the error (wrapping [ErrNotLanded]) says why there
	// is none: the call declared no such path subject, or it does not
	// resolve.
	Land(path string) (Landing, error)
	// Files reads and writes text files, through the editor when it offers
	// fs/read_text_file and fs/write_text_file, otherwise on local disk.
	Files() Files
	// Terminals runs commands in editor terminals when the editor offers
	// them; ok is false when it does not.
	Terminals() (t Terminals, ok bool)
	// Progress lets a tool stream what it is doing while it runs.
	Progress(callID string) Progress
	// Plan replaces the session's plan (the complete list each time).
	Plan(ctx context.Context, entries []PlanEntry) error
}

// Sandboxing is implemented by a Host whose commands run in the OS sandbox
// (package sandbox). A Host without it runs commands unsandboxed.
type Sandboxing interface {
	// Sandbox returns the policy of the session's next command. ok is
	// false when commands run without the sandbox (its mode is off, or it
	// cannot run here and is not required); err, when it is required and
	// cannot run, says why no command may start.
	Sandbox() (p sandbox.Policy, ok bool, err error)
	// SandboxServers start the session's sandboxed commands and end with
	// the session; nil means the program's own ([sandbox.Start]).
	SandboxServers() *sandbox.Servers
}

// Files is text file access on behalf of a session. It takes landings
// ([Host.Land]), never paths: what a tool opens is what the policy judged.
type Files interface {
	// ReadTextFile returns a file's text. line (1-based) and limit, when
	// positive, select lines. A missing file is an error satisfying
	// errors.Is(err, fs.ErrNotExist).
	ReadTextFile(ctx context.Context, l Landing, line, limit int) (string, error)
	// WriteTextFile creates or replaces a file, creating parent
	// directories.
	WriteTextFile(ctx context.Context, l Landing, content string) error
}

// Terminals runs commands in terminals the editor owns and shows.
type Terminals interface {
	// Run starts command (run by bash -c) in cwd, waits for it (or for ctx),
	// and always releases the terminal. The TerminalCard's TerminalID names
	// the editor terminal, which must be embedded in the call's content.
	Run(ctx context.Context, req TerminalRequest) (*presentation.TerminalCard, error)
}

// TerminalRequest describes one command.
type TerminalRequest struct {
	CallID      string
	Command     string
	Cwd         string
	Env         map[string]string
	OutputLimit int
	// Launcher, when set, is the argv prefix the terminal runs the command
	// under (the sandbox launcher, see [sandbox.Wrap]); the card and the
	// permission request still show Command.
	Launcher []string
	// Started, when non-nil, is called with the terminal id as soon as the
	// editor created the terminal, so the call's card can embed it.
	Started func(terminalID string)
}

// Progress receives a running tool's live output.
type Progress interface {
	// Started announces a live terminal for the call (tier 2 of the
	// terminal cards), with the directory it runs in.
	Started(cwd string)
	// Output is a chunk of live output.
	io.Writer
}

// PlanEntry is one entry of the session's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"` // high | medium | low
	Status   string `json:"status"`   // pending | in_progress | completed
}
