package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/spf13/pflag"
)

// demoPrompt is what the user types.
const demoPrompt = "Show me the demo"

const demoReadme = `# A scratch project

This directory was made by dshd-demo. The demo script reads this file,
writes and edits dshd-demo.txt, and runs a command here.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("dshd-demo", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	binary := fs.String("dshd", "bin/dshd", "the dshd binary to run")
	keep := fs.Bool("keep", false, "keep the scratch directory and print its path")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := demo(ctx, *binary, *keep, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "dshd-demo: %v\n", err)
		return 1
	}
	return 0
}

func demo(ctx context.Context, binary string, keep bool, stdout, stderr io.Writer) error {
	bin, err := filepath.Abs(binary)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("no dshd binary (build it with make build): %w", err)
	}
	scratch, err := os.MkdirTemp("", "dshd-demo-")
	if err != nil {
		return err
	}
	if keep {
		defer fmt.Fprintf(stdout, "\n(scratch directory kept: %s)\n", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	work := filepath.Join(scratch, "project")
	state := filepath.Join(scratch, "state")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "README.md"), []byte(demoReadme), 0o644); err != nil {
		return err
	}
	// Resolve symlinks (macOS /tmp) so the transcript can show paths
	// relative to the project.
	if w, err := filepath.EvalSymlinks(work); err == nil {
		work = w
	}

	// The daemon runs with an empty configuration: no user settings, no
	// provider, so it plays its embedded demo script.
	cmd := exec.CommandContext(ctx, bin, "--state-dir", state, "--log-level", "warn")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(scratch, "config"),
		"DSHD_PROVIDER=", "DSHD_MODEL=", "DSHD_SCRIPT=", "DSHD_CONFIG=", "DSHD_BASE_URL=")
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	toAgent, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	fromAgent, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting dshd: %w", err)
	}
	defer func() {
		_ = toAgent.Close() // stdin EOF: the daemon exits
		_ = cmd.Wait()
	}()

	tr := newTranscript(stdout, work)
	rec := acptest.NewRecorder()
	cl := &client{tr: tr}
	conn := acp.ConnectAgent(ctx, pipes{fromAgent, toAgent}, cl, acp.WithTap(rec.ClientTap))
	defer conn.Close()

	fmt.Fprintf(stdout, "dshd demo: %s in %s\n", bin, work)
	init, err := conn.Initialize(ctx, &acp.InitializeRequest{
		ProtocolVersion:    1,
		ClientInfo:         &acp.Implementation{Name: "dshd-demo", Version: "1"},
		ClientCapabilities: &acp.ClientCapabilities{},
	})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	agentName := init.AgentInfo
	if agentName != nil {
		tr.line("connected to %s %s (protocol v%d)", agentName.Name, agentName.Version, init.ProtocolVersion)
	}
	sess, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: work, MCPServers: []acp.MCPServer{}})
	if err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	mode := ""
	if sess.Modes != nil {
		mode = sess.Modes.CurrentModeID
	}
	tr.line("session %s (mode %s)\n\nuser: %s", sess.SessionID, mode, demoPrompt)
	resp, err := conn.Prompt(ctx, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.Text(demoPrompt)}})
	if err != nil {
		return fmt.Errorf("session/prompt: %w", err)
	}
	tr.line("\n■ turn ended: %s", resp.StopReason)
	if resp.StopReason != acp.StopEndTurn {
		return fmt.Errorf("the turn ended with %s, not end_turn", resp.StopReason)
	}
	if cl.asked == 0 {
		return errors.New("the demo asked no permission; expected one for the edit")
	}
	if v, err := acptest.LoadValidator(); err == nil {
		if err := rec.Validate(v); err != nil {
			return fmt.Errorf("a message does not match the ACP schema: %w", err)
		}
		tr.line("all %d protocol messages match the official ACP schema (%s)", len(rec.Entries()), v.Path())
	} else {
		tr.line("(%d protocol messages; schema check skipped: %v)", len(rec.Entries()), err)
	}
	return nil
}

// client is the editor side: it prints updates and allows every
// permission request once.
type client struct {
	acp.UnimplementedClient
	tr    *transcript
	asked int
}

func (c *client) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	c.tr.update(n.Update.Value)
	return nil
}

func (c *client) RequestPermission(_ context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	c.asked++
	for _, kind := range []acp.PermissionOptionKind{acp.PermissionAllowOnce, acp.PermissionAllowAlways} {
		for _, o := range req.Options {
			if o.Kind == kind {
				c.tr.permission(req, o)
				return &acp.RequestPermissionResponse{Outcome: acp.Selected(o.OptionID)}, nil
			}
		}
	}
	c.tr.line("? permission asked with no allow option: cancelled")
	return &acp.RequestPermissionResponse{Outcome: acp.Cancelled()}, nil
}

// pipes joins the daemon's stdout and stdin into one connection.
type pipes struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p pipes) Close() error {
	werr := p.w.Close()
	rerr := p.ReadCloser.Close()
	return errors.Join(werr, rerr)
}
