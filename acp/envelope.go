package acp

import (
	"bytes"
	"encoding/json"
	"github.com/dsh-tools/dshd/internal/jsonscan"
	"strconv"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// Every outgoing line is built here, envelope and all, in one pooled buffer, with the params
// or result encoded exactly once. Left to itself, jsonrpc2 v0.2.3 would json.Marshal the
// params into a RawMessage, re-marshal the request through a map, and encoding/json would
// validate and compact the params again at each level. Notifications are built whole here
// (appendNotification); the requests and responses jsonrpc2 sends are built from the params
// or result this package encoded (appendValue) by appendRPCMessage, in the stream's OnSend
// hook.

// maxPooledBuf bounds the buffers kept for reuse, so one huge message does not pin its
// buffer forever.
const maxPooledBuf = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// appendNotification appends a notification line (newline included).
func appendNotification(dst []byte, method string, params any) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = jsonscan.AppendString(dst, method)
	dst, err := appendParamsMember(dst, params)
	if err != nil {
		return nil, err
	}
	return append(dst, '}', '\n'), nil
}

// appendRPCMessage appends the line of a request or response jsonrpc2 sends, reporting false
// for a shape it does not build (jsonrpc2's extra fields and meta, which ACP does not use).
func appendRPCMessage(dst []byte, req *jsonrpc2.Request, resp *jsonrpc2.Response) ([]byte, bool) {
	var err error
	switch {
	case req != nil && resp == nil:
		if req.Meta != nil || len(req.ExtraFields) > 0 {
			return nil, false
		}
		dst = append(dst, `{"jsonrpc":"2.0",`...)
		if !req.Notif {
			dst = appendRPCID(append(dst, `"id":`...), req.ID)
			dst = append(dst, ',')
		}
		dst = jsonscan.AppendString(append(dst, `"method":`...), req.Method)
		if req.Params != nil {
			if dst, err = appendTrustedRaw(append(dst, `,"params":`...), *req.Params); err != nil {
				return nil, false
			}
		}
	case resp != nil && req == nil && resp.Meta == nil:
		dst = appendRPCID(append(dst, `{"jsonrpc":"2.0","id":`...), resp.ID)
		switch {
		case resp.Error != nil:
			e := &Error{Code: resp.Error.Code, Message: resp.Error.Message}
			if resp.Error.Data != nil {
				e.Data = *resp.Error.Data
			}
			dst = appendErrorMember(dst, e)
		case resp.Result != nil:
			if dst, err = appendTrustedRaw(append(dst, `,"result":`...), *resp.Result); err != nil {
				return nil, false
			}
		default:
			return nil, false
		}
	default:
		return nil, false
	}
	return append(dst, '}', '\n'), true
}

// appendRPCID appends id as JSON.
func appendRPCID(dst []byte, id jsonrpc2.ID) []byte {
	if id.IsString {
		return jsonscan.AppendString(dst, id.Str)
	}
	return strconv.AppendUint(dst, id.Num, 10)
}

// appendErrorResponse appends an error response line; a nil id is written as null.
func appendErrorResponse(dst []byte, id json.RawMessage, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	return append(appendErrorMember(dst, e), '}', '\n')
}

// appendErrorMember appends `,"error":{…}`.
func appendErrorMember(dst []byte, e *Error) []byte {
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, e.Code, 10)
	dst = append(dst, `,"message":`...)
	dst = jsonscan.AppendString(dst, e.Message)
	if len(e.Data) > 0 {
		// Invalid data is dropped rather than corrupting the line.
		if withData, err := appendRaw(append(dst, `,"data":`...), e.Data); err == nil {
			dst = withData
		}
	}
	return append(dst, '}')
}

// appendParamsMember appends `,"params":…` unless params is nil (no params member).
func appendParamsMember(dst []byte, params any) ([]byte, error) {
	if params == nil {
		return dst, nil
	}
	return appendValue(append(dst, `,"params":`...), params)
}

// appendValue appends v as compact JSON, exactly as json.Marshal would write it, encoding it
// once: the hot session/update shapes through the hand-written encoder, raw JSON compacted in
// one pass, anything else through one json.Marshal.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case *SessionNotification:
		if v != nil {
			return appendSessionNotification(dst, v)
		}
	case SessionNotification:
		return appendSessionNotification(dst, &v)
	case json.RawMessage:
		if v != nil {
			return appendRaw(dst, v)
		}
	}
	return appendMarshal(dst, v)
}

// appendSessionNotification appends n exactly as SessionNotification.MarshalJSON writes it.
func appendSessionNotification(dst []byte, n *SessionNotification) ([]byte, error) {
	dst = append(dst, `{"sessionId":`...)
	dst = jsonscan.AppendString(dst, n.SessionID)
	dst = append(dst, `,"update":`...)
	dst, err := appendSessionUpdate(dst, n.Update)
	if err != nil {
		return nil, err
	}
	if dst, err = appendMeta(dst, n.Meta); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// appendTrustedRaw appends raw JSON the caller vouches for (valid, produced by encoding/json
// or this package). Only the framing and the encoding are checked, cheaply: raw JSON holding
// a line break (which can only be insignificant whitespace) is compacted, and with it
// validated; bytes that are not UTF-8 (which encoding/json leaves in a json.RawMessage) are
// sent as \ufffd (see appendValidUTF8).
func appendTrustedRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return nil, errEmptyRaw
	}
	if bytes.IndexByte(raw, '\n') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
		return appendRaw(dst, raw)
	}
	return jsonscan.AppendValidUTF8(dst, raw), nil
}
