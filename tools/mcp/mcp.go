package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Server types of [ServerConfig.Type].
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
)

// ServerConfig describes one MCP server, independent of how ACP spells it
// (the bridge converts ACP's MCPServer into it).
type ServerConfig struct {
	// Name identifies the server; it becomes part of its tools' names.
	Name string
	// Type is TypeStdio or TypeHTTP; empty means stdio when Command is set,
	// HTTP when URL is.
	Type string
	// Command, Args and Env start a stdio server. Env adds to the daemon's
	// environment.
	Command string
	Args    []string
	Env     map[string]string
	// URL and Headers reach a streamable HTTP server.
	URL     string
	Headers map[string]string
}

func (c ServerConfig) kind() string {
	switch {
	case c.Type != "":
		return c.Type
	case c.Command != "":
		return TypeStdio
	case c.URL != "":
		return TypeHTTP
	}
	return ""
}

// Options configure [Connect].
type Options struct {
	// Dir is the working directory of stdio servers (the session cwd).
	Dir string
	// Stderr receives stdio servers' stderr; nil means os.Stderr. It is
	// never the protocol's stdout.
	Stderr io.Writer
	// Timeout bounds connecting to and listing one server (default 30 s).
	Timeout time.Duration
	// HTTPClient, optional, is used for HTTP servers (headers are added on
	// top of it).
	HTTPClient *http.Client
	// ClientName and ClientVersion introduce dshd to the servers.
	ClientName, ClientVersion string
	// OnToolsChanged, optional, follows servers whose tool list changes
	// (notifications/tools/list_changed): the server's tools are listed
	// again and OnToolsChanged receives the whole new list of every
	// server, as [Servers.Tools] returns it, with the failures of that
	// listing (a server that cannot be listed keeps its previous tools).
	// Calls are serialized, newest list last, and none starts after
	// [Servers.Close] returned.
	OnToolsChanged func(tools []*registry.Definition, failures []error)
}

// ServerError is the failure of one server; the others are unaffected.
type ServerError struct {
	Server string
	Err    error
}

func (e *ServerError) Error() string { return fmt.Sprintf("MCP server %q: %v", e.Server, e.Err) }
func (e *ServerError) Unwrap() error { return e.Err }

// Servers are the connected MCP servers of one session.
type Servers struct {
	opts   Options
	ctx    context.Context // ends with Close; bounds the re-listings
	cancel context.CancelFunc
	// notify serializes OnToolsChanged calls; it is taken before mu, so
	// the lists are delivered in the order they were merged.
	notify sync.Mutex

	mu      sync.Mutex
	servers []*server // the connected ones, in config order
	tools   []*registry.Definition
	closed  bool
	ready   bool           // Connect has returned: changes are followed
	relists sync.WaitGroup // re-listings in flight, awaited by Close
}

// server is one connected server and its current tools.
type server struct {
	name  string
	cs    *sdk.ClientSession
	tools []*registry.Definition
	// changed is set by a list_changed notification and cleared when a
	// re-listing starts; relisting says one runs. Together they coalesce
	// bursts of notifications into as few listings as keep up.
	changed, relisting bool
}

