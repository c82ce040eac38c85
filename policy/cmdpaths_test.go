package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCommandPaths(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "cfg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "cfg", "settings.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(name string) string {
		return map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/home/u/.config"}[name]
	}
	type cp = CommandPath
	tests := []struct {
		name string
		cmd  string
		want []cp // must all be listed (other words may be too)
		not  []string
	}{
		{"redirection", "echo x > cfg/settings.json", []cp{{ws, "cfg/settings.json"}}, nil},
		{"redirection without blanks", "echo x>>cfg/a 2>&1", []cp{{ws, "cfg/a"}}, []string{"1", "&1", "2"}},
		{"quotes", `cat "cfg/settings.json" 'b c'`, []cp{{ws, "cfg/settings.json"}, {ws, "b"}}, nil},
		{"flag value", "sort --output=cfg/out.txt in", []cp{{ws, "cfg/out.txt"}}, nil},
		{"cd moves later words", "cd cfg && echo x > settings.json", []cp{{filepath.Join(ws, "cfg"), "settings.json"}}, nil},
		{"variables", `echo x > "$XDG_CONFIG_HOME/dshd/settings.json" ${HOME}/y`, []cp{{ws, "/home/u/.config/dshd/settings.json"}, {ws, "/home/u/y"}}, nil},
		{"tilde", "cp a ~/.config/dshd/settings.json", []cp{{ws, "/home/u/.config/dshd/settings.json"}}, nil},
		{"glob", "cp small.txt cfg/*.json", []cp{{ws, filepath.Join(ws, "cfg", "settings.json")}}, nil},
		{"after a pipe", "cat a | tee .git/config", []cp{{ws, ".git/config"}}, nil},
		{"substitution", "echo $(cat .git/HEAD)", []cp{{ws, ".git/HEAD"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CommandPaths(tt.cmd, ws, env)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("%+v missing from %+v", w, got)
				}
			}
			for _, n := range tt.not {
				if slices.ContainsFunc(got, func(c cp) bool { return c.Path == n }) {
					t.Errorf("%q listed: %+v", n, got)
				}
			}
		})
	}
}

// FuzzCommandPaths: any command line is split without panicking, and no
// listed path is empty.
func FuzzCommandPaths(f *testing.F) {
	for _, s := range []string{"echo x > a", "cd d && ls", "a=${B}/c $", "~", "'\"\\", "cp *.go x", "${", "$"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, c := range CommandPaths(cmd, "/ws", func(string) string { return "/v" }) {
			if c.Path == "" || c.Dir == "" {
				t.Fatalf("empty entry %+v for %q", c, cmd)
			}
		}
	})
}
