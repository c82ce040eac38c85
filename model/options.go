package model

import (
	"fmt"
	"slices"

	"github.com/dsh-tools/dshd/acp"
)

// ConfigModel is the id of the `model` config option.
const ConfigModel = "model"

// ModelChoices returns the model names the editor may choose from: the
// configured default first, then the configured list, without repeats.
func (l *Loop) ModelChoices() []string {
	o := l.Options()
	var out []string
	if o.Model != "" {
		out = append(out, o.Model)
	}
	for _, m := range o.Models {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// sessionModel is the model a session's requests use.
func (l *Loop) sessionModel(sessionID string, o Options) string {
	l.mu.Lock()
	m, ok := l.models[sessionID]
	l.mu.Unlock()
	if ok && (m == o.Model || slices.Contains(o.Models, m)) {
		return m
	}
	return o.Model
}

// SessionConfigOptions returns the loop's own config options of a session:
// the `model` selector (category model) when there is at least one model
// name to show. The bridge adds the `mode` option itself.
func (l *Loop) SessionConfigOptions(sessionID string) []acp.SessionConfigOption {
	choices := l.ModelChoices()
	if len(choices) == 0 {
		return nil
	}
	opts := make([]acp.SelectOption, len(choices))
	for i, c := range choices {
		opts[i] = acp.SelectOption{Value: c, Name: c}
	}
	return []acp.SessionConfigOption{{Value: &acp.SelectConfigOption{
		ID:           ConfigModel,
		Name:         "Model",
		Description:  acp.Ptr("The language model that answers in this session."),
		Category:     acp.Ptr(acp.ConfigCategoryModel),
		CurrentValue: l.sessionModel(sessionID, l.Options()),
		Options:      acp.SelectOptions{Flat: opts},
	}}}
}

// SetSessionConfigOption sets one of the loop's config options of a
// session; handled is false for an option the loop does not own (the
// bridge handles `mode`). An unknown model name is an invalid-params error.
func (l *Loop) SetSessionConfigOption(sessionID, configID, value string) (handled bool, err error) {
	if configID != ConfigModel {
		return false, nil
	}
	if !slices.Contains(l.ModelChoices(), value) {
		return true, fmt.Errorf("%w: unknown model %q", acp.ErrInvalidParams, value)
	}
	l.mu.Lock()
	l.models[sessionID] = value
	l.mu.Unlock()
	return true, nil
}

// ForgetSession drops what the loop keeps about a session (its model
// choice and cost, which a later turn reads again from the history).
func (l *Loop) ForgetSession(sessionID string) {
	l.mu.Lock()
	delete(l.models, sessionID)
	delete(l.costs, sessionID)
	l.mu.Unlock()
}
