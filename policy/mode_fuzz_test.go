package policy

import "testing"

// FuzzParseModeAndDecision: what parses prints back as itself.
func FuzzParseModeAndDecision(f *testing.F) {
	for _, s := range []string{"default", "plan", "acceptEdits", "bypassPermissions", "allow", "ask", "deny", "none", "", "DENY", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if m, err := ParseMode(s); err == nil && string(m) != s {
			t.Fatalf("ParseMode(%q) = %q", s, m)
		}
		var d Decision
		if err := d.UnmarshalText([]byte(s)); err == nil {
			if text, err := d.MarshalText(); err != nil || string(text) != s {
				t.Fatalf("decision %q prints as %q (%v)", s, text, err)
			}
		}
	})
}
