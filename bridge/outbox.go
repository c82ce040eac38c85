package bridge

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dsh-tools/dshd/bridge/sessionlog"
)

// outbox is a session's updates on their way to its log and the editor.
// Updates are posted in order, under whatever lock orders them (a turn's
// mu), and flushed after it is released, by group commit: the first poster
// to flush writes the log records of everything queued so far in one
// write, then hands the updates to the connection in the same order, while
// the others wait for that flush or the next. As before, each record
// reaches the file before its update (or any later one) is sent, and a
// sender returns only once its update was sent; but concurrent tool calls
// share the log's writes instead of queueing under the turn's lock for one
// write per update (three a call: announced, in progress, completed).
type outbox struct {
	// write writes one batch: the records, then the updates (session.writeOut).
	write func([]outgoing)

	mu       sync.Mutex
	cond     sync.Cond // signalled when a flush ends
	queue    []outgoing
	spare    []outgoing
	posted   uint64 // the sequence number of the last post
	flushed  uint64 // every post up to this one was written
	flushing bool
}

// outgoing is one post: an encoded update (nil for records alone), whether
// it is logged, and the records logged before it.
type outgoing struct {
	update  json.RawMessage
	logged  bool
	records []sessionlog.Entry
}

func newOutbox(write func([]outgoing)) *outbox {
	b := &outbox{write: write}
	b.cond.L = &b.mu
	return b
}

// post queues o and returns its sequence number for flushThrough.
func (b *outbox) post(o outgoing) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, o)
	b.posted++
	return b.posted
}

// flushThrough returns once the post numbered seq, and every one before
// it, was written to the log and sent.
func (b *outbox) flushThrough(seq uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.flushed < seq {
		if b.flushing {
			b.cond.Wait()
			continue
		}
		batch, through := b.queue, b.posted
		b.queue, b.flushing = b.spare[:0], true
		b.mu.Unlock()
		b.write(batch)
		b.mu.Lock()
		clear(batch) // the updates' bytes are not kept past their write
		b.spare, b.flushed, b.flushing = batch[:0], through, false
		b.cond.Broadcast()
	}
}

// writeOut writes a batch to the session's log and connection. wmu keeps
// a replay's updates from interleaving with it.
func (s *session) writeOut(batch []outgoing) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var logAll func([]sessionlog.Entry)
	if s.log != nil {
		logAll = func(recs []sessionlog.Entry) { s.log.appendEntries(recs) }
	}
	s.outRecords = writeBatch(batch, s.outRecords, logAll, func(update json.RawMessage) {
		if err := s.conn.sendRawUpdate(context.Background(), s.id, update); err != nil {
			s.agent.log.Debug("session/update not sent", "session", s.id, "err", err)
		}
	})
}

// writeBatch logs the records of a batch (each post's records, then its
// update's, when logged) with one call of logAll, nil without a log, and
// then sends the updates in order. recs is a buffer to reuse; the emptied
// buffer is returned.
func writeBatch(batch []outgoing, recs []sessionlog.Entry, logAll func([]sessionlog.Entry), send func(json.RawMessage)) []sessionlog.Entry {
	if logAll != nil {
		for _, o := range batch {
			recs = append(recs, o.records...)
			if o.logged && o.update != nil {
				recs = append(recs, sessionlog.Entry{Kind: evUpdate, Payload: o.update})
			}
		}
		if len(recs) > 0 {
			logAll(recs)
		}
		clear(recs)
	}
	for _, o := range batch {
		if o.update != nil {
			send(o.update)
		}
	}
	return recs[:0]
}
