package presentation

// ResultView is the card-tagged render intent of a completed tool call.
// Card is one of *GenericCard, *TerminalCard or *DiffCard. On the wire it is
// an object with a "card" tag ("generic", "terminal", "diff"); an unknown
// card decodes to a *GenericCard so that a newer producer never breaks an
// older reader.
type ResultView struct{ Card Card }

// Card is the sealed interface of the ResultView variants.
type Card interface{ cardTag() string }

// GenericCard shows text (or other content blocks).
type GenericCard struct {
	Title   string    `json:"title,omitempty"`
	Content []Content `json:"content,omitempty"`
}

// TerminalCard shows the captured output of a command and how it ended.
// A capable UI shows an exit-status pill; an incapable one gets a fenced
// console block derived from Output.
type TerminalCard struct {
	Title    string `json:"title,omitempty"`
	Output   string `json:"output,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// TerminalID, when set, names the live terminal (an editor terminal or
	// the display-terminal convention) that already shows this output.
	TerminalID string `json:"terminalId,omitempty"`
}

// DiffCard shows a completed file mutation: the applied hunks.
type DiffCard struct {
	Title string     `json:"title,omitempty"`
	Diffs []FileDiff `json:"diffs"`
}

func (*GenericCard) cardTag() string  { return "generic" }
func (*TerminalCard) cardTag() string { return "terminal" }
func (*DiffCard) cardTag() string     { return "diff" }
