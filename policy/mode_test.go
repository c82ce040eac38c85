package policy

import (
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

func TestModeDecision(t *testing.T) {
	inside := func(p string) bool { return strings.HasPrefix(p, "/w/") }
	in := []registry.Subject{pathSubj("/w/a.go")}
	out := []registry.Subject{pathSubj("/w/a.go"), pathSubj("/etc/passwd")}
	cmd := []registry.Subject{cmdSubj("go test")}
	tests := []struct {
		mode     Mode
		kind     presentation.ToolCallKind
		subjects []registry.Subject
		want     Decision
	}{
		{ModeDefault, presentation.KindRead, in, Allow},
		{ModeDefault, presentation.KindSearch, nil, Allow},
		{ModeDefault, presentation.KindEdit, in, Ask},
		{ModeDefault, presentation.KindExecute, cmd, Ask},
		{ModeDefault, presentation.KindOther, nil, Ask},
		{ModeAcceptEdits, presentation.KindRead, out, Allow},
		{ModeAcceptEdits, presentation.KindEdit, in, Allow},
		{ModeAcceptEdits, presentation.KindDelete, in, Allow},
		{ModeAcceptEdits, presentation.KindMove, out, Ask},
		{ModeAcceptEdits, presentation.KindEdit, nil, Ask},
		{ModeAcceptEdits, presentation.KindEdit, append(in, cmdSubj("x")), Ask},
		{ModeAcceptEdits, presentation.KindExecute, cmd, Ask},
		{ModePlan, presentation.KindRead, in, Allow},
		{ModePlan, presentation.KindFetch, nil, Allow},
		{ModePlan, presentation.KindEdit, in, Deny},
		{ModePlan, presentation.KindExecute, cmd, Deny},
		{ModeBypassPermissions, presentation.KindExecute, cmd, Allow},
		{ModeBypassPermissions, presentation.KindEdit, out, Allow},
		{Mode("nonsense"), presentation.KindEdit, in, Ask},
	}
	for _, tt := range tests {
		if got := ModeDecision(tt.mode, tt.kind, tt.subjects, inside); got != tt.want {
			t.Errorf("ModeDecision(%s, %s, %v) = %v, want %v", tt.mode, tt.kind, tt.subjects, got, tt.want)
		}
	}
	if got := ModeDecision(ModeAcceptEdits, presentation.KindEdit, in, nil); got != Ask {
		t.Errorf("nil insideRoots = %v, want ask", got)
	}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		mode  Mode
		rules Decision
		mode_ Decision
		want  Decision
	}{
		{ModeDefault, Deny, Allow, Deny},
		{ModeBypassPermissions, Deny, Allow, Deny},
		{ModePlan, Allow, Deny, Deny},
		{ModeDefault, Ask, Allow, Ask},
		{ModeBypassPermissions, Ask, Allow, Allow},
		{ModeDefault, Allow, Ask, Allow},
		{ModeDefault, None, Ask, Ask},
		{ModeAcceptEdits, None, Allow, Allow},
	}
	for _, tt := range tests {
		if got := Decide(tt.mode, Verdict{Decision: tt.rules}, tt.mode_); got != tt.want {
			t.Errorf("Decide(%s, %v, %v) = %v, want %v", tt.mode, tt.rules, tt.mode_, got, tt.want)
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
