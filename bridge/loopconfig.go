package bridge

import (
	"github.com/dsh-tools/dshd/acp"
)

// configEvent is the payload of a config record: a loop option's new value.
type configEvent struct {
	ConfigID string `json:"configId"`
	Value    string `json:"value"`
}

// setLoopOption hands a config option the bridge does not own to the loop,
// records the change and tells the editor.
func (s *session) setLoopOption(configID, value string, isBool bool) error {
	lc, ok := s.agent.opts.Loop.(SessionConfigurer)
	if !ok || isBool {
		return invalidParams("unknown config option %q", configID)
	}
	handled, err := lc.SetSessionConfigOption(s.id, configID, value)
	if err != nil {
		return invalidParams("%s: %v", configID, err)
	}
	if !handled {
		return invalidParams("unknown config option %q", configID)
	}
	if s.log != nil {
		s.log.append(logEvent{Kind: evConfig, Config: &configEvent{ConfigID: configID, Value: value}})
	}
	s.sendUpdate(&acp.ConfigOptionUpdate{ConfigOptions: s.configOptions()})
	return nil
}

// restoreLoopOption replays a recorded loop option on load and resume. A
// value the loop no longer accepts (a model removed from the settings) is
// dropped with a warning: the session still loads.
func (s *session) restoreLoopOption(e configEvent) {
	lc, ok := s.agent.opts.Loop.(SessionConfigurer)
	if !ok {
		return
	}
	if handled, err := lc.SetSessionConfigOption(s.id, e.ConfigID, e.Value); err != nil || !handled {
		s.agent.log.Warn("recorded config option not restored", "session", s.id, "option", e.ConfigID, "value", e.Value, "err", err)
	}
}
