package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-tools/dshd/host"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/sandbox"
)

// commandSandbox is the policy a command runs under and the servers that
// start it: none when the call is escalated or the host runs commands
// unsandboxed; an error when the sandbox is required and cannot run.
func commandSandbox(h host.Host, escalate bool) (*sandbox.Policy, *sandbox.Servers, error) {
	sh, ok := h.(host.Sandboxing)
	if escalate || !ok {
		return nil, nil, nil
	}
	p, ok, err := sh.Sandbox()
	if err != nil {
		return nil, nil, fmt.Errorf("the command was not run: %w", err)
	}
	if !ok {
		return nil, nil, nil
	}
	return &p, sh.SandboxServers(), nil
}

// deniedSigns are how a program reports what Landlock, a read-only bind
// mount or a network namespace refused.
var deniedSigns = []string{
	"Permission denied", "Read-only file system", "Operation not permitted", "Device or resource busy",
	"Network is unreachable", "Temporary failure in name resolution", "Could not resolve host", "Connection refused",
	"EACCES", "EROFS", "EPERM", "ENETUNREACH",
}

// sandboxNote tells the model, after a sandboxed command failed with what
// looks like a denial, that the sandbox (not the file system) may have
// refused, and how to ask to leave it.
func sandboxNote(p *sandbox.Policy, output string) string {
	if p == nil {
		return ""
	}
	denied := false
	for _, sign := range deniedSigns {
		if strings.Contains(output, sign) {
			denied = true
			break
		}
	}
	if !denied {
		return ""
	}
	return "\n[The command ran in the OS sandbox (" + p.Describe() + "; .git and .dshd are read-only). " +
		"A denied write or connection above was the sandbox's doing, not the file system's. " +
		"If the task needs it, call bash again with escalate: true and a justification: the user will be asked.]"
}

// BashArgs are the arguments of the bash tool.
type BashArgs struct {
	Command         string  `json:"command" desc:"The command line, run by bash -c in the session's working directory." min:"1"`
	Description     *string `json:"description,omitempty" desc:"A short description of what the command does (5-10 words), shown to the user."`
	Timeout         *int    `json:"timeout,omitempty" desc:"Timeout in milliseconds (default 120000; larger values are capped by the daemon's maximum)." min:"1"`
	RunInBackground *bool   `json:"runInBackground,omitempty" desc:"Start the command in the background and return its id at once; read its output with bash_output and stop it with bash_kill. Use for servers and watchers." default:"false"`
	Escalate        *bool   `json:"escalate,omitempty" desc:"Run this one command outside the OS sandbox. Only when the sandbox denied something the task needs (a write outside the workspace, the network); the user is asked every time. Requires justification." default:"false"`
	Justification   *string `json:"justification,omitempty" desc:"With escalate: why the command must run outside the sandbox, shown to the user."`
}

const bashDoc = `Run a shell command with bash -c in the session's working directory and return its combined stdout and stderr and its exit status.
stdin is empty: commands that wait for input or a terminal get none (pass flags such as --yes, and avoid interactive editors and pagers). Each call is a fresh shell: cd and exported variables do not carry over, so chain with && or use absolute paths.
Commands are killed when they time out (default 2 minutes), when the call is cancelled, and processes a command leaves running are killed when it ends; start long-running programs (servers, watchers) with runInBackground. Long output is cut in the middle.
Commands run in an OS sandbox: they may write only inside the workspace and the temp directory (or nothing, in read-only mode), never .git or .dshd, and may have no network. When the sandbox denies something the task truly needs, you may call bash again with escalate: true and a justification; the user decides.
Prefer the read, write, edit, glob and grep tools over cat, sed, find and grep.`

