package acp

import (
	"bytes"
	"encoding/json"
	"github.com/dsh-tools/dshd/internal/jsonscan"
	"sync/atomic"
	"unicode/utf8"
)

// The hot session/update shapes are decoded by one hand-written, validating pass. The generic
// path (unmarshalTagged) calls json.Unmarshal once per nested union, and encoding/json v1
// re-validates its whole input on every call, so a diff inside a tool_call_update was scanned
// four or five times.
//
// The fast path only ever succeeds or declines: it takes the inputs whose meaning is plain
// (exact-case keys, no duplicates, no nulls, strings without surrogate escapes or invalid
// UTF-8, …) and declines everything else, which then goes through the generic path
// unchanged. Errors therefore always come from the generic path, and the differential tests
// in fastcodec_test.go check that what the fast path accepts decodes to the same value.

// maxFastDepth bounds the nesting the fast path skips over; deeper input takes the generic
// path (and encoding/json's own limit).
const maxFastDepth = 256

// fastReader is a cursor over JSON input. Any method that meets input outside the fast subset
// sets bad; callers check it and decline.
type fastReader struct {
	data  []byte
	i     int
	depth int
	bad   bool
}

func (r *fastReader) fail() { r.bad = true }

func (r *fastReader) ws() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end of input.
func (r *fastReader) peek() byte {
	r.ws()
	if r.i >= len(r.data) {
		return 0
	}
	return r.data[r.i]
}

// beginObject consumes '{' and reports whether the object has members.
func (r *fastReader) beginObject() bool {
	if r.peek() != '{' {
		r.fail()
		return false
	}
	r.i++
	if r.peek() == '}' {
		r.i++
		return false
	}
	return true
}

// nextMember consumes the ',' or '}' after a member's value and reports whether another
// member follows.
func (r *fastReader) nextMember() bool {
	switch r.peek() {
	case ',':
		r.i++
		return true
	case '}':
		r.i++
		return false
	}
	r.fail()
	return false
}

