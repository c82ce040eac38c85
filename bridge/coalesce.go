package bridge

import (
	"io"
	"sync"
)

// coalescer batches the connection's writes: Write queues the bytes and a
// single flusher goroutine writes everything queued so far in one call.
// Under load (a load replay, a turn of many tool calls) many messages share
// one system call; when idle every message is written at once, so nothing
// waits for a timer. Order is preserved: bytes reach the underlying writer
// in the order Write was called. Past maxPending queued bytes Write waits
// for the flusher, so a client that stops reading still slows the agent
// down instead of growing its memory.
type coalescer struct {
	io.ReadCloser
	w io.Writer

	mu      sync.Mutex
	cond    *sync.Cond
	pending []byte
	spare   []byte
	err     error
	closed  bool
	done    chan struct{}
}

// maxPending bounds the bytes queued for the flusher.
const maxPending = 4 << 20

func newCoalescer(rwc io.ReadWriteCloser) *coalescer {
	c := &coalescer{ReadCloser: rwc, w: rwc, done: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	go c.flush()
	return c
}

// Write queues p. It reports the error of an earlier flush, if any.
func (c *coalescer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.closed {
		return 0, io.ErrClosedPipe
	}
	for len(c.pending) > maxPending && c.err == nil && !c.closed {
		c.cond.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	c.pending = append(c.pending, p...)
	c.cond.Broadcast()
	return len(p), nil
}

func (c *coalescer) flush() {
	defer close(c.done)
	c.mu.Lock()
	for {
		for len(c.pending) == 0 && !c.closed {
			c.cond.Wait()
		}
		if len(c.pending) == 0 {
			c.mu.Unlock()
			return
		}
		buf := c.pending
		c.pending = c.spare[:0]
		c.cond.Broadcast() // writers waiting for room
		c.mu.Unlock()
		_, err := c.w.Write(buf)
		c.mu.Lock()
		c.spare = buf[:0]
		if err != nil {
			c.err = err
			c.pending = nil
			c.cond.Broadcast()
			c.mu.Unlock()
			return
		}
	}
}

// Close writes what is queued, then closes the connection.
func (c *coalescer) Close() error {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	<-c.done
	return c.ReadCloser.Close()
}
