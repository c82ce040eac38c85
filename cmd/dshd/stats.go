package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/internal/work"
)

// statsMethod is dshd's diagnostic ACP extension request: the fault suite
// reads it over a scenario's own connection to prove that goroutines and
// file descriptors return to their baseline.
const statsMethod = "_dshd/stats"

// statsParams are _dshd/stats's optional params. With RestTimeoutMs, the
// answer waits until the daemon's counted work (sandbox servers, commands,
// the sandbox probe: see package work) has ended, at most that long, and
// lists the parked goroutines.
type statsParams struct {
	RestTimeoutMs int64 `json:"restTimeoutMs,omitempty"`
}

// maxRestTimeout bounds RestTimeoutMs: a diagnostic request must not hold
// a goroutine for ever.
const maxRestTimeout = 10 * time.Minute

// readStats answers _dshd/stats.
func readStats(ctx context.Context, params json.RawMessage) (any, error) {
	var p statsParams
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("%w: params: %v", acp.ErrInvalidParams, err)
		}
	}
	if p.RestTimeoutMs < 0 || time.Duration(p.RestTimeoutMs)*time.Millisecond > maxRestTimeout {
		return nil, fmt.Errorf("%w: restTimeoutMs %d is not within 0..%d", acp.ErrInvalidParams, p.RestTimeoutMs, maxRestTimeout.Milliseconds())
	}
	if p.RestTimeoutMs == 0 {
		return work.Take(false), nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.RestTimeoutMs)*time.Millisecond)
	defer cancel()
	// Past the deadline, the answer's Work says what is still live.
	_, _ = work.Rest(ctx)
	return work.TakeSettled(ctx), nil
}
