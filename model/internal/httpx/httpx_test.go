package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/model/llm"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
	}{
		{map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "1.5"}, 1500 * time.Microsecond},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After-Ms": "-5"}, 0},
		{nil, 0},
	}
	for _, tc := range tests {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := RetryAfter(h, now); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestDelay(t *testing.T) {
	p := llm.RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for n := range 8 {
		d := Delay(p, n, errors.New("x"))
		hi := min(100*time.Millisecond<<n, time.Second)
		if d < hi/2 || d > hi {
			t.Errorf("Delay(%d) = %v, want within [%v, %v]", n, d, hi/2, hi)
		}
	}
	if d := Delay(p, 0, &llm.APIError{RetryAfter: 300 * time.Millisecond}); d != 300*time.Millisecond {
		t.Errorf("retry-after delay = %v", d)
	}
	if d := Delay(p, 0, &llm.APIError{RetryAfter: time.Hour}); d != time.Second {
		t.Errorf("capped retry-after delay = %v", d)
	}
}

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.Canceled, false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{&llm.APIError{StatusCode: 503, Retryable: true}, true},
		{&llm.APIError{StatusCode: 401}, false},
		{fmt.Errorf("x: %w", llm.ErrIdleTimeout), true},
		{fmt.Errorf("x: %w", llm.ErrTruncated), true},
		{io.ErrUnexpectedEOF, true},
		{ConnectionError(errors.New("refused")), true},
		{errors.New("decoding chunk: invalid character"), false},
	}
	for _, tc := range tests {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	for _, code := range []int{408, 409, 429, 500, 502, 503, 529} {
		if !RetryableStatus(code) {
			t.Errorf("%d not retryable", code)
		}
	}
	for _, code := range []int{400, 401, 403, 404, 422} {
		if RetryableStatus(code) {
			t.Errorf("%d retryable", code)
		}
	}
}

func TestRetryStopsOnceEmitted(t *testing.T) {
	p := llm.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}
	calls := 0
	err := Retry(t.Context(), p, nil, func(context.Context) (bool, error) {
		calls++
		return calls == 2, llm.ErrTruncated
	})
	if !errors.Is(err, llm.ErrTruncated) || calls != 2 {
		t.Fatalf("err %v after %d calls, want 2", err, calls)
	}
	calls = 0
	p.MaxRetries = -1
	_ = Retry(t.Context(), p, nil, func(context.Context) (bool, error) { calls++; return false, llm.ErrTruncated })
	if calls != 1 {
		t.Fatalf("MaxRetries -1: %d calls", calls)
	}
}

func TestRetryCancelledWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := llm.RetryPolicy{BaseDelay: time.Hour, MaxDelay: time.Hour}
	calls := 0
	err := Retry(ctx, p, nil, func(context.Context) (bool, error) {
		calls++
		cancel()
		return false, llm.ErrTruncated
	})
	if calls != 1 || err == nil {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestRunStreamCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	resp, err := RunStream(ctx, Transport{}, "prov", func(context.Context) (*llm.Response, bool, error) {
		calls++
		cancel()
		return &llm.Response{StopReason: llm.StopEndTurn}, true, nil
	})
	if calls != 1 || !errors.Is(err, context.Canceled) || resp.StopReason != llm.StopCancelled {
		t.Fatalf("after %d calls: err %v, stop %q; want one call, cancelled", calls, err, resp.StopReason)
	}
	if got := err.Error(); got != "prov: context canceled" {
		t.Errorf("err = %q, want the provider's name in front", got)
	}
}

func TestRunStreamKeepsLastResponse(t *testing.T) {
	tr := Transport{Retry: llm.RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}}
	calls := 0
	resp, err := RunStream(t.Context(), tr, "prov", func(context.Context) (*llm.Response, bool, error) {
		calls++
		if calls == 1 {
			return &llm.Response{StopReason: llm.StopEndTurn}, false, llm.ErrTruncated
		}
		return &llm.Response{StopReason: llm.StopMaxTokens}, true, nil
	})
	if err != nil || calls != 2 || resp.StopReason != llm.StopMaxTokens {
		t.Fatalf("after %d calls: err %v, stop %q", calls, err, resp.StopReason)
	}
}

func TestWithDefaults(t *testing.T) {
	d := WithDefaults(Transport{HeaderTimeout: time.Second})
	if d.HTTPClient == nil || d.Logger == nil {
		t.Fatalf("defaults = %+v", d)
	}
	if rt := d.HTTPClient.Transport.(*http.Transport); rt.ResponseHeaderTimeout != time.Second || d.HTTPClient.Timeout != 0 {
		t.Errorf("client: header timeout %v, overall %v", rt.ResponseHeaderTimeout, d.HTTPClient.Timeout)
	}
	own := &http.Client{}
	if WithDefaults(Transport{HTTPClient: own}).HTTPClient != own {
		t.Error("a configured client was replaced")
	}
}

func TestReadError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := readError(ctx, "p", io.ErrUnexpectedEOF); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if err := readError(t.Context(), "p", io.ErrUnexpectedEOF); !errors.Is(err, llm.ErrTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut: %v", err)
	}
	boom := errors.New("boom")
	if err := readError(t.Context(), "p", boom); !errors.Is(err, boom) || errors.Is(err, llm.ErrTruncated) {
		t.Errorf("other: %v", err)
	}
}

func TestOpenPostHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		io.WriteString(w, "data: x\n\n")
	}))
	defer srv.Close()
	st, err := OpenPost(t.Context(), WithDefaults(Transport{}), Post{
		Provider: "p", URL: srv.URL, Body: []byte(`{}`),
		Header: map[string]string{"X-Version": "1", "X-Key": "adapter"},
		Extra:  map[string]string{"X-Key": "user", "Accept": "application/x-ndjson"},
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	h := <-got
	want := map[string]string{"Content-Type": "application/json", "Accept": "application/x-ndjson", "X-Version": "1", "X-Key": "user"}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q (user headers are set last)", k, h.Get(k), v)
		}
	}
}
