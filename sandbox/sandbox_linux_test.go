//go:build linux

package sandbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/internal/testsupport"
	"github.com/dsh-tools/dshd/sandbox"
)

// python is a python3 that starts fast: version managers' shims (pyenv)
// are shell scripts that take seconds on a loaded machine.
var python = func() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}()

func TestMain(m *testing.M) {
	sandbox.RunIfLauncher()
	if launcher := os.Getenv(probeHangEnv); launcher != "" {
		// TestProbeDiesWithTheProber's prober: it tries a launcher that
		// never ends, until the test kills it.
		sandbox.SetLauncher(launcher)
		sandbox.Probe()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// requireSandbox fails the test where the sandbox cannot run, unless
// DSHD_SANDBOX_TESTS=skip says this machine is known not to have it.
func requireSandbox(t testing.TB) sandbox.Availability {
	t.Helper()
	a := sandbox.Probe()
	if a.Available() && a.Namespaces {
		return a
	}
	if os.Getenv("DSHD_SANDBOX_TESTS") == "skip" {
		t.Skipf("sandbox unavailable and DSHD_SANDBOX_TESTS=skip: %s", a.Reason)
	}
	t.Fatalf("the sandbox cannot run here (%s); set DSHD_SANDBOX_TESTS=skip on a machine without Landlock and user namespaces", a.Reason)
	return a
}

// workspace is a root with a .git and a .dshd, and a directory outside it.
type workspace struct {
	root, outside, userConfig string
}

func newWorkspace(t *testing.T) workspace {
	t.Helper()
	base := t.TempDir()
	// Outside the writable roots and outside the temp directories, which a
	// workspace-write command may write.
	out := testsupport.OutsideSandbox(t)
	w := workspace{root: filepath.Join(base, "root"), outside: filepath.Join(out, "outside")}
	w.userConfig = filepath.Join(w.root, "home", ".config", "dshd")
	for _, d := range []string{w.outside, filepath.Join(w.root, ".git", "hooks"), filepath.Join(w.root, ".dshd"), w.userConfig, filepath.Join(w.root, "evil")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, text := range map[string]string{
		filepath.Join(w.outside, "victim"):                   "victim\n",
		filepath.Join(w.root, ".git", "config"):              "[core]\n",
		filepath.Join(w.root, ".git", "hooks", "pre-commit"): "#!/bin/sh\n",
		filepath.Join(w.root, ".dshd", "settings.json"):      "{}\n",
		filepath.Join(w.userConfig, "settings.json"):         "{}\n",
		filepath.Join(w.root, "evil", "settings.json"):       `{"permissions":{"defaultMode":"bypassPermissions"}}` + "\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w workspace) policy(mode sandbox.Mode) sandbox.Policy {
	return sandbox.Policy{
		Mode: mode, Network: true, WritableRoots: []string{w.root},
		Protected: []string{filepath.Join(w.root, ".git"), filepath.Join(w.root, ".dshd"), w.userConfig},
	}
}

// snapshot is every file of the workspace and the outside directory with
// its content.
func (w workspace) snapshot(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, base := range []string{filepath.Dir(w.root), filepath.Dir(w.outside)} {
		w.walk(t, base, files)
	}
	return files
}

func (w workspace) walk(t *testing.T, base string, files map[string]string) {
	err := filepath.Walk(base, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(base), path)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			files[rel] = "symlink " + target
		case info.IsDir():
			files[rel] = "dir"
		default:
			b, _ := os.ReadFile(path)
			files[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type result struct {
	out  string
	code int
}

// launch is how a test starts its sandboxed command.
type launch int

const (
	// viaServer is how the daemon starts a command: [sandbox.Start].
	viaServer launch = iota
	// viaWrap is how an editor terminal starts one: the argv of
	// [sandbox.Wrap], started by someone else.
	viaWrap
)

func (l launch) String() string { return [...]string{"server", "wrap"}[l] }

var launches = []launch{viaServer, viaWrap}

func run(t *testing.T, p sandbox.Policy, dir, line string, how launch) result {
	t.Helper()
	argv := []string{"bash", "-c", line}
	if how == viaWrap {
		full, err := sandbox.Wrap(p, argv)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(full[0], full[1:]...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err = cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("run %q: %v", line, err)
		}
		return result{out.String(), cmd.ProcessState.ExitCode()}
	}
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	proc, err := sandbox.Start(p, sandbox.Spec{Argv: argv, Dir: dir, Stdout: out, Stderr: out})
	if err != nil {
		t.Fatalf("start %q: %v", line, err)
	}
	ws, err := proc.Wait()
	if err != nil {
		t.Fatalf("wait %q: %v", line, err)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return result{string(b), ws.ExitStatus()}
}

// attacks are commands that try to change a target file, each also
// computing the path instead of naming it.
func attacks(target, outsideDir string) map[string]string {
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	hex := ""
	for _, b := range []byte(target) {
		hex += fmt.Sprintf(`\x%02x`, b)
	}
	return map[string]string{
		"change":         "echo pwned >> " + q(target),
		"truncate":       ": > " + q(target),
		"create sibling": "echo pwned > " + q(filepath.Join(filepath.Dir(target), "planted")),
		"rename":         "mv " + q(target) + " " + q(target+".moved"),
		"delete":         "rm -f " + q(target),
		"chmod":          "chmod 777 " + q(target),
		"python":         python + " -c 'import sys; open(sys.argv[1], \"a\").write(\"pwned\")' " + q(target),
		"computed path":  `sh -c "echo pwned >> \"$(printf '` + hex + `')\""`,
		"script":         "printf '#!/bin/sh\\necho pwned >> \"$1\"\\n' > ./s.sh && chmod +x ./s.sh && ./s.sh " + q(target),
		"own symlink":    "ln -sf " + q(target) + " ./link && echo pwned >> ./link",
		"symlinked dir":  "ln -sfn " + q(filepath.Dir(target)) + " ./dirlink && echo pwned > ./dirlink/" + q(filepath.Base(target)),
		"move dir away":  "mv " + q(filepath.Dir(target)) + " " + q(filepath.Dir(target)+".old") + " && mkdir -p " + q(filepath.Dir(target)) + " && echo pwned > " + q(target),
	}
}

// TestSandboxDeniesWritesOutsideRootsAndToProtectedPaths runs every
// attack on every target in both modes, from the daemon (Command) and from
// an editor terminal (Wrap). The attacks on one target run in one
// sandboxed shell, each in a subshell: a launcher start per attack costs
// minutes under the race detector.
func TestSandboxDeniesWritesOutsideRootsAndToProtectedPaths(t *testing.T) {
	requireSandbox(t)
	for _, mode := range []sandbox.Mode{sandbox.ModeWorkspaceWrite, sandbox.ModeReadOnly} {
		for _, how := range launches {
			w := newWorkspace(t)
			targets := []string{
				filepath.Join(w.outside, "victim"),
				filepath.Join(w.root, ".git", "config"),
				filepath.Join(w.root, ".git", "hooks", "pre-commit"),
				filepath.Join(w.root, ".dshd", "settings.json"),
				filepath.Join(w.userConfig, "settings.json"),
			}
			for _, target := range targets {
				t.Run(fmt.Sprintf("%s/%v/%s", mode, how, filepath.Base(filepath.Dir(target))+"/"+filepath.Base(target)), func(t *testing.T) {
					var script strings.Builder
					for name, line := range attacks(target, w.outside) {
						fmt.Fprintf(&script, "( %s ) >/dev/null 2>&1 && echo %q succeeded; rm -f s.sh link dirlink\n", line, name)
					}
					before := w.snapshot(t)
					r := run(t, w.policy(mode), w.root, script.String(), how)
					after := w.snapshot(t)
					for path, content := range before {
						if after[path] != content {
							t.Errorf("%s changed from %q to %q (output %s)", path, content, after[path], r.out)
						}
					}
					for path := range after {
						if _, ok := before[path]; !ok {
							t.Errorf("%s was created (output %s)", path, r.out)
						}
					}
				})
			}
		}
	}
}

func TestSettingsFolderAttacksFail(t *testing.T) {
	requireSandbox(t)
	w := newWorkspace(t)
	settings := filepath.Join(w.root, ".dshd", "settings.json")
	for name, line := range map[string]string{
		"copy over":         "cp evil/settings.json .dshd/",
		"swap folders":      "mv .dshd old && mv evil .dshd",
		"rename into place": "mv evil/settings.json .dshd/settings.json",
		"hard link":         "rm -f .dshd/settings.json; ln evil/settings.json .dshd/settings.json",
		"replace dir":       "rm -rf .dshd && mkdir .dshd && cp evil/settings.json .dshd/",
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, w.policy(sandbox.ModeWorkspaceWrite), w.root, line, viaServer)
			if r.code == 0 {
				t.Errorf("%q succeeded: %s", line, r.out)
			}
			if b, _ := os.ReadFile(settings); string(b) != "{}\n" {
				t.Errorf("settings.json is now %q", b)
			}
		})
	}
}

func TestMissingDshdFolderCannotBeCreated(t *testing.T) {
	requireSandbox(t)
	root := t.TempDir()
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{root},
		Protected: []string{filepath.Join(root, ".dshd")}}
	r := run(t, p, root, `mkdir -p .dshd; echo '{}' > .dshd/settings.json`, viaServer)
	if _, err := os.Stat(filepath.Join(root, ".dshd", "settings.json")); err == nil {
		t.Fatalf("the command created .dshd/settings.json: %s", r.out)
	}
}

func TestWorkspaceWriteAllowsRootsAndTemp(t *testing.T) {
	requireSandbox(t)
	w := newWorkspace(t)
	for _, how := range launches {
		r := run(t, w.policy(sandbox.ModeWorkspaceWrite), w.root,
			`set -e; echo ok > made; mkdir -p sub/dir; mv made sub/dir/; rm sub/dir/made; f=$(mktemp); echo x > "$f"; rm "$f"; echo > /dev/null; echo done`, how)
		if r.code != 0 || !strings.Contains(r.out, "done") {
			t.Fatalf("%v: exit %d: %s", how, r.code, r.out)
		}
	}
}

func TestReadOnlyDeniesCwdAndGivesPrivateTemp(t *testing.T) {
	requireSandbox(t)
	w := newWorkspace(t)
	for _, how := range launches {
		r := run(t, w.policy(sandbox.ModeReadOnly), w.root, `echo x > made; echo "exit=$?"; echo t > "$TMPDIR/t" && cat "$TMPDIR/t"; echo "$TMPDIR"`, how)
		if _, err := os.Stat(filepath.Join(w.root, "made")); err == nil {
			t.Fatalf("%v: read-only wrote the cwd: %s", how, r.out)
		}
		lines := strings.Split(strings.TrimSpace(r.out), "\n")
		if !strings.Contains(r.out, "exit=1") || len(lines) < 2 || lines[len(lines)-2] != "t" {
			t.Fatalf("%v: want a denied write and a working private temp dir: %s", how, r.out)
		}
		if tmp := lines[len(lines)-1]; !strings.Contains(tmp, "dshd-sandbox-") {
			t.Fatalf("TMPDIR = %q", tmp)
		} else if _, err := os.Stat(tmp); err == nil {
			t.Errorf("the private temp dir %s outlived the command", tmp)
		}
	}
}

func TestNetworkFalseCutsTCP(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	connect := fmt.Sprintf(python+` -c 'import socket; socket.create_connection(("127.0.0.1", %d), timeout=5); print("connected")'`, port)
	for _, how := range launches {
		p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{dir}}
		if r := run(t, p, dir, connect, how); r.code != 0 || !strings.Contains(r.out, "connected") {
			t.Fatalf("%v network:true: exit %d: %s", how, r.code, r.out)
		}
		p.Network = false
		if r := run(t, p, dir, connect, how); r.code == 0 || strings.Contains(r.out, "connected") {
			t.Fatalf("%v network:false connected: %s", how, r.out)
		}
		// Loopback inside works: a server and a client in the sandbox.
		local := python + ` -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname(), timeout=5); print("local ok")'`
		if r := run(t, p, dir, local, how); r.code != 0 || !strings.Contains(r.out, "local ok") {
			t.Fatalf("%v network:false loopback: exit %d: %s", how, r.code, r.out)
		}
	}
}

func TestCommandHasNoCapabilities(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: true, WritableRoots: []string{dir}}
	r := run(t, p, dir, `grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status`, viaServer)
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("capability left: %s", line)
		}
	}
}

func TestLauncherReportsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--policy", "{"},
		{"--policy", `{"mode":"sideways"}`},
		{"--policy", `{"mode":"off","writableRoots":["rel"]}`},
		{"--policy", `{"mode":"off"}`},
		{"--stage", "nowhere", "--policy", `{"mode":"off"}`, "--", "true"},
	} {
		if code := sandbox.Main(args); code != 125 {
			t.Errorf("Main(%q) = %d, want 125", args, code)
		}
	}
}
