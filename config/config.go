package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Settings is the merged configuration of the daemon.
type Settings struct {
	Model           Model       `json:"model"`
	Tools           Tools       `json:"tools"`
	Permissions     Permissions `json:"permissions"`
	Bash            Bash        `json:"bash"`
	Sandbox         Sandbox     `json:"sandbox"`
	MaxTurnRequests int         `json:"maxTurnRequests,omitempty"`
	// Instructions configures the project instruction files (AGENTS.md).
	Instructions Instructions `json:"instructions"`
}

// Instructions configures how much of the instruction files (AGENTS.md,
// CLAUDE.md) the system prompt holds.
type Instructions struct {
	// BudgetBytes caps the instruction files of the system prompt, all
	// files together (0: 32 KiB); a cut file says so in the text.
	BudgetBytes int `json:"budgetBytes,omitempty"`
}

// Model selects and configures the model provider.
type Model struct {
	// Provider is script, openai or anthropic.
	Provider string `json:"provider,omitempty"`
	// Name is the provider's model name.
	Name string `json:"name,omitempty"`
	// BaseURL overrides the provider's endpoint (Ollama, llama.cpp, …).
	BaseURL string `json:"baseUrl,omitempty"`
	// APIKeyEnv names the environment variable holding the API key.
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// Script is the scripted provider's script file.
	Script string `json:"script,omitempty"`
	// MaxTokens caps one model response.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Models lists the model names offered in the editor's model selector.
	Models []string `json:"models,omitempty"`
	// ContextWindow is the model's context window in tokens; 0 finds it
	// out (the model's server, then the built-in catalog).
	ContextWindow int `json:"contextWindow,omitempty"`
	// Pricing is the model's price in US dollars per million tokens,
	// overriding the built-in catalog's.
	Pricing *Pricing `json:"pricing,omitempty"`
	// AutoCompact, when false, turns automatic compaction off (default
	// on).
	AutoCompact *bool `json:"autoCompact,omitempty"`
}

// Pricing is a model's price per million tokens, in US dollars.
type Pricing struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead,omitempty"`
	CacheWrite float64 `json:"cacheWrite,omitempty"`
}

// Tools restricts the deployment-global tool layer by name.
type Tools struct {
	// Allow, when non-empty, is an allow-list: only these tools (and
	// session-scoped ones such as MCP tools) are visible.
	Allow []string `json:"allow,omitempty"`
	// Deny hides these tools.
	Deny []string `json:"deny,omitempty"`
}

// Permissions holds the default mode and the permission rules, written
// `tool` or `tool(pattern)`. Deny beats ask beats allow.
type Permissions struct {
	DefaultMode string `json:"defaultMode,omitempty"`
	// Remember is where an "Always allow" or "Always reject" answer is
	// kept: "session", "project" (the default: the project's git-ignored
	// .dshd/settings.local.json) or "user" (settings.local.json in the
	// user's dshd configuration directory).
	Remember string   `json:"remember,omitempty"`
	Allow    []string `json:"allow,omitempty"`
	Ask      []string `json:"ask,omitempty"`
	Deny     []string `json:"deny,omitempty"`
}

// Bash configures the shell tool.
type Bash struct {
	DefaultTimeoutMs int `json:"defaultTimeoutMs,omitempty"`
	MaxTimeoutMs     int `json:"maxTimeoutMs,omitempty"`
	OutputLimitBytes int `json:"outputLimitBytes,omitempty"`
	// MaxBackgroundJobs caps the background commands one session runs at
	// once (default 32).
	MaxBackgroundJobs int `json:"maxBackgroundJobs,omitempty"`
}

// Sandbox configures the OS sandbox commands run in (package sandbox).
// Pointers tell an unset value from false in a file merged over another.
type Sandbox struct {
	// Mode is workspace-write (the default), read-only or off.
	Mode string `json:"mode,omitempty"`
	// Network allows commands network access (default true).
	Network *bool `json:"network,omitempty"`
	// WritableRoots are more directories sandboxed commands may write.
	WritableRoots []string `json:"writableRoots,omitempty"`
	// Required refuses to start a command the sandbox cannot run.
	Required *bool `json:"required,omitempty"`
	// MCPServers runs stdio MCP servers sandboxed too (default false).
	MCPServers *bool `json:"mcpServers,omitempty"`
}

