package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventSize bounds one event's data so a broken server cannot
// exhaust memory; base64 images in a single line fit comfortably.
const DefaultMaxEventSize = 64 << 20

// ErrEventTooLarge is returned when one event's data exceeds the limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched event. Data lines are joined with "\n".
type Event struct {
	Type string // the "event:" field; empty means "message"
	Data string
	ID   string
}

// Reader reads events from an SSE stream.
type Reader struct {
	r *bufio.Reader
	// MaxEventSize bounds an event's data; DefaultMaxEventSize when 0.
	MaxEventSize int
	line         []byte
	data         bytes.Buffer // reused between events
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 32<<10)}
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// a stream cut in the middle of a line returns io.ErrUnexpectedEOF. An
// event whose lines are complete but which lacks the blank line that
// should end it is still returned, since servers do cut streams like that
// after their final event; whether the stream was complete is for the
// caller to judge from the events.
func (r *Reader) Next() (Event, error) {
	data := &r.data
	data.Reset()
	var (
		ev      Event
		hasData bool
		hasAny  bool
	)
	limit := r.MaxEventSize
	if limit <= 0 {
		limit = DefaultMaxEventSize
	}
	for {
		line, err := r.readLine(limit)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if len(line) > 0 {
					return Event{}, io.ErrUnexpectedEOF
				}
				if hasData {
					ev.Data = data.String()
					return ev, nil
				}
				return Event{}, io.EOF
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				ev.Data = data.String()
				return ev, nil
			}
			// A blank line after only non-data fields dispatches nothing
			// (per the SSE spec); reset and keep reading.
			if hasAny {
				ev = Event{}
				hasAny = false
			}
			continue
		}
		if line[0] == ':' {
			continue // comment, used as keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		hasAny = true
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			if data.Len()+len(value) > limit {
				return Event{}, fmt.Errorf("%w: more than %d bytes", ErrEventTooLarge, limit)
			}
			data.Write(value)
			hasData = true
		case "event":
			ev.Type = string(value)
		case "id":
			ev.ID = string(value)
		}
		// "retry" and unknown fields are ignored, as the spec says.
	}
}

// readLine returns one line without its line end (LF or CRLF). At EOF it
// returns the partial line read so far with io.EOF.
func (r *Reader) readLine(limit int) ([]byte, error) {
	r.line = r.line[:0]
	for {
		chunk, err := r.r.ReadSlice('\n')
		r.line = append(r.line, chunk...)
		if len(r.line) > limit+16 {
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrEventTooLarge, limit)
		}
		if err == nil {
			line := r.line[:len(r.line)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return r.line, err
	}
}
