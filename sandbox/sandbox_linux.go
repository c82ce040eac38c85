//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

func probe(path string, launcherErr error) Availability {
	a := quickProbe(launcherErr)
	if !a.Available() {
		return a
	}
	abi := a.LandlockABI
	// Namespaces: start the inner stage in them, with the network cut,
	// and let it set everything up but the command.
	cmd := exec.Command(path, LauncherCommand, "--stage", stageInner, "--probe", "--policy",
		Policy{Mode: ModeReadOnly, Network: false}.Encode())
	cmd.SysProcAttr = namespaceAttr(false)
	// A daemon killed while it tries the launcher takes the launcher with
	// it. The kernel sends the signal when the thread that started the
	// child ends, so the thread is kept until the child has.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	out, err := cmd.CombinedOutput()
	runtime.UnlockOSThread()
	if err != nil {
		why := strings.TrimSpace(string(out))
		if why == "" {
			why = err.Error()
		}
		a.Reason = "user namespaces are not available (" + why + "): protected paths inside the workspace are guarded only by the command-text check"
		if abi < 4 {
			a.Reason += ", and network: false cannot be enforced"
		} else {
			a.Reason += ", and network: false uses Landlock's TCP rules"
		}
		return a
	}
	a.Namespaces = true
	return a
}

// probeKeyFiles are what, besides the launcher, decides whether the
// namespaces work: the boot and kernel, the process's user namespace, and
// the sysctls of Debian, Ubuntu (AppArmor) and upstream that allow or
// limit unprivileged user, mount and network namespaces. A file missing
// on this kernel counts as such.
var probeKeyFiles = []string{
	"/proc/sys/kernel/random/boot_id",
	"/proc/sys/kernel/osrelease",
	"/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
	"/proc/sys/user/max_user_namespaces",
	"/proc/sys/user/max_mnt_namespaces",
	"/proc/sys/user/max_net_namespaces",
}

// probeKey is what the probe's answer depends on, as text, for
// SetProbeCache's file; false when it cannot be told (no boot id).
func probeKey(launcher string) (string, bool) {
	var b strings.Builder
	for i, f := range probeKeyFiles {
		data, err := os.ReadFile(f)
		if err != nil && i == 0 {
			return "", false
		}
		fmt.Fprintf(&b, "%s: %q\n", f, strings.TrimSpace(string(data)))
	}
	userNS, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(launcher)
	if err != nil {
		return "", false
	}
	fmt.Fprintf(&b, "user: %d:%d %s\nlauncher: %q %d %d\n", os.Getuid(), os.Getgid(), userNS,
		launcher, fi.Size(), fi.ModTime().UnixNano())
	return b.String(), true
}

// quickProbe is what probe finds without starting anything: the kernel's
// Landlock and a launcher to start.
func quickProbe(launcherErr error) Availability {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return Availability{Reason: "the kernel offers no Landlock (it is missing or not enabled at boot: add landlock to the lsm= boot parameter)"}
	}
	if launcherErr != nil {
		return Availability{Reason: launcherErr.Error()}
	}
	return Availability{LandlockABI: abi}
}

// namespaceAttr is how the inner stage is started: new user and mount
// namespaces (and a network namespace when the network is cut), the
// caller's uid and gid mapped to themselves, and the capabilities it needs
// for the mounts and loopback kept across exec; it drops them all before
// it runs the command.
func namespaceAttr(network bool) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS)
	if !network {
		flags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP},
	}
}

