package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dsh-tools/dshd/internal/jsonscan"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
)

// Conn is one JSON-RPC connection to an ACP peer. It is the shared engine under [ClientConn]
// (the agent's view of the client) and [AgentConn] (the client's view of the agent). Its
// methods are safe for concurrent use.
//
// The protocol runs on github.com/sourcegraph/jsonrpc2: its read loop dispatches inbound
// messages, it matches responses to outgoing calls and sends the replies. The line stream
// under it (stream.go) spares it the generic encoding: each line is scanned once, params and
// results reach their decoders as the original bytes, and every outgoing message is built in
// one buffer with its params or result encoded once. Notifications, the hot path, are
// written straight to the line stream, under the same lock as jsonrpc2's writes.
type Conn struct {
	rpc    *jsonrpc2.Conn
	ready  chan struct{} // closed once rpc is set
	stream *lineStream
	routes Router
	log    *slog.Logger
	ctx    context.Context // cancelled when the connection closes
	cancel context.CancelFunc

	nextID atomic.Uint64

	mu       sync.Mutex
	inflight map[jsonrpc2.ID]context.CancelFunc // inbound requests not yet answered
}

// Option configures a connection.
type Option func(*options)

type options struct {
	log    *slog.Logger
	tap    func(Direction, []byte)
	routes Router
}

// WithLogger sets the logger for protocol diagnostics (default: slog.Default()). Logs never go
// to the protocol stream.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithTap calls tap with every message's raw line (without the newline) in wire order:
// inbound ones as they are read, outbound ones as they are written. tap must not block and
// must copy msg if it keeps it.
func WithTap(tap func(dir Direction, msg []byte)) Option {
	return func(o *options) { o.tap = tap }
}

// WithRoutes adds (or overrides) inbound routes, e.g. "_"-prefixed extension methods.
func WithRoutes(r Router) Option {
	return func(o *options) {
		if o.routes == nil {
			o.routes = Router{}
		}
		for k, v := range r {
			o.routes[k] = v
		}
	}
}

// Serve starts a connection over rwc that dispatches inbound messages through routes. It
// returns at once; the connection runs until rwc reaches EOF, ctx is cancelled or Close is
// called. Most code uses [ServeAgent] or [ServeClient] instead.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, routes Router, opts ...Option) *Conn {
	c := newConn(ctx, rwc, opts...)
	c.start(routes)
	return c
}

func newConn(ctx context.Context, rwc io.ReadWriteCloser, opts ...Option) *Conn {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	c := &Conn{
		log:      o.log,
		routes:   o.routes,
		ready:    make(chan struct{}),
		inflight: map[jsonrpc2.ID]context.CancelFunc{},
	}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.stream = newLineStream(rwc, o.tap, c.log.Debug)
	return c
}

// start installs routes (routes from options win) and begins reading.
func (c *Conn) start(routes Router) {
	merged := Router{}
	for k, v := range routes {
		merged[k] = v
	}
	for k, v := range c.routes {
		merged[k] = v
	}
	c.routes = merged
	c.rpc = jsonrpc2.NewConn(c.ctx, c.stream, rpcHandler{c},
		jsonrpc2.SetLogger(slogPrintf{c.log}),
		jsonrpc2.OnSend(c.stream.onSend),
		jsonrpc2.OnRecv(c.stream.onRecv))
	close(c.ready)
	go func() {
		<-c.rpc.DisconnectNotify()
		c.cancel()
	}()
}

// Done is closed when the connection has closed (peer EOF, ctx cancelled or Close).
func (c *Conn) Done() <-chan struct{} { return c.rpc.DisconnectNotify() }

// Close closes the connection and the underlying stream. In-flight handler contexts are
// cancelled.
func (c *Conn) Close() error {
	err := c.rpc.Close()
	c.cancel()
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return nil
	}
	return err
}

// isClosed reports whether the connection has closed. jsonrpc2 marks itself closed before it
// closes the stream, so a write that failed because of a close sees it here.
func (c *Conn) isClosed() bool {
	select {
	case <-c.ready:
	default:
		return c.ctx.Err() != nil
	}
	select {
	case <-c.rpc.DisconnectNotify():
		return true
	default:
		return c.ctx.Err() != nil
	}
}