// Connect starts or reaches every server concurrently and lists their
// tools. It always returns a usable *Servers (holding the servers that
// worked) and one *ServerError per server that did not (and per tool whose
// schema could not be used or whose name clashes), in config order.
// The caller reports those errors to the user and to stderr, and must call
// Close when the session ends.
func Connect(ctx context.Context, configs []ServerConfig, opts Options) (*Servers, []error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.ClientName == "" {
		opts.ClientName = "dshd"
	}
	s := &Servers{opts: opts}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	type outcome struct {
		srv      *server
		badTools []error
		err      error
	}
	outs := make([]outcome, len(configs))
	var wg sync.WaitGroup
	for i, c := range configs {
		srv := &server{name: c.Name}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			var bad []error
			srv.cs, srv.tools, bad, err = connectOne(ctx, c, opts, func() { s.toolsChanged(srv) })
			outs[i] = outcome{srv, bad, err}
		}()
	}
	wg.Wait()
	var errs []error
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range outs {
		if o.err != nil {
			errs = append(errs, &ServerError{Server: configs[i].Name, Err: o.err})
			continue
		}
		s.servers = append(s.servers, o.srv)
		for _, err := range o.badTools {
			errs = append(errs, &ServerError{Server: configs[i].Name, Err: err})
		}
	}
	var clashes []error
	s.tools, clashes = s.merge()
	errs = append(errs, clashes...)
	// Lists that changed while Connect listed them are listed again.
	s.ready = true
	for _, srv := range s.servers {
		if srv.changed {
			s.startRelist(srv)
		}
	}
	return s, errs
}

// merge joins the servers' tools in config order, refusing a name a
// previous server already took. s.mu is held.
func (s *Servers) merge() ([]*registry.Definition, []error) {
	var tools []*registry.Definition
	var errs []error
	seen := map[string]string{} // tool name → server
	for _, srv := range s.servers {
		for _, d := range srv.tools {
			if other, dup := seen[d.Name]; dup {
				errs = append(errs, &ServerError{Server: srv.name, Err: fmt.Errorf("tool %s clashes with a tool of server %q; skipped", d.Name, other)})
				continue
			}
			seen[d.Name] = srv.name
			tools = append(tools, d)
		}
	}
	return tools, errs
}

// toolsChanged handles a server's list_changed notification. It runs on
// the connection's goroutine, which listing must not block, so the
// listing runs on its own.
func (s *Servers) toolsChanged(srv *server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv.changed = true
	if s.ready && !s.closed && s.opts.OnToolsChanged != nil && !srv.relisting {
		s.startRelist(srv)
	}
}

// startRelist starts srv's re-listing goroutine. s.mu is held.
func (s *Servers) startRelist(srv *server) {
	srv.relisting = true
	s.relists.Add(1)
	go func() {
		defer s.relists.Done()
		for s.relist(srv) {
		}
	}()
}

// relist lists srv's tools once more and reports the merged list. It
// returns whether another notification came meanwhile.
func (s *Servers) relist(srv *server) bool {
	s.mu.Lock()
	if s.closed || !srv.changed {
		srv.relisting = false
		s.mu.Unlock()
		return false
	}
	srv.changed = false
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeout)
	tools, bad, err := listTools(ctx, srv.name, srv.cs)
	cancel()

	s.notify.Lock()
	defer s.notify.Unlock()
	s.mu.Lock()
	if s.closed {
		srv.relisting = false
		s.mu.Unlock()
		return false
	}
	var failures []error
	if err != nil {
		failures = append(failures, &ServerError{Server: srv.name, Err: fmt.Errorf("listing the changed tools: %w; keeping the previous ones", err)})
	} else {
		srv.tools = tools
		for _, b := range bad {
			failures = append(failures, &ServerError{Server: srv.name, Err: b})
		}
	}
	merged, clashes := s.merge()
	s.tools = merged
	failures = append(failures, clashes...)
	s.mu.Unlock()
	s.opts.OnToolsChanged(slices.Clone(merged), failures)
	return true
}

// Tools returns the session-scoped tool definitions of all connected
// servers.
func (s *Servers) Tools() []*registry.Definition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

// Close disconnects every server; stdio servers are stopped (stdin closed,
// then SIGTERM, then SIGKILL), and then whatever they started is killed
// with them (each runs in a process group of its own, which also dies when
// the daemon does). It waits for re-listings in flight. It is safe to call
// more than once.
func (s *Servers) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	servers := s.servers
	s.mu.Unlock()
	s.cancel()
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.cs.Close(); err != nil && !errors.Is(err, sdk.ErrConnectionClosed) && !isExitError(err) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.relists.Wait()
	return errors.Join(errs...)
}

