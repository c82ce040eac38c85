package acptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dsh-tools/dshd/acp"
)

// ErrNoSchema reports that the official ACP schema file could not be found.
var ErrNoSchema = errors.New("acptest: ACP schema not found")

// schemaBase is the URL the schema document is registered under; it has no $id of its own.
const schemaBase = "https://agentclientprotocol.com/schema/v1/schema.json"

// sdkSchema is where the official npm package @agentclientprotocol/sdk keeps the schema, under
// a node_modules directory.
var sdkSchema = filepath.Join("@agentclientprotocol", "sdk", "schema", "v1", "schema.json")

// SchemaPath finds the official ACP v1 schema: $ACP_SCHEMA if set; otherwise, walking up from
// the working directory, the first <dir>/../shared/acp/schema.json (the layout where the
// project's clone has shared/ beside it), <dir>/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json
// (the official npm package) or <dir>/interop/node_modules/… (the same package, where
// `make interop` installs it in the module root). The schema is never copied into the project.
func SchemaPath() (string, error) {
	if p := os.Getenv("ACP_SCHEMA"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: ACP_SCHEMA=%s: %v", ErrNoSchema, p, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoSchema, err)
	}
	for {
		for _, c := range []string{
			filepath.Join(filepath.Dir(dir), "shared", "acp", "schema.json"),
			filepath.Join(dir, "node_modules", sdkSchema),
			filepath.Join(dir, "interop", "node_modules", sdkSchema),
		} {
			if _, err := os.Stat(c); err == nil {
				return c, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: set ACP_SCHEMA, put the official schema at ../shared/acp/schema.json beside the repository or run npm ci in interop/", ErrNoSchema)
		}
		dir = parent
	}
}

// Validator checks ACP messages against the per-method $defs of the official schema (never
// the root schema, which accepts almost anything). It is safe for concurrent use.
type Validator struct {
	path string
	// unstable: the schema is schema.unstable.json, so the unstable
	// methods (session/fork) are checked too.
	unstable bool

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	defs     map[string]*jsonschema.Schema
}

var (
	sharedMu   sync.Mutex
	sharedVals = map[string]*Validator{}
)

// LoadValidator loads the schema found by [SchemaPath]. Validators are cached per path.
func LoadValidator() (*Validator, error) {
	path, err := SchemaPath()
	if err != nil {
		return nil, err
	}
	return loadValidatorFile(path)
}

// loadValidatorFile loads the schema at path.
func loadValidatorFile(path string) (*Validator, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if v := sharedVals[path]; v != nil {
		return v, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("acptest: reading schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("acptest: parsing schema %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaBase, doc); err != nil {
		return nil, fmt.Errorf("acptest: loading schema %s: %w", path, err)
	}
	v := &Validator{path: path, compiler: c, defs: map[string]*jsonschema.Schema{}}
	sharedVals[path] = v
	return v, nil
}

// unstableSchemaPath finds the official unstable ACP schema:
// $ACP_SCHEMA_UNSTABLE if set, otherwise schema.unstable.json beside the
// stable schema [SchemaPath] finds.
func unstableSchemaPath() (string, error) {
	if p := os.Getenv("ACP_SCHEMA_UNSTABLE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: ACP_SCHEMA_UNSTABLE=%s: %v", ErrNoSchema, p, err)
		}
		return p, nil
	}
	stable, err := SchemaPath()
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(stable), "schema.unstable.json")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: no schema.unstable.json beside %s (set ACP_SCHEMA_UNSTABLE)", ErrNoSchema, stable)
	}
	return p, nil
}

// loadUnstableValidator loads the schema found by [unstableSchemaPath]: it
// checks the unstable methods (session/fork) as well as the stable ones.
func loadUnstableValidator() (*Validator, error) {
	path, err := unstableSchemaPath()
	if err != nil {
		return nil, err
	}
	v, err := loadValidatorFile(path)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.unstable = true
	v.mu.Unlock()
	return v, nil
}