// FileError reports a settings file that cannot be used, with the position
// of the problem when one is known.
type FileError struct {
	Path   string
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when unknown
	Err    error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %v", e.Path, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Validator checks the semantic content of merged settings (rule syntax,
// mode names). The daemon supplies one that knows the policy package.
type Validator func(*Settings) error

// ParseFile reads one settings file. A missing file is not an error: it
// yields empty settings and ok=false.
func ParseFile(path string) (s Settings, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, false, nil
	}
	if err != nil {
		return Settings{}, false, &FileError{Path: path, Err: err}
	}
	s, err = Parse(path, data)
	return s, err == nil, err
}

// Parse decodes the JSON of one settings file. Unknown keys are errors: a
// misspelt "permisions" must not silently drop every rule.
func Parse(path string, data []byte) (Settings, error) {
	var s Settings
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil // an empty file is an empty configuration
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, positioned(path, data, dec, err)
	}
	rest := data[dec.InputOffset():]
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
		off := int64(len(data)-len(trimmed)) + 1
		line, col := lineColumn(data, off)
		return Settings{}, &FileError{Path: path, Line: line, Column: col, Err: errors.New("unexpected data after the settings object")}
	}
	return s, nil
}

func positioned(path string, data []byte, dec *json.Decoder, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	off := dec.InputOffset()
	switch {
	case errors.As(err, &syntax):
		off = syntax.Offset
	case errors.As(err, &typ):
		off = typ.Offset
		err = fmt.Errorf("%s: expected %s, found JSON %s", fieldPath(typ), typ.Type, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		// The decoder stops right after the unknown key; point at the key.
		if i := bytes.LastIndex(data[:min(int(off), len(data))], []byte(name)); i >= 0 {
			off = int64(i) + 1
		}
		err = fmt.Errorf("unknown setting %s", name)
	case errors.Is(err, errUnexpectedEOF(err)):
		off = int64(len(data))
	}
	line, col := lineColumn(data, off)
	return &FileError{Path: path, Line: line, Column: col, Err: err}
}

func errUnexpectedEOF(err error) error {
	if err != nil && strings.Contains(err.Error(), "unexpected EOF") {
		return err
	}
	return nil
}

func fieldPath(e *json.UnmarshalTypeError) string {
	if e.Field == "" {
		return "setting"
	}
	return fmt.Sprintf("%q", e.Field)
}

// lineColumn converts a byte offset (1-based as encoding/json reports it,
// or the count of bytes consumed) into a 1-based line and column.
func lineColumn(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 1 {
		off = 1
	}
	prefix := data[:off-1]
	line = bytes.Count(prefix, []byte{'\n'}) + 1
	col = int(off-1) - bytes.LastIndexByte(prefix, '\n')
	return line, col
}

// Merge lays over on top of base: scalar fields of over win when set, lists
// accumulate.
func Merge(base, over Settings) Settings {
	out := base
	m := &out.Model
	if over.Model.Provider != "" {
		m.Provider = over.Model.Provider
	}
	if over.Model.Name != "" {
		m.Name = over.Model.Name
	}
	if over.Model.BaseURL != "" {
		m.BaseURL = over.Model.BaseURL
	}
	if over.Model.APIKeyEnv != "" {
		m.APIKeyEnv = over.Model.APIKeyEnv
	}
	if over.Model.Script != "" {
		m.Script = over.Model.Script
	}
	if over.Model.MaxTokens != 0 {
		m.MaxTokens = over.Model.MaxTokens
	}
	if len(over.Model.Models) > 0 {
		m.Models = over.Model.Models
	}
	if over.Model.ContextWindow != 0 {
		m.ContextWindow = over.Model.ContextWindow
	}
	if over.Model.Pricing != nil {
		p := *over.Model.Pricing
		m.Pricing = &p
	}
	if over.Model.AutoCompact != nil {
		v := *over.Model.AutoCompact
		m.AutoCompact = &v
	}
	out.Tools.Allow = appendNew(base.Tools.Allow, over.Tools.Allow)
	out.Tools.Deny = appendNew(base.Tools.Deny, over.Tools.Deny)
	if over.Permissions.DefaultMode != "" {
		out.Permissions.DefaultMode = over.Permissions.DefaultMode
	}
	if over.Permissions.Remember != "" {
		out.Permissions.Remember = over.Permissions.Remember
	}
	out.Permissions.Allow = appendNew(base.Permissions.Allow, over.Permissions.Allow)
	out.Permissions.Ask = appendNew(base.Permissions.Ask, over.Permissions.Ask)
	out.Permissions.Deny = appendNew(base.Permissions.Deny, over.Permissions.Deny)
	if over.Bash.DefaultTimeoutMs != 0 {
		out.Bash.DefaultTimeoutMs = over.Bash.DefaultTimeoutMs
	}
	if over.Bash.MaxTimeoutMs != 0 {
		out.Bash.MaxTimeoutMs = over.Bash.MaxTimeoutMs
	}
	if over.Bash.OutputLimitBytes != 0 {
		out.Bash.OutputLimitBytes = over.Bash.OutputLimitBytes
	}
	if over.Bash.MaxBackgroundJobs != 0 {
		out.Bash.MaxBackgroundJobs = over.Bash.MaxBackgroundJobs
	}
	if over.Sandbox.Mode != "" {
		out.Sandbox.Mode = over.Sandbox.Mode
	}
	if over.Sandbox.Network != nil {
		out.Sandbox.Network = over.Sandbox.Network
	}
	out.Sandbox.WritableRoots = appendNew(base.Sandbox.WritableRoots, over.Sandbox.WritableRoots)
	if over.Sandbox.Required != nil {
		out.Sandbox.Required = over.Sandbox.Required
	}
	if over.Sandbox.MCPServers != nil {
		out.Sandbox.MCPServers = over.Sandbox.MCPServers
	}
	if over.MaxTurnRequests != 0 {
		out.MaxTurnRequests = over.MaxTurnRequests
	}
	if over.Instructions.BudgetBytes != 0 {
		out.Instructions.BudgetBytes = over.Instructions.BudgetBytes
	}
	return out
}

// appendNew returns a fresh slice of a followed by the items of b not in a,
// so merged settings never alias a file's slices.
func appendNew(a, b []string) []string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := append([]string(nil), a...)
	for _, s := range b {
		found := false
		for _, t := range out {
			if t == s {
				found = true
				break
			}
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}

// ValueError is what a Validator returns for one bad value (a rule, a mode
// name), so that Load can point at the value's line and column.
type ValueError struct {
	Value string
	Err   error
}

func (e *ValueError) Error() string { return fmt.Sprintf("%q: %v", e.Value, e.Err) }
func (e *ValueError) Unwrap() error { return e.Err }

// Load parses every existing file of paths, in order, validates each and
// merges them. The first bad file stops it with a *FileError.
func Load(paths []string, validate Validator) (Settings, error) {
	var merged Settings
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Settings{}, &FileError{Path: p, Err: err}
		}
		s, err := Parse(p, data)
		if err != nil {
			return Settings{}, err
		}
		if validate != nil {
			if err := validate(&s); err != nil {
				return Settings{}, locate(p, data, err)
			}
		}
		if IsProjectFile(p) {
			s = onlyTightens(merged, s)
		}
		merged = Merge(merged, s)
	}
	return merged, nil
}

