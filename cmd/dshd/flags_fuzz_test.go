package main

import (
	"io"
	"strings"
	"testing"
)

// FuzzParseFlags: any argument list and environment either parses or is a
// usage error; it never panics, and a log level that parses is one slog
// knows.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{"--provider\x00openai\x00--model\x00m", "--help", "--version", "-x", "--log-level\x00bogus", "--state-dir=", "--\x00a", "--max-turn-requests\x00-1"} {
		f.Add(s, "DSHD_PROVIDER=anthropic")
	}
	f.Fuzz(func(t *testing.T, args, envLine string) {
		env := map[string]string{}
		for kv := range strings.SplitSeq(envLine, "\n") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
		fl, done, err := parseFlags(strings.Split(args, "\x00"), io.Discard, func(k string) string { return env[k] })
		if err != nil || done {
			return
		}
		if fl.logLevel != "" {
			if _, err := parseLevel(fl.logLevel); err != nil && !strings.Contains(err.Error(), "--log-level") {
				t.Fatalf("level error %v does not name the flag", err)
			}
		}
	})
}