// send writes one complete line the connection built itself (a notification) and recycles
// its buffer. A failure on a closed connection is ErrClosed.
func (c *Conn) send(buf *[]byte) error {
	defer putBuf(buf)
	if c.isClosed() {
		return ErrClosed
	}
	if err := c.stream.writeLine(*buf); err != nil {
		if c.isClosed() {
			return ErrClosed
		}
		return err
	}
	return nil
}

// Call sends a request and decodes its result into result (which may be nil). If ctx is
// cancelled first, Call sends $/cancel_request for the request and returns an error matching
// both ctx.Err() and [ErrRequestCancelled]. An error response is returned as an *Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	var rawParams any // nil: no params member
	buf := getBuf()
	if params != nil {
		raw, err := appendValue(*buf, params)
		if err != nil {
			putBuf(buf)
			return fmt.Errorf("acp: %s: encoding params: %w", method, err)
		}
		*buf = raw
		rawParams = json.RawMessage(raw)
	}
	// jsonrpc2 copies the params (a json.Marshal of the RawMessage) and, through onSend,
	// writes them as they are.
	w, err := c.rpc.DispatchCall(ctx, method, rawParams, jsonrpc2.PickID(id))
	putBuf(buf)
	if err != nil {
		return fmt.Errorf("acp: %s: %w", method, closedErr(err))
	}
	// onRecv restores the response's real result, so Wait decodes the original bytes, once.
	err = w.Wait(ctx, result)
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		cancel := CancelRequestNotification{RequestID: IntRequestID(int64(id.Num))}
		if nerr := c.Notify(context.Background(), MethodCancelRequest, cancel); nerr != nil {
			c.log.Debug("acp: sending $/cancel_request", "method", method, "error", nerr)
		}
		return fmt.Errorf("acp: %s: %w (%w)", method, ErrRequestCancelled, ctxErr)
	}
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rpcErr):
		e := &Error{Code: rpcErr.Code, Message: rpcErr.Message}
		if rpcErr.Data != nil {
			e.Data = *rpcErr.Data
		}
		return e
	case errors.Is(err, jsonrpc2.ErrClosed):
		return fmt.Errorf("acp: %s: %w", method, ErrClosed)
	default:
		return fmt.Errorf("acp: decoding %s result: %w", method, err)
	}
}

func closedErr(err error) error {
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return ErrClosed
	}
	return err
}

// Notify sends a notification. Notifications and replies issued by one goroutine reach the
// wire in the order they were issued. params is encoded once, straight into the message;
// a json.RawMessage is validated and compacted (see [Conn.NotifyRaw] to skip that).
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	buf := getBuf()
	line, err := appendNotification(*buf, method, params)
	if err != nil {
		putBuf(buf)
		return fmt.Errorf("acp: %s: encoding params: %w", method, err)
	}
	*buf = line
	if err := c.send(buf); err != nil {
		return fmt.Errorf("acp: %s: %w", method, err)
	}
	return nil
}

// NotifyRaw sends a notification whose params are already JSON, copying them into the message
// as they are. params must be valid JSON as encoding/json writes it (compact, e.g. the output
// of json.Marshal or read back from a file it wrote): it is not re-validated, only checked for
// line breaks, which would break the framing (such params are compacted, and validated, first),
// and for bytes that are not UTF-8, which are sent as \ufffd.
func (c *Conn) NotifyRaw(ctx context.Context, method string, params json.RawMessage) error {
	buf := getBuf()
	b := append(*buf, `{"jsonrpc":"2.0","method":`...)
	b = jsonscan.AppendString(b, method)
	b = append(b, `,"params":`...)
	b, err := appendTrustedRaw(b, params)
	if err != nil {
		putBuf(buf)
		return fmt.Errorf("acp: %s: %w", method, err)
	}
	*buf = append(b, '}', '\n')
	if err := c.send(buf); err != nil {
		return fmt.Errorf("acp: %s: %w", method, err)
	}
	return nil
}

var errEmptyRaw = errors.New("empty raw params")

// rpcHandler adapts a Conn to jsonrpc2.Handler without exporting Handle.
type rpcHandler struct{ c *Conn }

func (h rpcHandler) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	h.c.handle(req)
}

