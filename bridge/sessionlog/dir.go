package sessionlog

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultDir returns the default state directory of session logs:
// $XDG_STATE_HOME/dshd/sessions, or ~/.local/state/dshd/sessions when
// XDG_STATE_HOME is unset or not absolute (as the XDG spec requires).
func DefaultDir() (string, error) {
	if state := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(state) {
		return filepath.Join(state, "dshd", "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("sessionlog: no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "dshd", "sessions"), nil
}
