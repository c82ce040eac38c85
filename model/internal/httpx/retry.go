package httpx

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/dsh-tools/dshd/model/llm"
)

const (
	defaultMaxRetries = 4
	defaultBaseDelay  = 500 * time.Millisecond
	defaultMaxDelay   = 30 * time.Second
)

// Retry runs attempt until it succeeds, fails with a non-transient error,
// has emitted something (a retry would then show the editor the same
// output twice), or the retries are used up. It returns attempt's last
// error, or ctx's error if cancelled while waiting.
func Retry(ctx context.Context, p llm.RetryPolicy, log *slog.Logger, attempt func(ctx context.Context) (emitted bool, err error)) error {
	maxRetries := p.MaxRetries
	switch {
	case maxRetries == 0:
		maxRetries = defaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	for n := 0; ; n++ {
		emitted, err := attempt(ctx)
		if err == nil || emitted || n >= maxRetries || !Transient(err) || ctx.Err() != nil {
			return err
		}
		d := Delay(p, n, err)
		if log != nil {
			log.Warn("model request failed; retrying", "attempt", n+1, "delay", d, "err", err)
		}
		if err := sleep(ctx, p, d); err != nil {
			return err
		}
	}
}

// Delay is the wait before retry n+1 after err: the server's retry-after
// if it named one, else exponential backoff with jitter; capped.
func Delay(p llm.RetryPolicy, n int, err error) time.Duration {
	base, maxDelay := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = defaultBaseDelay
	}
	if maxDelay <= 0 {
		maxDelay = defaultMaxDelay
	}
	if ra := retryAfterOf(err); ra > 0 {
		return min(ra, maxDelay)
	}
	d := base << min(n, 20)
	// Jitter over the upper half keeps concurrent sessions from retrying
	// in lockstep.
	d = d/2 + rand.N(d/2+1)
	return min(d, maxDelay)
}

func sleep(ctx context.Context, p llm.RetryPolicy, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
