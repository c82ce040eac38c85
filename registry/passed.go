package registry

import (
	"encoding/json"
	"sync"
)

// passed remembers the last few argument texts that passed a tool's
// validation. One call's arguments are decoded at every stage that sees
// them (the policy's subjects, the card, the body, the result's card):
// each decode still makes its own value, but only the first validates, and
// validating (parsing into maps, then the schema walk) was most of a
// decode. The verdict depends on the bytes alone, so a text found here
// needs no second look; texts past maxPassedLen are not kept.
type passed struct {
	mu    sync.Mutex
	texts [passedSlots]string
	next  int
}

// passedSlots covers the calls of one tool running at once (a model's
// batch of reads runs eight at a time).
const passedSlots = 8

// maxPassedLen bounds what is kept: a tool's arguments may carry a whole
// file's content.
const maxPassedLen = 16 << 10

// has reports whether raw passed before. No arguments at all are never
// kept (the empty slots would match them): they validate as {}.
func (p *passed) has(raw json.RawMessage) bool {
	if len(raw) == 0 || len(raw) > maxPassedLen {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.texts {
		if len(t) == len(raw) && t == string(raw) {
			return true
		}
	}
	return false
}

func (p *passed) add(raw json.RawMessage) {
	if len(raw) == 0 || len(raw) > maxPassedLen {
		return
	}
	t := string(raw)
	p.mu.Lock()
	p.texts[p.next] = t
	p.next = (p.next + 1) % passedSlots
	p.mu.Unlock()
}
