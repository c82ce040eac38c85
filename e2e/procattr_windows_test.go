//go:build windows

package e2e

import "syscall"

// ownProcessGroup starts the daemon in a console process group of its own
// (CREATE_NEW_PROCESS_GROUP), the nearest Windows has to a process group.
func ownProcessGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