func launch(stage string, p Policy, probe, inNetns bool, argv []string) int {
	switch stage {
	case stageOuter:
		return outer(p, argv)
	case stageServe, stageServeDirect:
		return serve(p, stage == stageServe)
	case stageInner:
		if err := setupNamespaces(p); err != nil {
			return failed(err)
		}
		inNetns = !p.Network
	}
	if probe {
		return 0
	}
	if stage == stageFinal || p.Mode != ModeReadOnly {
		return final(p, inNetns, argv)
	}
	// Read-only: the command gets a private temp directory, removed once
	// it ends, so this launcher stays (outside Landlock, which would stop
	// it from removing the directory) and waits for the last stage.
	dir, err := os.MkdirTemp("", "dshd-sandbox-")
	if err != nil {
		return failed(fmt.Errorf("private temp directory: %w", err))
	}
	defer os.RemoveAll(dir)
	p.PrivateTemp = dir
	path, err := launcherPath()
	if err != nil {
		return failed(err)
	}
	args := []string{LauncherCommand, "--stage", stageFinal, "--policy", p.Encode()}
	if inNetns {
		args = append(args, "--in-netns")
	}
	cmd := exec.Command(path, append(append(args, "--"), argv...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A command could otherwise trace this process to borrow its
	// capabilities (Landlock also forbids tracing a process outside the
	// command's domain).
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	status := runForwarding(cmd)
	os.RemoveAll(dir)
	return exitAs(status)
}

func failed(err error) int {
	fmt.Fprintf(os.Stderr, "dshd sandbox: %v\n", err)
	return exitSetup
}

// final applies Landlock and becomes the command, with no capability left.
// Landlock domains, no_new_privs and capabilities belong to a thread, and
// exec keeps only the calling thread's: everything is applied to this one
// thread, which then execs (no signalling of every thread, which costs
// milliseconds).
func final(p Policy, inNetns bool, argv []string) int {
	env := os.Environ()
	if p.PrivateTemp != "" {
		env = setEnv(env, "TMPDIR", p.PrivateTemp)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return failed(err)
	}
	runtime.LockOSThread()
	if err := restrict(p, inNetns); err != nil {
		return failed(err)
	}
	if err := dropBoundingSet(); err != nil {
		return failed(err)
	}
	if err := clearCapabilities(); err != nil {
		return failed(err)
	}
	err = syscall.Exec(path, argv, env)
	return failed(fmt.Errorf("exec %s: %w", argv[0], err))
}

// outer enters the namespaces by starting the inner stage in them and
// waiting for it; where they are unavailable it applies Landlock alone.
func outer(p Policy, argv []string) int {
	path, err := launcherPath()
	if err == nil {
		args := append([]string{LauncherCommand, "--stage", stageInner, "--policy", p.Encode(), "--"}, argv...)
		cmd := exec.Command(path, args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.SysProcAttr = namespaceAttr(p.Network)
		// The inner stage dies with this process: the parent-death
		// signal follows the thread that started it, so keep it.
		runtime.LockOSThread()
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		if err := cmd.Start(); err == nil {
			return exitAs(waitForwarding(cmd))
		}
	}
	return launch(stageDirect, p, false, false, argv)
}

// runForwarding starts cmd and waits for it, passing on the signals that
// ask a program to stop.
func runForwarding(cmd *exec.Cmd) *os.ProcessState {
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "dshd sandbox: %v\n", err)
		return nil
	}
	return waitForwarding(cmd)
}

func waitForwarding(cmd *exec.Cmd) *os.ProcessState {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	signal.Stop(sigs)
	return cmd.ProcessState
}

// exitAs ends the launcher the way the command ended: with its exit code,
// or killed by the same signal.
func exitAs(ps *os.ProcessState) int {
	if ps == nil {
		return exitSetup
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		return 128 + int(sig) // if the signal does not end us
	}
	return ps.ExitCode()
}

func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// setupNamespaces runs in the fresh namespaces: mounts stop propagating
// to the host, every protected path becomes a read-only bind mount of
// itself (a missing one inside a writable root is created first, .git
// excepted), and loopback comes up in a new network namespace.
func setupNamespaces(p Policy) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	for _, path := range p.Protected {
		if err := protect(p, path); err != nil {
			return err
		}
	}
	if !p.Network {
		if err := loopbackUp(); err != nil {
			return err
		}
	}
	return nil
}

func protect(p Policy, path string) error {
	if err := createMissing(p, path); err != nil {
		return err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil // nothing to protect, or Landlock keeps it read-only
	} else if err != nil {
		return fmt.Errorf("protected %s: %w", path, err)
	}
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mount %s: %w", path, err)
	}
	// A remount in a user namespace must keep the flags the mount was
	// locked with (nosuid, nodev, …), or the kernel refuses it.
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", path, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	mounted := int64(st.Flags)
	for bit, ms := range map[int64]uintptr{
		unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC,
		unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME,
	} {
		if mounted&bit != 0 {
			flags |= ms
		}
	}
	if err := unix.Mount("", path, "", flags, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", path, err)
	}
	return nil
}

// createMissing creates a missing protected directory inside a writable
// root, .git excepted: it would be the command's to create, so it is
// created first and made read-only with the rest.
func createMissing(p Policy, path string) error {
	if p.Mode != ModeWorkspaceWrite || filepath.Base(path) == ".git" || !under(path, p.WritableRoots) {
		return nil
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("create protected %s: %w", path, err)
	}
	return nil
}

// createMissingProtected is [createMissing] for every protected path.
func createMissingProtected(p Policy) error {
	for _, path := range p.Protected {
		if err := createMissing(p, path); err != nil {
			return err
		}
	}
	return nil
}

// under reports whether path lies inside one of dirs.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// loopbackUp brings lo up in a new network namespace (it starts down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// dropBoundingSet empties the calling thread's bounding set, so that the
// command cannot gain a capability when it execs, even as uid 0.
func dropBoundingSet() error {
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				return nil // past the last capability this kernel knows
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	return nil
}

// clearCapabilities empties the calling thread's ambient, inheritable,
// permitted and effective sets (the thread that execs the command): it
// cannot undo the mounts (Landlock forbids that too).
func clearCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	return nil
}

// devices are the device files every command may write (and use
// terminal ioctls on).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrict applies Landlock to the calling thread: read and execute everywhere, write only
// beneath the writable roots and the temp directories (workspace-write)
// or the private temp directory (read-only), and, when the network is cut
// and no network namespace does it, no TCP bind or connect.
func restrict(p Policy, inNetns bool) error {
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	}
	var writable []string
	switch p.Mode {
	case ModeWorkspaceWrite:
		writable = append(slices.Clone(p.WritableRoots), TempDirs()...)
	case ModeReadOnly:
		if p.PrivateTemp != "" {
			writable = []string{p.PrivateTemp}
		}
	}
	if len(writable) > 0 {
		rules = append(rules, landlock.RWDirs(writable...).WithRefer().IgnoreIfMissing())
	}
	cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS}
	if !p.Network && !inNetns {
		abi, _ := ll.LandlockGetABIVersion()
		if abi < 4 {
			return errors.New("network: false needs a network namespace or Landlock ABI 4, and this kernel offers neither")
		}
		// No rule allows a port: every TCP bind and connect is denied.
		cfg.HandledAccessNet = landlock.V7.HandledAccessNet
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock: nothing to restrict on this kernel")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}
