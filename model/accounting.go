package model

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/model/catalog"
	"github.com/dsh-tools/dshd/model/llm"
)

// DefaultContextWindow is the context window assumed for a model that
// neither the settings ([Options.ContextWindow]), its server nor the
// catalog know.
const DefaultContextWindow = 128_000

// DefaultReservedOutput is the room kept free in the context window for
// the response when [Options.MaxTokens] is zero (the Anthropic adapter's
// default limit); the reserve never exceeds a quarter of the window.
const DefaultReservedOutput = 8192

// probeTimeout bounds asking a local server for its context size.
const probeTimeout = 5 * time.Second

// contextWindow is the window of a model: the setting, else what the
// model's server says (asked once per model, and only when the catalog
// has no price for it: a hosted model it knows needs no asking), else the
// catalog's figure, else [DefaultContextWindow].
func (l *Loop) contextWindow(ctx context.Context, model string, o Options) int {
	if o.ContextWindow > 0 {
		return o.ContextWindow
	}
	l.mu.Lock()
	w, ok := l.windows[model]
	l.mu.Unlock()
	if ok {
		return w
	}
	entry, known := catalog.Lookup(model)
	source := "catalog"
	if p, ok := o.Provider.(llm.WindowProber); ok && (!known || entry.Pricing == nil) {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		if n, ok := p.ProbeWindow(pctx, model); ok && n > 0 {
			w, source = n, "server"
		}
		cancel()
	}
	if w == 0 && known {
		w = entry.Window
	}
	if w == 0 {
		w, source = DefaultContextWindow, "default"
	}
	if ctx.Err() != nil && source != "server" {
		return w // a cancelled probe says nothing: ask again next time
	}
	o.Logger.Debug("context window", "model", model, "tokens", w, "source", source)
	l.mu.Lock()
	l.windows[model] = w
	l.mu.Unlock()
	return w
}

// pricing is a model's price: the setting, else the catalog's; nil when
// neither knows it.
func pricing(model string, o Options) *catalog.Pricing {
	if o.Pricing != nil {
		return o.Pricing
	}
	if m, ok := catalog.Lookup(model); ok {
		return m.Pricing
	}
	return nil
}

// reserve is the room kept free for a response in a window.
func reserve(window int, o Options) int {
	r := o.MaxTokens
	if r <= 0 {
		r = DefaultReservedOutput
	}
	return min(r, window/4)
}

// sessionCost is what a session has cost so far; known is false while no
// response had a price.
type sessionCost struct {
	amount float64
	known  bool
}

// costOf returns the session's cost, reading it from the history's
// records the first time (a loaded or resumed session keeps counting).
func (l *Loop) costOf(sessionID string, history []json.RawMessage) sessionCost {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.costs[sessionID]; ok {
		return c
	}
	var c sessionCost
	for _, raw := range history {
		var rec struct {
			Cost *float64 `json:"cost"`
		}
		if json.Unmarshal(raw, &rec) == nil && rec.Cost != nil {
			c.amount += *rec.Cost
			c.known = true
		}
	}
	l.costs[sessionID] = c
	return c
}

// addCost adds one response's cost to the session's.
func (l *Loop) addCost(sessionID string, amount float64) sessionCost {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.costs[sessionID]
	c.amount += amount
	c.known = true
	l.costs[sessionID] = c
	return c
}

// account prices one response, adds it to the session's cost and, for a
// prompt turn, reports usage_update: used is the response's whole context
// (the prompt, cached tokens included, and the output), size the window,
// cost the session's cumulative cost when its price is known. It returns
// the response's cost (nil when unknown) for the history record.
func (r *run) account(u llm.Usage, reported string) *float64 {
	name := r.model
	if name == "" {
		name = reported // the provider's default model
	}
	p := pricing(name, r.opts)
	var cost *float64
	c := r.loop.costOf(r.sessionID, nil)
	if p != nil {
		amount := p.Cost(u)
		cost = &amount
		c = r.loop.addCost(r.sessionID, amount)
	}
	if r.sub != nil {
		return cost
	}
	used := u.Input + u.CacheRead + u.CacheWrite + u.Output
	r.reportUsage(int(used), c)
	return cost
}

// reportUsage sends usage_update with the session's cost.
func (r *run) reportUsage(used int, c sessionCost) {
	var cost *acp.Cost
	if c.known {
		cost = &acp.Cost{Amount: c.amount, Currency: "USD"}
	}
	r.t.Usage(uint64(max(used, 0)), uint64(r.window), cost)
}

// estimateTokens is a cautious estimate of the tokens a value takes in a
// request: a token for every 3.5 bytes of its JSON (real tokenizers
// average 3.5 to 4 bytes of code or English a token; JSON escaping only
// adds bytes).
func estimateTokens(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return tokensOf(b)
}

// tokensOf is [estimateTokens] of a value encoded as b.
func tokensOf(b []byte) int { return len(b) * 2 / 7 }

// messageOverhead is what a message costs beyond its content: its role and
// the separators around it.
const messageOverhead = 4

// conversationTokens estimates the run's conversation, estimating each
// message once.
func (r *run) conversationTokens() int {
	for len(r.msgTokens) < len(r.msgs) {
		r.msgTokens = append(r.msgTokens, estimateTokens(r.msgs[len(r.msgTokens)])+messageOverhead)
	}
	n := 0
	for _, t := range r.msgTokens[:len(r.msgs)] {
		n += t
	}
	return n
}

func estimateMessages(msgs []llm.Message) int {
	n := 0
	for i := range msgs {
		n += estimateTokens(msgs[i]) + messageOverhead
	}
	return n
}
