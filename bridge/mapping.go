package bridge

import (
	"encoding/json"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/presentation"
)

// Card → ACP mapping (DESIGN.md "Terminal cards, three tiers", "Diff
// cards"). The mapping depends only on the card, the session cwd and what
// the client advertised, so it is a pure function of those and golden-tested
// per tier and capability combination.

// clientFeatures is what the bridge may use of the client, decided once
// from its initialize capabilities. A capability that was not advertised is
// never used.
type clientFeatures struct {
	readFile       bool // fs/read_text_file
	writeFile      bool // fs/write_text_file
	terminal       bool // terminal/* (tier 1)
	terminalOutput bool // _meta.terminal_output: the display-terminal convention (tier 2)
	booleanConfig  bool // session.configOptions.boolean
}

func featuresOf(c acp.ClientCapabilities) clientFeatures {
	f := clientFeatures{terminal: c.Terminal}
	if c.FS != nil {
		f.readFile, f.writeFile = c.FS.ReadTextFile, c.FS.WriteTextFile
	}
	if c.Session != nil && c.Session.ConfigOptions != nil && c.Session.ConfigOptions.Boolean != nil {
		f.booleanConfig = true
	}
	if len(c.Meta) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(c.Meta, &m) == nil {
			f.terminalOutput = string(m["terminal_output"]) == "true"
		}
	}
	return f
}

// tier2 reports whether commands that do not run in an editor terminal are
// shown through the display-terminal convention.
func (f clientFeatures) tier2() bool { return !f.terminal && f.terminalOutput }

// mappedCard is a result card in ACP terms.
type mappedCard struct {
	title     string
	content   []acp.ToolCallContent
	locations []acp.ToolCallLocation
	meta      acp.Meta
	// preChunk, when set, is a terminal_output _meta to send before the
	// final update (tier 2 when the tool streamed nothing).
	preChunk acp.Meta
}

// mapCard maps a completed call's card for the final tool_call_update.
func (f clientFeatures) mapCard(cwd string, oc *openCall, card presentation.Card) mappedCard {
	var m mappedCard
	switch c := card.(type) {
	case *presentation.DiffCard:
		m.title = relTitle(cwd, c.Title)
		m.content = make([]acp.ToolCallContent, 0, len(c.Diffs))
		for _, d := range c.Diffs {
			p := absPath(cwd, d.Path)
			m.content = append(m.content, acp.Diff(p, d.OldText, d.NewText))
			loc := acp.ToolCallLocation{Path: p}
			if d.Line > 0 {
				line := uint32(d.Line)
				loc.Line = &line
			}
			m.locations = append(m.locations, loc)
		}
	case *presentation.TerminalCard:
		m.title = relTitle(cwd, c.Title)
		switch {
		case oc.editorTerminal != "":
			// Tier 1: the editor's own terminal already shows the output.
			m.content = []acp.ToolCallContent{acp.Terminal(oc.editorTerminal)}
		case oc.terminal:
			// Tier 2: the display terminal announced on the tool_call.
			m.content = []acp.ToolCallContent{acp.Terminal(oc.id)}
			if !oc.streamed && c.Output != "" {
				m.preChunk = metaJSON(map[string]any{"terminal_output": map[string]any{"terminal_id": oc.id, "data": c.Output}})
			}
			m.meta = terminalExit(oc.id, c.ExitCode, c.Signal)
		default:
			// Tier 3: a fenced console block.
			m.content = []acp.ToolCallContent{acp.ToolText(presentation.ConsoleFallback(c))}
		}
	case *presentation.GenericCard:
		m.title = relTitle(cwd, c.Title)
		m.content = f.mapContent(c.Content)
		if oc.terminal {
			// A display terminal was announced but the command never ran
			// (denied, invalid arguments): close it, so the client does not
			// show it running forever.
			m.meta = terminalExit(oc.id, nil, "")
		}
	}
	return m
}

// terminalExit is the _meta that ends a tier-2 display terminal.
func terminalExit(id string, code *int, signal string) acp.Meta {
	exit := map[string]any{"terminal_id": id, "exit_code": nil, "signal": nil}
	if code != nil {
		exit["exit_code"] = *code
	}
	if signal != "" {
		exit["signal"] = signal
	}
	return metaJSON(map[string]any{"terminal_exit": exit})
}

// mapContent wraps provider-neutral content blocks as ACP tool-call
// content.
func (f clientFeatures) mapContent(cs []presentation.Content) []acp.ToolCallContent {
	if len(cs) == 0 {
		return nil
	}
	out := make([]acp.ToolCallContent, 0, len(cs))
	for _, c := range cs {
		out = append(out, acp.ToolContent(contentBlock(c)))
	}
	return out
}

// contentBlock converts one provider-neutral block to an ACP ContentBlock.
func contentBlock(c presentation.Content) acp.ContentBlock {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	switch c.Type {
	case presentation.ContentImage:
		return acp.ContentBlock{Value: &acp.ImageContent{Data: c.Data, MIMEType: c.MIMEType, URI: opt(c.URI)}}
	case presentation.ContentAudio:
		return acp.Audio(c.Data, c.MIMEType)
	case presentation.ContentResourceLink:
		name := c.Name
		if name == "" {
			name = c.URI
		}
		return acp.ContentBlock{Value: &acp.ResourceLink{URI: c.URI, Name: name, MIMEType: opt(c.MIMEType)}}
	case presentation.ContentResource:
		if c.Data != "" {
			return acp.ContentBlock{Value: &acp.EmbeddedResource{Resource: acp.ResourceContents{
				Value: &acp.BlobResourceContents{URI: c.URI, Blob: c.Data, MIMEType: opt(c.MIMEType)}}}}
		}
		return acp.ContentBlock{Value: &acp.EmbeddedResource{Resource: acp.ResourceContents{
			Value: &acp.TextResourceContents{URI: c.URI, Text: c.Text, MIMEType: opt(c.MIMEType)}}}}
	}
	return acp.Text(c.Text)
}

// locations makes a call view's locations absolute.
func (s *session) locations(ls []presentation.FileLocation) []acp.ToolCallLocation {
	if len(ls) == 0 {
		return nil
	}
	out := make([]acp.ToolCallLocation, 0, len(ls))
	for _, l := range ls {
		loc := acp.ToolCallLocation{Path: absPath(s.cwd, l.Path)}
		if l.Line != nil && *l.Line > 0 {
			line := uint32(*l.Line)
			loc.Line = &line
		}
		out = append(out, loc)
	}
	return out
}
