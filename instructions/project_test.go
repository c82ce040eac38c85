package instructions_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/instructions"
	"github.com/dsh-tools/dshd/registry"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree makes a repository with a .git directory, and a user directory.
func tree(t *testing.T) (repo, user string) {
	base := t.TempDir()
	repo, user = filepath.Join(base, "repo"), filepath.Join(base, "config", "dshd")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(user, 0o755); err != nil {
		t.Fatal(err)
	}
	return repo, user
}

func TestChainOrderAndClaudeFallback(t *testing.T) {
	repo, user := tree(t)
	write(t, filepath.Join(user, "AGENTS.md"), "user rule\n")
	write(t, filepath.Join(repo, "AGENTS.md"), "root rule\n")
	write(t, filepath.Join(repo, "CLAUDE.md"), "ignored: the root has AGENTS.md\n")
	write(t, filepath.Join(repo, "svc", "CLAUDE.md"), "svc claude rule\n")
	write(t, filepath.Join(repo, "svc", "api", "AGENTS.md"), "api rule\n")
	write(t, filepath.Join(repo, "svc", "api", "deep", "AGENTS.md"), "below the cwd\n")
	lib := instructions.NewLibrary(instructions.Options{UserDir: user, Logger: quiet()})
	p := lib.Open(filepath.Join(repo, "svc", "api"), nil)
	defer p.Close()
	s := p.Snapshot()
	prompt := s.Prompt()
	var at []int
	for _, want := range []string{"user rule", "root rule", "svc claude rule", "api rule"} {
		i := strings.Index(prompt, want)
		if i < 0 {
			t.Fatalf("prompt lacks %q:\n%s", want, prompt)
		}
		at = append(at, i)
	}
	for i := 1; i < len(at); i++ {
		if at[i] < at[i-1] {
			t.Errorf("prompt order wrong:\n%s", prompt)
		}
	}
	for _, bad := range []string{"ignored", "below the cwd"} {
		if strings.Contains(prompt, bad) {
			t.Errorf("prompt has %q:\n%s", bad, prompt)
		}
	}
	if !strings.Contains(prompt, "governs "+filepath.Join(repo, "svc")) {
		t.Errorf("prompt does not say which directory a file governs:\n%s", prompt)
	}
}

func TestNoRepositoryMeansTheCwdOnly(t *testing.T) {
	base := t.TempDir()
	write(t, filepath.Join(base, "AGENTS.md"), "above, not a repository\n")
	cwd := filepath.Join(base, "work")
	write(t, filepath.Join(cwd, "AGENTS.md"), "cwd rule\n")
	lib := instructions.NewLibrary(instructions.Options{Logger: quiet()})
	p := lib.Open(cwd, nil)
	defer p.Close()
	prompt := p.Snapshot().Prompt()
	if !strings.Contains(prompt, "cwd rule") || strings.Contains(prompt, "above") {
		t.Errorf("prompt:\n%s", prompt)
	}
}

func TestBudgetCutsAndSaysSo(t *testing.T) {
	repo, _ := tree(t)
	write(t, filepath.Join(repo, "AGENTS.md"), strings.Repeat("root line\n", 300)) // 3000 bytes
	write(t, filepath.Join(repo, "a", "AGENTS.md"), "short\n")
	lib := instructions.NewLibrary(instructions.Options{Budget: 1000, Logger: quiet()})
	p := lib.Open(filepath.Join(repo, "a"), nil)
	defer p.Close()
	s := p.Snapshot()
	total := 0
	for _, f := range s.Files {
		total += len(f.Text)
	}
	if total > 1000 || len(s.Files) != 2 {
		t.Fatalf("%d files, %d bytes, want 2 within 1000", len(s.Files), total)
	}
	if s.Files[1].Text != "short\n" || s.Files[1].Truncated {
		t.Errorf("the short file was cut: %+v", s.Files[1])
	}
	if !s.Files[0].Truncated || !strings.HasSuffix(s.Files[0].Text, "\n") {
		t.Errorf("root file: truncated %v, ends %q", s.Files[0].Truncated, s.Files[0].Text[len(s.Files[0].Text)-5:])
	}
	if !strings.Contains(s.Prompt(), "was cut to") || !strings.Contains(s.Prompt(), "instructions.budgetBytes") {
		t.Errorf("truncation not said:\n%s", s.Prompt())
	}
	// A bigger budget applies to the open project at once.
	lib.SetBudget(1 << 20)
	if s := p.Snapshot(); s.Files[0].Truncated {
		t.Error("still cut after SetBudget")
	}
}

