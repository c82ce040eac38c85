package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dsh-tools/dshd/internal/jsonscan"
	"io"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"
)

// Direction says which way a message travelled, from the point of view of one [Conn].
type Direction int

const (
	// Inbound messages were read from the peer.
	Inbound Direction = iota
	// Outbound messages were written to the peer.
	Outbound
)

// lineStream is the jsonrpc2.ObjectStream for ACP's stdio framing: one compact JSON message
// per line. Unlike jsonrpc2's own streams it never gives up on bad input: a line that is not
// JSON is answered with -32700, a structurally invalid message with -32600, and reading
// carries on. Lines may be of any length (bufio.Reader, never bufio.Scanner's 64 KiB token
// limit).
//
// jsonrpc2 reads and writes through it, but neither side pays for jsonrpc2's generic
// encoding (a map per request, params re-marshalled at every level):
//
//   - Reading: each line is scanned once here (readMessage). jsonrpc2 is handed a small
//     stand-in holding only the envelope (id and method, or id and a null result); the
//     original params and result bytes are kept in current and picked up on the read
//     goroutine, by the handler (takeParams) or by onRecv for a response.
//   - Writing: messages jsonrpc2 sends (responses, outgoing requests) are built by onSend,
//     which jsonrpc2 calls under its send lock just before WriteObject, from the already
//     encoded result or params; WriteObject writes that line. Notifications do not go through
//     jsonrpc2: the connection writes their lines itself with writeLine.
type lineStream struct {
	r      *bufio.Reader
	closer io.Closer

	// wmu serialises every write, jsonrpc2's (WriteObject) and the connection's own
	// (writeLine): each message goes out whole, and in the order the writers took the lock.
	wmu sync.Mutex
	w   io.Writer

	tap func(Direction, []byte) // optional; sees each message in wire order
	log func(msg string, args ...any)

	// current is the message ReadObject last handed to jsonrpc2, standIn the buffer its
	// stand-in was built in. jsonrpc2 handles each message (Handle, or OnRecv for a
	// response) on its read goroutine before it reads the next, so only that goroutine
	// touches them.
	current message
	standIn []byte

	// kept holds decoded notification stand-ins by method, all of type keptType (the value
	// jsonrpc2 reads into); see reuseNotification. Read goroutine only.
	kept     map[string]reflect.Value
	keptType reflect.Type

	// prepared is the line onSend built for the message jsonrpc2 is about to pass to
	// WriteObject. jsonrpc2 calls both under its send lock, so that lock guards it.
	prepared *[]byte
}

func newLineStream(rwc io.ReadWriteCloser, tap func(Direction, []byte), log func(string, ...any)) *lineStream {
	return &lineStream{r: bufio.NewReaderSize(rwc, 64<<10), w: rwc, closer: rwc, tap: tap, log: log}
}

// writeLine writes one message; line is complete JSON followed by its newline, so a message
// is one Write and never interleaved with another.
func (s *lineStream) writeLine(line []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.tap != nil {
		s.tap(Outbound, line[:len(line)-1])
	}
	_, err := s.w.Write(line)
	return err
}

// Close closes the underlying stream.
func (s *lineStream) Close() error { return s.closer.Close() }

// WriteObject implements jsonrpc2.ObjectStream: it writes the line onSend prepared for obj,
// or, for a message onSend could not build, obj as encoding/json writes it.
func (s *lineStream) WriteObject(obj any) error {
	if buf := s.prepared; buf != nil {
		s.prepared = nil
		defer putBuf(buf)
		return s.writeLine(*buf)
	}
	data, err := appendMarshal(nil, obj)
	if err != nil {
		return fmt.Errorf("acp: encoding message: %w", err)
	}
	return s.writeLine(append(data, '\n'))
}

// onSend is jsonrpc2's OnSend hook: it builds the line of the request or response jsonrpc2
// is about to write, from parts that are already JSON (params jsonrpc2 marshalled, a result
// the connection encoded), copied and not re-validated.
func (s *lineStream) onSend(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	if s.prepared != nil { // a send that failed after onSend: only on a closed connection
		putBuf(s.prepared)
		s.prepared = nil
	}
	buf := getBuf()
	line, ok := appendRPCMessage(*buf, req, resp)
	if !ok {
		putBuf(buf)
		return
	}
	*buf = line
	s.prepared = buf
}

