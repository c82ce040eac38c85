package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/dsh-tools/dshd/acp"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// transcript prints session updates and permission requests as a reader
// would want to see them. It is safe for concurrent use.
type transcript struct {
	mu       sync.Mutex
	w        io.Writer
	cwd      string
	inText   string // "message", "thought" or "" when no chunk stream is open
	msgID    string
	titles   map[string]string // tool call id → title
	statuses map[string]acp.ToolCallStatus
}

func newTranscript(w io.Writer, cwd string) *transcript {
	return &transcript{w: w, cwd: cwd, titles: map[string]string{}, statuses: map[string]acp.ToolCallStatus{}}
}

// closeText ends an open message or thought stream with a newline.
func (p *transcript) closeText() {
	if p.inText != "" {
		fmt.Fprintln(p.w)
		p.inText = ""
	}
}

func (p *transcript) update(u acp.SessionUpdateVariant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch u := u.(type) {
	case *acp.AgentMessageChunk:
		p.chunk("message", "agent", deref(u.MessageID), u.Content)
	case *acp.AgentThoughtChunk:
		p.chunk("thought", "thinking", deref(u.MessageID), u.Content)
	case *acp.UserMessageChunk:
		p.chunk("user", "user", deref(u.MessageID), u.Content)
	case *acp.ToolCall:
		p.closeText()
		p.titles[u.ToolCallID] = u.Title
		p.statuses[u.ToolCallID] = u.Status
		fmt.Fprintf(p.w, "\n▶ tool call %s: %s [%s] %s\n", u.ToolCallID, u.Title, u.Kind, u.Status)
		p.locations(u.Locations)
		p.contents(u.Content)
	case *acp.ToolCallUpdate:
		p.closeText()
		if u.Title != nil {
			p.titles[u.ToolCallID] = *u.Title
		}
		status := p.statuses[u.ToolCallID]
		if u.Status != nil {
			status = *u.Status
			p.statuses[u.ToolCallID] = status
		}
		if u.Status == nil && len(u.Content) == 0 {
			return // metadata only (for example live terminal chunks)
		}
		fmt.Fprintf(p.w, "  ↳ %s: %s\n", p.titles[u.ToolCallID], status)
		p.locations(u.Locations)
		p.contents(u.Content)
	case *acp.Plan:
		p.closeText()
		fmt.Fprintln(p.w, "\n☰ plan:")
		for _, e := range u.Entries {
			mark := map[acp.PlanEntryStatus]string{"completed": "[x]", "in_progress": "[>]"}[e.Status]
			if mark == "" {
				mark = "[ ]"
			}
			fmt.Fprintf(p.w, "    %s %s (%s)\n", mark, e.Content, e.Priority)
		}
	case *acp.UsageUpdate:
		// Token counts are noise in a transcript; the summary shows the last.
	case *acp.CurrentModeUpdate:
		p.closeText()
		fmt.Fprintf(p.w, "\n⚙ mode: %s\n", u.CurrentModeID)
	}
}

func (p *transcript) chunk(kind, label, id string, c acp.ContentBlock) {
	if p.inText != kind || p.msgID != id {
		p.closeText()
		fmt.Fprintf(p.w, "\n%s: ", label)
		p.inText, p.msgID = kind, id
	}
	if t, ok := c.Value.(*acp.TextContent); ok {
		fmt.Fprint(p.w, t.Text)
	} else {
		fmt.Fprintf(p.w, "[%T]", c.Value)
	}
}

func (p *transcript) locations(ls []acp.ToolCallLocation) {
	for _, l := range ls {
		if l.Line != nil {
			fmt.Fprintf(p.w, "    at %s:%d\n", p.rel(l.Path), *l.Line)
		} else {
			fmt.Fprintf(p.w, "    at %s\n", p.rel(l.Path))
		}
	}
}

func (p *transcript) contents(cs []acp.ToolCallContent) {
	for _, c := range cs {
		switch v := c.Value.(type) {
		case *acp.ToolCallContentBlock:
			if t, ok := v.Content.Value.(*acp.TextContent); ok {
				fmt.Fprint(p.w, indent(t.Text, "    │ "))
			} else {
				fmt.Fprintf(p.w, "    │ [%T]\n", v.Content.Value)
			}
		case *acp.ToolCallDiff:
			fmt.Fprint(p.w, indent(unifiedDiff(p.rel(v.Path), v.OldText, v.NewText), "    "))
		case *acp.ToolCallTerminal:
			fmt.Fprintf(p.w, "    [terminal %s]\n", v.TerminalID)
		default:
			fmt.Fprintf(p.w, "    [%T]\n", v)
		}
	}
}

func (p *transcript) permission(req *acp.RequestPermissionRequest, chosen acp.PermissionOption) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeText()
	title := p.titles[req.ToolCall.ToolCallID]
	if req.ToolCall.Title != nil {
		title = *req.ToolCall.Title
	}
	var names []string
	for _, o := range req.Options {
		names = append(names, fmt.Sprintf("%q (%s)", o.Name, o.Kind))
	}
	fmt.Fprintf(p.w, "\n? permission asked for %q; options: %s\n", title, strings.Join(names, ", "))
	fmt.Fprintf(p.w, "  answered: %q (%s)\n", chosen.Name, chosen.Kind)
}

func (p *transcript) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeText()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *transcript) rel(path string) string {
	if p.cwd != "" && strings.HasPrefix(path, p.cwd+"/") {
		return path[len(p.cwd)+1:]
	}
	return path
}

// unifiedDiff renders one diff card as unified-diff-like text: a header
// and the hunk's lines marked ' ', '-' or '+'.
func unifiedDiff(path string, oldText *string, newText string) string {
	var sb strings.Builder
	if oldText == nil {
		fmt.Fprintf(&sb, "--- /dev/null\n+++ %s (new file)\n", path)
		for _, l := range splitLines(newText) {
			sb.WriteString("+" + l + "\n")
		}
		return sb.String()
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", path, path)
	dmp := diffmatchpatch.New()
	a, b, lines := dmp.DiffLinesToChars(*oldText, newText)
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMain(a, b, false), lines) {
		mark := " "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			mark = "-"
		case diffmatchpatch.DiffInsert:
			mark = "+"
		}
		for _, l := range splitLines(d.Text) {
			sb.WriteString(mark + l + "\n")
		}
	}
	return sb.String()
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func indent(s, prefix string) string {
	var sb strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		sb.WriteString(prefix + l + "\n")
	}
	return sb.String()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
