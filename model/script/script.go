package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
)

// Script is a parsed, validated script.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Turn answers one prompt.
type Turn struct {
	// Match is a Go regexp; empty fits any prompt.
	Match     string     `json:"match,omitempty"`
	Responses []Response `json:"responses"`
	re        *regexp.Regexp
}

// Response is one model response.
type Response struct {
	DelayMs    int        `json:"delayMs,omitempty"`
	Thought    Strings    `json:"thought,omitempty"`
	Text       Strings    `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
	StopReason string     `json:"stopReason,omitempty"`
}

// ToolCall is one scripted call. Arguments is sent as its JSON text;
// RawArguments, when set, is sent verbatim (to exercise invalid JSON).
type ToolCall struct {
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	RawArguments *string         `json:"rawArguments,omitempty"`
}

// Usage is reported with the response.
type Usage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// Strings is a string or an array of strings in JSON; each element is
// streamed as one chunk.
type Strings []string

// UnmarshalJSON accepts a string or an array of strings.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		// A type error lets the decoder add the field path.
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[Strings]()}
	}
	*s = many
	return nil
}

func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array with a non-string element"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// MarshalJSON writes a single chunk as a string, several as an array.
func (s Strings) MarshalJSON() ([]byte, error) {
	if len(s) == 1 {
		return json.Marshal(s[0])
	}
	return json.Marshal([]string(s))
}

// Error is a problem with a script: a JSON syntax or type error (with its
// line and column) or an invalid value (with its path).
type Error struct {
	File         string // empty when parsed from bytes
	Line, Column int    // 0 when unknown
	Path         string // e.g. turns[0].responses[1].toolCalls[0].name
	Msg          string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.File == "" {
		b.WriteString("script")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads and parses a script file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	s, err := Parse(data)
	var se *Error
	if errors.As(err, &se) {
		se.File = path
	}
	return s, err
}

// Parse decodes and validates a script. Unknown fields are errors, so a
// misspelt key is not silently ignored.
func Parse(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, decodeError(data, dec, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		line, col := position(data, dec.InputOffset()-1)
		return nil, &Error{Line: line, Column: col, Msg: "unexpected data after the script object"}
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

func decodeError(data []byte, dec *json.Decoder, err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the bad one included.
		line, col := position(data, syn.Offset-1)
		return &Error{Line: line, Column: col, Msg: "invalid JSON: " + syn.Error()}
	case errors.As(err, &typ):
		want := typ.Type.String()
		if typ.Type == reflect.TypeFor[Strings]() {
			want = "a string or an array of strings"
		}
		e := &Error{Path: typ.Field, Msg: fmt.Sprintf("expected %s, found JSON %s", want, typ.Value)}
		if typ.Offset > 0 {
			// Offset is just past the value: point at its last byte.
			e.Line, e.Column = position(data, typ.Offset-1)
		}
		return e
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(data, int64(len(data)))
		return &Error{Line: line, Column: col, Msg: "invalid JSON: unexpected end of input"}
	}
	// An unknown field: the decoder has read the whole object holding it,
	// so look back for the key itself.
	off := dec.InputOffset()
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		if i := bytes.LastIndex(data[:min(off, int64(len(data)))], []byte(name)); i >= 0 {
			off = int64(i)
		}
	}
	line, col := position(data, off)
	if strings.HasPrefix(msg, "unknown field") {
		msg += " (known fields: turns; match, responses; delayMs, thought, text, toolCalls, usage, stopReason; id, name, arguments, rawArguments; input, output)"
	}
	return &Error{Line: line, Column: col, Msg: msg}
}

// position turns a byte offset into a 1-based line and column (in bytes).
func position(data []byte, offset int64) (line, col int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

var stopReasons = map[string]bool{"": true, "end_turn": true, "max_tokens": true, "refusal": true}

func (s *Script) validate() error {
	if s.Turns == nil {
		return &Error{Msg: `missing "turns" (a script is {"turns": [...]})`}
	}
	for i := range s.Turns {
		t := &s.Turns[i]
		path := fmt.Sprintf("turns[%d]", i)
		if t.Match != "" {
			re, err := regexp.Compile(t.Match)
			if err != nil {
				return &Error{Path: path + ".match", Msg: "invalid regexp: " + err.Error()}
			}
			t.re = re
		}
		if len(t.Responses) == 0 {
			return &Error{Path: path + ".responses", Msg: "a turn needs at least one response"}
		}
		for j, r := range t.Responses {
			rpath := fmt.Sprintf("%s.responses[%d]", path, j)
			if r.DelayMs < 0 {
				return &Error{Path: rpath + ".delayMs", Msg: "must not be negative"}
			}
			if !stopReasons[r.StopReason] {
				return &Error{Path: rpath + ".stopReason", Msg: fmt.Sprintf("%q is not one of end_turn, max_tokens, refusal", r.StopReason)}
			}
			ids := map[string]bool{}
			for k, c := range r.ToolCalls {
				cpath := fmt.Sprintf("%s.toolCalls[%d]", rpath, k)
				if c.Name == "" {
					return &Error{Path: cpath + ".name", Msg: "a tool call needs a name"}
				}
				if c.Arguments != nil && c.RawArguments != nil {
					return &Error{Path: cpath, Msg: "give arguments or rawArguments, not both"}
				}
				if c.ID != "" && ids[c.ID] {
					return &Error{Path: cpath + ".id", Msg: fmt.Sprintf("duplicate id %q", c.ID)}
				}
				ids[c.ID] = true
			}
		}
	}
	return nil
}

// fits reports whether the turn answers a prompt with this text.
func (t *Turn) fits(prompt string) bool {
	return t.re == nil || t.re.MatchString(prompt)
}