// IsProjectFile reports whether path is a project's settings file
// (<dir>/.dshd/settings.json): a file that comes with a repository, which
// may be anyone's.
func IsProjectFile(path string) bool {
	return filepath.Base(path) == "settings.json" && filepath.Base(filepath.Dir(path)) == ".dshd"
}

// onlyTightens drops what a project file says that would loosen the OS
// sandbox or the permission mode set below it: a cloned repository must
// not switch off the guarantee its own commands run under. A project may
// make the sandbox stricter (read-only, no network, required, MCP servers
// sandboxed), never turn it off, widen its writable roots, give back the
// network, or make bypassPermissions its default mode; the user's own
// settings and --config may.
func onlyTightens(below, project Settings) Settings {
	sb := &project.Sandbox
	if sb.Mode != "" && sandboxStrictness(sb.Mode) < sandboxStrictness(below.Sandbox.Mode) {
		sb.Mode = ""
	}
	if sb.Network != nil && *sb.Network {
		sb.Network = nil
	}
	sb.WritableRoots = nil
	if sb.Required != nil && !*sb.Required {
		sb.Required = nil
	}
	if sb.MCPServers != nil && !*sb.MCPServers {
		sb.MCPServers = nil
	}
	if project.Permissions.DefaultMode == "bypassPermissions" {
		project.Permissions.DefaultMode = ""
	}
	return project
}

// sandboxStrictness orders the sandbox modes, unknown names as the
// default (validation reports them).
func sandboxStrictness(mode string) int {
	switch mode {
	case "off":
		return 0
	case "read-only":
		return 2
	}
	return 1 // workspace-write, the default
}

// locate turns a validation error into a FileError that points at the bad
// value when the value can be found in the file.
func locate(path string, data []byte, err error) error {
	var ve *ValueError
	if errors.As(err, &ve) {
		quoted, _ := json.Marshal(ve.Value)
		if i := bytes.Index(data, quoted); i >= 0 {
			line, col := lineColumn(data, int64(i)+1)
			return &FileError{Path: path, Line: line, Column: col, Err: err}
		}
	}
	return &FileError{Path: path, Err: err}
}
