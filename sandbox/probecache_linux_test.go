package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-tools/dshd/sandbox"
)

// probeCounter stands in for starting the launcher: it answers a and
// counts the probes.
type probeCounter struct {
	a     sandbox.Availability
	calls int
}

func (p *probeCounter) run() sandbox.Availability {
	p.calls++
	return p.a
}

// keyFiles puts a boot id and one sysctl of the test's own in place of
// the real ones; it returns the sysctl's path.
func keyFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	boot, sysctl := filepath.Join(dir, "boot_id"), filepath.Join(dir, "max_user_namespaces")
	write(t, boot, "4b1e6c1c-boot\n")
	write(t, sysctl, "63000\n")
	t.Cleanup(sandbox.SetProbeKeyFiles([]string{boot, sysctl, filepath.Join(dir, "absent")}))
	return sysctl
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestProbeCacheRemembersThatNamespacesWork(t *testing.T) {
	requireSandbox(t)
	keyFiles(t)
	cache := filepath.Join(t.TempDir(), "sandbox-probe")
	p := &probeCounter{a: sandbox.Availability{LandlockABI: 7, Namespaces: true}}
	first := sandbox.ProbeRemembered(cache, p.run)
	if !first.Namespaces || p.calls != 1 {
		t.Fatalf("first probe: %+v after %d probes, want namespaces after 1", first, p.calls)
	}
	second := sandbox.ProbeRemembered(cache, p.run)
	if p.calls != 1 {
		t.Fatalf("the second process probed again (%d probes): the cache was not used", p.calls)
	}
	if !second.Namespaces || second.LandlockABI != sandbox.QuickProbe().LandlockABI || second.Reason != "" {
		t.Fatalf("answer from the cache: %+v, want the kernel's Landlock ABI with namespaces", second)
	}
}

func TestProbeCacheForgetsWhatChanged(t *testing.T) {
	requireSandbox(t)
	works := sandbox.Availability{LandlockABI: 7, Namespaces: true}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, sysctl, cache string)
	}{
		{"a sysctl", func(t *testing.T, sysctl, _ string) { write(t, sysctl, "0\n") }},
		{"the launcher", func(t *testing.T, _, _ string) {
			launcher := filepath.Join(t.TempDir(), "dshd")
			write(t, launcher, "another build")
			old := sandbox.Launcher()
			sandbox.SetLauncher(launcher)
			t.Cleanup(func() { sandbox.SetLauncher(old) })
		}},
		{"a torn file", func(t *testing.T, _, cache string) {
			data, err := os.ReadFile(cache)
			if err != nil {
				t.Fatal(err)
			}
			write(t, cache, string(data[:len(data)/2]))
		}},
		{"a file saying they fail", func(t *testing.T, _, cache string) {
			write(t, cache, "namespaces fail\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sysctl := keyFiles(t)
			cache := filepath.Join(t.TempDir(), "sandbox-probe")
			p := &probeCounter{a: works}
			sandbox.ProbeRemembered(cache, p.run)
			tc.change(t, sysctl, cache)
			if a := sandbox.ProbeRemembered(cache, p.run); p.calls != 2 || !a.Namespaces {
				t.Fatalf("after %s changed: %d probes (want 2), answer %+v", tc.name, p.calls, a)
			}
			if sandbox.ProbeRemembered(cache, p.run); p.calls != 2 {
				t.Fatalf("the new answer was not remembered: %d probes, want 2", p.calls)
			}
		})
	}
}

// TestProbeCacheNeverRemembersFailure: a process that found the
// namespaces failing leaves nothing for the next, which probes again; and
// no file makes a process skip the probe to learn they fail.
func TestProbeCacheNeverRemembersFailure(t *testing.T) {
	requireSandbox(t)
	keyFiles(t)
	cache := filepath.Join(t.TempDir(), "sandbox-probe")
	p := &probeCounter{a: sandbox.Availability{LandlockABI: 7, Reason: "user namespaces are not available"}}
	for range 2 {
		if a := sandbox.ProbeRemembered(cache, p.run); a.Namespaces || a.Reason == "" {
			t.Fatalf("answer %+v, want the probe's failure", a)
		}
	}
	if p.calls != 2 {
		t.Fatalf("%d probes, want 2: a failure was remembered", p.calls)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Fatalf("a failed probe wrote the cache (stat: %v)", err)
	}
}