// SchemaOrSkip returns the validator, or skips the test with a message saying why when the
// schema file is absent. With ACP_SCHEMA_REQUIRED=1 in the environment (as in CI, so that it
// cannot pass with the schema checks skipped) an absent schema fails the test instead. Any
// other load failure fails the test.
func SchemaOrSkip(t testing.TB) *Validator {
	t.Helper()
	v, err := LoadValidator()
	if errors.Is(err, ErrNoSchema) {
		if required, _ := strconv.ParseBool(os.Getenv("ACP_SCHEMA_REQUIRED")); required {
			t.Fatalf("skipping ACP schema checks: %v (and ACP_SCHEMA_REQUIRED is set, so that fails)", err)
		}
		t.Skipf("skipping ACP schema checks: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Path is the schema file in use.
func (v *Validator) Path() string { return v.path }

func (v *Validator) schema(def string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s := v.defs[def]; s != nil {
		return s, nil
	}
	s, err := v.compiler.Compile(schemaBase + "#/$defs/" + def)
	if err != nil {
		return nil, fmt.Errorf("acptest: compiling $defs/%s: %w", def, err)
	}
	v.defs[def] = s
	return s, nil
}

// ValidateDef validates the JSON instance against $defs/def.
func (v *Validator) ValidateDef(def string, instance []byte) error {
	s, err := v.schema(def)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return fmt.Errorf("acptest: %s instance is not JSON: %w", def, err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("$defs/%s: %w", def, err)
	}
	return nil
}

// ValidateValue marshals x and validates it against $defs/def.
func (v *Validator) ValidateValue(def string, x any) error {
	data, err := json.Marshal(x)
	if err != nil {
		return err
	}
	return v.ValidateDef(def, data)
}

// Per-method $defs (DIGEST.md §8.2). Requests and notifications are keyed by method; results by
// the method of the request they answer.
var (
	// Sent by the agent.
	agentParamsDefs = map[string]string{
		acp.MethodSessionUpdate:            "SessionNotification",
		acp.MethodSessionRequestPermission: "RequestPermissionRequest",
		acp.MethodFSReadTextFile:           "ReadTextFileRequest",
		acp.MethodFSWriteTextFile:          "WriteTextFileRequest",
		acp.MethodTerminalCreate:           "CreateTerminalRequest",
		acp.MethodTerminalOutput:           "TerminalOutputRequest",
		acp.MethodTerminalWaitForExit:      "WaitForTerminalExitRequest",
		acp.MethodTerminalKill:             "KillTerminalRequest",
		acp.MethodTerminalRelease:          "ReleaseTerminalRequest",
		acp.MethodElicitationCreate:        "CreateElicitationRequest",
		acp.MethodElicitationComplete:      "CompleteElicitationNotification",
		acp.MethodCancelRequest:            "CancelRequestNotification",
	}
	agentResultDefs = map[string]string{
		acp.MethodInitialize:             "InitializeResponse",
		acp.MethodAuthenticate:           "AuthenticateResponse",
		acp.MethodLogout:                 "LogoutResponse",
		acp.MethodSessionNew:             "NewSessionResponse",
		acp.MethodSessionLoad:            "LoadSessionResponse",
		acp.MethodSessionList:            "ListSessionsResponse",
		acp.MethodSessionResume:          "ResumeSessionResponse",
		acp.MethodSessionClose:           "CloseSessionResponse",
		acp.MethodSessionDelete:          "DeleteSessionResponse",
		acp.MethodSessionSetMode:         "SetSessionModeResponse",
		acp.MethodSessionSetConfigOption: "SetSessionConfigOptionResponse",
		acp.MethodSessionPrompt:          "PromptResponse",
	}
	// Sent by the client.
	clientParamsDefs = map[string]string{
		acp.MethodInitialize:             "InitializeRequest",
		acp.MethodAuthenticate:           "AuthenticateRequest",
		acp.MethodLogout:                 "LogoutRequest",
		acp.MethodSessionNew:             "NewSessionRequest",
		acp.MethodSessionLoad:            "LoadSessionRequest",
		acp.MethodSessionList:            "ListSessionsRequest",
		acp.MethodSessionResume:          "ResumeSessionRequest",
		acp.MethodSessionClose:           "CloseSessionRequest",
		acp.MethodSessionDelete:          "DeleteSessionRequest",
		acp.MethodSessionSetMode:         "SetSessionModeRequest",
		acp.MethodSessionSetConfigOption: "SetSessionConfigOptionRequest",
		acp.MethodSessionPrompt:          "PromptRequest",
		acp.MethodSessionCancel:          "CancelNotification",
		acp.MethodCancelRequest:          "CancelRequestNotification",
	}
	clientResultDefs = map[string]string{
		acp.MethodSessionRequestPermission: "RequestPermissionResponse",
		acp.MethodFSReadTextFile:           "ReadTextFileResponse",
		acp.MethodFSWriteTextFile:          "WriteTextFileResponse",
		acp.MethodTerminalCreate:           "CreateTerminalResponse",
		acp.MethodTerminalOutput:           "TerminalOutputResponse",
		acp.MethodTerminalWaitForExit:      "WaitForTerminalExitResponse",
		acp.MethodTerminalKill:             "KillTerminalResponse",
		acp.MethodTerminalRelease:          "ReleaseTerminalResponse",
		acp.MethodElicitationCreate:        "CreateElicitationResponse",
	}
)

// Unstable methods, checked only against the unstable schema.
var (
	unstableClientParamsDefs = map[string]string{acp.MethodSessionFork: "ForkSessionRequest"}
	unstableAgentResultDefs  = map[string]string{acp.MethodSessionFork: "ForkSessionResponse"}
)

// defFor looks a method up in the stable tables and, for an unstable
// validator, the unstable ones.
func (v *Validator) defFor(method string, fromAgent, result bool) (string, bool) {
	lookup := paramsDef
	if result {
		lookup = resultDef
	}
	if d, ok := lookup(method, fromAgent); ok {
		return d, true
	}
	v.mu.Lock()
	unstable := v.unstable
	v.mu.Unlock()
	if !unstable {
		return "", false
	}
	table := unstableClientParamsDefs
	switch {
	case result && fromAgent:
		table = unstableAgentResultDefs
	case result || fromAgent:
		return "", false
	}
	d, ok := table[method]
	return d, ok
}

// paramsDef returns the $def for the params of method as sent by the agent (fromAgent) or by
// the client, and whether one is known.
func paramsDef(method string, fromAgent bool) (string, bool) {
	if fromAgent {
		d, ok := agentParamsDefs[method]
		return d, ok
	}
	d, ok := clientParamsDefs[method]
	return d, ok
}

// resultDef returns the $def for the result of method as sent by the answering side.
func resultDef(method string, fromAgent bool) (string, bool) {
	if fromAgent {
		d, ok := agentResultDefs[method]
		return d, ok
	}
	d, ok := clientResultDefs[method]
	return d, ok
}

// envelope is a JSON-RPC message as checked by the validator.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// ValidateMessage validates one JSON-RPC message sent by the agent (fromAgent) or the client.
// For a response, method is the method of the request it answers (look it up by id); it is
// ignored for requests and notifications. Messages with unknown methods (extensions) are
// checked for the envelope only.
func (v *Validator) ValidateMessage(msg []byte, fromAgent bool, method string) error {
	var e envelope
	if err := json.Unmarshal(msg, &e); err != nil {
		return fmt.Errorf("acptest: message is not a JSON object: %w", err)
	}
	if e.JSONRPC != "2.0" {
		return fmt.Errorf(`acptest: "jsonrpc" is %q, want "2.0"`, e.JSONRPC)
	}
	if bytes.ContainsAny(msg, "\n") {
		return errors.New("acptest: message contains a raw newline")
	}
	switch {
	case e.Method != nil:
		def, ok := v.defFor(*e.Method, fromAgent, false)
		if !ok {
			return nil
		}
		params := e.Params
		if params == nil {
			params = json.RawMessage("null")
		}
		if err := v.ValidateDef(def, params); err != nil {
			return fmt.Errorf("%s params: %w", *e.Method, err)
		}
	case e.Error != nil:
		if e.Result != nil {
			return errors.New("acptest: response has both result and error")
		}
		if err := v.ValidateDef("Error", e.Error); err != nil {
			return fmt.Errorf("error response to %s: %w", method, err)
		}
	case e.Result != nil:
		def, ok := v.defFor(method, fromAgent, true)
		if !ok {
			return nil
		}
		if err := v.ValidateDef(def, e.Result); err != nil {
			return fmt.Errorf("%s result: %w", method, err)
		}
	default:
		return errors.New("acptest: neither a request, a notification nor a response")
	}
	return nil
}
