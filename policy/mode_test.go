package policy

import (
	"testing"

	"github.com/dsh-tools/dshd/presentation"
)

func TestModeDecide(t *testing.T) {
	tests := []struct {
		mode Mode
		kind presentation.ToolCallKind
		want Decision
	}{
		{ModeDefault, presentation.KindRead, Allow},
		{ModeDefault, presentation.KindSearch, Allow},
		{ModeDefault, presentation.KindEdit, Ask},
		{ModeDefault, presentation.KindExecute, Ask},
		{ModeDefault, presentation.KindOther, Ask},
		{ModeAcceptEdits, presentation.KindRead, Allow},
		{ModeAcceptEdits, presentation.KindEdit, Allow},
		{ModeAcceptEdits, presentation.KindDelete, Allow},
		{ModeAcceptEdits, presentation.KindMove, Allow},
		{ModeAcceptEdits, presentation.KindExecute, Ask},
		{ModeAcceptEdits, presentation.KindOther, Ask},
		{ModePlan, presentation.KindRead, Allow},
		{ModePlan, presentation.KindFetch, Allow},
		{ModePlan, presentation.KindEdit, Deny},
		{ModePlan, presentation.KindExecute, Deny},
		{ModeBypassPermissions, presentation.KindExecute, Allow},
		{ModeBypassPermissions, presentation.KindEdit, Allow},
		{Mode("nonsense"), presentation.KindEdit, Ask},
		{Mode("nonsense"), presentation.KindRead, Allow},
	}
	for _, tt := range tests {
		if got := tt.mode.Decide(tt.kind); got != tt.want {
			t.Errorf("%s.Decide(%s) = %v, want %v", tt.mode, tt.kind, got, tt.want)
		}
	}
}

func TestDecide(t *testing.T) {
	edit := ModeCall{Kind: presentation.KindEdit}
	editOutside := ModeCall{Kind: presentation.KindEdit, OutsideRoots: true}
	readOutside := ModeCall{Kind: presentation.KindRead, OutsideRoots: true}
	hinted := ModeCall{Kind: presentation.KindOther, ReadOnlyHint: true}
	tests := []struct {
		mode  Mode
		rules Decision
		call  ModeCall
		want  Decision
	}{
		{ModeDefault, Deny, edit, Deny},
		{ModeBypassPermissions, Deny, edit, Deny},
		{ModePlan, Allow, edit, Deny},
		{ModePlan, Allow, hinted, Allow},
		{ModePlan, None, hinted, Deny},
		{ModePlan, None, readOutside, Ask},
		{ModeDefault, Ask, edit, Ask},
		{ModeBypassPermissions, Ask, edit, Allow},
		{ModeDefault, Allow, edit, Allow},
		{ModeDefault, None, edit, Ask},
		{ModeAcceptEdits, None, edit, Allow},
		{ModeAcceptEdits, None, editOutside, Ask},
		{ModeAcceptEdits, Allow, editOutside, Allow},
		{ModeDefault, None, readOutside, Ask},
		{ModeBypassPermissions, None, editOutside, Allow},
	}
	for _, tt := range tests {
		if got := Decide(tt.mode, Verdict{Decision: tt.rules}, tt.call); got != tt.want {
			t.Errorf("Decide(%s, %v, %+v) = %v, want %v", tt.mode, tt.rules, tt.call, got, tt.want)
		}
	}
}

func TestModes(t *testing.T) {
	ms := Modes()
	if len(ms) != 4 || ms[0].ID != ModeDefault {
		t.Fatalf("Modes() = %+v", ms)
	}
	for _, m := range ms {
		if m.Name == "" || m.Description == "" {
			t.Errorf("mode %s lacks a name or description", m.ID)
		}
		parsed, err := ParseMode(string(m.ID))
		if err != nil || parsed != m.ID {
			t.Errorf("ParseMode(%s) = %v, %v", m.ID, parsed, err)
		}
	}
	ms[0].Name = "changed"
	if Modes()[0].Name == "changed" {
		t.Error("Modes() shares its slice")
	}
	if _, err := ParseMode("auto"); err == nil {
		t.Error("ParseMode accepted auto")
	}
	if _, ok := Mode("auto").Info(); ok {
		t.Error("Info of unknown mode")
	}
}
