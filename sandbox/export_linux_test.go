//go:build linux

package sandbox

import "os"

// ServerPIDs are the pids of the running servers of [Start].
func ServerPIDs() []int {
	defaultServers.mu.Lock()
	defer defaultServers.mu.Unlock()
	var pids []int
	for _, s := range defaultServers.m {
		pids = append(pids, s.proc.Process.Pid)
	}
	return pids
}

// Exited returns channels that close once each of the servers' launchers
// has ended.
func (ss *Servers) Exited() []<-chan struct{} {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var chans []<-chan struct{}
	for _, s := range ss.m {
		chans = append(chans, s.exited)
	}
	return chans
}

// ServerWithoutNamespaces starts a server for p as on a machine without
// user namespaces (Landlock alone) and returns a function that starts a
// command through it, and one that ends it.
func ServerWithoutNamespaces(p Policy) (start func(Spec) (*Process, error), end func(), err error) {
	a := Probe()
	a.Namespaces = false
	srv, err := newServer(p, a)
	if err != nil {
		return nil, nil, err
	}
	start = func(s Spec) (*Process, error) {
		return srv.start(request{Op: opStart, Path: s.Argv[0], Argv: s.Argv, Dir: s.Dir, Env: s.Env}, [3]*os.File{s.Stdin, s.Stdout, s.Stderr})
	}
	return start, srv.retire, nil
}

// ProbeRemembered is Probe with cache as SetProbeCache's file and run in
// place of starting the launcher, without the process's memo.
func ProbeRemembered(cache string, run func() Availability) Availability {
	path, err := launcherPath()
	return probeRemembered(path, err, cache, func(string, error) Availability { return run() })
}

// SetProbeKeyFiles puts files in place of the sysctls and boot id the
// probe cache's key reads, until restore.
func SetProbeKeyFiles(files []string) (restore func()) {
	old := probeKeyFiles
	probeKeyFiles = files
	return func() { probeKeyFiles = old }
}

// Launcher is the launcher's path ("" when none is set).
func Launcher() string {
	path, _ := launcherPath()
	return path
}
