package llm

// Event is one streamed increment of a response. It is sealed: the
// variants are [TextDelta], [ReasoningDelta], [ToolCallStarted],
// [ToolCallDelta] and [ToolCallFinished]. Events are for display; the
// final [Response] already contains everything they carried.
type Event interface{ event() }

// TextDelta is more assistant text.
type TextDelta struct{ Text string }

// ReasoningDelta is more reasoning text.
type ReasoningDelta struct{ Text string }

// ToolCallStarted announces a tool call once its id and name are known.
// Index is the call's position among this response's tool calls.
type ToolCallStarted struct {
	Index    int
	ID, Name string
}

// ToolCallDelta is more argument text of a started call.
type ToolCallDelta struct {
	Index int
	ID    string
	Delta string
}

// ToolCallFinished carries a complete call: the arguments are final.
type ToolCallFinished struct {
	Index int
	Call  ToolCall
}

func (TextDelta) event()        {}
func (ReasoningDelta) event()   {}
func (ToolCallStarted) event()  {}
func (ToolCallDelta) event()    {}
func (ToolCallFinished) event() {}
