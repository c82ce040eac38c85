package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Direction says which way a message travelled, from the point of view of one [Conn].
type Direction int

const (
	// Inbound messages were read from the peer.
	Inbound Direction = iota
	// Outbound messages were written to the peer.
	Outbound
)

// lineStream is ACP's stdio framing: one compact JSON message per line. It never gives up on
// bad input: a line that is not JSON is answered with -32700, a structurally invalid message
// with -32600, and reading carries on. Lines may be of any length (bufio.Reader, never
// bufio.Scanner's 64 KiB token limit).
type lineStream struct {
	r      *bufio.Reader
	closer io.Closer

	wmu sync.Mutex // serialises every write, so each message goes out whole and in order
	w   io.Writer

	tap func(Direction, []byte) // optional; sees each message in wire order
	log func(msg string, args ...any)
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

// validID accepts strings and non-negative int64 integers (the ids jsonrpc2 v0.2.3 accepted,
// kept so the wire behaviour did not change when the connection stopped using it).
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

// idKey is the identity of a validated request id: two spellings of one id ("a" and
// "\u0061", 7 and 7) have the same key, and a string never collides with a number.
func idKey(raw json.RawMessage) string {
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return "s" + s
	}
	n, _ := strconv.ParseInt(string(raw), 10, 64)
	return "n" + strconv.FormatInt(n, 10) // "-0" and "0" are one id
}

// keyOfRequestID returns the key of a $/cancel_request id, if it is one a request can have.
func keyOfRequestID(id RequestID) (string, bool) {
	raw := json.RawMessage(id)
	if !validID(raw) {
		return "", false
	}
	return idKey(raw), true
}