func (t *toolset) bashTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[BashArgs]{
		Name: "bash", Title: "Run command", Description: bashDoc, Kind: presentation.KindExecute,
		PresentCall: func(call registry.Call, a BashArgs) presentation.CallView {
			v := presentation.CallView{Title: commandTitle(a.Command), Kind: presentation.KindExecute}
			if a.Description != nil && *a.Description != "" {
				v.Content = []presentation.Content{presentation.Text(*a.Description)}
			}
			return v
		},
		PresentResult: func(call registry.Call, a BashArgs, r registry.Result) *presentation.ResultView {
			if r.View != nil {
				return r.View
			}
			return &presentation.ResultView{Card: &presentation.GenericCard{Content: r.Content}}
		},
		Subjects: func(call registry.Call, a BashArgs) []registry.Subject {
			s := registry.Subject{Kind: registry.SubjectCommand, Value: a.Command}
			if boolOr(a.Escalate, false) {
				s.Unsandboxed = true
				if a.Justification != nil {
					s.Justification = strings.TrimSpace(*a.Justification)
				}
			}
			return []registry.Subject{s}
		},
	}, t.bash)
}

// commandTitle is a command's first line, shortened for a card title.
func commandTitle(cmd string) string {
	line, _, multi := strings.Cut(strings.TrimSpace(cmd), "\n")
	const max = 120
	if r := []rune(line); len(r) > max {
		line, multi = string(r[:max]), true
	}
	if multi {
		line += " …"
	}
	return line
}

