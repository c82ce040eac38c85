package task

import "testing"

// TestParametersCompile: the schema compiled on the first call is valid
// (New used to compile it, and panic, at start-up).
func TestParametersCompile(t *testing.T) {
	if _, err := validator(); err != nil {
		t.Fatal(err)
	}
}
