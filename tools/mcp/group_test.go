//go:build unix

package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

// daemonEnv, when set to a directory, makes the test binary play a daemon
// that connects launchedConfig(dir), says "connected" on stdout and waits
// to be killed.
const daemonEnv = "DSHD_MCP_TEST_DAEMON"

func init() {
	playDaemon = func() {
		if dir := os.Getenv(daemonEnv); dir != "" {
			runAsDaemon(dir)
		}
	}
}

func runAsDaemon(dir string) {
	servers, _ := Connect(context.Background(), []ServerConfig{launchedConfig(dir)}, Options{Timeout: 20 * time.Second})
	if len(servers.Tools()) == 0 {
		fmt.Fprintln(os.Stderr, "test daemon: the server did not connect")
		os.Exit(1)
	}
	fmt.Println("connected")
	select {}
}

// launchedConfig is the test server started the way npx, uvx or a shell
// wrapper start one: a launcher leaves a helper running in the background
// (its pid in dir/helper) and becomes the server (its pid in dir/server).
func launchedConfig(dir string) ServerConfig {
	c := stdioConfig("launched")
	c.Command = "bash"
	c.Args = []string{"-c", `sleep 300 & echo $! > "$1/helper"; echo $$ > "$1/server"; exec "$2" '-test.run=^$'`,
		"launcher", dir, os.Args[0]}
	return c
}

// running reports whether pid runs something: a zombie (dead, waiting for
// init to reap it, which in a container may take its time) does not.
func running(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false // ESRCH
	}
	p, ok := testsupport.ReadProc(pid)
	return ok && p.Live()
}

// gone waits until none of pids runs; whatever is left when the test
// fails is killed so the test leaves nothing behind.
func gone(t *testing.T, what string, pids ...int) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	for _, pid := range pids {
		testsupport.WaitExit(t, pid)
	}
}

// What a stdio server started (a launcher's helpers) ends with the session.
func TestCloseKillsWhatTheServerStarted(t *testing.T) {
	dir := t.TempDir()
	servers, errs := Connect(context.Background(), []ServerConfig{launchedConfig(dir)}, Options{Stderr: &testsupport.SyncBuffer{}, Dir: dir, Timeout: 20 * time.Second})
	if len(servers.Tools()) == 0 {
		servers.Close()
		t.Fatalf("the server did not connect: %v", errs)
	}
	helper, server := testsupport.ReadPID(t, filepath.Join(dir, "helper")), testsupport.ReadPID(t, filepath.Join(dir, "server"))
	if !running(helper) || !running(server) {
		t.Fatalf("helper %d or server %d not running before Close", helper, server)
	}
	if err := servers.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	gone(t, "server", server)
	gone(t, "helper", helper)
}

// A daemon killed with SIGKILL runs no code of its own: its stdio servers
// and everything they started must die anyway.
func TestDaemonDeathKillsServers(t *testing.T) {
	dir := t.TempDir()
	daemon, out := testsupport.StartSelf(t, daemonEnv+"="+dir)
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "connected\n" {
		t.Fatalf("the test daemon said %q", line)
	}
	helper, server := testsupport.ReadPID(t, filepath.Join(dir, "helper")), testsupport.ReadPID(t, filepath.Join(dir, "server"))
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = daemon.Wait()
	gone(t, "server", server)
	gone(t, "helper", helper)
}

// A server that fails the handshake takes what it started along.
func TestFailedServerKillsWhatItStarted(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, line string }{
		{"garbage then exit", `sleep 300 & echo $! > "$1/helper"; echo '{not json'`},
		{"garbage then wait", `sleep 300 & echo $! > "$1/helper"; echo '{not json'; exec sleep 300`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ServerConfig{Name: "bad", Command: "bash", Args: []string{"-c", tt.line, "launcher", dir}}
			servers, errs := Connect(context.Background(), []ServerConfig{c}, Options{Stderr: &testsupport.SyncBuffer{}, Timeout: 20 * time.Second})
			defer servers.Close()
			if len(errs) != 1 {
				t.Fatalf("errors %v, want the bad server's", errs)
			}
			gone(t, "helper", testsupport.ReadPID(t, filepath.Join(dir, "helper")))
		})
	}
}
