package bridge

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/pipeline"
	"github.com/dsh-tools/dshd/policy"
	"github.com/dsh-tools/dshd/presentation"
	"github.com/dsh-tools/dshd/registry"
)

// Permission option ids. The kind of each option is its id.
const (
	optionAllowOnce    = string(acp.PermissionAllowOnce)
	optionAllowAlways  = string(acp.PermissionAllowAlways)
	optionRejectOnce   = string(acp.PermissionRejectOnce)
	optionRejectAlways = string(acp.PermissionRejectAlways)
)

// MetaKey namespaces the bridge's own `_meta` entries.
const MetaKey = "dshd"

// approver is the pipeline's approval channel for one call:
// session/request_permission, sent after the call's tool_call.
type approver struct {
	turn *Turn
	call *openCall
	view presentation.CallView
}

// permissionRequest builds the request for a call: the call as the editor
// already shows it, what it would do (the preview's diff, or else the
// command and paths it touches) and why it asks, and the four
// options, the "always" ones naming the rule they would remember and the
// scope they remember it in.
func permissionRequest(s *session, callID string, view presentation.CallView, pv previewView, req pipeline.AskRequest, sug policy.Suggestion, scope policy.Scope) acp.RequestPermissionRequest {
	content := append(s.conn.features.mapContent(view.Content), pv.content...)
	if len(content) == 0 {
		content = subjectContent(s.cwd, req.Subjects)
	} else {
		// A call's description is no substitute for the command: the
		// person decides on exactly what would run.
		content = append(content, commandContent(req.Subjects)...)
	}
	if req.Reason != "" {
		content = append(content, acp.ToolText("Permission needed: "+req.Reason+"."))
	}
	var sandboxMeta map[string]any
	if hasCommand(req.Subjects) {
		// Say what the command may do once allowed: the sandbox it runs
		// in, or plainly that it runs outside it.
		var text string
		sandboxMeta, text = s.sandboxMeta(req.Subjects)
		content = append(content, acp.ToolText("This command "+text+"."))
	}
	// The card as announced (kind, title, locations), so a client that
	// shows the request on its own shows the same call.
	title := relTitle(s.cwd, view.Title)
	kind := acp.ToolKindOther
	if view.Kind != "" {
		kind = acp.ToolKind(view.Kind)
	}
	tc := acp.ToolCallUpdate{ToolCallID: callID, Title: &title, Kind: &kind, Content: content}
	if sandboxMeta != nil {
		tc.Meta = metaJSON(map[string]any{MetaKey: map[string]any{"sandbox": sandboxMeta}})
	}
	locs := pv.locations
	if len(locs) == 0 {
		locs = s.locations(view.Locations)
	}
	if len(locs) > 0 {
		tc.Locations = locs
	}
	once := metaJSON(map[string]any{MetaKey: map[string]any{"remembers": []string{}}})
	options := []acp.PermissionOption{{OptionID: optionAllowOnce, Name: "Allow once", Kind: acp.PermissionAllowOnce, Meta: once}}
	if sug.OK() {
		options = append(options, acp.PermissionOption{
			OptionID: optionAllowAlways, Name: sug.Label(policy.Allow, scope), Kind: acp.PermissionAllowAlways,
			Meta: ruleMeta(policy.Allow, sug, scope),
		})
	}
	options = append(options, acp.PermissionOption{OptionID: optionRejectOnce, Name: "Reject once", Kind: acp.PermissionRejectOnce, Meta: once})
	if sug.OK() {
		options = append(options, acp.PermissionOption{
			OptionID: optionRejectAlways, Name: sug.Label(policy.Deny, scope), Kind: acp.PermissionRejectAlways,
			Meta: ruleMeta(policy.Deny, sug, scope),
		})
	}
	return acp.RequestPermissionRequest{SessionID: s.id, ToolCall: tc, Options: options}
}