func isExitError(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

func connectOne(ctx context.Context, c ServerConfig, opts Options, changed func()) (*sdk.ClientSession, []*registry.Definition, []error, error) {
	if c.Name == "" {
		return nil, nil, nil, errors.New("server has no name")
	}
	var transport sdk.Transport
	var stdio *stdioTransport
	switch c.kind() {
	case TypeStdio:
		if c.Command == "" {
			return nil, nil, nil, errors.New("stdio server has no command")
		}
		cmd := exec.Command(c.Command, c.Args...)
		cmd.Dir = opts.Dir
		cmd.Env = os.Environ()
		for k, v := range c.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		// The transport pipes stdin and stdout; stderr goes to opts.Stderr,
		// never to the daemon's stdout.
		stdio = &stdioTransport{cmd: cmd, stderr: opts.Stderr}
		transport = stdio
	case TypeHTTP:
		if c.URL == "" {
			return nil, nil, nil, errors.New("http server has no url")
		}
		hc := opts.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		if len(c.Headers) > 0 {
			base := hc.Transport
			if base == nil {
				base = http.DefaultTransport
			}
			cp := *hc
			cp.Transport = headerTransport{base: base, headers: c.Headers}
			hc = &cp
		}
		transport = &sdk.StreamableClientTransport{Endpoint: c.URL, HTTPClient: hc, MaxRetries: -1}
	default:
		return nil, nil, nil, fmt.Errorf("unsupported server type %q", c.Type)
	}
	var copts *sdk.ClientOptions
	if opts.OnToolsChanged != nil {
		// Setting the handler is what subscribes to the notification.
		copts = &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed() }}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: opts.ClientName, Version: opts.ClientVersion}, copts)
	cctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	cs, err := client.Connect(cctx, transport, nil)
	if err != nil {
		if stdio != nil {
			stdio.close()
		}
		return nil, nil, nil, fmt.Errorf("connect: %w", err)
	}
	defs, bad, err := listTools(cctx, c.Name, cs)
	if err != nil {
		cs.Close()
		return nil, nil, nil, err
	}
	return cs, defs, bad, nil
}

// listTools lists a server's tools as definitions. A few unusable tools do
// not sink the server: the others work, and the bad ones are returned to
// be reported with the server's name. A server with tools of which none
// is usable is an error.
func listTools(ctx context.Context, server string, cs *sdk.ClientSession) ([]*registry.Definition, []error, error) {
	var defs []*registry.Definition
	var bad []error
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("list tools: %w", err)
		}
		d, err := definition(server, cs, tool)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		defs = append(defs, d)
	}
	if len(bad) > 0 && len(defs) == 0 {
		return nil, nil, errors.Join(bad...)
	}
	return defs, bad, nil
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// ToolName returns the model-facing name of a server's tool:
// mcp__<server>__<tool>, with characters outside [a-zA-Z0-9_-] replaced by
// "_", and shortened to 64 characters with a hash suffix that keeps
// distinct long names distinct.
func ToolName(server, tool string) string {
	name := "mcp__" + unsafeName.ReplaceAllString(server, "_") + "__" + unsafeName.ReplaceAllString(tool, "_")
	if len(name) <= 64 {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(server + "\x00" + tool))
	return fmt.Sprintf("%s_%08x", name[:55], h.Sum32())
}

// caller is the part of a client session a tool needs; tests may fake it.
type caller interface {
	CallTool(ctx context.Context, params *sdk.CallToolParams) (*sdk.CallToolResult, error)
}