// key reads a member's key and its ':'. Keys with escapes or non-ASCII bytes are declined:
// encoding/json matches keys case-insensitively with Unicode folding, which only the generic
// path reproduces.
func (r *fastReader) key() []byte {
	if r.peek() != '"' {
		r.fail()
		return nil
	}
	start := r.i + 1
	for j := start; j < len(r.data); j++ {
		c := r.data[j]
		if c == '"' {
			r.i = j + 1
			if r.peek() != ':' {
				r.fail()
				return nil
			}
			r.i++
			return r.data[start:j]
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	r.fail()
	return nil
}

// unknownKey handles a key the fast decoder does not decode: one that encoding/json would
// match to a field case-insensitively is declined; any other is skipped (after validation),
// as encoding/json ignores unknown fields.
func (r *fastReader) unknownKey(k []byte, known []string) {
	for _, name := range known {
		if bytes.EqualFold(k, []byte(name)) {
			r.fail()
			return
		}
	}
	r.skip()
}

// seen marks field bit in *mask; a duplicate key is declined (encoding/json's last-wins
// merging is left to the generic path).
func (r *fastReader) seen(mask *uint32, bit uint32) {
	if *mask&bit != 0 {
		r.fail()
	}
	*mask |= bit
}

// str reads a string value. It declines invalid UTF-8 and surrogate escapes, whose
// replacement rules it leaves to encoding/json.
func (r *fastReader) str() string {
	if r.peek() != '"' {
		r.fail()
		return ""
	}
	start := r.i + 1
	j := start
	for j < len(r.data) {
		c := r.data[j]
		if c == '"' {
			r.i = j + 1
			return string(r.data[start:j])
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			r.fail()
			return ""
		}
		if c < utf8.RuneSelf {
			j++
			continue
		}
		ch, size := utf8.DecodeRune(r.data[j:])
		if ch == utf8.RuneError && size == 1 {
			r.fail()
			return ""
		}
		j += size
	}
	// Escapes: unescape into a buffer.
	buf := make([]byte, 0, j-start+32)
	buf = append(buf, r.data[start:j]...)
	for j < len(r.data) {
		c := r.data[j]
		switch {
		case c == '"':
			r.i = j + 1
			return string(buf)
		case c == '\\':
			if j+1 >= len(r.data) {
				r.fail()
				return ""
			}
			switch e := r.data[j+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				ch, ok := jsonscan.Hex4(r.data, j+2)
				if !ok || (0xD800 <= ch && ch < 0xE000) {
					r.fail()
					return ""
				}
				buf = utf8.AppendRune(buf, ch)
				j += 6
				continue
			default:
				r.fail()
				return ""
			}
			j += 2
		case c < 0x20:
			r.fail()
			return ""
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			j++
		default:
			ch, size := utf8.DecodeRune(r.data[j:])
			if ch == utf8.RuneError && size == 1 {
				r.fail()
				return ""
			}
			buf = append(buf, r.data[j:j+size]...)
			j += size
		}
	}
	r.fail()
	return ""
}

func (r *fastReader) strPtr() *string {
	s := r.str()
	return &s
}

// uint32 reads a non-negative integer without fraction or exponent that fits in 32 bits.
func (r *fastReader) uint32() uint32 {
	r.ws()
	j := r.i
	var v uint64
	for j < len(r.data) && '0' <= r.data[j] && r.data[j] <= '9' {
		v = v*10 + uint64(r.data[j]-'0')
		if v > 1<<32-1 {
			r.fail()
			return 0
		}
		j++
	}
	if j == r.i || (r.data[r.i] == '0' && j-r.i > 1) {
		r.fail()
		return 0
	}
	r.i = j
	return uint32(v)
}

// raw reads any value other than null as a json.RawMessage copy (encoding/json copies too).
func (r *fastReader) raw() json.RawMessage {
	if r.peek() == 'n' {
		r.fail() // "null" into a RawMessage field has its own rules
		return nil
	}
	start := r.i
	r.skip()
	if r.bad {
		return nil
	}
	return bytes.Clone(r.data[start:r.i])
}

// skip validates and skips one value.
func (r *fastReader) skip() {
	switch c := r.peek(); c {
	case '"':
		r.skipString()
	case '{', '[':
		r.depth++
		if r.depth > maxFastDepth {
			r.fail()
			return
		}
		r.i++
		closer := byte(']')
		if c == '{' {
			closer = '}'
		}
		if r.peek() == closer {
			r.i++
		} else {
			for !r.bad {
				if c == '{' {
					if r.peek() != '"' {
						r.fail()
						return
					}
					r.skipString()
					if r.peek() != ':' {
						r.fail()
						return
					}
					r.i++
				}
				r.skip()
				next := r.peek()
				if next == 0 {
					r.fail()
					return
				}
				r.i++
				if next == closer {
					break
				}
				if next != ',' {
					r.fail()
				}
			}
		}
		r.depth--
	case 't':
		r.literal("true")
	case 'f':
		r.literal("false")
	case 'n':
		r.literal("null")
	default:
		r.skipNumber()
	}
}

func (r *fastReader) literal(lit string) {
	if !bytes.HasPrefix(r.data[r.i:], []byte(lit)) {
		r.fail()
		return
	}
	r.i += len(lit)
}

func (r *fastReader) skipString() {
	for j := r.i + 1; j < len(r.data); j++ {
		switch c := r.data[j]; {
		case c == '"':
			r.i = j + 1
			return
		case c == '\\':
			if j+1 >= len(r.data) {
				r.fail()
				return
			}
			switch r.data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if _, ok := jsonscan.Hex4(r.data, j+2); !ok {
					r.fail()
					return
				}
				j += 5
			default:
				r.fail()
				return
			}
		case c < 0x20:
			r.fail()
			return
		}
	}
	r.fail()
}

// skipNumber accepts exactly JSON's number grammar.
func (r *fastReader) skipNumber() {
	d, j := r.data, r.i
	digits := func() bool {
		k := j
		for j < len(d) && '0' <= d[j] && d[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < len(d) && d[j] == '-' {
		j++
	}
	switch {
	case j < len(d) && d[j] == '0':
		j++
	case j < len(d) && '1' <= d[j] && d[j] <= '9':
		digits()
	default:
		r.fail()
		return
	}
	if j < len(d) && d[j] == '.' {
		j++
		if !digits() {
			r.fail()
			return
		}
	}
	if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
		j++
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		if !digits() {
			r.fail()
			return
		}
	}
	r.i = j
}

// end checks that only whitespace follows the top-level value.
func (r *fastReader) end() {
	if r.peek() != 0 || r.i != len(r.data) {
		r.fail()
	}
}

// tagOf returns the string value of the union's discriminator in the object starting at r.i,
// found the way unmarshalTagged finds it (first occurrence, exact key).
func (r *fastReader) tagOf(key string) string {
	r.ws()
	raw, found, err := lookupKey(r.data[r.i:], key)
	if err != nil || !found {
		r.fail()
		return ""
	}
	tr := fastReader{data: raw}
	tag := tr.str()
	tr.end()
	if tr.bad {
		r.fail()
	}
	return tag
}

// span skips one value and returns its bytes.
func (r *fastReader) span() []byte {
	r.ws()
	start := r.i
	r.skip()
	if r.bad {
		return nil
	}
	return r.data[start:r.i]
}

// isBareObject reports whether data starts with '{' and ends with '}': the exact value span
// encoding/json hands to UnmarshalJSON. Anything else (surrounding space from a direct call,
// null) takes the generic path, which keeps unknown variants' raw bytes exactly as given.
func isBareObject(data []byte) bool {
	return len(data) >= 2 && data[0] == '{' && data[len(data)-1] == '}'
}

// fastDecodeOff turns the fast decoders off so tests can compare them with the generic path.
var fastDecodeOff atomic.Bool

var toolCallUpdateKeys = []string{"toolCallId", "title", "name", "kind", "status", "content", "locations", "rawInput", "rawOutput", "_meta"}

// fastSessionUpdate decodes data (a whole SessionUpdate) if it is a hot variant in the fast
// subset.
func fastSessionUpdate(data []byte) (SessionUpdateVariant, bool) {
	if fastDecodeOff.Load() || !isBareObject(data) {
		return nil, false
	}
	r := fastReader{data: data}
	var v SessionUpdateVariant
	switch r.tagOf("sessionUpdate") {
	case "tool_call_update":
		v = r.toolCall(false)
	case "tool_call":
		v = r.toolCall(true)
	case "agent_message_chunk":
		c := new(AgentMessageChunk)
		c.Content, c.MessageID, c.Meta = r.chunk()
		v = c
	case "agent_thought_chunk":
		c := new(AgentThoughtChunk)
		c.Content, c.MessageID, c.Meta = r.chunk()
		v = c
	case "user_message_chunk":
		c := new(UserMessageChunk)
		c.Content, c.MessageID, c.Meta = r.chunk()
		v = c
	default:
		return nil, false
	}
	r.end()
	if r.bad {
		return nil, false
	}
	return v, true
}

// fastToolCallContent decodes data (a whole ToolCallContent) if it is in the fast subset.
func fastToolCallContent(data []byte) (ToolCallContentVariant, bool) {
	if fastDecodeOff.Load() || !isBareObject(data) {
		return nil, false
	}
	r := fastReader{data: data}
	v := r.toolCallContent()
	r.end()
	return v, !r.bad
}

// fastContentBlock decodes data (a whole ContentBlock) if it is in the fast subset.
func fastContentBlock(data []byte) (ContentVariant, bool) {
	if fastDecodeOff.Load() || !isBareObject(data) {
		return nil, false
	}
	r := fastReader{data: data}
	b := r.contentBlock()
	r.end()
	return b.Value, !r.bad
}

// toolCall decodes a ToolCall (full) or a ToolCallUpdate object; they share their keys.
func (r *fastReader) toolCall(full bool) SessionUpdateVariant {
	var (
		u    ToolCallUpdate
		c    ToolCall
		seen uint32
	)
	for more := r.beginObject(); more && !r.bad; more = r.nextMember() {
		switch k := r.key(); string(k) {
		case "toolCallId":
			r.seen(&seen, 1<<0)
			u.ToolCallID = r.str()
		case "title":
			r.seen(&seen, 1<<1)
			u.Title = r.strPtr()
		case "name":
			r.seen(&seen, 1<<2)
			u.Name = r.strPtr()
		case "kind":
			r.seen(&seen, 1<<3)
			u.Kind = Ptr(ToolKind(r.str()))
		case "status":
			r.seen(&seen, 1<<4)
			u.Status = Ptr(ToolCallStatus(r.str()))
		case "content":
			r.seen(&seen, 1<<5)
			u.Content = r.toolCallContents()
		case "locations":
			r.seen(&seen, 1<<6)
			u.Locations = r.locations()
		case "rawInput":
			r.seen(&seen, 1<<7)
			u.RawInput = r.raw()
		case "rawOutput":
			r.seen(&seen, 1<<8)
			u.RawOutput = r.raw()
		case "_meta":
			r.seen(&seen, 1<<9)
			u.Meta = r.raw()
		default:
			r.unknownKey(k, toolCallUpdateKeys)
		}
	}
	if !full {
		return &u
	}
	c = ToolCall{ToolCallID: u.ToolCallID, Name: u.Name, Content: u.Content, Locations: u.Locations,
		RawInput: u.RawInput, RawOutput: u.RawOutput, Meta: u.Meta}
	if u.Title != nil {
		c.Title = *u.Title
	}
	if u.Kind != nil {
		c.Kind = *u.Kind
	}
	if u.Status != nil {
		c.Status = *u.Status
	}
	return &c
}

// beginArray consumes '[' and reports whether the array has elements; nextElement consumes
// the ',' or ']' after one.
func (r *fastReader) beginArray() bool {
	if r.peek() != '[' {
		r.fail()
		return false
	}
	r.i++
	if r.peek() == ']' {
		r.i++
		return false
	}
	return true
}

func (r *fastReader) nextElement() bool {
	switch r.peek() {
	case ',':
		r.i++
		return true
	case ']':
		r.i++
		return false
	}
	r.fail()
	return false
}

func (r *fastReader) toolCallContents() []ToolCallContent {
	out := []ToolCallContent{} // [] decodes to an empty, non-nil slice
	for more := r.beginArray(); more && !r.bad; more = r.nextElement() {
		out = append(out, ToolCallContent{r.toolCallContent()})
	}
	return out
}

var (
	diffKeys     = []string{"path", "oldText", "newText", "_meta"}
	terminalKeys = []string{"terminalId", "_meta"}
	blockKeys    = []string{"content", "_meta"}
)

// toolCallContent decodes one ToolCallContent object.
func (r *fastReader) toolCallContent() ToolCallContentVariant {
	var seen uint32
	switch r.tagOf("type") {
	case "diff":
		d := new(ToolCallDiff)
		for more := r.beginObject(); more && !r.bad; more = r.nextMember() {
			switch k := r.key(); string(k) {
			case "path":
				r.seen(&seen, 1<<0)
				d.Path = r.str()
			case "oldText":
				r.seen(&seen, 1<<1)
				d.OldText = r.strPtr()
			case "newText":
				r.seen(&seen, 1<<2)
				d.NewText = r.str()
			case "_meta":
				r.seen(&seen, 1<<3)
				d.Meta = r.raw()
			default:
				r.unknownKey(k, diffKeys)
			}
		}
		return d
	case "terminal":
		t := new(ToolCallTerminal)
		for more := r.beginObject(); more && !r.bad; more = r.nextMember() {
			switch k := r.key(); string(k) {
			case "terminalId":
				r.seen(&seen, 1<<0)
				t.TerminalID = r.str()
			case "_meta":
				r.seen(&seen, 1<<1)
				t.Meta = r.raw()
			default:
				r.unknownKey(k, terminalKeys)
			}
		}
		return t
	case "content":
		b := new(ToolCallContentBlock)
		for more := r.beginObject(); more && !r.bad; more = r.nextMember() {
			switch k := r.key(); string(k) {
			case "content":
				r.seen(&seen, 1<<0)
				b.Content = r.contentBlock()
			case "_meta":
				r.seen(&seen, 1<<1)
				b.Meta = r.raw()
			default:
				r.unknownKey(k, blockKeys)
			}
		}
		return b
	}
	var c ToolCallContent
	if r.bad || c.unmarshalGeneric(r.span()) != nil {
		r.fail()
	}
	return c.Value
}

var textKeys = []string{"text", "annotations", "_meta"}

// contentBlock decodes one ContentBlock: text blocks here, the others generically.
func (r *fastReader) contentBlock() ContentBlock {
	if r.tagOf("type") != "text" || r.bad {
		var b ContentBlock
		if r.bad || b.unmarshalGeneric(r.span()) != nil {
			r.fail()
		}
		return b
	}
	var seen uint32
	t := new(TextContent)
	for more := r.beginObject(); more && !r.bad; more = r.nextMember() {
		switch k := r.key(); string(k) {
		case "text":
			r.seen(&seen, 1<<0)
			t.Text = r.str()
		case "annotations":
			r.seen(&seen, 1<<1)
			if r.peek() == 'n' {
				r.fail()
				break
			}
			t.Annotations = new(Annotations)
			if span := r.span(); r.bad || json.Unmarshal(span, t.Annotations) != nil {
				r.fail()
			}
		case "_meta":
			r.seen(&seen, 1<<2)
			t.Meta = r.raw()
		default:
			r.unknownKey(k, textKeys)
		}
	}
	return ContentBlock{t}
}

var chunkKeys = []string{"content", "messageId", "_meta"}

func (r *fastReader) chunk() (content ContentBlock, messageID *string, meta Meta) {
	var seen uint32
	for more := r.beginObject(); more && !r.bad; more = r.nextMember() {
		switch k := r.key(); string(k) {
		case "content":
			r.seen(&seen, 1<<0)
			content = r.contentBlock()
		case "messageId":
			r.seen(&seen, 1<<1)
			messageID = r.strPtr()
		case "_meta":
			r.seen(&seen, 1<<2)
			meta = r.raw()
		default:
			r.unknownKey(k, chunkKeys)
		}
	}
	return content, messageID, meta
}

var locationKeys = []string{"path", "line", "_meta"}

func (r *fastReader) locations() []ToolCallLocation {
	out := []ToolCallLocation{}
	for more := r.beginArray(); more && !r.bad; more = r.nextElement() {
		var (
			l    ToolCallLocation
			seen uint32
		)
		for m := r.beginObject(); m && !r.bad; m = r.nextMember() {
			switch k := r.key(); string(k) {
			case "path":
				r.seen(&seen, 1<<0)
				l.Path = r.str()
			case "line":
				r.seen(&seen, 1<<1)
				l.Line = Ptr(r.uint32())
			case "_meta":
				r.seen(&seen, 1<<2)
				l.Meta = r.raw()
			default:
				r.unknownKey(k, locationKeys)
			}
		}
		out = append(out, l)
	}
	return out
}

var sessionNotificationKeys = []string{"sessionId", "update", "_meta"}

// fastSessionNotification decodes data (a whole session/update params object) into n if it
// and its update are in the fast subset. Members absent from data leave n's fields as they
// are, as encoding/json does.
func fastSessionNotification(data []byte, n *SessionNotification) bool {
	if fastDecodeOff.Load() || !isBareObject(data) {
		return false
	}
	r := fastReader{data: data}
	var (
		seen      uint32
		sessionID string
		update    SessionUpdateVariant
		meta      Meta
	)
	for more := r.beginObject(); more && !r.bad; more = r.nextMember() {
		switch k := r.key(); string(k) {
		case "sessionId":
			r.seen(&seen, 1<<0)
			sessionID = r.str()
		case "update":
			r.seen(&seen, 1<<1)
			span := r.span()
			if r.bad {
				break
			}
			v, ok := fastSessionUpdate(span)
			if !ok {
				r.fail()
			}
			update = v
		case "_meta":
			r.seen(&seen, 1<<2)
			meta = r.raw()
		default:
			r.unknownKey(k, sessionNotificationKeys)
		}
	}
	r.end()
	if r.bad {
		return false
	}
	if seen&(1<<0) != 0 {
		n.SessionID = sessionID
	}
	if seen&(1<<1) != 0 {
		n.Update.Value = update
	}
	if seen&(1<<2) != 0 {
		n.Meta = meta
	}
	return true
}

var envelopeKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// fastEnvelope extracts a message's envelope in one validating pass, if line is a plain JSON
// object (exact-case, unique, unescaped keys; an unescaped "jsonrpc" string). It declines
// anything else, which json.Unmarshal then handles (and reports). The raw members are
// sub-slices of line.
func fastEnvelope(line []byte) (wireMessage, bool) {
	var m wireMessage
	if fastDecodeOff.Load() || !isBareObject(line) {
		return m, false
	}
	r := fastReader{data: line}
	var seen uint32
	for more := r.beginObject(); more && !r.bad; more = r.nextMember() {
		switch k := r.key(); string(k) {
		case "jsonrpc":
			r.seen(&seen, 1<<0)
			v := r.str()
			m.JSONRPC = &v
		case "id":
			r.seen(&seen, 1<<1)
			m.ID = r.span()
		case "method":
			r.seen(&seen, 1<<2)
			m.Method = r.span()
		case "params":
			r.seen(&seen, 1<<3)
			m.Params = r.span()
		case "result":
			r.seen(&seen, 1<<4)
			m.Result = r.span()
		case "error":
			r.seen(&seen, 1<<5)
			m.Error = r.span()
		default:
			r.unknownKey(k, envelopeKeys)
		}
	}
	r.end()
	if r.bad {
		return wireMessage{}, false
	}
	return m, true
}
