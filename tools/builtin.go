package tools

import (
	"time"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Options configure the built-in tools. Zero fields take the defaults
// named on each.
type Options struct {
	// BashTimeout is a command's timeout when the model gives none
	// (default 2 minutes); BashMaxTimeout caps what the model may ask for
	// (default 10 minutes).
	BashTimeout    time.Duration
	BashMaxTimeout time.Duration
	// OutputLimit caps a command's captured output in bytes (default
	// 30,000): the start and the end are kept.
	OutputLimit int
	// Env, when non-nil, is the environment of commands (default: the
	// daemon's).
	Env []string
	// Jobs holds background commands. Nil disables runInBackground,
	// bash_output and bash_kill (they answer with an error the model can
	// read). The caller owns it: CloseSession when a session ends, Close at
	// exit.
	Jobs *Jobs
	// MaxJobs caps the background commands one session runs at once
	// (default DefaultMaxJobs, 32); past it runInBackground answers with an
	// error the model can act on.
	MaxJobs int

	// ReadLines is how many lines read returns when the model names no
	// limit (default 2,000); ReadMaxBytes caps one read's output (default
	// 256 KiB); MaxLineBytes cuts longer lines in read and grep output
	// (default 2,000).
	ReadLines    int
	ReadMaxBytes int
	MaxLineBytes int

	// GlobLimit caps glob's paths (default 200); GrepLimit grep's matching
	// lines or files (default 250).
	GlobLimit int
	GrepLimit int
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.BashTimeout <= 0 {
		o.BashTimeout = 2 * time.Minute
	}
	if o.BashMaxTimeout <= 0 {
		o.BashMaxTimeout = 10 * time.Minute
	}
	if o.BashTimeout > o.BashMaxTimeout {
		o.BashTimeout = o.BashMaxTimeout
	}
	def(&o.OutputLimit, 30_000)
	def(&o.ReadLines, 2000)
	def(&o.ReadMaxBytes, 256<<10)
	def(&o.MaxLineBytes, 2000)
	def(&o.GlobLimit, 200)
	def(&o.GrepLimit, 250)
	def(&o.MaxJobs, DefaultMaxJobs)
	return o
}

// toolset is the built-in tools sharing one configuration.
type toolset struct {
	opts Options
}

// Builtin returns the first-party tools: read, write, edit, glob, grep,
// bash, bash_output, bash_kill and todo. They are stateless apart from
// opts.Jobs, so one set serves every session: each call finds its session
// through [registry.Call.Host].
func Builtin(opts Options) []*registry.Definition {
	t := &toolset{opts: opts.withDefaults()}
	return []*registry.Definition{
		t.readTool(), t.writeTool(), t.editTool(),
		t.globTool(), t.grepTool(),
		t.bashTool(), t.bashOutputTool(), t.bashKillTool(),
		t.todoTool(),
	}
}

// errNoHost is the result of a call made outside a session.
var errNoHost = registry.ErrorResult(registry.CodeToolError, "this tool needs a session (the call has no host)")

// toolError is a failure the model can act on.
func toolError(msg string) (registry.Result, error) {
	return registry.ErrorResult(registry.CodeToolError, msg), nil
}

// displayPath returns the absolute form of p when the call's cwd is known,
// for locations, and whether it is absolute.
func displayPath(call registry.Call, p string) (string, bool) {
	if p == "" {
		p = "."
	}
	if isAbs(p) {
		return absPath("/", p), true
	}
	if h := call.Host(); h != nil {
		return absPath(h.Cwd(), p), true
	}
	return p, false
}

func location(call registry.Call, p string, line *int) []presentation.FileLocation {
	abs, ok := displayPath(call, p)
	if !ok {
		return nil
	}
	return []presentation.FileLocation{{Path: abs, Line: line}}
}

func intOr(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

func boolOr(p *bool, d bool) bool {
	if p == nil {
		return d
	}
	return *p
}
