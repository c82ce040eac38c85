package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// lineStream is a jsonrpc2.ObjectStream for ACP's stdio framing: one compact JSON message per
// line. Unlike jsonrpc2's own streams it never gives up on bad input: a line that is not JSON
// is answered with -32700, a structurally invalid message with -32600, and reading carries on.
// Lines may be of any length (bufio.Reader, never bufio.Scanner's 64 KiB token limit).
type lineStream struct {
	r      *bufio.Reader
	closer io.Closer

	wmu sync.Mutex // serialises every write: jsonrpc2's and our own error replies
	w   io.Writer

	tap func(Direction, []byte) // optional; sees each message in wire order

	// stash holds the params of the request or notification last returned by ReadObject.
	// ReadObject and the handler run on jsonrpc2's read goroutine, one message at a time.
	stash    json.RawMessage
	stashSeq uint64
	log      func(msg string, args ...any)
}

func newLineStream(rwc io.ReadWriteCloser, tap func(Direction, []byte), log func(string, ...any)) *lineStream {
	return &lineStream{r: bufio.NewReaderSize(rwc, 64<<10), w: rwc, closer: rwc, tap: tap, log: log}
}

// WriteObject writes obj as one line.
func (s *lineStream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("acp: encoding message: %w", err)
	}
	return s.writeLine(data)
}

func (s *lineStream) writeLine(data []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.tap != nil {
		s.tap(Outbound, data)
	}
	// One Write per message, newline included, so a message is never interleaved.
	line := make([]byte, 0, len(data)+1)
	line = append(append(line, data...), '\n')
	_, err := s.w.Write(line)
	return err
}

// Close closes the underlying stream.
func (s *lineStream) Close() error { return s.closer.Close() }

// ReadObject reads lines until one holds a well-formed JSON-RPC message, which it decodes into
// v. Bad lines are answered (or, for bad responses and notifications, logged) and skipped.
func (s *lineStream) ReadObject(v any) error {
	for {
		line, err := readLine(s.r)
		if len(line) == 0 {
			if err != nil {
				return err
			}
			continue // blank line
		}
		if s.tap != nil {
			s.tap(Inbound, line)
		}
		if s.decode(line, v) {
			return nil
		}
		if err != nil {
			return err
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

// wireMessage is the envelope used to check a message's structure before jsonrpc2 sees it.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// decode checks line and decodes it into v, reporting whether v now holds a message.
func (s *lineStream) decode(line []byte, v any) bool {
	// One pass validates the JSON and extracts the envelope (json.Unmarshal checks the whole
	// input before decoding); a second, cheap one checks UTF-8, which encoding/json would
	// otherwise silently replace.
	var m wireMessage
	err := json.Unmarshal(line, &m)
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &syntaxErr) || !utf8.Valid(line):
		s.replyError(nil, CodeParseError, "parse error: not a JSON value (or not UTF-8)")
		return false
	case line[0] == '[':
		s.replyError(nil, CodeInvalidRequest, "invalid request: ACP v1 has no JSON-RPC batches")
		return false
	case err != nil || line[0] != '{':
		s.replyError(nil, CodeInvalidRequest, "invalid request: not a JSON-RPC message object")
		return false
	}
	idOK := m.ID == nil || isNull(m.ID) || validID(m.ID)
	replyID := m.ID
	if !idOK {
		replyID = nil
	}
	if m.JSONRPC == nil || *m.JSONRPC != "2.0" {
		s.invalid(m, replyID, `invalid request: "jsonrpc" must be "2.0"`)
		return false
	}
	if m.Method != nil {
		var method string
		switch {
		case json.Unmarshal(m.Method, &method) != nil:
			s.invalid(m, replyID, `invalid request: "method" must be a string`)
			return false
		case !idOK:
			s.invalid(m, nil, `invalid request: "id" must be a non-negative integer or a string`)
			return false
		case m.Result != nil || m.Error != nil:
			s.invalid(m, replyID, "invalid request: a request cannot carry a result or an error")
			return false
		case m.Params != nil && !isNull(m.Params) && m.Params[0] != '{' && m.Params[0] != '[':
			s.invalid(m, replyID, `invalid request: "params" must be an object`)
			return false
		}
	} else {
		if m.ID == nil || !idOK || (m.Result == nil) == (m.Error == nil) {
			s.replyError(nil, CodeInvalidRequest, "invalid request: neither a request nor a response")
			return false
		}
	}
	if m.Method != nil && m.Params != nil && !isNull(m.Params) {
		// jsonrpc2 v0.2.3 decodes params into map[string]any and re-marshals them: several
		// passes over a possibly huge payload, and key order lost. Hand it a stub instead; the
		// connection takes the original bytes back with unstash, on this same goroutine.
		s.stashSeq++
		s.stash = m.Params
		stub, err := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id,omitempty"`
			Method  json.RawMessage `json:"method"`
			Params  stashRef        `json:"params"`
		}{"2.0", m.ID, m.Method, stashRef{s.stashSeq}})
		if err != nil {
			s.replyError(replyID, CodeInternalError, err.Error())
			return false
		}
		line = stub
	}
	// Decode into a fresh value so a failure cannot leave v half-filled.
	fresh := reflect.New(reflect.TypeOf(v).Elem())
	if err := json.Unmarshal(line, fresh.Interface()); err != nil {
		if m.Method != nil {
			s.invalid(m, replyID, "invalid request: "+err.Error())
		} else {
			s.log("acp: dropping malformed response", "error", err)
		}
		return false
	}
	reflect.ValueOf(v).Elem().Set(fresh.Elem())
	return true
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
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *Error          `json:"error"`
	}{"2.0", id, &Error{Code: code, Message: msg}})
	if err == nil {
		err = s.writeLine(data)
	}
	if err != nil {
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

// idFromRequestID converts a $/cancel_request id into jsonrpc2's form.
func idFromRequestID(id RequestID) (jsonrpc2.ID, bool) {
	raw := json.RawMessage(id)
	if !validID(raw) {
		return jsonrpc2.ID{}, false
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return jsonrpc2.ID{Str: s, IsString: true}, true
	}
	n, _ := strconv.ParseUint(string(raw), 10, 64)
	return jsonrpc2.ID{Num: n}, true
}

// stashRef is the stub params jsonrpc2 sees in place of the real ones.
type stashRef struct {
	Seq uint64 `json:"acp.stash"`
}

// unstash returns the original params of the message whose stub params are stub.
func (s *lineStream) unstash(stub *json.RawMessage) json.RawMessage {
	if stub == nil {
		return nil
	}
	var ref stashRef
	if json.Unmarshal(*stub, &ref) != nil || ref.Seq == 0 || ref.Seq != s.stashSeq {
		return *stub // not stubbed (absent or null params)
	}
	p := s.stash
	s.stash = nil
	return p
}
