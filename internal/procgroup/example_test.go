//go:build unix

package procgroup_test

import (
	"fmt"
	"os/exec"
	"syscall"

	"github.com/dsh-tools/dshd/internal/procgroup"
)

// A child and everything it starts end together, and with the daemon.
func Example() {
	cmd := exec.Command("bash", "-c", "sleep 300 & echo working")
	procgroup.Isolate(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	g := procgroup.Guard(cmd.Process.Pid)
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	fmt.Print(string(buf[:n]))

	_ = cmd.Wait()            // reap the leader first,
	g.Signal(syscall.SIGKILL) // then kill what it left (the sleep),
	g.Release()               // and only then retire the watchdog.
	// Output: working
}
