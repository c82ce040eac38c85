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

	"github.com/dsh-tools/dshd/internal/jsonscan"
	"github.com/sourcegraph/jsonrpc2"
)

// Conn is one JSON-RPC connection to an ACP peer: the shared engine under [ClientConn] (the
// agent's view of the client) and [AgentConn] (the client's view of the agent). Its methods
// are safe for concurrent use.
type Conn struct {
	rpc    *jsonrpc2.Conn
	codec  *codec
	ready  chan struct{} // closed once rpc and codec are set
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
	log *slog.Logger
	tap func(Direction, []byte)
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

// newConn returns a connection that is not started: its methods wait for start.
func newConn(ctx context.Context) *Conn {
	c := &Conn{ready: make(chan struct{}), inflight: map[jsonrpc2.ID]context.CancelFunc{}}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

// start begins reading rwc and dispatching to routes.
func (c *Conn) start(rwc io.ReadWriteCloser, routes Router, opts []Option) {
	o := options{log: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	c.log, c.routes = o.log, routes
	c.codec = newCodec(rwc, o.tap, c.log)
	c.rpc = jsonrpc2.NewConn(c.ctx, c.codec, rpcHandler{c}, jsonrpc2.SetLogger(slogPrintf{c.log}))
	close(c.ready)
	go func() {
		<-c.rpc.DisconnectNotify()
		c.cancel()
	}()
}

// Done is closed when the connection has closed (peer EOF, ctx cancelled or Close).
func (c *Conn) Done() <-chan struct{} {
	<-c.ready
	return c.rpc.DisconnectNotify()
}

// Close closes the connection and the underlying stream. In-flight handler contexts are
// cancelled.
func (c *Conn) Close() error {
	<-c.ready
	err := c.rpc.Close()
	c.cancel()
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return nil
	}
	return err
}

// Call sends a request and decodes its result into result (which may be nil). If ctx is
// cancelled first, Call sends $/cancel_request for the request and returns an error matching
// both ctx.Err() and [ErrRequestCancelled]. An error response is returned as an *Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	<-c.ready
	// The connection picks the id, so $/cancel_request can name it; every outgoing call
	// picks one, so none clashes with jsonrpc2's own sequence.
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	c.codec.expect(id.Num) // the result comes by id, not through jsonrpc2 (see codec.expect)
	w, err := c.rpc.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		c.codec.takeResult(id.Num)
		return fmt.Errorf("acp: %s: %w", method, closedErr(err))
	}
	var raw json.RawMessage
	err = w.Wait(ctx, &raw)
	if kept, ok := c.codec.takeResult(id.Num); ok {
		raw = kept
	}
	if err == nil && result != nil {
		err = json.Unmarshal(raw, result)
	}
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

// Notify sends a notification. It returns once the notification is written, so notifications
// and replies issued by one goroutine reach the wire in the order they were issued. Params
// that are already JSON (a json.RawMessage, or a struct holding one) are copied, compacted.
//
// The codec writes the line itself, params encoded once: going through jsonrpc2.Conn.Notify
// would encode them four times over and cost the daemon an eighth of its CPU time in the
// 1,000-call turn (see the package doc). Its place in the wire order is kept by the stream's
// write lock, which jsonrpc2's own writes take too.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	<-c.ready
	if err := c.writeNotification(method, params); err != nil {
		return fmt.Errorf("acp: %s: %w", method, err)
	}
	return nil
}

func (c *Conn) writeNotification(method string, params any) error {
	select {
	case <-c.rpc.DisconnectNotify():
		return ErrClosed
	default:
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encoding params: %w", err)
	}
	const head, mid = `{"jsonrpc":"2.0","method":`, `,"params":`
	line := make([]byte, 0, len(head)+len(method)+len(mid)+len(raw)+8) // one allocation, mostly
	line = append(jsonscan.AppendString(append(line, head...), method), mid...)
	line = append(jsonscan.AppendValidUTF8(line, raw), '}', '\n')
	if err := c.codec.writeLine(line); err != nil {
		select {
		case <-c.rpc.DisconnectNotify():
			return ErrClosed
		default:
			return err
		}
	}
	return nil
}

// rpcHandler adapts a Conn to jsonrpc2.Handler without exporting Handle.
type rpcHandler struct{ c *Conn }

// Handle runs on jsonrpc2's read goroutine, one message at a time in arrival order (see the
// package doc), so everything here and every route's start function happens in that order;
// slow work runs on goroutines.
func (h rpcHandler) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	c := h.c
	<-c.ready
	var params json.RawMessage
	if req.Params != nil {
		var err error
		if params, err = c.codec.takeParams(*req.Params); err != nil {
			if !req.Notif {
				c.reply(req.ID, nil, fmt.Errorf("%w: %v", ErrInvalidParams, err))
			}
			return
		}
	}
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
		result, err := protect(c.log, req.Method, run)
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
	}
	route, ok := c.routes[method]
	if !ok || !route.notification {
		return // unknown notifications, "_" extensions included, are ignored
	}
	if _, _, err := c.startRoute(c.ctx, method, route, params); err != nil {
		c.log.Debug("acp: notification failed", "method", method, "error", err)
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

func protect(log *slog.Logger, method string, run func() (any, error)) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("acp: handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
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

// reply sends the one reply of request id. The result is encoded first, so one that fails to
// encode is answered with -32603 instead and nothing else is written.
func (c *Conn) reply(id jsonrpc2.ID, result any, err error) {
	var sendErr error
	if err == nil {
		if result == nil {
			result = struct{}{} // results are objects; {} rather than null
		}
		raw, encErr := json.Marshal(result)
		if encErr == nil {
			// SendResponse, not Reply: Reply would encode the encoded result once more.
			sendErr = c.rpc.SendResponse(context.Background(), &jsonrpc2.Response{ID: id, Result: (*json.RawMessage)(&raw)})
		} else {
			c.log.Warn("acp: encoding a result", "id", id.String(), "error", encErr)
			err = fmt.Errorf("%w: encoding the result: %w", ErrInternal, encErr)
		}
	}
	if err != nil {
		we := toWireError(err)
		rpcErr := &jsonrpc2.Error{Code: we.Code, Message: we.Message}
		if len(we.Data) > 0 && json.Valid(we.Data) {
			data := we.Data
			rpcErr.Data = (*json.RawMessage)(&data)
		}
		sendErr = c.rpc.ReplyWithError(context.Background(), id, rpcErr)
	}
	if sendErr != nil && !errors.Is(sendErr, jsonrpc2.ErrClosed) {
		c.log.Warn("acp: sending reply", "id", id.String(), "error", sendErr)
	}
}

// rpcID converts a validated request id (a JSON string or non-negative integer) into
// jsonrpc2's form, as jsonrpc2 itself reads it: two spellings of one id ("a" and "\u0061", 0
// and -0) are the same ID, and a string never equals a number.
func rpcID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	if !validID(raw) {
		return jsonrpc2.ID{}, false
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return jsonrpc2.ID{Str: s, IsString: true}, true
	}
	n, _ := strconv.ParseInt(string(raw), 10, 64)
	return jsonrpc2.ID{Num: uint64(n)}, true
}

// slogPrintf adapts slog to jsonrpc2's Printf logger.
type slogPrintf struct{ l *slog.Logger }

func (s slogPrintf) Printf(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
