package policy

import "fmt"

// Decision is what a rule set or a mode says about a call. The values are
// ordered by strength: a stronger decision wins when several apply.
type Decision int

const (
	// None means nothing matched: the caller falls through to the next
	// source of policy (a mode, the next listener).
	None Decision = iota
	// Allow lets the call run without asking.
	Allow
	// Ask asks the user before the call runs.
	Ask
	// Deny refuses the call.
	Deny
)

var decisionNames = [...]string{None: "none", Allow: "allow", Ask: "ask", Deny: "deny"}

// String returns "none", "allow", "ask" or "deny".
func (d Decision) String() string {
	if d >= None && int(d) < len(decisionNames) {
		return decisionNames[d]
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// MarshalText encodes the decision as its name.
func (d Decision) MarshalText() ([]byte, error) {
	if d < None || int(d) >= len(decisionNames) {
		return nil, fmt.Errorf("policy: invalid decision %d", int(d))
	}
	return []byte(decisionNames[d]), nil
}

// UnmarshalText decodes a decision name.
func (d *Decision) UnmarshalText(text []byte) error {
	for i, name := range decisionNames {
		if string(text) == name {
			*d = Decision(i)
			return nil
		}
	}
	return fmt.Errorf("policy: unknown decision %q (want none, allow, ask or deny)", text)
}

// Verdict is the decision of a rule set together with the rule that made it
// (empty when the decision is None).
type Verdict struct {
	Decision Decision `json:"decision"`
	Rule     string   `json:"rule,omitempty"`
}

// Strictest returns the strongest of the verdicts (the first one of equal
// strength), for combining rule sets such as the settings' rules and the
// session's remembered grants.
func Strictest(verdicts ...Verdict) Verdict {
	var best Verdict
	for _, v := range verdicts {
		if v.Decision > best.Decision {
			best = v
		}
	}
	return best
}
