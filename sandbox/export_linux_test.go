//go:build linux

package sandbox

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
