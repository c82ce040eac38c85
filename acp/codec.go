package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/internal/jsonscan"
)

// Direction says which way a message travelled, from the point of view of one [Conn].
type Direction int

const (
	// Inbound messages were read from the peer.
	Inbound Direction = iota
	// Outbound messages were written to the peer.
	Outbound
)

// codec is the jsonrpc2.ObjectStream for ACP's stdio framing: one compact JSON-RPC message
// per line, valid UTF-8. Unlike jsonrpc2's own streams it never gives up on bad input (a
// ReadObject error closes jsonrpc2's connection): a line that is not JSON or not UTF-8 is
// answered with -32700, a structurally invalid message with -32600, and reading carries on.
// Every message it hands to jsonrpc2 is one jsonrpc2 reads (see canonical). Lines may be of
// any length (bufio.Reader, never bufio.Scanner's 64 KiB token limit).
type codec struct {
	r      *bufio.Reader
	closer io.Closer
	log    *slog.Logger

	// wmu serialises writes (jsonrpc2's through WriteObject, and the codec's own replies to
	// bad lines), so each message goes out whole, in the order the writers took the lock.
	wmu sync.Mutex
	w   io.Writer
	tap func(Direction, []byte) // optional; sees each message in wire order

	msg []byte // the canonical form of the message being read; read goroutine only

	// params holds each inbound call's params while jsonrpc2 carries a token in their
	// place (see takeParams).
	pmu     sync.Mutex
	params  map[uint64]json.RawMessage
	nextTok uint64

	// results holds, by id, the result of each outbound call the Conn waits for while jsonrpc2
	// carries resultToken in its place (see expect); nil until the response is read.
	rmu     sync.Mutex
	results map[uint64]json.RawMessage
}

// resultToken is what jsonrpc2 carries as the result of a call the Conn waits for (see
// expect): jsonrpc2 decodes a response's result into an interface{} to tell a response from a
// request, and copies it twice more, a third of the time a 4 KiB fs/read_text_file answer
// takes to receive (BenchmarkCall). The Conn takes the exact bytes by the call's id; like
// paramsToken this relies only on jsonrpc2 passing a result through unchanged and handing
// each response to the call with its id (TestCodecResultByID).
const resultToken = `"acp-result"`

// expect makes the result of the response with id wait for takeResult instead of going
// through jsonrpc2.
func (s *codec) expect(id uint64) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.results == nil {
		s.results = map[uint64]json.RawMessage{}
	}
	s.results[id] = nil
}

// keepResult keeps the result of the first response to an expected id, reporting whether it
// did. Any other response goes to jsonrpc2 as it is.
func (s *codec) keepResult(id json.RawMessage, result json.RawMessage) bool {
	n, err := strconv.ParseUint(string(id), 10, 64)
	if err != nil {
		return false // a string id: never one of the Conn's
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if got, ok := s.results[n]; !ok || got != nil {
		return false
	}
	s.results[n] = result
	return true
}

// takeResult forgets id, returning the result kept for it, if any.
func (s *codec) takeResult(id uint64) (json.RawMessage, bool) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	r, ok := s.results[id]
	delete(s.results, id)
	return r, ok && r != nil
}

// paramsToken is what jsonrpc2 carries as a call's params: jsonrpc2's Request.UnmarshalJSON
// decodes params through a map[string]any and encodes them again, ~30 µs for each
// session/update a Go client receives (10x the rest of receiving one; Receive10k). A JSON
// string stands in, which jsonrpc2 passes through unchanged, and the handler takes the exact
// bytes by it. Genuine params are objects or arrays (check refuses anything else), so a
// string is always a token; correctness rests on nothing but that pass-through, not on when
// or in what order jsonrpc2 runs the handler (TestCodecParamsByToken).
const paramsToken = "acp-params:"

// stash keeps params and returns the token that stands in for them.
func (s *codec) stash(params json.RawMessage) []byte {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.params == nil {
		s.params = map[uint64]json.RawMessage{}
	}
	s.nextTok++
	s.params[s.nextTok] = params
	return append(strconv.AppendUint([]byte(`"`+paramsToken), s.nextTok, 10), '"')
}

