package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/dsh-tools/dshd/bridge"
	"os"
	"runtime"
	"strconv"
)

// statsMethod is dshd's diagnostic ACP extension request: the fault suite
// reads it over a scenario's own connection to prove that goroutines and
// file descriptors return to their baseline.
const statsMethod = "_dshd/stats"

// stats is the result of _dshd/stats. A count the platform cannot give
// (no /proc) is -1.
type stats struct {
	Goroutines int    `json:"goroutines"`
	FDs        int    `json:"fds"`
	Threads    int    `json:"threads"`
	HeapBytes  uint64 `json:"heapBytes"`
}

// statsAtRest answers _dshd/stats once start-up's background work (the
// sandbox probe, which holds a goroutine and a pipe while it runs) has
// ended, so that the first answer is the daemon's baseline.
func statsAtRest(started <-chan struct{}) bridge.Extension {
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		select {
		case <-started:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return readStats(ctx, params)
	}
}

// readStats answers _dshd/stats; its params are ignored.
func readStats(context.Context, json.RawMessage) (any, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return stats{
		Goroutines: runtime.NumGoroutine(),
		FDs:        openFDs(),
		Threads:    threads(),
		HeapBytes:  ms.HeapAlloc,
	}, nil
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
