package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how much a sandboxed command may write.
type Mode string

const (
	// ModeWorkspaceWrite lets a command read everywhere and write only
	// inside its writable roots and the system temp directory; protected
	// paths stay read-only.
	ModeWorkspaceWrite Mode = "workspace-write"
	// ModeReadOnly lets a command write nothing but /dev/null-like
	// devices and a private temp directory.
	ModeReadOnly Mode = "read-only"
	// ModeOff runs commands without the sandbox.
	ModeOff Mode = "off"
)

// Modes lists the modes in the order an editor shows them.
var Modes = []Mode{ModeWorkspaceWrite, ModeReadOnly, ModeOff}

// ParseMode checks a mode name; "" is the default, workspace-write.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeWorkspaceWrite, nil
	}
	m := Mode(s)
	if !slices.Contains(Modes, m) {
		return "", fmt.Errorf("unknown sandbox mode %q (want workspace-write, read-only or off)", s)
	}
	return m, nil
}

// Policy is what one command may do. It travels to the launcher as JSON.
type Policy struct {
	Mode Mode `json:"mode"`
	// Network allows network access. false gives the command a network
	// namespace with only loopback, or, without namespaces, denies TCP
	// bind and connect through Landlock.
	Network bool `json:"network"`
	// WritableRoots are the absolute directories a workspace-write
	// command may write beneath (the session roots and the settings'
	// sandbox.writableRoots; the system temp directory is added by the
	// launcher).
	WritableRoots []string `json:"writableRoots,omitempty"`
	// Protected are absolute paths that stay read-only even inside a
	// writable root (.git, .dshd, dshd's settings and state directories).
	Protected []string `json:"protected,omitempty"`
	// PrivateTemp is the read-only mode's temp directory; the launcher
	// sets it for its last stage.
	PrivateTemp string `json:"privateTemp,omitempty"`
}

// Validate reports a policy the launcher cannot apply.
func (p Policy) Validate() error {
	if _, err := ParseMode(string(p.Mode)); err != nil || p.Mode == "" {
		return fmt.Errorf("sandbox policy: bad mode %q", p.Mode)
	}
	if p.PrivateTemp != "" && !filepath.IsAbs(p.PrivateTemp) {
		return fmt.Errorf("sandbox policy: %q is not an absolute path", p.PrivateTemp)
	}
	for _, list := range [][]string{p.WritableRoots, p.Protected} {
		for _, d := range list {
			if !filepath.IsAbs(d) {
				return fmt.Errorf("sandbox policy: %q is not an absolute path", d)
			}
		}
	}
	return nil
}

// Encode is the policy as the launcher's --policy argument.
func (p Policy) Encode() string {
	b, _ := json.Marshal(p) // a struct of strings and bools always marshals
	return string(b)
}

// DecodePolicy parses and validates a --policy argument.
func DecodePolicy(s string) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("sandbox policy: %w", err)
	}
	if dec.More() {
		return Policy{}, errors.New("sandbox policy: unexpected data after the object")
	}
	return p, p.Validate()
}

// Describe is the one-line summary permission requests show, such as
// "runs sandboxed: writes limited to /work/repo, the temp directory; no network".
func (p Policy) Describe() string {
	var sb strings.Builder
	switch p.Mode {
	case ModeOff:
		return "runs without the OS sandbox (sandbox mode off)"
	case ModeReadOnly:
		sb.WriteString("runs sandboxed: read-only (writes only to a private temp directory)")
	default:
		sb.WriteString("runs sandboxed: writes limited to ")
		sb.WriteString(strings.Join(append(slices.Clone(p.WritableRoots), "the temp directory"), ", "))
	}
	if !p.Network {
		sb.WriteString("; no network")
	}
	return sb.String()
}

// Meta is the policy as the `_meta.dshd.sandbox` object of a command's card
// and permission request.
func (p Policy) Meta() map[string]any {
	roots := p.WritableRoots
	if p.Mode != ModeWorkspaceWrite || roots == nil {
		roots = []string{}
	}
	return map[string]any{"mode": string(p.Mode), "network": p.Network, "writableRoots": roots}
}

// TempDirs are the temporary directories a workspace-write command may
// write besides its roots: $TMPDIR (os.TempDir) and the usual system ones.
func TempDirs() []string {
	return []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"}
}
