package sse

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(r io.Reader) ([]Event, error) {
	sr := NewReader(r)
	var evs []Event
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// randomChunks reads at most a random 1..7 bytes per call.
type randomChunks struct {
	r   io.Reader
	rng *rand.Rand
}

func (c *randomChunks) Read(p []byte) (int, error) {
	n := min(len(p), 1+c.rng.IntN(7))
	return c.r.Read(p[:n])
}

func TestReader(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	tests := []struct {
		name    string
		in      string
		want    []Event
		wantErr error
	}{
		{"basic", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []Event{{Data: `{"a":1}`}, {Data: "[DONE]"}}, nil},
		{"crlf", "event: ping\r\ndata: x\r\n\r\ndata: y\r\n\r\n", []Event{{Type: "ping", Data: "x"}, {Data: "y"}}, nil},
		{"keep-alive comments", ": keep-alive\n\n: OPENROUTER PROCESSING\n\ndata: x\n\n", []Event{{Data: "x"}}, nil},
		{"multi-line data", "data: a\ndata: b\ndata\n\n", []Event{{Data: "a\nb\n"}}, nil},
		{"no space after colon", "data:x\nid:7\n\n", []Event{{Data: "x", ID: "7"}}, nil},
		{"only a space removed", "data:  x\n\n", []Event{{Data: " x"}}, nil},
		{"event without data is dropped", "event: a\n\ndata: b\n\n", []Event{{Data: "b"}}, nil},
		{"unknown fields and retry ignored", "retry: 10\nfoo: bar\ndata: b\n\n", []Event{{Data: "b"}}, nil},
		{"line over 64 KiB", "data: " + big + "\n\n", []Event{{Data: big}}, nil},
		{"missing final blank line", "data: a\n\ndata: b\n", []Event{{Data: "a"}, {Data: "b"}}, nil},
		{"cut mid-line", "data: a\n\ndata: {\"b", []Event{{Data: "a"}}, io.ErrUnexpectedEOF},
		{"empty", "", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, mk := range []func(string) io.Reader{
				func(s string) io.Reader { return strings.NewReader(s) },
				func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
				func(s string) io.Reader {
					return &randomChunks{strings.NewReader(s), rand.New(rand.NewPCG(1, 2))}
				},
			} {
				got, err := readAll(mk(tc.in))
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("events = %.200q, want %.200q", got, tc.want)
				}
			}
		})
	}
}

func TestReaderLimit(t *testing.T) {
	r := NewReader(strings.NewReader("data: " + strings.Repeat("x", 1000) + "\n\n"))
	r.MaxEventSize = 100
	if _, err := r.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	r = NewReader(strings.NewReader(strings.Repeat("data: xxxxxxxxxx\n", 20) + "\n"))
	r.MaxEventSize = 100
	if _, err := r.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("many lines: err = %v, want ErrEventTooLarge", err)
	}
}

// FuzzReader checks that chunking never changes what is read.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data: a\r\ndata: b\r\n\r\n", ": c\n\nevent: e\ndata: x\n", "data", "\r\n\r\n", "data: {\"b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want, wantErr := readAll(strings.NewReader(in))
		got, err := readAll(iotest.OneByteReader(strings.NewReader(in)))
		if !reflect.DeepEqual(got, want) || !errors.Is(err, wantErr) && (err == nil || wantErr == nil || err.Error() != wantErr.Error()) {
			t.Fatalf("one-byte reads: %q, %v; whole: %q, %v", got, err, want, wantErr)
		}
	})
}

var benchStream = strings.Repeat(`data: {"choices":[{"index":0,"delta":{"content":"hello world, this is a token"}}]}`+"\n\n", 2000)

// BenchmarkReader reads a typical token stream; BenchmarkScannerBaseline
// splits the same bytes into lines with bufio.Scanner, the lower bound.
func BenchmarkReader(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	for b.Loop() {
		r := NewReader(strings.NewReader(benchStream))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

func BenchmarkScannerBaseline(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	for b.Loop() {
		sc := bufio.NewScanner(strings.NewReader(benchStream))
		for sc.Scan() {
			_ = sc.Bytes()
		}
	}
}
