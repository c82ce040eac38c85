package acp

import (
	"context"
	"encoding/json"
	"fmt"
)

// Router maps inbound method names to routes.
type Router map[string]Route

// Route is how a connection handles one inbound method. Its start function runs on the read
// goroutine, in arrival order: it decodes params, validates them and changes state, and it
// must not block (no calls to the peer). It may return a continuation that runs on its own
// goroutine and whose result becomes the reply; that is where slow work and calls back to the
// peer belong. Build routes with [SyncRoute], [AsyncRoute], [StagedRoute] and
// [NotificationRoute].
type Route struct {
	notification bool
	start        func(ctx context.Context, params json.RawMessage) (result any, run func() (any, error), err error)
}

// Reply is what a staged handler returns: an immediate result ([Now]) or a continuation
// ([Later]) that runs on its own goroutine.
type Reply[R any] struct {
	now   *R
	later func() (*R, error)
}

// Now returns a Reply that is sent at once, in arrival order.
func Now[R any](r *R) Reply[R] { return Reply[R]{now: r} }

// Later returns a Reply computed by run on its own goroutine. Notifications the goroutine
// sends before run returns reach the wire before the reply.
func Later[R any](run func() (*R, error)) Reply[R] { return Reply[R]{later: run} }

// SyncRoute handles a request entirely on the read goroutine. Use it for fast, state-changing
// methods that nothing may overtake (initialize, set_mode, …).
func SyncRoute[P, R any](h func(ctx context.Context, params *P) (*R, error)) Route {
	return Route{start: func(ctx context.Context, raw json.RawMessage) (any, func() (any, error), error) {
		p, err := decodeParams[P](raw)
		if err != nil {
			return nil, nil, err
		}
		r, err := h(ctx, p)
		return result(r), nil, err
	}}
}

// AsyncRoute decodes params on the read goroutine and runs h on its own goroutine.
func AsyncRoute[P, R any](h func(ctx context.Context, params *P) (*R, error)) Route {
	return Route{start: func(ctx context.Context, raw json.RawMessage) (any, func() (any, error), error) {
		p, err := decodeParams[P](raw)
		if err != nil {
			return nil, nil, err
		}
		return nil, func() (any, error) { r, err := h(ctx, p); return result(r), err }, nil
	}}
}

// StagedRoute runs h on the read goroutine (register the turn, check state) and, if h returns
// [Later], runs the continuation on its own goroutine. session/prompt is the typical user: the
// turn is registered before any later session/cancel is read, and runs without blocking the
// reader.
func StagedRoute[P, R any](h func(ctx context.Context, params *P) (Reply[R], error)) Route {
	return Route{start: func(ctx context.Context, raw json.RawMessage) (any, func() (any, error), error) {
		p, err := decodeParams[P](raw)
		if err != nil {
			return nil, nil, err
		}
		reply, err := h(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		if reply.later == nil {
			return result(reply.now), nil, nil
		}
		return nil, func() (any, error) { r, err := reply.later(); return result(r), err }, nil
	}}
}

// NotificationRoute handles a notification on the read goroutine. Errors are logged only:
// notifications are never answered.
func NotificationRoute[P any](h func(ctx context.Context, params *P) error) Route {
	return Route{notification: true, start: func(ctx context.Context, raw json.RawMessage) (any, func() (any, error), error) {
		p, err := decodeParams[P](raw)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, h(ctx, p)
	}}
}

// result is r as a reply's result: a nil *R is sent as {} (results are objects, never null).
func result[R any](r *R) any {
	if r == nil {
		return nil
	}
	return r
}

// paramsOptional is implemented by params types whose fields are all optional, so a request
// without params is accepted as {}.
type paramsOptional interface{ paramsOptional() }

func (*LogoutRequest) paramsOptional()       {}
func (*ListSessionsRequest) paramsOptional() {}

func decodeParams[P any](raw json.RawMessage) (*P, error) {
	p := new(P)
	if len(raw) == 0 || isNull(raw) {
		switch any(p).(type) {
		case paramsOptional:
			return p, nil
		case *json.RawMessage:
			// A route taking raw params (an extension method) decides
			// itself what no params mean; JSON-RPC lets a request omit them.
			return p, nil
		}
		return nil, fmt.Errorf("%w: missing params", ErrInvalidParams)
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	return p, nil
}
