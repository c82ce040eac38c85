package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
)

// LauncherCommand is the hidden first argument that makes the dshd binary
// the sandbox launcher: `dshd __sandbox --policy <json> -- command args…`.
const LauncherCommand = "__sandbox"

// Exit status of the launcher when it cannot set the sandbox up (the
// command never ran), after the convention of env(1) and container tools.
const exitSetup = 125

var launcher struct {
	mu   sync.Mutex
	path string
}

// init runs the launcher before the rest of the program is initialised: Go
// initialises packages in import-path order once their imports are, so
// this package's init comes before those of the heavy dependencies a
// daemon links (a JSON Schema validator compiling its meta-schemas, the MCP
// SDK's), which would otherwise add tens of milliseconds to every command.
func init() {
	if len(os.Args) > 1 && os.Args[1] == LauncherCommand {
		if exe, err := os.Executable(); err == nil {
			SetLauncher(exe)
		}
		os.Exit(Main(os.Args[2:]))
	}
}

// RunIfLauncher makes this process the launcher when it was started as
// one (os.Args[1] is [LauncherCommand]): it applies the sandbox and execs
// the command, never returning (the package's init already does that for
// any program that links it). Otherwise it records this executable as the
// launcher for [Start] and [Wrap] and returns. Call it first thing in
// main, and in TestMain of tests that start sandboxed commands.
func RunIfLauncher() {
	if exe, err := os.Executable(); err == nil {
		SetLauncher(exe)
	}
	if len(os.Args) > 1 && os.Args[1] == LauncherCommand {
		os.Exit(Main(os.Args[2:]))
	}
}

// SetLauncher names the executable that serves as the launcher: a binary
// whose main calls [RunIfLauncher] (such as dshd). An embedder whose own
// binary does not may point it at an installed dshd.
func SetLauncher(path string) {
	launcher.mu.Lock()
	defer launcher.mu.Unlock()
	launcher.path = path
}

// errNoLauncher reports a program that never installed the launcher.
var errNoLauncher = errors.New("no sandbox launcher: the program did not call sandbox.RunIfLauncher or sandbox.SetLauncher")

func launcherPath() (string, error) {
	launcher.mu.Lock()
	defer launcher.mu.Unlock()
	if launcher.path == "" {
		return "", errNoLauncher
	}
	return launcher.path, nil
}

// Wrap returns the argv that runs argv under p through the launcher, for a
// process someone else starts (an editor terminal). The launcher enters
// namespaces itself where the kernel allows them.
func Wrap(p Policy, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	prefix, err := Prefix(p)
	if err != nil {
		return nil, err
	}
	return append(prefix, argv...), nil
}

// Prefix is what [Wrap] puts before the command: the launcher, its
// arguments and "--".
func Prefix(p Policy) ([]string, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	path, err := launcherPath()
	if err != nil {
		return nil, err
	}
	return []string{path, LauncherCommand, "--policy", p.Encode(), "--"}, nil
}

// Stages of the launcher (its --stage flag).
const (
	// stageOuter enters namespaces by starting the inner stage in them,
	// or applies Landlock alone where it cannot (the default: what Wrap
	// produces).
	stageOuter = "outer"
	// stageInner runs in fresh namespaces its parent created: it sets the
	// mounts and loopback up, then applies Landlock.
	stageInner = "inner"
	// stageDirect applies Landlock alone.
	stageDirect = "direct"
	// stageFinal applies Landlock and execs the command, its namespaces
	// (if any) already set up: the read-only mode's command, whose
	// launcher waits to remove the private temp directory.
	stageFinal = "final"
	// stageServe is a sandbox server in fresh namespaces its parent
	// created: it sets them up, applies Landlock to the thread it forks
	// commands from, and starts the commands the daemon sends it on
	// descriptor 3 (see [Start]).
	stageServe = "serve"
	// stageServeDirect is a sandbox server without namespaces.
	stageServeDirect = "serve-direct"
)

func knownStage(s string) bool {
	switch s {
	case stageOuter, stageInner, stageDirect, stageFinal, stageServe, stageServeDirect:
		return true
	}
	return false
}

// Main is the launcher: args are what follows [LauncherCommand]. It
// returns an exit status only when it cannot run the command; otherwise
// the command replaces it (or, in read-only mode, it waits for the command
// and exits as the command did).
func Main(args []string) int {
	stage, pol, probe, inNetns, argv, err := parseLauncherArgs(args)
	if err == nil && !probe && len(argv) == 0 && stage != stageServe && stage != stageServeDirect {
		err = errors.New("no command after --")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dshd sandbox: %v\n", err)
		return exitSetup
	}
	return launch(stage, pol, probe, inNetns, argv)
}