func (t *toolset) bash(ctx context.Context, call registry.Call, a BashArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	timeout := t.opts.BashTimeout
	if a.Timeout != nil {
		// Compared in milliseconds: a huge value would overflow a
		// Duration into a negative one, which means no timeout at all.
		timeout = t.opts.BashMaxTimeout
		if ms := int64(*a.Timeout); ms < timeout.Milliseconds() {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	cwd := h.Cwd()
	policy, servers, err := commandSandbox(h, boolOr(a.Escalate, false))
	if err != nil {
		return toolError(err.Error())
	}
	if boolOr(a.RunInBackground, false) {
		if t.opts.Jobs == nil {
			return toolError("background commands are not available in this daemon; run the command in the foreground")
		}
		id, err := t.opts.Jobs.StartCapped(h.SessionID(), Command{Line: a.Command, Dir: cwd, Env: t.opts.Env, OutputLimit: t.opts.OutputLimit, Sandbox: policy, Servers: servers}, t.opts.MaxJobs)
		if errors.Is(err, ErrTooManyJobs) {
			return toolError(fmt.Sprintf("cannot start the command in the background: %v (settings key bash.maxBackgroundJobs). "+
				"Read the output of the ones you started with bash_output, stop those you no longer need with bash_kill, or run this command in the foreground.", err))
		}
		if err != nil {
			return toolError(fmt.Sprintf("cannot start the command: %v", err))
		}
		msg := fmt.Sprintf("Started in the background with id %s. Read its output with bash_output (id %q); stop it with bash_kill.", id, id)
		r := registry.TextResult(msg)
		r.View = &presentation.ResultView{Card: &presentation.TerminalCard{Title: commandTitle(a.Command), Output: "[running in the background as " + id + "]\n"}}
		return r, nil
	}

	if term, ok := h.Terminals(); ok {
		return t.bashInTerminal(ctx, call, term, a, cwd, timeout, policy)
	}
	c := Command{Line: a.Command, Dir: cwd, Env: t.opts.Env, Timeout: timeout, OutputLimit: t.opts.OutputLimit, Sandbox: policy, Servers: servers}
	if p := h.Progress(call.CallID()); p != nil {
		p.Started(cwd)
		c.Live = p
	}
	o, err := Run(ctx, c)
	if err != nil {
		return toolError(fmt.Sprintf("cannot start the command: %v", err))
	}
	card := &presentation.TerminalCard{Title: commandTitle(a.Command), Output: o.Output, ExitCode: o.ExitCode, Signal: o.Signal}
	status := ""
	switch {
	case o.Cancelled:
		r := registry.ErrorResult(registry.CodeCancelled, "The command was cancelled and killed.\n"+o.Output)
		r.View = &presentation.ResultView{Card: card}
		return r, nil
	case o.TimedOut:
		status = fmt.Sprintf("[timed out after %s and was killed; use a larger timeout or runInBackground]", timeout)
	case o.Signal != "":
		status = "[killed by " + o.Signal + "]"
	case o.ExitCode != nil && *o.ExitCode != 0:
		status = fmt.Sprintf("[exit code %d]", *o.ExitCode) + sandboxNote(policy, o.Output)
	}
	r := registry.TextResult(commandText(o.Output, status))
	r.View = &presentation.ResultView{Card: card}
	return r, nil
}

// commandText is what the model reads of a finished command.
func commandText(output, status string) string {
	if output == "" {
		output = "(no output)\n"
	} else if !strings.HasSuffix(output, "\n") {
		output += "\n"
	}
	return output + status
}

// bashInTerminal runs the command in an editor terminal (tier 1): the
// editor shows it live, the card names the terminal.
func (t *toolset) bashInTerminal(ctx context.Context, call registry.Call, term host.Terminals, a BashArgs, cwd string, timeout time.Duration, policy *sandbox.Policy) (registry.Result, error) {
	var launcher []string
	if policy != nil {
		var err error
		if launcher, err = sandbox.Prefix(*policy); err != nil {
			return toolError(fmt.Sprintf("cannot sandbox the command: %v", err))
		}
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var env map[string]string
	if t.opts.Env != nil {
		env = make(map[string]string, len(t.opts.Env))
		for _, kv := range t.opts.Env {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				env[k] = v
			}
		}
	}
	card, err := term.Run(tctx, host.TerminalRequest{CallID: call.CallID(), Command: a.Command, Cwd: cwd, Env: env, OutputLimit: t.opts.OutputLimit, Launcher: launcher})
	if ctx.Err() != nil {
		r := registry.ErrorResult(registry.CodeCancelled, "The command was cancelled and killed.")
		if card != nil {
			r.View = &presentation.ResultView{Card: card}
		}
		return r, nil
	}
	if err != nil && card == nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return toolError(fmt.Sprintf("the command timed out after %s and was killed", timeout))
		}
		return toolError(fmt.Sprintf("the editor could not run the command: %v", err))
	}
	if card.Title == "" {
		card.Title = commandTitle(a.Command)
	}
	status := ""
	switch {
	case tctx.Err() != nil:
		status = fmt.Sprintf("[timed out after %s and was killed; use a larger timeout or runInBackground]", timeout)
	case card.Signal != "":
		status = "[killed by " + card.Signal + "]"
	case card.ExitCode != nil && *card.ExitCode != 0:
		status = fmt.Sprintf("[exit code %d]", *card.ExitCode) + sandboxNote(policy, card.Output)
	}
	r := registry.TextResult(commandText(card.Output, status))
	r.View = &presentation.ResultView{Card: card}
	return r, nil
}

// BashOutputArgs are the arguments of bash_output.
type BashOutputArgs struct {
	ID   string `json:"id" desc:"The id bash returned for a background command." min:"1"`
	Wait *int   `json:"wait,omitempty" desc:"Seconds to wait for the command to finish before answering (default 0: answer at once)." min:"0" max:"600"`
}

const bashOutputDoc = `Return the output a background command (started by bash with runInBackground) produced since the last bash_output call, and whether it is still running or how it ended. With wait, first wait up to that many seconds for it to finish.`

func (t *toolset) bashOutputTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[BashOutputArgs]{
		Name: "bash_output", Title: "Background command output", Description: bashOutputDoc, Kind: presentation.KindRead,
		PresentCall: func(call registry.Call, a BashOutputArgs) presentation.CallView {
			return presentation.CallView{Title: "Output of " + a.ID, Kind: presentation.KindRead}
		},
		PresentResult: attachedView[BashOutputArgs],
		Subjects: func(call registry.Call, a BashOutputArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectOther, Value: a.ID}}
		},
	}, t.bashOutput)
}

