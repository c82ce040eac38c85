package work

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Stats are the counts a process takes of itself. A count the platform
// cannot give (no /proc) is -1.
type Stats struct {
	Goroutines int    `json:"goroutines"`
	FDs        int    `json:"fds"`
	Threads    int    `json:"threads"`
	HeapBytes  uint64 `json:"heapBytes"`
	// Work is the counted work still live, by kind (see [Start]).
	Work map[string]int `json:"work"`
	// Parked are the goroutines blocked at the time (not running or
	// runnable), when asked for.
	Parked []Goroutine `json:"parked,omitempty"`
}

// Goroutine is one goroutine of a stack dump: its id, its state ("chan
// receive", "select", "IO wait", ...), the function it is in and the one
// that started it.
type Goroutine struct {
	ID        int64  `json:"id"`
	State     string `json:"state"`
	Func      string `json:"func"`
	CreatedBy string `json:"createdBy,omitempty"`
}

func (g Goroutine) String() string {
	return fmt.Sprintf("goroutine %d [%s] in %s, created by %s", g.ID, g.State, g.Func, g.CreatedBy)
}

func (s Stats) String() string {
	return fmt.Sprintf("%d goroutines (%d parked), %d fds, %d threads, %d KiB heap, live work %v",
		s.Goroutines, len(s.Parked), s.FDs, s.Threads, s.HeapBytes>>10, s.Work)
}

// Take reads the process's counts now, with the parked goroutines if
// parked is set (that stops the world for a moment, as a stack dump does).
func Take(parked bool) Stats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := Stats{
		Goroutines: runtime.NumGoroutine(),
		FDs:        openFDs(),
		Threads:    threads(),
		HeapBytes:  ms.HeapAlloc,
		Work:       Live(),
	}
	if parked {
		s.Parked = parkedGoroutines(allStacks())
	}
	return s
}

// TakeSettled is Take(true) once every goroutine but the caller's is
// parked, or once ctx ends (then with those still running left out). When
// the counted work has ended, a long-lived goroutine can still be running
// for a moment: a connection's writer that has just written the last
// answer, its reader on its way back to the next read. A baseline taken
// then lacks it, and a later count reports it as new; so this yields to
// them until they park.
func TakeSettled(ctx context.Context) Stats {
	for i := 0; ; i++ {
		s := Take(true)
		if s.Goroutines-len(s.Parked) <= 1 || ctx.Err() != nil {
			return s
		}
		if i < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond) // one in a write(2) to a slow reader
		}
	}
}

// Leaks compares stats taken at rest with a baseline taken at rest:
// work still live, a descriptor count other than the baseline's, and each
// parked goroutine the baseline did not have. None means nothing leaked.
func Leaks(base, now Stats) []string {
	var out []string
	for _, kind := range slices.Sorted(maps.Keys(now.Work)) {
		out = append(out, fmt.Sprintf("still live: %d %s", now.Work[kind], kind))
	}
	if now.FDs != base.FDs {
		out = append(out, fmt.Sprintf("%d file descriptors open, %d at the baseline", now.FDs, base.FDs))
	}
	known := map[int64]bool{}
	for _, g := range base.Parked {
		known[g.ID] = true
	}
	for _, g := range now.Parked {
		if !known[g.ID] {
			out = append(out, "a goroutine not at the baseline: "+g.String())
		}
	}
	return out
}

// allStacks is runtime.Stack of every goroutine, however long.
func allStacks() []byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// parkedGoroutines reads a stack dump: each goroutine is a block opening
// "goroutine N [state, ...]:" and, unless it is the main one, ending with
// "created by F in goroutine M". Running and runnable goroutines are left
// out: the caller's own, and any on its way out.
func parkedGoroutines(dump []byte) []Goroutine {
	var out []Goroutine
	for block := range strings.SplitSeq(string(dump), "\n\n") {
		head, rest, _ := strings.Cut(block, "\n")
		idText, ok := strings.CutPrefix(head, "goroutine ")
		if !ok {
			continue
		}
		idText, stateText, ok := strings.Cut(idText, " [")
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			continue
		}
		state, _, _ := strings.Cut(strings.TrimSuffix(stateText, "]:"), ",")
		if state == "running" || state == "runnable" {
			continue
		}
		g := Goroutine{ID: id, State: state}
		for line := range strings.SplitSeq(rest, "\n") {
			if g.Func == "" && line != "" && !strings.HasPrefix(line, "\t") {
				g.Func = line // "pkg.F(args)": the first frame, the innermost
				if i := strings.LastIndexByte(line, '('); i > 0 {
					g.Func = line[:i]
				}
			}
			if by, ok := strings.CutPrefix(line, "created by "); ok {
				g.CreatedBy, _, _ = strings.Cut(by, " in goroutine ")
			}
		}
		out = append(out, g)
	}
	return out
}

// openFDs counts the process's open file descriptors, or -1 without
// /proc. The directory being listed holds one descriptor while it is
// read; it is not counted.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries) - 1
}

// threads is the process's OS thread count from /proc/self/status, or -1.
func threads() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Threads:")); ok {
			if n, err := strconv.Atoi(string(bytes.TrimSpace(v))); err == nil {
				return n
			}
		}
	}
	return -1
}