// ReadObject implements jsonrpc2.ObjectStream. It reads lines until one holds a well-formed
// JSON-RPC message (answering or logging bad ones, see readMessage), keeps it as current and
// decodes its stand-in into v.
func (s *lineStream) ReadObject(v any) error {
	for {
		m, err := s.readMessage()
		if err != nil {
			return err
		}
		s.current = m
		isNotification := m.isCall && m.id == nil
		if isNotification && s.reuseNotification(v, m.method) {
			return nil
		}
		s.standIn = appendStandIn(s.standIn[:0], m)
		if err := json.Unmarshal(s.standIn, v); err != nil {
			// Cannot happen for a validated message; answered, never fatal to the connection.
			reflect.ValueOf(v).Elem().SetZero()
			s.current = message{}
			if m.isCall && m.id != nil {
				s.replyError(m.id, CodeInvalidRequest, "invalid request: "+err.Error())
			} else {
				s.log("acp: dropping a message jsonrpc2 could not read", "error", err)
			}
			continue
		}
		if isNotification {
			s.keepNotification(v, m.method)
		}
		return nil
	}
}

// maxKeptNotifications bounds the notification stand-ins kept decoded: one per method, for
// the first few methods seen (a peer's own, unknown methods cannot grow it).
const maxKeptNotifications = 16

// reuseNotification fills v with the decoded stand-in of an earlier notification of method,
// if one was kept, and reports whether it did. A notification's stand-in is the same for
// every notification of a method ({"jsonrpc":"2.0","method":…}), so jsonrpc2 is handed the
// same decoded value again instead of decoding it again: on a session/load replay of 10,000
// session/update notifications the decoding (a map per request in jsonrpc2 v0.2.3) would
// otherwise cost more than reading them. The value holds a *jsonrpc2.Request that is shared
// between those notifications; neither jsonrpc2 nor the handler modifies a received request.
func (s *lineStream) reuseNotification(v any, method string) bool {
	rv := reflect.ValueOf(v)
	if rv.Type() != s.keptType {
		return false
	}
	kept, ok := s.kept[method]
	if ok {
		rv.Elem().Set(kept)
	}
	return ok
}

// keepNotification keeps v, just decoded from a notification's stand-in, for reuse.
func (s *lineStream) keepNotification(v any, method string) {
	rv := reflect.ValueOf(v)
	if s.kept == nil {
		s.keptType = rv.Type()
		s.kept = map[string]reflect.Value{}
	}
	if rv.Type() != s.keptType || len(s.kept) >= maxKeptNotifications {
		return
	}
	kept := reflect.New(s.keptType.Elem()).Elem()
	kept.Set(rv.Elem())
	s.kept[method] = kept
}

// appendStandIn appends what jsonrpc2 gets to see of m: its envelope without the params (a
// request or notification) or with a null result (a success response; the real result is
// restored by onRecv). An error response is passed whole, its error re-encoded compactly.
func appendStandIn(dst []byte, m message) []byte {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if m.id != nil {
		dst = append(append(dst, `,"id":`...), m.id...)
	}
	switch {
	case m.isCall:
		dst = jsonscan.AppendString(append(dst, `,"method":`...), m.method)
	case m.err != nil:
		dst = appendErrorMember(dst, m.err)
	default:
		dst = append(dst, `,"result":null`...)
	}
	return append(dst, '}')
}

// takeParams returns the params of the request or notification jsonrpc2 is handling (nil if
// it had none). Only the read goroutine calls it, from the handler.
func (s *lineStream) takeParams() json.RawMessage {
	p := s.current.params
	s.current = message{}
	return p
}

// onRecv is jsonrpc2's OnRecv hook, called on the read goroutine for each message it read:
// for a response to one of our calls it puts the real result back in place of the stand-in's
// null, so the waiting call decodes the original bytes, once.
func (s *lineStream) onRecv(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	if resp == nil {
		return
	}
	if req != nil && s.current.result != nil {
		result := s.current.result
		resp.Result = &result
	}
	s.current = message{}
}

// message is one well-formed inbound JSON-RPC message: a request (method set, id non-nil), a
// notification (method set, id nil) or a response (no method). Its raw parts are the exact
// bytes of the line, validated.
type message struct {
	isCall bool // a request or a notification
	method string
	id     json.RawMessage // nil for notifications; "id":null counts as absent
	params json.RawMessage // nil when absent
	result json.RawMessage
	err    *Error // set on error responses
}

// readMessage reads lines until one holds a well-formed JSON-RPC message and returns it. Bad
// lines are answered (or, for bad responses and notifications, logged) and skipped.
func (s *lineStream) readMessage() (message, error) {
	for {
		line, err := readLine(s.r)
		if len(line) == 0 {
			if err != nil {
				return message{}, err
			}
			continue // blank line
		}
		if s.tap != nil {
			s.tap(Inbound, line)
		}
		if m, ok := s.decode(line); ok {
			return m, nil
		}
		if err != nil {
			return message{}, err
		}
	}
}

