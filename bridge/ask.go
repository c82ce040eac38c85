package bridge

import (
	"context"
	"errors"
	"fmt"
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
// already shows it plus why it asks, and the four options, the "always"
// ones naming the rule they would remember.
func permissionRequest(s *session, callID string, view presentation.CallView, req pipeline.AskRequest, sug policy.Suggestion) acp.RequestPermissionRequest {
	content := s.conn.features.mapContent(view.Content)
	if len(content) == 0 {
		content = subjectContent(s.cwd, req.Subjects)
	}
	if req.Reason != "" {
		content = append(content, acp.ToolText("Permission needed: "+req.Reason+"."))
	}
	title := relTitle(s.cwd, view.Title)
	tc := acp.ToolCallUpdate{ToolCallID: callID, Title: &title, Content: content}
	if locs := s.locations(view.Locations); len(locs) > 0 {
		tc.Locations = locs
	}
	once := metaJSON(map[string]any{MetaKey: map[string]any{"remembers": []string{}}})
	options := []acp.PermissionOption{{OptionID: optionAllowOnce, Name: "Allow once", Kind: acp.PermissionAllowOnce, Meta: once}}
	if sug.OK() {
		options = append(options, acp.PermissionOption{
			OptionID: optionAllowAlways, Name: sug.Label(policy.Allow), Kind: acp.PermissionAllowAlways,
			Meta: ruleMeta(policy.Allow, sug),
		})
	}
	options = append(options, acp.PermissionOption{OptionID: optionRejectOnce, Name: "Reject once", Kind: acp.PermissionRejectOnce, Meta: once})
	if sug.OK() {
		options = append(options, acp.PermissionOption{
			OptionID: optionRejectAlways, Name: sug.Label(policy.Deny), Kind: acp.PermissionRejectAlways,
			Meta: ruleMeta(policy.Deny, sug),
		})
	}
	return acp.RequestPermissionRequest{SessionID: s.id, ToolCall: tc, Options: options}
}

// ruleMeta describes the rules an "always" option remembers, so a client
// (or a test) can show or check exactly what will be remembered.
func ruleMeta(d policy.Decision, sug policy.Suggestion) acp.Meta {
	rules := make([]string, len(sug.Rules))
	for i, r := range sug.Rules {
		rules[i] = r.String()
	}
	return metaJSON(map[string]any{MetaKey: map[string]any{
		"remembers": rules,
		"decision":  d.String(),
		"scope":     "session",
	}})
}

// Approve implements [pipeline.Approver].
func (ap *approver) Approve(ctx context.Context, exec *pipeline.Execution, req pipeline.AskRequest) (pipeline.Approval, error) {
	t, s := ap.turn, ap.turn.sess
	sug := policy.Suggest(exec.ToolName(), req.Subjects, s.cwd)
	params := permissionRequest(s, ap.call.id, ap.view, req, sug)
	var resp acp.RequestPermissionResponse
	err := s.conn.peer().Call(ctx, acp.MethodSessionRequestPermission, params, &resp)
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
				s.rememberRules(policy.Allow, sug.Rules)
			}
			return pipeline.Approval{AllowedOnce: true}, nil
		case optionRejectOnce:
			return pipeline.Approval{Reason: "the user rejected this call"}, nil
		case optionRejectAlways:
			if sug.OK() {
				s.rememberRules(policy.Deny, sug.Rules)
			}
			return pipeline.Approval{Reason: "the user rejected this call and all like it for this session"}, nil
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

// subjectContent shows what a call without call-time content will touch:
// the command it runs, the paths it reads or writes.
func subjectContent(cwd string, subjects []registry.Subject) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	var paths []string
	for _, subj := range subjects {
		switch subj.Kind {
		case registry.SubjectCommand:
			out = append(out, acp.ToolText(presentation.ConsoleFallback(&presentation.TerminalCard{Output: "$ " + subj.Value})))
		case registry.SubjectPath:
			verb := "reads"
			if subj.Writes {
				verb = "writes"
			}
			paths = append(paths, fmt.Sprintf("%s `%s`", verb, relPath(cwd, absPath(cwd, subj.Value))))
		default:
			out = append(out, acp.ToolText("`"+subj.Value+"`"))
		}
	}
	if len(paths) > 0 {
		out = append(out, acp.ToolText("The call "+strings.Join(paths, ", ")+"."))
	}
	return out
}