// takeParams returns the params a call arrived with, given what jsonrpc2 handed the handler
// (a token, or the params themselves for messages the codec did not read).
func (s *codec) takeParams(got json.RawMessage) (json.RawMessage, error) {
	if len(got) == 0 || got[0] != '"' {
		return got, nil
	}
	// jsonrpc2 hands back the token as stash wrote it: json.Marshal of a string of ASCII
	// letters, digits and punctuation it does not escape.
	rest, ok := bytes.CutPrefix(got, []byte(`"`+paramsToken))
	rest, closed := bytes.CutSuffix(rest, []byte(`"`))
	n, err := strconv.ParseUint(string(rest), 10, 64)
	if !ok || !closed || err != nil {
		return nil, fmt.Errorf("acp: params %s are not an object", got)
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	p, ok := s.params[n]
	if !ok {
		return nil, fmt.Errorf("acp: no params for %s", got)
	}
	delete(s.params, n)
	return p, nil
}

func newCodec(rwc io.ReadWriteCloser, tap func(Direction, []byte), log *slog.Logger) *codec {
	return &codec{r: bufio.NewReaderSize(rwc, 64<<10), w: rwc, closer: rwc, tap: tap, log: log}
}

// Close closes the underlying stream.
func (s *codec) Close() error { return s.closer.Close() }

// WriteObject implements jsonrpc2.ObjectStream: obj encoded once (see encodeMessage), on one
// line, with each byte that is not UTF-8 sent as \ufffd (encoding/json copies a
// json.RawMessage such as rawOutput as it is, but the wire must be UTF-8).
func (s *codec) WriteObject(obj any) error {
	data, err := encodeMessage(obj)
	if err != nil {
		return fmt.Errorf("acp: encoding message: %w", err)
	}
	if !utf8.Valid(data) {
		data = jsonscan.AppendValidUTF8(nil, data)
	}
	return s.writeLine(append(data, '\n'))
}

// encodeMessage returns obj's JSON on one line. jsonrpc2 hands WriteObject each message as a
// json.Marshaler whose output is json.Marshal's own; json.Marshal(obj) would validate and
// compact those bytes once more, a third of writing a reply (BenchmarkWriteObject). A
// Marshaler's output is valid JSON by encoding/json's contract, so it is used as it is and
// compacted only if it spans lines; anything else goes through json.Marshal.
func encodeMessage(obj any) ([]byte, error) {
	m, ok := obj.(json.Marshaler)
	if !ok {
		return json.Marshal(obj)
	}
	data, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if bytes.ContainsAny(data, "\r\n") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return nil, err
		}
		data = buf.Bytes()
	}
	return data, nil
}

// writeLine writes one message; line is complete JSON followed by its newline, so a message
// is one Write and never interleaved with another.
func (s *codec) writeLine(line []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.tap != nil {
		s.tap(Outbound, line[:len(line)-1])
	}
	_, err := s.w.Write(line)
	return err
}

// ReadObject implements jsonrpc2.ObjectStream. It reads lines until one holds a well-formed
// JSON-RPC message (answering or logging bad ones, see check) and decodes that message's
// canonical form into v. It fails only when reading fails.
func (s *codec) ReadObject(v any) error {
	for {
		line, err := readLine(s.r)
		if len(line) > 0 {
			if s.tap != nil {
				s.tap(Inbound, line)
			}
			if m, ok := s.check(line); ok {
				switch {
				case m.isCall && len(m.params) > 0 && !isNull(m.params):
					m.params = s.stash(m.params)
				case !m.isCall && m.err == nil && s.keepResult(m.id, m.result):
					m.result = json.RawMessage(resultToken)
				}
				s.msg = m.canonical(s.msg[:0])
				if uerr := decodeMessage(s.msg, v); uerr != nil {
					// Not reached: canonical builds what jsonrpc2 reads (FuzzCodec).
					return fmt.Errorf("acp: jsonrpc2 cannot read %s: %w", s.msg, uerr)
				}
				return nil
			}
		}
		if err != nil {
			return err
		}
	}
}

// decodeMessage decodes a canonical message into v, jsonrpc2's message. That is a
// json.Unmarshaler, given the bytes directly: they are valid JSON (canonical builds them), so
// json.Unmarshal would only check them once more before making the same call.
func decodeMessage(msg []byte, v any) error {
	if u, ok := v.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(msg)
	}
	return json.Unmarshal(msg, v)
}

// readLine returns the next line without its terminator and surrounding white space, of any
// length. The line may be the reader's own buffer, valid until the next read: nothing the
// codec keeps refers to it (check copies what it keeps, and the tap must copy too), so a
// line that fits the buffer is never copied.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		long := bytes.Clone(line)
		for err == bufio.ErrBufferFull {
			line, err = r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	return bytes.TrimSpace(line), err
}

// message is one well-formed inbound JSON-RPC message: a request (method set, id non-nil), a
// notification (method set, id nil) or a response (no method). Its raw parts are the exact
// bytes of the line, validated.
type message struct {
	isCall bool
	method string
	id     json.RawMessage // nil for notifications; "id":null counts as absent
	params json.RawMessage // nil when absent
	result json.RawMessage
	err    *Error // set on error responses
}

// canonical appends m as jsonrpc2 reads it: each member once, under its exact name (the line
// may repeat members or spell them in another case, which encoding/json accepts), with the
// original id, params and result bytes.
func (m message) canonical(dst []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if m.id != nil {
		dst = append(append(dst, `,"id":`...), m.id...)
	}
	switch {
	case m.isCall:
		dst = jsonscan.AppendString(append(dst, `,"method":`...), m.method)
		if m.params != nil {
			dst = append(append(dst, `,"params":`...), m.params...)
		}
	case m.err != nil:
		e, _ := json.Marshal(m.err) // *Error.MarshalJSON: code, message and valid data
		dst = append(append(dst, `,"error":`...), e...)
	default:
		dst = append(append(dst, `,"result":`...), m.result...)
	}
	return append(dst, '}')
}

