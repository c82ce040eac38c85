package llm

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// Secret is a credential. It prints, logs and marshals as "[redacted]";
// use Reveal to get the value for an HTTP header.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

func (s Secret) String() string                { return redacted }
func (s Secret) GoString() string              { return redacted }
func (s Secret) LogValue() slog.Value          { return slog.StringValue(redacted) }
func (s Secret) MarshalText() ([]byte, error)  { return []byte(redacted), nil }
func (s Secret) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(redacted)) }

// Scrub replaces every occurrence of the secret in text, so a server's
// error message echoing the key cannot leak it into a log.
func (s Secret) Scrub(text string) string {
	if len(s) < 4 {
		return text
	}
	return strings.ReplaceAll(text, string(s), redacted)
}

// SecretFromEnv returns the value of the first of the named environment
// variables that is set and non-empty, and the name it came from.
func SecretFromEnv(names ...string) (Secret, string) {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return Secret(v), n
		}
	}
	return "", ""
}
