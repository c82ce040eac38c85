package registry

import (
	"regexp"
	"strings"
	"testing"
)

// isName stands in for the two name patterns; it must agree with them.
func FuzzIsName(f *testing.F) {
	tool := regexp.MustCompile(toolNamePattern)
	property := regexp.MustCompile(propertyNamePattern)
	for _, s := range []string{"", "a", "read_file", "a-b", "a.b", "a b", "ü", "A9", strings.Repeat("x", 64), strings.Repeat("x", 65), "a\n", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isName(s, "_-"), tool.MatchString(s); got != want {
			t.Errorf("tool name %q: isName %v, pattern %v", s, got, want)
		}
		if got, want := isName(s, "_.-"), property.MatchString(s); got != want {
			t.Errorf("property name %q: isName %v, pattern %v", s, got, want)
		}
	})
}