func TestSkills(t *testing.T) {
	repo, user := tree(t)
	write(t, filepath.Join(repo, ".agents", "skills", "pdf-forms", "SKILL.md"), "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\n# PDF forms\nRun scripts/fill.py.\n")
	write(t, filepath.Join(repo, ".agents", "skills", "pdf-forms", "scripts", "fill.py"), "print(1)\n")
	write(t, filepath.Join(repo, ".claude", "skills", "release", "SKILL.md"), "---\nname: release\ndescription: >\n  Cut a release\n  of the project.\n---\nTag it.\n")
	write(t, filepath.Join(repo, ".claude", "skills", "bad", "SKILL.md"), "---\nname: bad\n---\nno description\n")
	write(t, filepath.Join(repo, ".claude", "skills", "mismatch", "SKILL.md"), "---\nname: other\ndescription: d\n---\n")
	write(t, filepath.Join(user, "skills", "release", "SKILL.md"), "---\nname: release\ndescription: the user's release\n---\n")
	write(t, filepath.Join(user, "skills", "mine", "SKILL.md"), "---\nname: mine\ndescription: A user skill.\n---\nMine.\n")
	lib := instructions.NewLibrary(instructions.Options{UserDir: user, Logger: quiet()})
	p := lib.Open(repo, nil)
	defer p.Close()
	s := p.Snapshot()
	var names []string
	for _, sk := range s.Skills {
		names = append(names, sk.Name)
	}
	if strings.Join(names, ",") != "mine,pdf-forms,release" {
		t.Fatalf("skills = %v", names)
	}
	if sk, _ := s.Skill("release"); sk.User || sk.Description != "Cut a release of the project." {
		t.Errorf("release = %+v, want the project's", sk)
	}
	probs := ""
	for _, pr := range s.Problems {
		probs += pr.String() + "\n"
	}
	for _, want := range []string{"bad/SKILL.md: skill skipped: the front matter has no description", "differs from the directory name", `skill "release" skipped`} {
		if !strings.Contains(probs, want) {
			t.Errorf("problems lack %q:\n%s", want, probs)
		}
	}
	prompt := s.Prompt()
	if !strings.Contains(prompt, "- pdf-forms: Fill in PDF forms.") || strings.Contains(prompt, "Run scripts/fill.py") {
		t.Errorf("prompt must list skills without bodies:\n%s", prompt)
	}
	def := instructions.SkillTool(p)
	res := callTool(t, def, `{"name":"pdf-forms"}`)
	if res.IsError || !strings.Contains(res.Content[0].Text, "Run scripts/fill.py.") || !strings.Contains(res.Content[0].Text, "- scripts/fill.py") {
		t.Errorf("skill tool result: %+v", res)
	}
	if res := callTool(t, def, `{"name":"nope"}`); !res.IsError || !strings.Contains(res.Content[0].Text, "mine, pdf-forms, release") {
		t.Errorf("unknown skill: %+v", res)
	}
}