// wireMessage is the envelope of an inbound line.
type wireMessage struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// check decodes line's message, reporting whether it holds one; a line that does not is
// answered (or, for bad responses and notifications, logged).
func (s *codec) check(line []byte) (message, bool) {
	var m wireMessage
	err := json.Unmarshal(line, &m)
	switch {
	case isSyntaxError(err) || !utf8.Valid(line): // encoding/json would replace bad UTF-8
		s.replyError(nil, CodeParseError, "parse error: not a JSON value (or not UTF-8)")
		return message{}, false
	case line[0] == '[':
		s.replyError(nil, CodeInvalidRequest, "invalid request: ACP v1 has no JSON-RPC batches")
		return message{}, false
	case err != nil || line[0] != '{' || (m.JSONRPC != nil && m.JSONRPC[0] != '"' && !isNull(m.JSONRPC)):
		s.replyError(nil, CodeInvalidRequest, "invalid request: not a JSON-RPC message object")
		return message{}, false
	}
	idOK := m.ID == nil || isNull(m.ID) || validID(m.ID)
	replyID := m.ID
	if !idOK {
		replyID = nil
	}
	if !isVersion2(m.JSONRPC) {
		s.invalid(m, replyID, `invalid request: "jsonrpc" must be "2.0"`)
		return message{}, false
	}
	if m.Method != nil {
		method := string(plainString(m.Method)) // most methods; escaped ones are decoded
		switch {
		case method == "" && json.Unmarshal(m.Method, &method) != nil:
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
		out := message{isCall: true, method: method, params: m.Params}
		if m.ID != nil && !isNull(m.ID) {
			out.id = normalID(m.ID)
		}
		return out, true
	}
	// A null member of a response counts as absent: peers whose JSON-RPC types carry both
	// members write "error":null beside a result (and "result":null beside an error). A null
	// result alone is a result.
	if isNull(m.Error) {
		m.Error = nil
	}
	if m.Error != nil && isNull(m.Result) {
		m.Result = nil
	}
	if m.ID == nil || isNull(m.ID) || !idOK || (m.Result == nil) == (m.Error == nil) {
		s.replyError(nil, CodeInvalidRequest, "invalid request: neither a request nor a response")
		return message{}, false
	}
	out := message{id: normalID(m.ID), result: m.Result}
	if m.Error != nil {
		var e struct {
			Code    *int64          `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(m.Error, &e); err != nil || e.Code == nil {
			s.log.Debug("acp: dropping malformed response", "error", err)
			return message{}, false
		}
		out.err = &Error{Code: *e.Code, Message: e.Message, Data: e.Data}
		out.result = nil
	}
	return out, true
}

// invalid answers a structurally invalid message with -32600, unless it is a notification,
// which never gets a reply.
func (s *codec) invalid(m wireMessage, id json.RawMessage, msg string) {
	if m.Method != nil && m.ID == nil {
		s.log.Debug("acp: dropping invalid notification", "reason", msg)
		return
	}
	s.replyError(id, CodeInvalidRequest, msg)
}

// replyError answers a line jsonrpc2 never sees; a nil id is written as null.
func (s *codec) replyError(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	line, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *Error          `json:"error"`
	}{"2.0", id, &Error{Code: code, Message: msg}})
	if err == nil {
		err = s.writeLine(append(line, '\n'))
	}
	if err != nil {
		s.log.Debug("acp: writing error reply", "error", err)
	}
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// isSyntaxError reports whether err says the input is not JSON at all.
func isSyntaxError(err error) bool {
	if err == nil {
		return false
	}
	var syntaxErr *json.SyntaxError
	return errors.As(err, &syntaxErr)
}

// isVersion2 reports whether a "jsonrpc" member is the string "2.0", however spelled.
func isVersion2(raw json.RawMessage) bool {
	if string(raw) == `"2.0"` {
		return true
	}
	var v string
	return raw != nil && raw[0] == '"' && json.Unmarshal(raw, &v) == nil && v == "2.0"
}

// validID accepts what jsonrpc2 reads and echoes faithfully: strings and non-negative int64
// integers (jsonrpc2 v0.2.3 would wrap a negative id into a huge unsigned one).
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

// normalID spells a valid numeric id as jsonrpc2 reads every id of a response ("-0" is 0).
func normalID(raw json.RawMessage) json.RawMessage {
	if raw[0] == '"' {
		return raw
	}
	n, _ := strconv.ParseInt(string(raw), 10, 64)
	return strconv.AppendInt(nil, n, 10)
}

// MarshalJSON lets *Error be written as a JSON-RPC error object. Data that is not valid JSON
// is left out rather than failing the whole message.
func (e *Error) MarshalJSON() ([]byte, error) {
	data := e.Data
	if len(data) > 0 && !json.Valid(data) {
		data = nil
	}
	return json.Marshal(struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, data})
}

// ErrClosed is returned by calls on a connection that has closed.
var ErrClosed = errors.New("acp: connection closed")