func parseLauncherArgs(args []string) (stage string, p Policy, probe, inNetns bool, argv []string, err error) {
	stage = stageOuter
	havePolicy := false
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		switch a {
		case "--":
			argv = args
			args = nil
		case "--probe":
			probe = true
		case "--in-netns":
			inNetns = true
		case "--stage", "--policy":
			if len(args) == 0 {
				return "", Policy{}, false, false, nil, fmt.Errorf("%s needs a value", a)
			}
			v := args[0]
			args = args[1:]
			if a == "--stage" {
				if !knownStage(v) {
					return "", Policy{}, false, false, nil, fmt.Errorf("unknown stage %q", v)
				}
				stage = v
				continue
			}
			if p, err = DecodePolicy(v); err != nil {
				return "", Policy{}, false, false, nil, err
			}
			havePolicy = true
		default:
			return "", Policy{}, false, false, nil, fmt.Errorf("unknown argument %q (usage: %s --policy <json> -- command args…)", a, LauncherCommand)
		}
	}
	if !havePolicy {
		return "", Policy{}, false, false, nil, errors.New("missing --policy")
	}
	return stage, p, probe, inNetns, argv, nil
}

// Availability is what the sandbox can do on this machine.
type Availability struct {
	// LandlockABI is the kernel's Landlock ABI version; 0 means none,
	// and then there is no sandbox.
	LandlockABI int
	// Namespaces reports that the launcher can enter user, mount and
	// network namespaces: protected paths inside writable roots are
	// bind-mounted read-only and network:false gets its own namespace.
	Namespaces bool
	// Reason says what is missing, when something is.
	Reason string
}

// Available reports whether commands can be sandboxed at all.
func (a Availability) Available() bool { return a.LandlockABI > 0 }

var probed struct {
	mu    sync.Mutex
	done  bool
	path  string
	a     Availability
	cache string // SetProbeCache's file; "" remembers nothing
}

// QuickProbe is what [Probe] finds out without starting the launcher, in
// microseconds: whether commands can be sandboxed at all (Landlock, and a
// launcher to start). When it says they cannot, that is Probe's answer
// too; when they can, only Probe tells whether the namespaces work
// (Namespaces is false here, unknown).
func QuickProbe() Availability {
	_, err := launcherPath()
	return quickProbe(err)
}

// Probe finds out, once per launcher path, what the sandbox can do here.
// The namespace check starts the launcher once (some 15 ms of a core, and
// the kernel's work of making and tearing down the namespaces), unless
// the file of [SetProbeCache] says it succeeded on this boot already.
func Probe() Availability {
	path, err := launcherPath()
	probed.mu.Lock()
	defer probed.mu.Unlock()
	if probed.done && probed.path == path {
		return probed.a
	}
	probed.a = probeRemembered(path, err, probed.cache, probe)
	probed.done, probed.path = true, path
	return probed.a
}

// SetProbeCache names the file in which [Probe] remembers that the
// namespaces work, so that the next process on this machine need not start
// the launcher to find out again (dshd keeps it in its state directory).
// Call it before the first Probe.
//
// The file lists what the answer depends on: the boot, the kernel, the
// user and its user namespace, the launcher binary and the sysctls that
// allow or limit unprivileged user namespaces. A file that does not match
// them exactly is ignored and rewritten. Only success is
// remembered: an answer that the namespaces do not work is found out
// afresh by each process (it may have been passing, such as a namespace
// limit reached), and a file cannot make a process believe it, so it
// cannot weaken the sandbox. Were it wrong the other way, commands would
// fail to start, saying why; none would run with less confinement.
func SetProbeCache(file string) {
	probed.mu.Lock()
	defer probed.mu.Unlock()
	probed.cache = file
}

// probeRemembered is probe, answered from the cache file when it says the
// namespaces worked under the same conditions.
func probeRemembered(path string, launcherErr error, cache string, probe func(string, error) Availability) Availability {
	if launcherErr != nil || cache == "" {
		return probe(path, launcherErr)
	}
	key, ok := probeKey(path)
	if !ok {
		return probe(path, launcherErr)
	}
	remembered := []byte("namespaces work\n" + key)
	if b, err := os.ReadFile(cache); err == nil && bytes.Equal(b, remembered) {
		if a := quickProbe(nil); a.Available() {
			a.Namespaces = true
			return a
		}
	}
	a := probe(path, launcherErr)
	if a.Namespaces {
		// Best effort: a cache that cannot be written costs the next
		// process a probe, nothing else. Nor does it need an atomic
		// replace (whose temporary names would bring crypto/rand into
		// the launcher's start): a torn file does not match, and two
		// processes write the same bytes.
		_ = os.WriteFile(cache, remembered, 0o600)
	}
	return a
}