// ruleMeta describes the rules an "always" option remembers, so a client
// (or a test) can show or check exactly what will be remembered.
func ruleMeta(d policy.Decision, sug policy.Suggestion, scope policy.Scope) acp.Meta {
	rules := make([]string, len(sug.Rules))
	for i, r := range sug.Rules {
		rules[i] = r.String()
	}
	return metaJSON(map[string]any{MetaKey: map[string]any{
		"remembers": rules,
		"decision":  d.String(),
		"scope":     string(scope),
	}})
}

// Approve implements [pipeline.Approver].
func (ap *approver) Approve(ctx context.Context, exec *pipeline.Execution, req pipeline.AskRequest) (pipeline.Approval, error) {
	t, s := ap.turn, ap.turn.sess
	// What is asked about, and remembered, is where the paths land.
	landing := s.landing(exec, req.Subjects)
	req.Reason += landingNote(s.cwd, landing)
	sug := policy.Suggest(ruleName(exec), landing.Subjects(req.Subjects), s.cwd)
	if escalated, _ := unsandboxed(req.Subjects); escalated {
		// Leaving the sandbox is approved once, never remembered.
		sug = policy.Suggestion{}
	}
	pv := ap.preview(ctx, exec)
	if len(pv.content) > 0 {
		// The card shows the pending diff too, not only the request
		// (whose toolCall a client merges into the card while it asks).
		t.send(ap.pendingUpdate(pv))
	}
	// The scope is fixed when asking, so the answer does what the option
	// said even if the settings change meanwhile.
	scope := s.agent.rememberScope(s.cwd)
	params := permissionRequest(s, ap.call.id, ap.view, pv, req, sug, scope)
	if h := s.callHost(exec); h != nil {
		h.markAsked() // whatever the answer, the landing guard lands the paths again
	}
	resp, err := s.conn.peer().RequestPermission(ctx, &params)
	if err != nil {
		s.logPermission(ap.call.id, "error", nil)
		if ctx.Err() != nil {
			return pipeline.Approval{Reason: "the turn was cancelled while waiting for permission"}, nil
		}
		return pipeline.Approval{}, err
	}
	switch o := resp.Outcome.Value.(type) {
	case *acp.PermissionCancelled:
		// The client cancels a permission request only when the turn is
		// being cancelled: deny, and cancel the turn ourselves in case the
		// session/cancel is late or never comes.
		s.logPermission(ap.call.id, "cancelled", nil)
		t.cancel()
		return pipeline.Approval{Reason: "the permission request was cancelled"}, nil
	case *acp.PermissionSelected:
		s.logPermission(ap.call.id, o.OptionID, sug.Rules)
		switch o.OptionID {
		case optionAllowOnce:
			return pipeline.Approval{AllowedOnce: true}, nil
		case optionAllowAlways:
			if sug.OK() {
				t.notice(s.rememberRules(scope, policy.Allow, sug.Rules))
			}
			return pipeline.Approval{AllowedOnce: true}, nil
		case optionRejectOnce:
			return pipeline.Approval{Reason: "the user rejected this call"}, nil
		case optionRejectAlways:
			if sug.OK() {
				t.notice(s.rememberRules(scope, policy.Deny, sug.Rules))
			}
			return pipeline.Approval{Reason: "the user rejected this call and all like it " + scope.Phrase()}, nil
		}
		return pipeline.Approval{Reason: "the client selected an unknown option " + o.OptionID}, nil
	}
	return pipeline.Approval{}, errors.New("the client answered with an unknown permission outcome")
}

func (s *session) logPermission(callID, outcome string, rules []policy.Rule) {
	if s.log == nil {
		return
	}
	texts := make([]string, len(rules))
	for i, r := range rules {
		texts[i] = r.String()
	}
	if outcome != optionAllowAlways && outcome != optionRejectAlways {
		texts = nil
	}
	s.log.append(logEvent{Kind: evPermission, Permission: &permissionEvent{CallID: callID, Outcome: outcome, Rules: texts}})
}

