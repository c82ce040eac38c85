package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/config"
)

// TestREADMESettingsExample keeps the README's settings example true: it
// must parse and pass the daemon's own validation.
func TestREADMESettingsExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const marker = "```json\n{\n  \"model\":"
	i := strings.Index(string(readme), marker)
	if i < 0 {
		t.Fatal("the README has no settings example starting with " + marker)
	}
	body := string(readme[i+len("```json\n"):])
	body = body[:strings.Index(body, "```")]
	s, err := config.Parse("README.md", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := validateSettings(&s); err != nil {
		t.Fatalf("README settings example: %v", err)
	}
	if len(s.Permissions.Allow) == 0 || len(s.Permissions.Deny) == 0 {
		t.Fatalf("the example lost its rules: %+v", s.Permissions)
	}
}
