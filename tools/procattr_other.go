//go:build unix && !linux

package tools

import "syscall"

// procAttr puts a command in its own process group, so that cancelling it
// can kill everything it started.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
