// Package shell finds the bash that runs the bash tool's commands, on
// every platform:
//
//	path, err := shell.Bash()
//	if err != nil {
//		return err // says what is missing and how to install it
//	}
//	cmd := exec.Command(path, "-c", line)
//
// On Unix it is "bash" from PATH, as always. On Windows it is Git for
// Windows' bash.exe: $DSHD_BASH when set, else a bash.exe on PATH that is
// not the WSL launcher (System32\bash.exe and the WindowsApps alias start a
// Linux distribution, where the Windows paths of the session mean
// nothing), else the bash.exe beside a git.exe on PATH, else the usual
// install locations (Program Files, the per-user install, Scoop). Without
// one, the error says so and how to fix it; the bash tool puts it in its
// result.
//
// The search is a pure function of its inputs ([Find]), so its Windows
// rules are tested on every platform.
package shell