// handle runs on jsonrpc2's read goroutine, so everything here (and every route's start
// function) happens in arrival order; slow work runs on goroutines.
func (c *Conn) handle(req *jsonrpc2.Request) {
	<-c.ready
	params := c.stream.takeParams() // req has the stand-in's envelope only
	if req.Notif {
		c.handleNotification(req.Method, params)
		return
	}
	route, ok := c.routes[req.Method]
	if !ok || route.notification {
		c.reply(req.ID, nil, fmt.Errorf("%w: %s", ErrMethodNotFound, req.Method))
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if _, dup := c.inflight[req.ID]; dup {
		c.mu.Unlock()
		cancel()
		c.reply(req.ID, nil, fmt.Errorf("%w: request id %s is already in flight", ErrInvalidRequest, req.ID))
		return
	}
	c.inflight[req.ID] = cancel
	c.mu.Unlock()

	result, run, err := c.startRoute(ctx, req.Method, route, params)
	if err != nil || run == nil {
		c.finish(req.ID, result, err)
		return
	}
	go func() {
		result, err := protect(req.Method, run)
		c.finish(req.ID, result, err)
	}()
}

func (c *Conn) handleNotification(method string, params json.RawMessage) {
	if method == MethodCancelRequest {
		var n CancelRequestNotification
		if err := json.Unmarshal(params, &n); err != nil {
			c.log.Debug("acp: bad $/cancel_request", "error", err)
			return
		}
		if id, ok := rpcID(json.RawMessage(n.RequestID)); ok {
			c.mu.Lock()
			cancel := c.inflight[id]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		if route, ok := c.routes[MethodCancelRequest]; !ok || !route.notification {
			return
		}
	}
	route, ok := c.routes[method]
	if !ok || !route.notification {
		return // unknown notifications, "_" extensions included, are ignored
	}
	_, run, err := c.startRoute(c.ctx, method, route, params)
	if err != nil {
		c.log.Debug("acp: notification failed", "method", method, "error", err)
	}
	if run != nil {
		go func() {
			if _, err := protect(method, run); err != nil {
				c.log.Debug("acp: notification failed", "method", method, "error", err)
			}
		}()
	}
}

func (c *Conn) startRoute(ctx context.Context, method string, r Route, params json.RawMessage) (result any, run func() (any, error), err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("acp: handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
			result, run, err = nil, nil, fmt.Errorf("%w: handler for %s panicked", ErrInternal, method)
		}
	}()
	return r.start(ctx, params)
}

func protect(method string, run func() (any, error)) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("acp: handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
			result, err = nil, fmt.Errorf("%w: handler for %s panicked", ErrInternal, method)
		}
	}()
	return run()
}

// finish forgets request id and sends its one reply. The id is freed first: the peer may
// reuse it as soon as it has read the reply (ids need only be unique among pending requests),
// and the read goroutine may see that reuse before a goroutine that freed it afterwards ran.
func (c *Conn) finish(id jsonrpc2.ID, result any, err error) {
	c.mu.Lock()
	cancel := c.inflight[id]
	delete(c.inflight, id)
	c.mu.Unlock()
	c.reply(id, result, err)
	if cancel != nil {
		cancel()
	}
}

// reply sends the one reply of request id through jsonrpc2. The result is encoded here,
// once (jsonrpc2's Reply would json.Marshal it); one that fails to encode is detected before
// anything is written, and answered with -32603 instead.
func (c *Conn) reply(id jsonrpc2.ID, result any, err error) {
	resp := &jsonrpc2.Response{ID: id}
	buf := getBuf()
	defer putBuf(buf)
	if err == nil {
		if result == nil {
			result = struct{}{}
		}
		raw, encErr := appendValue(*buf, result)
		if encErr == nil {
			*buf = raw
			resp.Result = (*json.RawMessage)(buf)
		} else {
			c.log.Warn("acp: encoding a result", "id", id.String(), "error", encErr)
			err = fmt.Errorf("%w: encoding the result: %w", ErrInternal, encErr)
		}
	}
	if err != nil {
		we := toWireError(err)
		resp.Error = &jsonrpc2.Error{Code: we.Code, Message: we.Message}
		if len(we.Data) > 0 {
			data := json.RawMessage(we.Data)
			resp.Error.Data = &data
		}
	}
	if sendErr := c.rpc.SendResponse(context.Background(), resp); sendErr != nil && !errors.Is(sendErr, jsonrpc2.ErrClosed) {
		c.log.Warn("acp: sending reply", "id", id.String(), "error", sendErr)
	}
}

// slogPrintf adapts slog to jsonrpc2's Printf logger.
type slogPrintf struct{ l *slog.Logger }

func (s slogPrintf) Printf(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
