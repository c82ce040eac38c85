package shell

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/internal/pathstyle"
)

// fakeWindows is a Windows system with the given files, PATH entries
// (name → path) and environment.
func fakeWindows(files []string, path map[string]string, env map[string]string) System {
	return System{
		GOOS:   "windows",
		Getenv: func(k string) string { return env[k] },
		LookPath: func(name string) (string, error) {
			if p, ok := path[name]; ok {
				return p, nil
			}
			return "", exec.ErrNotFound
		},
		IsFile: func(p string) bool {
			for _, f := range files {
				if pathstyle.Windows.Equal(f, p) {
					return true
				}
			}
			return false
		},
	}
}

func TestFindWindows(t *testing.T) {
	const (
		gitBash   = `C:\Program Files\Git\bin\bash.exe`
		userBash  = `C:\Users\ann\AppData\Local\Programs\Git\bin\bash.exe`
		scoopBash = `C:\Users\ann\scoop\apps\git\current\bin\bash.exe`
		wslBash   = `C:\Windows\System32\bash.exe`
	)
	env := map[string]string{
		"ProgramFiles": `C:\Program Files`, "LOCALAPPDATA": `C:\Users\ann\AppData\Local`,
		"USERPROFILE": `C:\Users\ann`, "SystemRoot": `C:\WINDOWS`,
	}
	for _, tc := range []struct {
		name  string
		files []string
		path  map[string]string
		env   map[string]string
		want  string
	}{
		{"on PATH", []string{`D:\tools\Git\bin\bash.exe`, gitBash}, map[string]string{"bash.exe": `D:\tools\Git\bin\bash.exe`}, nil, `D:\tools\Git\bin\bash.exe`},
		{"the WSL launcher on PATH is skipped", []string{wslBash, gitBash}, map[string]string{"bash.exe": wslBash}, nil, gitBash},
		{"the WSL launcher with another case is skipped", []string{`c:\windows\system32\BASH.EXE`, gitBash}, map[string]string{"bash.exe": `c:\windows\system32\BASH.EXE`}, nil, gitBash},
		{"the WindowsApps alias is skipped", []string{`C:\Users\ann\AppData\Local\Microsoft\WindowsApps\bash.exe`, userBash}, map[string]string{"bash.exe": `C:\Users\ann\AppData\Local\Microsoft\WindowsApps\bash.exe`}, nil, userBash},
		{"beside git.exe in cmd", []string{`E:\Git\bin\bash.exe`, gitBash}, map[string]string{"git.exe": `E:\Git\cmd\git.exe`}, nil, `E:\Git\bin\bash.exe`},
		{"beside git.exe in mingw64", []string{`E:\Git\bin\bash.exe`}, map[string]string{"git.exe": `E:\Git\mingw64\bin\git.exe`}, nil, `E:\Git\bin\bash.exe`},
		{"Program Files", []string{gitBash, userBash}, nil, nil, gitBash},
		{"per-user install", []string{userBash}, nil, nil, userBash},
		{"scoop", []string{scoopBash}, nil, nil, scoopBash},
		{"DSHD_BASH wins", []string{`F:\my\bash.exe`, gitBash}, map[string]string{"bash.exe": gitBash}, map[string]string{EnvBash: `F:\my\bash.exe`}, `F:\my\bash.exe`},
	} {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		for k, v := range tc.env {
			e[k] = v
		}
		got, err := Find(fakeWindows(tc.files, tc.path, e))
		if err != nil || !pathstyle.Windows.Equal(got, tc.want) {
			t.Errorf("%s: Find = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// Without Git for Windows the error says what is missing and how to get
// it, and nothing panics.
func TestFindWindowsNone(t *testing.T) {
	_, err := Find(fakeWindows([]string{`C:\Windows\System32\bash.exe`}, map[string]string{"bash.exe": `C:\Windows\System32\bash.exe`}, nil))
	if !errors.Is(err, ErrNoBash) {
		t.Fatalf("Find = %v, want ErrNoBash", err)
	}
	for _, want := range []string{"Git for Windows", "winget install", EnvBash} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	_, err = Find(fakeWindows(nil, nil, map[string]string{EnvBash: `C:\nope\bash.exe`}))
	if !errors.Is(err, ErrNoBash) || !strings.Contains(err.Error(), `C:\nope\bash.exe`) {
		t.Errorf("a DSHD_BASH naming nothing: %v", err)
	}
}

func TestFindUnix(t *testing.T) {
	sys := System{GOOS: "linux", LookPath: func(n string) (string, error) {
		if n == "bash" {
			return "/usr/bin/bash", nil
		}
		return "", exec.ErrNotFound
	}}
	if got, err := Find(sys); err != nil || got != "/usr/bin/bash" {
		t.Errorf("Find = %q, %v", got, err)
	}
	sys.LookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	if _, err := Find(sys); !errors.Is(err, ErrNoBash) {
		t.Errorf("no bash: %v", err)
	}
}

func TestBashLocal(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash here")
	}
	if p, err := Bash(); err != nil || p == "" {
		t.Fatalf("Bash() = %q, %v", p, err)
	}
}
