package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
)

// flags are the command line, after environment fallbacks.
type flags struct {
	provider  string
	model     string
	baseURL   string
	apiKeyEnv string
	script    string
	config    string
	stateDir  string
	logLevel  string
	version   bool
	help      bool
}

// envFallbacks maps a flag to the environment variable used when the flag
// is not given.
var envFallbacks = []struct{ flag, env string }{
	{"provider", "DSHD_PROVIDER"},
	{"model", "DSHD_MODEL"},
	{"base-url", "DSHD_BASE_URL"},
	{"api-key-env", "DSHD_API_KEY_ENV"},
	{"script", "DSHD_SCRIPT"},
	{"config", "DSHD_CONFIG"},
	{"state-dir", "DSHD_STATE_DIR"},
	{"log-level", "DSHD_LOG_LEVEL"},
}

const usageHead = `dshd is an Agent Client Protocol (ACP) agent: an editor starts it and speaks
ACP over its stdin and stdout. Without a configured provider it plays a built-in
demo script (no network, no API key).

Usage:
  dshd [flags]     serve ACP on stdin and stdout (what editors run)
  dshd auth        set up a model provider and its API key, interactively
  dshd logout      remove what dshd auth stored

Flags:
`

const usageTail = `
Environment (used when the matching flag is not given):
  DSHD_PROVIDER, DSHD_MODEL, DSHD_BASE_URL, DSHD_API_KEY_ENV, DSHD_SCRIPT,
  DSHD_CONFIG, DSHD_STATE_DIR, DSHD_LOG_LEVEL
  OPENAI_API_KEY, ANTHROPIC_API_KEY   default API key variables of the providers
  XDG_CONFIG_HOME, XDG_STATE_HOME      locate the user settings and the state directory
  DSHD_BASH                            Git for Windows' bash.exe, when it is not found by itself

Settings files, later ones win (watched: changes apply without a restart):
  $XDG_CONFIG_HOME/dshd/settings.json (default ~/.config/dshd/settings.json)
  ./.dshd/settings.json (in the directory dshd starts in)
  the file given with --config
Flags and their environment variables override the model settings of the files.
The provider stored by dshd auth ($XDG_CONFIG_HOME/dshd/credentials.json) is used
only when neither names a provider.
`

// parseFlags parses args. A non-nil error is a usage error; done means the
// command has answered (--help, --version) and should exit with 0.
func parseFlags(args []string, out io.Writer, getenv func(string) string) (f flags, done bool, err error) {
	fs := pflag.NewFlagSet("dshd", pflag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.provider, "provider", "", "model provider: script, openai or anthropic (default: the embedded demo script)")
	fs.StringVar(&f.model, "model", "", "model name sent to the provider (required for openai and anthropic)")
	fs.StringVar(&f.baseURL, "base-url", "", "provider endpoint, e.g. http://localhost:11434/v1 for Ollama (default: the provider's public API)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY)")
	fs.StringVar(&f.script, "script", "", "script file of the script provider (default: the embedded demo script)")
	fs.StringVar(&f.config, "config", "", "an extra settings file, applied after the user and project files")
	fs.StringVar(&f.stateDir, "state-dir", "", "directory of the durable session logs (default $XDG_STATE_HOME/dshd or ~/.local/state/dshd)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "stderr log level: debug, info, warn or error (warn: nothing on a healthy start)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.BoolVarP(&f.help, "help", "h", false, "print this help and exit")
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprint(out, usageHead)
		// pflag marks boolean flags "[=true|false]"; blank it out (same
		// width, so the columns stay aligned): --version and --help take no
		// value.
		fmt.Fprint(out, strings.ReplaceAll(fs.FlagUsages(), "[=true|false]", strings.Repeat(" ", len("[=true|false]"))))
		fmt.Fprint(out, usageTail)
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return f, true, nil
		}
		return f, false, err
	}
	if fs.NArg() > 0 {
		return f, false, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if f.help {
		fs.Usage()
		return f, true, nil
	}
	for _, fb := range envFallbacks {
		if fs.Changed(fb.flag) {
			continue
		}
		if v := strings.TrimSpace(getenv(fb.env)); v != "" {
			if err := fs.Set(fb.flag, v); err != nil {
				return f, false, fmt.Errorf("%s: %w", fb.env, err)
			}
		}
	}
	switch f.provider {
	case "", "script", "openai", "anthropic":
	default:
		return f, false, fmt.Errorf("--provider %q: want script, openai or anthropic", f.provider)
	}
	if _, err := parseLevel(f.logLevel); err != nil {
		return f, false, err
	}
	return f, false, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// defaultStateDir is $XDG_STATE_HOME/dshd, or ~/.local/state/dshd when
// XDG_STATE_HOME is unset or relative (as the XDG spec requires).
func defaultStateDir(getenv func(string) string) (string, error) {
	if s := getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return filepath.Join(s, "dshd"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory (set --state-dir): %w", err)
	}
	return filepath.Join(home, ".local", "state", "dshd"), nil
}

// userSettingsPath is $XDG_CONFIG_HOME/dshd/settings.json, or
// ~/.config/dshd/settings.json.
func userSettingsPath(getenv func(string) string) string {
	dir := userConfigDir(getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "settings.json")
}

// userConfigDir is $XDG_CONFIG_HOME/dshd, or ~/.config/dshd when
// XDG_CONFIG_HOME is unset or relative: the user's settings, AGENTS.md,
// skills/ and commands/.
func userConfigDir(getenv func(string) string) string {
	if c := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(c) {
		return filepath.Join(c, "dshd")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "dshd")
}
