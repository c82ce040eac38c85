//go:build unix

package e2e

import "syscall"

// ownProcessGroup starts the daemon in a process group of its own, as
// editors start agents (and kill the group on disconnect).
func ownProcessGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
