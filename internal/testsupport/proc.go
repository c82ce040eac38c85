package testsupport

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Proc is the part of /proc/<pid>/stat the tests use.
type Proc struct {
	PID, PPID, PGID int
	State           byte
	Comm            string
}

// Live reports whether the process runs something: zombies (dead, not yet
// reaped, which in a container init may take its time over) do not.
func (p Proc) Live() bool { return p.State != 'Z' && p.State != 'X' }

// ReadProc reads /proc/<pid>/stat; ok is false when the process is gone.
func ReadProc(pid int) (p Proc, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Proc{}, false
	}
	// pid (comm) state ppid pgrp ...; comm may contain spaces and parens.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open || end+2 >= len(s) {
		return Proc{}, false
	}
	fields := strings.Fields(s[end+2:])
	if len(fields) < 3 {
		return Proc{}, false
	}
	p = Proc{PID: pid, State: fields[0][0], Comm: s[open+1 : end]}
	p.PPID, _ = strconv.Atoi(fields[1])
	p.PGID, _ = strconv.Atoi(fields[2])
	return p, true
}

// Procs lists the live processes of the machine.
func Procs() []Proc {
	ents, _ := os.ReadDir("/proc")
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := ReadProc(pid); ok && p.Live() {
			out = append(out, p)
		}
	}
	return out
}

// Descendants lists the live processes below pid.
func Descendants(pid int) []Proc {
	children := map[int][]Proc{}
	for _, p := range Procs() {
		children[p.PPID] = append(children[p.PPID], p)
	}
	var out []Proc
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	return out
}

// InGroups lists the live processes whose process group is one of pgids.
func InGroups(pgids ...int) []Proc {
	want := make(map[int]bool, len(pgids))
	for _, g := range pgids {
		want[g] = true
	}
	var out []Proc
	for _, p := range Procs() {
		if want[p.PGID] {
			out = append(out, p)
		}
	}
	return out
}

// ReadPID reads the process (or group) id a child wrote to path as
// decimal text. On a FIFO it returns once the writer has closed its end,
// which is how a test waits for a child to be running without polling.
func ReadPID(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s holds %q, not a pid", path, b)
	}
	return pid
}