func definition(server string, cs caller, tool *sdk.Tool) (*registry.Definition, error) {
	schema := json.RawMessage(`{"type":"object"}`)
	if tool.InputSchema != nil {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", tool.Name, err)
		}
		schema = b
	}
	v, err := registry.CompileSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", tool.Name, err)
	}
	name := ToolName(server, tool.Name)
	title := tool.Title
	if title == "" && tool.Annotations != nil {
		title = tool.Annotations.Title
	}
	if title == "" {
		title = tool.Name
	}
	// The server's readOnlyHint picks the card's icon only: a server's
	// word is no permission, so the tool's Kind (what modes judge) stays
	// "other", which mutates.
	readOnly := tool.Annotations != nil && tool.Annotations.ReadOnlyHint
	shown := presentation.KindOther
	if readOnly {
		shown = presentation.KindRead
	}
	desc := strings.TrimSpace(tool.Description)
	if desc == "" {
		desc = title
	}
	desc += fmt.Sprintf("\n(Tool %q of the MCP server %q.)", tool.Name, server)
	remote := tool.Name
	check := func(args json.RawMessage) error {
		err := v.Validate(args)
		var ae *registry.ToolArgsError
		if errors.As(err, &ae) {
			ae.Tool = name
		}
		return err
	}
	return &registry.Definition{
		Name:         name,
		Title:        title,
		Description:  desc,
		Parameters:   schema,
		Kind:         presentation.KindOther,
		ReadOnlyHint: readOnly,
		// The pipeline checks before policy runs, so that nobody is asked
		// to approve a call the server's schema refuses.
		CheckArgs: check,
		Execute: func(ctx context.Context, call registry.Call, args json.RawMessage) (registry.Result, error) {
			if err := check(args); err != nil {
				return registry.Result{}, err
			}
			if len(strings.TrimSpace(string(args))) == 0 {
				args = json.RawMessage("{}")
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: remote, Arguments: args})
			if err != nil {
				return registry.Result{}, fmt.Errorf("MCP server %q, tool %q: %w", server, remote, err)
			}
			return Result(res), nil
		},
		PresentCall: func(call registry.Call) presentation.CallView {
			return presentation.CallView{Title: server + ": " + title, Kind: shown}
		},
	}, nil
}

// Result maps an MCP tool result to a registry result.
func Result(res *sdk.CallToolResult) registry.Result {
	var r registry.Result
	for _, c := range res.Content {
		r.Content = append(r.Content, Content(c))
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			r.Structured = b
			if len(r.Content) == 0 {
				r.Content = append(r.Content, presentation.Text(string(b)))
			}
		}
	}
	if r.Content == nil {
		r.Content = []presentation.Content{}
	}
	if res.IsError {
		msg := ""
		for _, c := range r.Content {
			if c.Type == presentation.ContentText {
				msg = c.Text
				break
			}
		}
		if msg == "" {
			msg = "the MCP tool reported an error"
		}
		r.IsError = true
		r.Error = &registry.ToolError{Code: registry.CodeToolError, Message: msg}
	}
	return r
}

// Content maps one MCP content block to a presentation block. Binary data
// is carried base64-encoded, as ACP and model APIs want it.
func Content(c sdk.Content) presentation.Content {
	switch c := c.(type) {
	case *sdk.TextContent:
		return presentation.Text(c.Text)
	case *sdk.ImageContent:
		return presentation.Content{Type: presentation.ContentImage, Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}
	case *sdk.AudioContent:
		return presentation.Content{Type: presentation.ContentAudio, Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}
	case *sdk.ResourceLink:
		return presentation.Content{Type: presentation.ContentResourceLink, URI: c.URI, Name: c.Name, MIMEType: c.MIMEType}
	case *sdk.EmbeddedResource:
		out := presentation.Content{Type: presentation.ContentResource}
		if rc := c.Resource; rc != nil {
			out.URI, out.MIMEType, out.Text = rc.URI, rc.MIMEType, rc.Text
			if rc.Blob != nil {
				out.Data = base64.StdEncoding.EncodeToString(rc.Blob)
			}
		}
		return out
	}
	b, _ := json.Marshal(c)
	return presentation.Text(string(b))
}
