package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
)

// Conn is one JSON-RPC connection to an ACP peer. It is the shared engine under [ClientConn]
// (the agent's view of the client) and [AgentConn] (the client's view of the agent). Its
// methods are safe for concurrent use.
//
// Every message it writes is built in one buffer, envelope included, with its params or
// result encoded once (see envelope.go); every line it reads is scanned once for its
// envelope, and params and results reach their decoders as the original bytes.
type Conn struct {
	stream *lineStream
	routes Router
	log    *slog.Logger
	ctx    context.Context // cancelled when the connection closes
	cancel context.CancelFunc
	done   chan struct{} // closed when the connection has closed

	nextID atomic.Uint64

	mu       sync.Mutex
	closed   bool
	inflight map[string]context.CancelFunc // inbound requests not yet answered, by idKey
	pending  map[uint64]chan message       // outbound requests awaiting their response
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
		done:     make(chan struct{}),
		inflight: map[string]context.CancelFunc{},
		pending:  map[uint64]chan message{},
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
	go c.readLoop()
	go func() {
		<-c.ctx.Done()
		c.shutdown(nil)
	}()
}

// readLoop reads messages until the stream ends. Requests and notifications are handled in
// arrival order on this goroutine; responses go to their waiting Call.
func (c *Conn) readLoop() {
	for {
		m, err := c.stream.readMessage()
		if err != nil {
			c.shutdown(err)
			return
		}
		if m.isCall {
			c.handle(m)
		} else {
			c.deliver(m)
		}
	}
}

// shutdown closes the connection once: pending calls fail with ErrClosed, handler contexts are
// cancelled, the stream is closed. Later calls report errAlreadyClosed.
func (c *Conn) shutdown(cause error) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errAlreadyClosed
	}
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	close(c.done)
	c.mu.Unlock()
	c.cancel()
	err := c.stream.Close()
	if cause != nil && !errors.Is(cause, io.EOF) && !errors.Is(cause, io.ErrUnexpectedEOF) {
		c.log.Debug("acp: connection closed on a read error", "error", cause)
	}
	return err
}

var errAlreadyClosed = errors.New("acp: already closed")

// Done is closed when the connection has closed (peer EOF, ctx cancelled or Close).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close closes the connection and the underlying stream. In-flight handler contexts are
// cancelled.
func (c *Conn) Close() error {
	if err := c.shutdown(nil); !errors.Is(err, errAlreadyClosed) {
		return err
	}
	return nil
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// send writes one complete line and recycles its buffer. A failure on a closed connection is
// ErrClosed.
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
	id := c.nextID.Add(1)
	buf := getBuf()
	line, err := appendRequest(*buf, id, method, params)
	if err != nil {
		putBuf(buf)
		return fmt.Errorf("acp: %s: encoding params: %w", method, err)
	}
	*buf = line
	ch := make(chan message, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		putBuf(buf)
		return fmt.Errorf("acp: %s: %w", method, ErrClosed)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(buf); err != nil {
		c.forget(id)
		return fmt.Errorf("acp: %s: %w", method, err)
	}
	var resp message
	select {
	case <-ctx.Done():
		c.forget(id)
		cancel := CancelRequestNotification{RequestID: IntRequestID(int64(id))}
		if nerr := c.Notify(context.Background(), MethodCancelRequest, cancel); nerr != nil {
			c.log.Debug("acp: sending $/cancel_request", "method", method, "error", nerr)
		}
		return fmt.Errorf("acp: %s: %w (%w)", method, ErrRequestCancelled, ctx.Err())
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("acp: %s: %w", method, ErrClosed)
		}
		resp = r
	}
	if resp.err != nil {
		return resp.err
	}
	if result == nil || len(resp.result) == 0 || isNull(resp.result) {
		return nil
	}
	if err := json.Unmarshal(resp.result, result); err != nil {
		return fmt.Errorf("acp: decoding %s result: %w", method, err)
	}
	return nil
}

func (c *Conn) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// deliver hands a response to the Call waiting for it.
func (c *Conn) deliver(m message) {
	var ch chan message
	if n, err := strconv.ParseUint(string(m.id), 10, 64); err == nil {
		c.mu.Lock()
		ch = c.pending[n]
		delete(c.pending, n)
		c.mu.Unlock()
	}
	if ch == nil {
		c.log.Debug("acp: ignoring a response to no outstanding request", "id", string(m.id))
		return
	}
	ch <- m // buffered: never blocks
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
// line breaks, which would break the framing (such params are compacted, and validated, first).
func (c *Conn) NotifyRaw(ctx context.Context, method string, params json.RawMessage) error {
	buf := getBuf()
	b := append(*buf, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
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

// handle runs on the read goroutine, so everything here (and every route's start function)
// happens in arrival order; slow work runs on goroutines.
func (c *Conn) handle(req message) {
	if req.id == nil {
		c.handleNotification(req.method, req.params)
		return
	}
	route, ok := c.routes[req.method]
	if !ok || route.notification {
		c.reply(req.id, nil, fmt.Errorf("%w: %s", ErrMethodNotFound, req.method))
		return
	}
	key := idKey(req.id)
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if _, dup := c.inflight[key]; dup {
		c.mu.Unlock()
		cancel()
		c.reply(req.id, nil, fmt.Errorf("%w: request id %s is already in flight", ErrInvalidRequest, req.id))
		return
	}
	c.inflight[key] = cancel
	c.mu.Unlock()

	result, run, err := c.startRoute(ctx, req.method, route, req.params)
	if err != nil || run == nil {
		c.finish(req.id, key, result, err)
		return
	}
	go func() {
		result, err := protect(req.method, run)
		c.finish(req.id, key, result, err)
	}()
}

func (c *Conn) handleNotification(method string, params json.RawMessage) {
	if method == MethodCancelRequest {
		var n CancelRequestNotification
		if err := json.Unmarshal(params, &n); err != nil {
			c.log.Debug("acp: bad $/cancel_request", "error", err)
			return
		}
		if key, ok := keyOfRequestID(n.RequestID); ok {
			c.mu.Lock()
			cancel := c.inflight[key]
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

// finish sends the one reply of request id and forgets it.
func (c *Conn) finish(id json.RawMessage, key string, result any, err error) {
	c.reply(id, result, err)
	c.mu.Lock()
	cancel := c.inflight[key]
	delete(c.inflight, key)
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// reply sends the one reply of request id. A result that fails to encode is detected before
// anything is written, and answered with -32603 instead.
func (c *Conn) reply(id json.RawMessage, result any, err error) {
	buf := getBuf()
	if err == nil {
		if result == nil {
			result = struct{}{}
		}
		line, encErr := appendResultResponse(*buf, id, result)
		if encErr == nil {
			*buf = line
		} else {
			c.log.Warn("acp: encoding a result", "id", string(id), "error", encErr)
			err = fmt.Errorf("%w: encoding the result: %w", ErrInternal, encErr)
		}
	}
	if err != nil {
		*buf = appendErrorResponse((*buf)[:0], id, toWireError(err))
	}
	if sendErr := c.send(buf); sendErr != nil && !errors.Is(sendErr, ErrClosed) {
		c.log.Warn("acp: sending reply", "id", string(id), "error", sendErr)
	}
}
