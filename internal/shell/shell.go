package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"

	"github.com/dsh-tools/dshd/internal/pathstyle"
)

// EnvBash names the environment variable that points at the bash to use.
const EnvBash = "DSHD_BASH"

// ErrNoBash is wrapped by the error of a search that found no bash.
var ErrNoBash = errors.New("no bash found")

// System is what the search may look at.
type System struct {
	GOOS     string
	Getenv   func(string) string
	LookPath func(string) (string, error)
	// IsFile reports whether an absolute path names an existing file.
	IsFile func(string) bool
}

// Local is the system dshd runs on.
func Local() System {
	return System{
		GOOS:     runtime.GOOS,
		Getenv:   os.Getenv,
		LookPath: exec.LookPath,
		IsFile: func(p string) bool {
			fi, err := os.Stat(p)
			return err == nil && fi.Mode().IsRegular()
		},
	}
}

var (
	mu     sync.Mutex
	cached string
)

// Bash returns the bash of the local system. A bash found is remembered
// for the life of the process; a failed search is repeated on the next
// call, so that installing Git for Windows needs no restart of the agent.
func Bash() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if cached != "" {
		return cached, nil
	}
	p, err := Find(Local())
	if err != nil {
		return "", err
	}
	cached = p
	return p, nil
}

// Find searches sys for bash (see the package doc for the order).
func Find(sys System) (string, error) {
	if sys.GOOS != "windows" {
		path, err := sys.LookPath("bash")
		if err != nil {
			return "", fmt.Errorf("%w on PATH: the bash tool needs bash; install it with your package manager", ErrNoBash)
		}
		return path, nil
	}
	if p := strings.TrimSpace(sys.Getenv(EnvBash)); p != "" {
		if sys.IsFile(p) {
			return p, nil
		}
		return "", fmt.Errorf("%w: %s=%s is not a file; point it at Git for Windows' bin\\bash.exe", ErrNoBash, EnvBash, p)
	}
	for _, c := range windowsCandidates(sys) {
		if c != "" && !isWSLLauncher(c, sys.Getenv) && sys.IsFile(c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: the bash tool runs commands with Git for Windows' bash.exe, which is neither on PATH "+
		`nor in C:\Program Files\Git. Install Git for Windows (https://gitforwindows.org, or "winget install --id Git.Git -e"), `+
		"or set %s to the full path of bash.exe", ErrNoBash, EnvBash)
}

// windowsCandidates lists where bash.exe may be, in the order tried.
func windowsCandidates(sys System) []string {
	w := pathstyle.Windows
	var out []string
	if p, err := sys.LookPath("bash.exe"); err == nil {
		out = append(out, p)
	}
	// Git for Windows puts only cmd\git.exe on PATH by default; bash.exe
	// is in bin\ beside cmd\ (and mingw64\bin\git.exe in some setups).
	if g, err := sys.LookPath("git.exe"); err == nil {
		if root := gitRoot(g); root != "" {
			out = append(out, w.Clean(root+`\bin\bash.exe`))
		}
	}
	for _, env := range []string{"ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"} {
		if d := sys.Getenv(env); d != "" {
			out = append(out, w.Clean(d+`\Git\bin\bash.exe`))
		}
	}
	if d := sys.Getenv("LOCALAPPDATA"); d != "" {
		out = append(out, w.Clean(d+`\Programs\Git\bin\bash.exe`))
	}
	if d := sys.Getenv("USERPROFILE"); d != "" {
		out = append(out, w.Clean(d+`\scoop\apps\git\current\bin\bash.exe`))
	}
	out = append(out, `C:\Program Files\Git\bin\bash.exe`)
	return out
}

// gitRoot returns the Git for Windows installation directory of a git.exe
// in its cmd\, bin\ or mingw64\bin\ directory, or "".
func gitRoot(gitExe string) string {
	w := pathstyle.Windows
	names := w.Names(gitExe)
	n := len(names)
	up := 0
	switch {
	case n >= 3 && w.SameName(names[n-2], "bin") && w.SameName(names[n-3], "mingw64"):
		up = 3
	case n >= 2 && (w.SameName(names[n-2], "cmd") || w.SameName(names[n-2], "bin")):
		up = 2
	default:
		return ""
	}
	return w.Clean(gitExe + strings.Repeat(`\..`, up))
}

// isWSLLauncher reports whether p is Windows' own bash.exe, which starts
// WSL rather than running the command on Windows.
func isWSLLauncher(p string, getenv func(string) string) bool {
	w := pathstyle.Windows
	dirs := []string{`C:\Windows\System32`, `C:\Windows\SysWOW64`, `C:\Windows\Sysnative`}
	if root := getenv("SystemRoot"); root != "" {
		dirs = append(dirs, root+`\System32`, root+`\SysWOW64`, root+`\Sysnative`)
	}
	if la := getenv("LOCALAPPDATA"); la != "" {
		dirs = append(dirs, la+`\Microsoft\WindowsApps`)
	}
	for _, d := range dirs {
		if w.Within(d, p) {
			return true
		}
	}
	return false
}

// Name returns what to start bash as: "bash" on Unix, resolved through
// PATH by whoever starts it (the daemon or the editor, as before), and the
// full path of Git for Windows' bash.exe on Windows, where "bash" alone
// may start WSL or nothing.
func Name() (string, error) {
	if runtime.GOOS != "windows" {
		return "bash", nil
	}
	return Bash()
}