func callTool(t *testing.T, def *registry.Definition, args string) registry.Result {
	t.Helper()
	res, err := def.Execute(context.Background(), nil, []byte(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCommands(t *testing.T) {
	repo, user := tree(t)
	write(t, filepath.Join(repo, ".dshd", "commands", "review.md"), "---\ndescription: Review a file\nargument-hint: <file> [focus]\n---\nReview $1 with a focus on $2.\nAll: $ARGUMENTS\n")
	write(t, filepath.Join(repo, ".dshd", "commands", "plain.md"), "# Explain the build\nExplain how the build works.\n")
	write(t, filepath.Join(user, "commands", "review.md"), "---\ndescription: the user's review\n---\nx\n")
	write(t, filepath.Join(user, "commands", "broken.md"), "---\ndescription: [a, b]\n---\nx\n")
	lib := instructions.NewLibrary(instructions.Options{UserDir: user, Logger: quiet()})
	p := lib.Open(repo, nil)
	defer p.Close()
	s := p.Snapshot()
	if len(s.Commands) != 2 {
		t.Fatalf("commands = %+v", s.Commands)
	}
	c, _ := s.Command("review")
	if c.User || c.ArgumentHint != "<file> [focus]" || c.Description != "Review a file" {
		t.Errorf("review = %+v", c)
	}
	if got := c.Expand(`main.go "error handling"`); got != "Review main.go with a focus on error handling.\nAll: main.go \"error handling\"\n" {
		t.Errorf("expanded = %q", got)
	}
	plain, _ := s.Command("plain")
	if plain.Description != "Explain the build" {
		t.Errorf("plain description = %q", plain.Description)
	}
	if got := plain.Expand("for CI"); !strings.HasSuffix(got, "\n\nArguments: for CI") {
		t.Errorf("arguments lost: %q", got)
	}
	if len(s.Problems) != 2 {
		t.Errorf("problems = %v", s.Problems)
	}
}

func TestSplitArguments(t *testing.T) {
	for in, want := range map[string]string{
		`a b  c`:        "a|b|c",
		`"a b" 'c d' e`: "a b|c d|e",
		`a\ b "x\"y"`:   `a b|x"y`,
		`'it''s'`:       "its",
		``:              "",
		`"" x`:          "|x",
	} {
		if got := strings.Join(instructions.SplitArguments(in), "|"); got != want {
			t.Errorf("SplitArguments(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNested(t *testing.T) {
	repo, _ := tree(t)
	write(t, filepath.Join(repo, "AGENTS.md"), "root\n")
	write(t, filepath.Join(repo, "a", "AGENTS.md"), "a rule\n")
	write(t, filepath.Join(repo, "a", "b", "CLAUDE.md"), "b rule\n")
	write(t, filepath.Join(repo, "a", "b", "c.go"), "package b\n")
	lib := instructions.NewLibrary(instructions.Options{Logger: quiet()})
	p := lib.Open(repo, nil)
	defer p.Close()
	files := p.Nested(filepath.Join(repo, "a", "b", "c.go"), []string{repo}, nil)
	if len(files) != 2 || files[0].Dir != filepath.Join(repo, "a") || files[1].Text != "b rule\n" {
		t.Fatalf("nested = %+v", files)
	}
	if files := p.Nested(filepath.Join(repo, "x.go"), []string{repo}, nil); len(files) != 0 {
		t.Errorf("a file of the cwd got %+v", files)
	}
	if files := p.Nested("/etc/passwd", []string{repo}, nil); len(files) != 0 {
		t.Errorf("a file outside the roots got %+v", files)
	}
	text := instructions.AttachText(files, instructions.DefaultBudget)
	if !strings.Contains(text, "govern the files under "+filepath.Join(repo, "a", "b")) {
		t.Errorf("attach text:\n%s", text)
	}
}

func TestLiveChanges(t *testing.T) {
	repo, user := tree(t)
	write(t, filepath.Join(repo, "AGENTS.md"), "first\n")
	lib := instructions.NewLibrary(instructions.Options{UserDir: user, Logger: quiet()})
	changed := make(chan *instructions.Snapshot, 16)
	p := lib.Open(repo, func(s *instructions.Snapshot) { changed <- s })
	defer p.Close()
	wait := func(what string, ok func(*instructions.Snapshot) bool) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case s := <-changed:
				if ok(s) {
					return
				}
			case <-timeout:
				t.Fatalf("no change seen: %s", what)
			}
		}
	}
	write(t, filepath.Join(repo, "AGENTS.md"), "second\n")
	wait("AGENTS.md edit", func(s *instructions.Snapshot) bool { return strings.Contains(s.Prompt(), "second") })
	if !strings.Contains(p.Snapshot().Prompt(), "second") {
		t.Error("snapshot not updated")
	}
	// Directories that do not exist yet are picked up when they appear.
	write(t, filepath.Join(repo, ".dshd", "commands", "hello.md"), "Say hello to $ARGUMENTS.\n")
	wait("new command", func(s *instructions.Snapshot) bool { _, ok := s.Command("hello"); return ok })
	write(t, filepath.Join(repo, ".agents", "skills", "new-skill", "SKILL.md"), "---\nname: new-skill\ndescription: Appeared.\n---\n")
	wait("new skill", func(s *instructions.Snapshot) bool { _, ok := s.Skill("new-skill"); return ok })
	write(t, filepath.Join(user, "AGENTS.md"), "user now\n")
	wait("user file", func(s *instructions.Snapshot) bool { return strings.Contains(s.Prompt(), "user now") })
	if err := os.Remove(filepath.Join(repo, ".dshd", "commands", "hello.md")); err != nil {
		t.Fatal(err)
	}
	wait("removed command", func(s *instructions.Snapshot) bool { _, ok := s.Command("hello"); return !ok })
}

func TestUserDirCreatedLater(t *testing.T) {
	repo, user := tree(t)
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}
	lib := instructions.NewLibrary(instructions.Options{UserDir: user, Logger: quiet()})
	changed := make(chan *instructions.Snapshot, 16)
	p := lib.Open(repo, func(s *instructions.Snapshot) { changed <- s })
	defer p.Close()
	write(t, filepath.Join(user, "AGENTS.md"), "late user rule\n")
	timeout := time.After(10 * time.Second)
	for !strings.Contains(p.Snapshot().Prompt(), "late user rule") {
		select {
		case <-changed:
		case <-timeout:
			t.Fatal("the user file created later was not seen")
		}
	}
}

// A cloned repository must not make dshd read the user's other files into
// the prompt: a project file that is a link leading out of the repository
// is refused and reported; relative links inside it, and the user's own
// links, work (os.Root treats an absolute link as leading out).
func TestProjectLinksOutOfTheRepositoryAreRefused(t *testing.T) {
	repo, user := tree(t)
	secret := filepath.Join(filepath.Dir(repo), "id_rsa")
	write(t, secret, "---\nname: evil\ndescription: PRIVATE KEY\n---\nPRIVATE KEY\n")
	write(t, filepath.Join(repo, "docs", "agents.md"), "inside link target\n")
	link := func(target, at string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	link(secret, filepath.Join(repo, "AGENTS.md"))
	link(filepath.Join("..", "docs", "agents.md"), filepath.Join(repo, "sub", "AGENTS.md"))
	link(secret, filepath.Join(repo, ".agents", "skills", "evil", "SKILL.md"))
	link(secret, filepath.Join(repo, ".dshd", "commands", "evil.md"))
	link(filepath.Dir(secret), filepath.Join(repo, "nested", "deep"))
	link(secret, filepath.Join(repo, "nested2", "AGENTS.md"))
	dotfiles := filepath.Join(filepath.Dir(repo), "dotfiles", "AGENTS.md")
	write(t, dotfiles, "user dotfile rule\n")
	link(dotfiles, filepath.Join(user, "AGENTS.md"))

	lib := instructions.NewLibrary(instructions.Options{UserDir: user, Logger: quiet()})
	p := lib.Open(filepath.Join(repo, "sub"), nil)
	defer p.Close()
	s := p.Snapshot()
	prompt := s.Prompt()
	if strings.Contains(prompt, "PRIVATE KEY") {
		t.Fatalf("a link out of the repository was read:\n%s", prompt)
	}
	if !strings.Contains(prompt, "inside link target") || !strings.Contains(prompt, "user dotfile rule") {
		t.Errorf("links inside the repository or of the user must work:\n%s", prompt)
	}
	if _, ok := s.Skill("evil"); ok {
		t.Error("a linked SKILL.md was loaded")
	}
	if _, ok := s.Command("evil"); ok {
		t.Error("a linked command was loaded")
	}
	var probs []string
	for _, pr := range s.Problems {
		probs = append(probs, pr.String())
	}
	if len(probs) != 3 || !strings.Contains(strings.Join(probs, "\n"), "leads outside") {
		t.Errorf("problems = %q, want the three links reported", probs)
	}
	for _, f := range append(p.Nested(filepath.Join(repo, "nested2", "x.go"), []string{repo}, nil), p.Nested(filepath.Join(repo, "nested", "deep", "id_rsa"), []string{repo}, nil)...) {
		if strings.Contains(f.Text, "PRIVATE KEY") {
			t.Errorf("a nested link out of the repository was read: %+v", f)
		}
	}
}