// attachedView is the PresentResult of tools whose body attaches its own
// card (write's and edit's diff, a background job's terminal): that card,
// or for a result without one (a failure) its message.
func attachedView[A any](call registry.Call, a A, r registry.Result) *presentation.ResultView {
	if r.View != nil {
		return r.View
	}
	return &presentation.ResultView{Card: &presentation.GenericCard{Content: r.Content}}
}

func (t *toolset) bashOutput(ctx context.Context, call registry.Call, a BashOutputArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	if t.opts.Jobs == nil {
		return toolError("background commands are not available in this daemon")
	}
	if w := intOr(a.Wait, 0); w > 0 {
		if _, err := t.opts.Jobs.Wait(ctx, h.SessionID(), a.ID, time.Duration(w)*time.Second); err != nil {
			if ctx.Err() != nil {
				return registry.Result{}, ctx.Err()
			}
			return toolError(err.Error())
		}
	}
	st, err := t.opts.Jobs.Read(h.SessionID(), a.ID)
	if err != nil {
		return toolError(err.Error() + "; it may have finished and been read already")
	}
	return jobStatusResult(st), nil
}

func jobStatusResult(st JobStatus) registry.Result {
	var sb strings.Builder
	if st.Dropped > 0 {
		fmt.Fprintf(&sb, "[%d earlier bytes of output were dropped unread]\n", st.Dropped)
	}
	sb.WriteString(st.Output)
	if st.Output != "" && !strings.HasSuffix(st.Output, "\n") {
		sb.WriteByte('\n')
	}
	if st.Output == "" && st.Dropped == 0 {
		sb.WriteString("(no new output)\n")
	}
	card := &presentation.TerminalCard{Title: commandTitle(st.Command), Output: sb.String()}
	switch {
	case st.Running:
		sb.WriteString("[still running]")
	case st.Ended.Signal != "":
		fmt.Fprintf(&sb, "[ended: killed by %s]", st.Ended.Signal)
		card.Signal = st.Ended.Signal
	case st.Ended.ExitCode != nil:
		fmt.Fprintf(&sb, "[ended: exit code %d]", *st.Ended.ExitCode)
		if *st.Ended.ExitCode != 0 {
			sb.WriteString(sandboxNote(st.Sandbox, st.Output))
		}
		card.ExitCode = st.Ended.ExitCode
	}
	r := registry.TextResult(sb.String())
	r.View = &presentation.ResultView{Card: card}
	return r
}

// BashKillArgs are the arguments of bash_kill.
type BashKillArgs struct {
	ID string `json:"id" desc:"The id bash returned for a background command." min:"1"`
}

const bashKillDoc = `Stop a background command started by bash with runInBackground, with everything it started, and return its remaining output.`

func (t *toolset) bashKillTool() *registry.Definition {
	return registry.MustDefine(registry.Spec[BashKillArgs]{
		Name: "bash_kill", Title: "Stop background command", Description: bashKillDoc, Kind: presentation.KindExecute,
		PresentCall: func(call registry.Call, a BashKillArgs) presentation.CallView {
			return presentation.CallView{Title: "Stop " + a.ID, Kind: presentation.KindExecute}
		},
		PresentResult: attachedView[BashKillArgs],
		Subjects: func(call registry.Call, a BashKillArgs) []registry.Subject {
			return []registry.Subject{{Kind: registry.SubjectOther, Value: a.ID}}
		},
	}, t.bashKill)
}

func (t *toolset) bashKill(ctx context.Context, call registry.Call, a BashKillArgs) (registry.Result, error) {
	h := call.Host()
	if h == nil {
		return errNoHost, nil
	}
	if t.opts.Jobs == nil {
		return toolError("background commands are not available in this daemon")
	}
	st, err := t.opts.Jobs.Kill(h.SessionID(), a.ID)
	if err != nil {
		return toolError(err.Error() + "; it may have finished and been read already")
	}
	return jobStatusResult(st), nil
}