// subjectContent shows, in plain text, what a call without call-time
// content will touch: the command it runs, the paths it reads or writes.
func subjectContent(cwd string, subjects []registry.Subject) []acp.ToolCallContent {
	out := commandContent(subjects)
	var paths []string
	for _, subj := range subjects {
		switch subj.Kind {
		case registry.SubjectCommand:
		case registry.SubjectPath:
			verb := "reads"
			if subj.Writes {
				verb = "writes"
			}
			paths = append(paths, verb+" "+relPath(cwd, absPath(cwd, subj.Value)))
		default:
			out = append(out, acp.ToolText(subj.Value))
		}
	}
	if len(paths) > 0 {
		out = append(out, acp.ToolText("The call "+strings.Join(paths, ", ")+"."))
	}
	return out
}

// commandContent shows each command a call would run, exactly, as a
// console block.
func commandContent(subjects []registry.Subject) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, subj := range subjects {
		if subj.Kind == registry.SubjectCommand {
			out = append(out, acp.ToolText(presentation.ConsoleFallback(&presentation.TerminalCard{Output: "$ " + subj.Value})))
		}
	}
	return out
}

// previewView is what a call waiting for permission would do, in ACP terms:
// the tool's Preview card mapped like a result card (an edit's diff, one
// location per hunk).
type previewView struct {
	content   []acp.ToolCallContent
	locations []acp.ToolCallLocation
}

// preview runs the tool's Preview with the execution's context, so it reads
// files through the host exactly as the body will. A preview that fails,
// panics or shows nothing is left out (the zero preview): it never blocks
// the ask, and the call reports its own failure when it runs.
func (ap *approver) preview(ctx context.Context, exec *pipeline.Execution) previewView {
	s := ap.turn.sess
	def, ok := exec.Definition()
	if !ok || def.Preview == nil {
		return previewView{}
	}
	v := safePreview(ctx, s.agent.log, &def, exec)
	if v == nil || v.Card == nil {
		return previewView{}
	}
	// A fresh openCall: a preview is never a live terminal.
	m := s.conn.features.mapCard(s.cwd, &openCall{id: ap.call.id}, v.Card)
	return previewView{content: m.content, locations: m.locations}
}

// pendingUpdate shows the preview on the call's card: the announced
// content followed by the preview, and the preview's locations.
func (ap *approver) pendingUpdate(pv previewView) *acp.ToolCallUpdate {
	s := ap.turn.sess
	content := s.conn.features.mapContent(ap.view.Content)
	if ap.call.terminal {
		content = []acp.ToolCallContent{acp.Terminal(ap.call.id)} // as announced (tier 2)
	}
	u := &acp.ToolCallUpdate{ToolCallID: ap.call.id, Content: append(content, pv.content...)}
	if len(pv.locations) > 0 {
		u.Locations = pv.locations
	}
	return u
}

func safePreview(ctx context.Context, log *slog.Logger, def *registry.Definition, call registry.Call) (v *presentation.ResultView) {
	defer func() {
		if r := recover(); r != nil {
			log.Warn("Preview panicked", "tool", def.Name, "panic", r)
			v = nil
		}
	}()
	v, err := def.Preview(ctx, call)
	if err != nil {
		log.Debug("no preview", "tool", def.Name, "callID", call.CallID(), "err", err)
		return nil
	}
	return v
}

// notice tells the person something the turn's answer does not show (a
// permission answer that could not be remembered as asked); empty is
// nothing.
func (t *Turn) notice(text string) {
	if text != "" {
		t.send(&acp.AgentMessageChunk{Content: acp.Text(text + "\n")})
	}
}

// landingNote names, for a permission request, where each path lands when
// that is not where its text seems to point (`a/../x` through a symlink
// a, a symlinked file): the user decides on the real landing.
func landingNote(cwd string, l policy.Landing) string {
	var notes []string
	for _, lp := range l.Paths() {
		if lp.Err != nil || lp.Abs == absPath(cwd, lp.Written) || lp.Abs == absPath(l.Cwd(), lp.Written) {
			continue
		}
		notes = append(notes, lp.Written+" lands at "+lp.Abs) // plain text, as clients show it
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, ", ")
}
