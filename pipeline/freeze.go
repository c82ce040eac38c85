package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// errNotUTF8 marks a result string that JSON would silently alter.
var errNotUTF8 = errors.New("a string is not valid UTF-8")

// normalise gives a result its one canonical Go shape, so that a lossless
// result equals its own JSON round trip:
//   - Content is never nil;
//   - a structured Error implies IsError, and IsError implies an Error
//     (code TOOL_ERROR when the tool gave none) and some content for the
//     model to read;
//   - raw JSON (Structured, Error.Details) is compacted.
func normalise(r registry.Result) (registry.Result, error) {
	if r.Content == nil {
		r.Content = []presentation.Content{}
	}
	if r.Error != nil || r.IsError {
		r.IsError = true
		e := registry.ToolError{Code: registry.CodeToolError}
		if r.Error != nil {
			e = *r.Error
		}
		if e.Code == "" {
			e.Code = registry.CodeToolError
		}
		if e.Message == "" {
			e.Message = firstText(r.Content)
			if e.Message == "" {
				e.Message = "the tool failed"
			}
		}
		if len(r.Content) == 0 {
			r.Content = []presentation.Content{presentation.Text(e.Message)}
		}
		var err error
		if e.Details, err = compactRaw(e.Details, "error details"); err != nil {
			return r, err
		}
		r.Error = &e
	}
	var err error
	r.Structured, err = compactRaw(r.Structured, "structured result")
	return r, err
}

func firstText(cs []presentation.Content) string {
	for _, c := range cs {
		if c.Type == presentation.ContentText && c.Text != "" {
			return c.Text
		}
	}
	return ""
}

// compactRaw returns raw JSON compacted (a fresh copy), or nil for empty.
func compactRaw(raw json.RawMessage, what string) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", what, err)
	}
	if !utf8.Valid(b.Bytes()) {
		return nil, fmt.Errorf("%s: %w", what, errNotUTF8)
	}
	return b.Bytes(), nil
}

// checkUTF8 reports a string JSON would alter (encoding/json replaces
// invalid UTF-8 by U+FFFD without an error).
func checkUTF8(r *registry.Result) error {
	ok := utf8.ValidString(r.AdditionalContext) && contentValid(r.Content)
	if r.Error != nil {
		ok = ok && utf8.ValidString(r.Error.Code) && utf8.ValidString(r.Error.Message)
	}
	if r.View != nil {
		switch c := r.View.Card.(type) {
		case *presentation.GenericCard:
			ok = ok && utf8.ValidString(c.Title) && contentValid(c.Content)
		case *presentation.TerminalCard:
			ok = ok && utf8.ValidString(c.Title) && utf8.ValidString(c.Output) &&
				utf8.ValidString(c.Signal) && utf8.ValidString(c.TerminalID)
		case *presentation.DiffCard:
			ok = ok && utf8.ValidString(c.Title)
			for _, d := range c.Diffs {
				ok = ok && utf8.ValidString(d.Path) && utf8.ValidString(d.NewText) &&
					(d.OldText == nil || utf8.ValidString(*d.OldText))
			}
		}
	}
	if !ok {
		return errNotUTF8
	}
	return nil
}

func contentValid(cs []presentation.Content) bool {
	for _, c := range cs {
		if !utf8.ValidString(string(c.Type)) || !utf8.ValidString(c.Text) || !utf8.ValidString(c.Data) ||
			!utf8.ValidString(c.MIMEType) || !utf8.ValidString(c.URI) || !utf8.ValidString(c.Name) {
			return false
		}
	}
	return true
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// encode encodes v into b without HTML escaping (the frozen bytes are
// data, not HTML) and returns the bytes, which b owns.
func encode(b *bytes.Buffer, v any) ([]byte, error) {
	b.Reset()
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// marshal is encode into a fresh slice.
func marshal(v any) ([]byte, error) {
	b := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(b)
	data, err := encode(b, v)
	return bytes.Clone(data), err
}

// freeze normalises r and proves it round-trips losslessly through JSON:
// the returned result is decoded from the returned bytes, and re-encodes
// to exactly them. A result that does not survive is an error (the caller
// replaces it with an INVALID_RESULT result).
func freeze(r registry.Result) (registry.Result, []byte, error) {
	r, err := normalise(r)
	if err != nil {
		return registry.Result{}, nil, err
	}
	if err := checkUTF8(&r); err != nil {
		return registry.Result{}, nil, err
	}
	data, err := marshal(r)
	if err != nil {
		return registry.Result{}, nil, err
	}
	var back registry.Result
	if err := json.Unmarshal(data, &back); err != nil {
		return registry.Result{}, nil, fmt.Errorf("the result does not decode from its own JSON: %w", err)
	}
	b := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(b)
	again, err := encode(b, back)
	if err != nil {
		return registry.Result{}, nil, err
	}
	if !bytes.Equal(data, again) {
		return registry.Result{}, nil, fmt.Errorf("the result changes in a JSON round trip: %s became %s",
			truncate(data), truncate(again))
	}
	if back.Content == nil { // "content":[] decodes to an empty slice; keep the shape
		back.Content = []presentation.Content{}
	}
	return back, data, nil
}

func truncate(b []byte) string {
	const max = 200
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// cloneResult deep-copies a frozen result, so that an observer holding
// its copy cannot affect anything else.
func cloneResult(r registry.Result) registry.Result {
	r.Content = slices.Clone(r.Content) // Content is all strings: a shallow copy is deep
	if r.Error != nil {
		e := *r.Error
		e.Details = bytes.Clone(e.Details)
		r.Error = &e
	}
	r.Structured = bytes.Clone(r.Structured)
	if r.View != nil {
		r.View = &presentation.ResultView{Card: cloneCard(r.View.Card)}
	}
	return r
}

func cloneCard(c presentation.Card) presentation.Card {
	switch c := c.(type) {
	case *presentation.GenericCard:
		if c == nil {
			return c
		}
		out := *c
		out.Content = slices.Clone(c.Content)
		return &out
	case *presentation.TerminalCard:
		if c == nil {
			return c
		}
		out := *c
		if c.ExitCode != nil {
			code := *c.ExitCode
			out.ExitCode = &code
		}
		return &out
	case *presentation.DiffCard:
		if c == nil {
			return c
		}
		out := *c
		out.Diffs = slices.Clone(c.Diffs)
		for i, d := range out.Diffs {
			if d.OldText != nil {
				old := *d.OldText
				out.Diffs[i].OldText = &old
			}
		}
		return &out
	}
	// A card type this package does not know: it was decoded from the
	// frozen JSON, so nobody else holds it; hand it over as is.
	return c
}