// readLine returns the next line without its terminator (\n or \r\n), of any length.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadBytes('\n')
	line = bytes.TrimRight(line, "\r\n")
	line = bytes.TrimSpace(line)
	return line, err
}

// wireMessage is the envelope of an inbound line.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// decode checks line and decodes its message, reporting whether it holds one. The line is
// scanned by one json.Unmarshal; params and results stay raw, for their consumers to decode.
func (s *lineStream) decode(line []byte) (message, bool) {
	// One pass validates the JSON and extracts the envelope (fastEnvelope, or else
	// json.Unmarshal, which reports what is wrong); a second, cheap one checks UTF-8, which
	// encoding/json would otherwise silently replace.
	m, fast := fastEnvelope(line)
	var err error
	if !fast {
		m = wireMessage{}
		err = json.Unmarshal(line, &m)
	}
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &syntaxErr) || !utf8.Valid(line):
		s.replyError(nil, CodeParseError, "parse error: not a JSON value (or not UTF-8)")
		return message{}, false
	case line[0] == '[':
		s.replyError(nil, CodeInvalidRequest, "invalid request: ACP v1 has no JSON-RPC batches")
		return message{}, false
	case err != nil || line[0] != '{':
		s.replyError(nil, CodeInvalidRequest, "invalid request: not a JSON-RPC message object")
		return message{}, false
	}
	idOK := m.ID == nil || isNull(m.ID) || validID(m.ID)
	replyID := m.ID
	if !idOK {
		replyID = nil
	}
	if m.JSONRPC == nil || *m.JSONRPC != "2.0" {
		s.invalid(m, replyID, `invalid request: "jsonrpc" must be "2.0"`)
		return message{}, false
	}
	var method string
	if m.Method != nil {
		switch {
		case json.Unmarshal(m.Method, &method) != nil:
			s.invalid(m, replyID, `invalid request: "method" must be a string`)
			return message{}, false
		case !idOK:
			s.invalid(m, nil, `invalid request: "id" must be a non-negative integer or a string`)
			return message{}, false
		case m.Result != nil || m.Error != nil:
			s.invalid(m, replyID, "invalid request: a request cannot carry a result or an error")
			return message{}, false
		case m.Params != nil && !isNull(m.Params) && m.Params[0] != '{' && m.Params[0] != '[':
			s.invalid(m, replyID, `invalid request: "params" must be an object`)
			return message{}, false
		}
	} else {
		// A null member of a response counts as absent: peers whose JSON-RPC types carry
		// both members write "error":null beside a result (and "result":null beside an
		// error). A null result alone is a result.
		if isNull(m.Error) {
			m.Error = nil
		}
		if m.Error != nil && isNull(m.Result) {
			m.Result = nil
		}
		if m.ID == nil || !idOK || (m.Result == nil) == (m.Error == nil) {
			s.replyError(nil, CodeInvalidRequest, "invalid request: neither a request nor a response")
			return message{}, false
		}
	}
	if m.Method == nil {
		out := message{id: m.ID, result: m.Result}
		if m.Error != nil {
			var e struct {
				Code    *int64          `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(m.Error, &e); err != nil || e.Code == nil {
				s.log("acp: dropping malformed response", "error", err)
				return message{}, false
			}
			out.err = &Error{Code: *e.Code, Message: e.Message, Data: e.Data}
			out.result = nil
		}
		return out, true
	}
	out := message{isCall: true, method: method, params: m.Params}
	if m.ID != nil && !isNull(m.ID) {
		out.id = m.ID
	}
	return out, true
}

// invalid answers a structurally invalid message with -32600, unless it is a notification,
// which never gets a reply.
func (s *lineStream) invalid(m wireMessage, id json.RawMessage, msg string) {
	if m.Method != nil && m.ID == nil {
		s.log("acp: dropping invalid notification", "reason", msg)
		return
	}
	s.replyError(id, CodeInvalidRequest, msg)
}

func (s *lineStream) replyError(id json.RawMessage, code int64, msg string) {
	buf := getBuf()
	defer putBuf(buf)
	*buf = appendErrorResponse(*buf, id, &Error{Code: code, Message: msg})
	if err := s.writeLine(*buf); err != nil {
		s.log("acp: writing error reply", "error", err)
	}
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// validID accepts what jsonrpc2 can echo faithfully: strings and non-negative int64 integers.
// (jsonrpc2 v0.2.3 would wrap a negative id into a huge unsigned one.)
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n >= 0
}

// MarshalJSON lets *Error be written as a JSON-RPC error object.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data})
}

// ErrClosed is returned by calls on a connection that has closed.
var ErrClosed = errors.New("acp: connection closed")

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
