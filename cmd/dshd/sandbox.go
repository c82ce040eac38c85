package main

import (
	"path/filepath"
	"strings"

	"github.com/dsh-tools/dshd/bridge"
	"github.com/dsh-tools/dshd/config"
	"github.com/dsh-tools/dshd/sandbox"
)

// sandboxOptions are the bridge's sandbox settings from the files.
func sandboxOptions(s config.Settings, home string, protected []string) bridge.SandboxOptions {
	o := bridge.SandboxOptions{
		Mode:      sandbox.Mode(s.Sandbox.Mode),
		NoNetwork: s.Sandbox.Network != nil && !*s.Sandbox.Network,
		Required:  s.Sandbox.Required != nil && *s.Sandbox.Required,
		Protected: protected,
	}
	for _, r := range s.Sandbox.WritableRoots {
		o.WritableRoots = append(o.WritableRoots, expandHome(r, home))
	}
	return o
}

// expandHome turns a leading ~/ into the home directory.
func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}

// sandboxProtected are the paths that stay read-only inside writable
// roots besides each root's .git and .dshd and the state directory: the
// directory of every settings file (so a command can neither change a
// settings file nor create a missing one), or the file itself when it
// lives elsewhere than a dshd directory (a --config file).
func (d *daemon) sandboxProtected() []string {
	var out []string
	for _, p := range d.paths {
		dir := filepath.Dir(p)
		if b := filepath.Base(dir); b == "dshd" || b == ".dshd" {
			out = append(out, dir)
		} else {
			out = append(out, p)
		}
	}
	return out
}

// probeCacheName is the file in the state directory where the sandbox
// probe remembers that the namespaces work (sandbox.SetProbeCache).
const probeCacheName = "sandbox-probe"

// probe is the bridge's sandbox probe: [sandbox.Probe], which starts the
// launcher once (~15 ms) unless the state directory's probeCacheName
// says that it succeeded on this boot, and a warning when commands cannot
// be sandboxed as configured. The bridge probes when a client
// initializes, beside the answer, not at start-up: the first answer does
// not wait on a process start, nor does the first session/new (it is
// answered from sandbox.QuickProbe if it comes first).
func (d *daemon) probe() sandbox.Availability {
	a := sandbox.Probe()
	s, _ := d.effective(d.live.Current())
	if s.Sandbox.Mode == string(sandbox.ModeOff) {
		return a
	}
	required := s.Sandbox.Required != nil && *s.Sandbox.Required
	switch {
	case !a.Available() && required:
		d.log.Warn("the OS sandbox cannot run here and sandbox.required is set: commands will be refused", "reason", a.Reason)
	case !a.Available():
		d.log.Warn("the OS sandbox cannot run here: commands run under the text guards only (sandbox.required: true refuses them instead)", "reason", a.Reason)
	case !a.Namespaces:
		d.log.Warn("the OS sandbox runs without namespaces", "reason", a.Reason)
	}
	return a
}

// mcpSandbox is the launcher argv prefix for a session's stdio MCP
// servers when sandbox.mcpServers is set (nil: run them as they are).
func (d *daemon) mcpSandbox(info bridge.SessionInfo) ([]string, error) {
	if !d.mcpSandboxed.Load() {
		return nil, nil
	}
	p, ok, err := d.agent.SandboxPolicy(info.Roots)
	if err != nil || !ok {
		return nil, err
	}
	return sandbox.Prefix(p)
}
