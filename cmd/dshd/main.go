package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/bridge/grants"
	"github.com/dsh-tools/dshd/config"
	"github.com/dsh-tools/dshd/instructions"
	"github.com/dsh-tools/dshd/internal/credentials"
	"github.com/dsh-tools/dshd/model"
	"github.com/dsh-tools/dshd/model/llm"
	"github.com/dsh-tools/dshd/model/task"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/registry"
	"github.com/dsh-tools/dshd/sandbox"
	"github.com/dsh-tools/dshd/tools"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); the
// module version from the build info is used otherwise.
var version string

func main() {
	// `dshd __sandbox …` is the sandbox launcher, not the daemon.
	sandbox.RunIfLauncher()
	// The protocol owns the real stdout; anything else printed by mistake
	// goes to stderr instead of corrupting the stream.
	in, out, restore := editorStdio()
	stdout := os.Stdout // held: a File nothing refers to is closed by the GC
	os.Stdout = os.Stderr
	code := run(context.Background(), os.Args[1:], in, out, os.Stderr, os.Getenv)
	restore()
	runtime.KeepAlive(stdout)
	os.Exit(code)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run is the whole daemon: it returns when the editor closes the
// connection (stdin EOF), on SIGTERM or SIGINT, or when ctx ends.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		switch args[0] {
		case "auth":
			return runAuth(ctx, args[1:], stdin, stdout, stderr, getenv)
		case "logout":
			return runLogout(args[1:], stdout, stderr, getenv)
		}
	}
	f, done, err := parseFlags(args, stdout, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "dshd: %v\nRun dshd --help for usage.\n", err)
		return exitUsage
	}
	if done {
		return exitOK
	}
	if f.version {
		fmt.Fprintf(stdout, "dshd %s\n", versionString())
		return exitOK
	}
	level, _ := parseLevel(f.logLevel)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)

	if cpu, heap := getenv("DSHD_CPUPROFILE"), getenv("DSHD_MEMPROFILE"); cpu != "" || heap != "" {
		stop, err := startProfiles(cpu, heap)
		if err != nil {
			log.Error("dshd cannot write the profile", "err", err)
			return exitError
		}
		defer stop()
	}
	d, err := newDaemon(f, getenv, log)
	if err != nil {
		log.Error("dshd cannot start", "err", err)
		return exitError
	}
	return d.serve(ctx, stdin, stdout)
}

// daemon is everything one dshd process runs.
type daemon struct {
	flags    flags
	log      *slog.Logger
	home     string
	stateDir string
	paths    []string // settings files, in merge order
	live     *config.Live
	registry *registry.Registry
	jobs     *tools.Jobs
	loop     *model.Loop
	taskTool *registry.Definition
	agent    *bridge.Agent
	project  *instructions.Library
	// mcpSandboxed is sandbox.mcpServers: stdio MCP servers start sandboxed.
	mcpSandboxed atomic.Bool
	// credsPath is where `dshd auth` stores the provider; creds is what it
	// held at start-up, nil after an ACP logout or when there is none.
	credsPath string
	creds     atomic.Pointer[credentials.Credentials]
}

// protected are the paths no tool may write: the state directory, the
// settings files and the stored credentials.
func (d *daemon) protected() []string {
	p := append([]string{d.stateDir}, d.paths...)
	if d.credsPath != "" {
		p = append(p, d.credsPath)
	}
	return p
}

// effective is the settings in force: the files' under the flags, with
// the stored credentials filling in a provider nobody named, and the key
// to use ("" = the provider's variable).
func (d *daemon) effective(files config.Settings) (config.Settings, llm.Secret) {
	return withCredentials(overlay(files, d.flags), d.creds.Load())
}

