package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

type memConn struct {
	io.Reader
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	fail   error
	closed int
}

func (m *memConn) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return 0, m.fail
	}
	m.writes++
	return m.buf.Write(p)
}

func (m *memConn) Close() error { m.mu.Lock(); m.closed++; m.mu.Unlock(); return nil }

func TestCoalescer(t *testing.T) {
	t.Run("order per writer and flush on close", func(t *testing.T) {
		m := &memConn{Reader: strings.NewReader("")}
		c := newCoalescer(m)
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 500; i++ {
					if _, err := fmt.Fprintf(c, "w%d:%d\n", w, i); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		next := map[string]int{}
		lines := strings.Split(strings.TrimSuffix(m.buf.String(), "\n"), "\n")
		if len(lines) != 2000 {
			t.Fatalf("%d lines written, want 2000", len(lines))
		}
		for _, l := range lines {
			var w, i int
			if _, err := fmt.Sscanf(l, "w%d:%d", &w, &i); err != nil {
				t.Fatalf("torn line %q", l)
			}
			key := fmt.Sprint(w)
			if next[key] != i {
				t.Fatalf("writer %d: got %d, want %d (reordered)", w, i, next[key])
			}
			next[key]++
		}
		if m.closed != 1 {
			t.Errorf("closed %d times", m.closed)
		}
	})
	t.Run("a write error is reported", func(t *testing.T) {
		boom := errors.New("broken pipe")
		m := &memConn{Reader: strings.NewReader(""), fail: boom}
		c := newCoalescer(m)
		defer c.Close()
		if _, err := c.Write([]byte("x\n")); err != nil {
			t.Fatal(err)
		}
		<-c.done // the flusher stops at the error
		_, err := c.Write([]byte("y\n"))
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want %v", err, boom)
		}
	})
	t.Run("writes after close fail", func(t *testing.T) {
		c := newCoalescer(&memConn{Reader: strings.NewReader("")})
		c.Close()
		if _, err := c.Write([]byte("z")); err == nil {
			t.Fatal("write after close succeeded")
		}
	})
}