func newDaemon(f flags, getenv func(string) string, log *slog.Logger) (*daemon, error) {
	d := &daemon{flags: f, log: log}
	d.home, _ = os.UserHomeDir()
	d.stateDir = f.stateDir
	if d.stateDir == "" {
		var err error
		if d.stateDir, err = defaultStateDir(getenv); err != nil {
			return nil, err
		}
	}
	if abs, err := filepath.Abs(d.stateDir); err == nil {
		d.stateDir = abs
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	var userGrants string
	if p := userSettingsPath(getenv); p != "" {
		d.paths = append(d.paths, p)
		userGrants = filepath.Join(filepath.Dir(p), grants.FileName)
	}
	d.paths = append(d.paths, filepath.Join(cwd, ".dshd", "settings.json"))
	if f.config != "" {
		abs, err := filepath.Abs(f.config)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		d.paths = append(d.paths, abs)
	}
	d.live, err = config.NewLive(d.paths, validateSettings, log)
	if err != nil {
		return nil, err
	}
	if d.credsPath, err = credentialsPath(getenv); err == nil {
		c, err := credentials.Load(d.credsPath)
		if err != nil {
			log.Warn("stored credentials not used", "err", err)
		}
		d.creds.Store(c)
	}
	s, key := d.effective(d.live.Current())
	lopts, err := loopOptions(s, key, log)
	if err != nil {
		return nil, err
	}

	d.mcpSandboxed.Store(s.Sandbox.MCPServers != nil && *s.Sandbox.MCPServers)
	d.registry = registry.New()
	d.jobs = tools.NewJobs(0)
	if err := d.registry.SetGlobal(tools.Builtin(toolOptions(s, d.jobs))...); err != nil {
		return nil, err
	}
	d.registry.SetRestrictions(restriction(s))
	lopts.Registry = d.registry
	d.loop = model.New(lopts)
	d.project = instructions.NewLibrary(instructions.Options{
		UserDir: userConfigDir(getenv),
		Budget:  s.Instructions.BudgetBytes,
		Logger:  log,
	})
	// The probe's finding that the namespaces work outlives the process
	// (sandbox.SetProbeCache): the next start need not start the launcher.
	sandbox.SetProbeCache(filepath.Join(d.stateDir, probeCacheName))
	sandboxOpts := sandboxOptions(s, d.home, d.sandboxProtected())
	sandboxOpts.Probe, sandboxOpts.QuickProbe = d.probe, sandbox.QuickProbe
	d.agent = bridge.New(bridge.Options{
		Loop:        d.loop,
		Registry:    d.registry,
		StateDir:    d.stateDir,
		AgentInfo:   acp.Implementation{Name: "dshd", Title: acp.Ptr("dshd"), Version: versionString()},
		Prompt:      d.loop.PromptCapabilities(),
		MCPHTTP:     true,
		MCP:         &mcpConnector{version: versionString(), sandbox: d.mcpSandbox},
		Sandbox:     sandboxOpts,
		Rules:       ruleSet(s, d.home),
		DefaultMode: policy.Mode(s.Permissions.DefaultMode),
		// Always allow / Always reject answers outlive the session: in
		// the project's .dshd/settings.local.json by default.
		Grants:    grants.New(userGrants),
		Remember:  policy.Scope(s.Permissions.Remember),
		Protected: d.protected(),
		Auth:      d.auth(),
		// AGENTS.md, skills and custom commands of each session's project.
		Instructions: d.project,
		Logger:       log,
		// The built-in loop honours _meta.dshd.outputSchema.
		StructuredTurns: true,
		// Diagnostics for the fault suite and for operators.
		Extensions: map[string]bridge.Extension{statsMethod: readStats},
		// A closed session's background commands end with it, and the
		// loop forgets its per-session model choice.
		OnSessionClose: func(info bridge.SessionInfo) {
			d.jobs.CloseSession(info.ID)
			d.loop.ForgetSession(info.ID)
		},
		// The task tool (subagents) exists per session: its subagents run
		// in child scopes of the session's scope. Scope-local tools escape
		// the global restrictions, so the settings' tool lists are applied
		// here, when the session starts and whenever apply refreshes the
		// running sessions' tools.
		SessionTools: func(bridge.SessionInfo) []*registry.Definition {
			if !restriction(overlay(d.live.Current(), d.flags)).Admits(task.Name) {
				return nil
			}
			return []*registry.Definition{d.taskTool}
		},
	})
	d.taskTool = task.New(task.Options{Loop: d.loop, Registry: d.registry, Pipeline: d.agent.Pipeline()})
	d.live.OnChange(d.apply)
	log.Info("dshd ready", "version", versionString(), "provider", providerName(s), "model", lopts.Model, "stateDir", d.stateDir, "settings", d.paths)
	return d, nil
}

// apply puts a valid settings change into force for the next tool call
// and the next model request of every session.
func (d *daemon) apply(files config.Settings) {
	s, key := d.effective(files)
	d.agent.SetRules(ruleSet(s, d.home))
	mode := policy.Mode(s.Permissions.DefaultMode)
	if mode == "" {
		mode = policy.ModeDefault
	}
	if err := d.agent.SetDefaultMode(mode); err != nil {
		d.log.Error("default mode not applied", "err", err)
	}
	if err := d.agent.SetRememberScope(policy.Scope(s.Permissions.Remember)); err != nil {
		d.log.Error("permissions.remember not applied", "err", err)
	}
	if err := d.registry.SetGlobal(tools.Builtin(toolOptions(s, d.jobs))...); err != nil {
		d.log.Error("tool settings not applied", "err", err)
	}
	d.registry.SetRestrictions(restriction(s))
	d.project.SetBudget(s.Instructions.BudgetBytes)
	if err := d.agent.SetSandbox(sandboxOptions(s, d.home, d.sandboxProtected())); err != nil {
		d.log.Error("sandbox settings not applied", "err", err)
	}
	d.mcpSandboxed.Store(s.Sandbox.MCPServers != nil && *s.Sandbox.MCPServers)
	// The restrictions do not reach session tools (task, skill): recompute
	// them.
	d.agent.RefreshSessionTools()
	lopts, err := loopOptions(s, key, d.log)
	if err != nil {
		d.log.Error("model settings not applied; keeping the previous model", "err", err)
		return
	}
	d.loop.Update(lopts)
}

// serve runs the connection on stdin/stdout until EOF or a signal, then
// shuts down: turns are cancelled, background commands' process groups
// killed, and the settings watcher stopped.
func (d *daemon) serve(ctx context.Context, stdin io.Reader, stdout io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if err := d.live.Watch(watchCtx); err != nil {
			d.log.Warn("settings are not watched; changes need a restart", "err", err)
		}
	}()
	err := d.agent.Serve(ctx, stdio{r: stdin, w: stdout})
	stopWatch()
	<-watched
	if err := d.jobs.Close(); err != nil {
		d.log.Warn("stopping background commands", "err", err)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		d.log.Error("connection ended", "err", err)
		return exitError
	}
	d.log.Info("dshd stopped")
	return exitOK
}

// stdio is the editor connection over the process's stdin and stdout.
type stdio struct {
	r io.Reader
	w io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.w.Write(p) }

// Close closes stdout so the editor sees the end; a read blocked on stdin
// is not reliably interrupted by closing it, which is why the daemon
// exits rather than waiting for it.
func (s stdio) Close() error {
	if c, ok := s.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func providerName(s config.Settings) string {
	if s.Model.Provider == "" {
		return "script (embedded demo)"
	}
	return s.Model.Provider
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
