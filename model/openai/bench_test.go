package openai

import (
	"encoding/json"
	"testing"
)

var benchChunk = []byte(`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"hello world, this is a token"},"finish_reason":null}]}`)

// BenchmarkHandleChunk decodes and accumulates one text chunk;
// BenchmarkUnmarshalChunkBaseline is a bare json.Unmarshal of the same
// bytes into the same struct, the floor for any decoder.
func BenchmarkHandleChunk(b *testing.B) {
	s := newStreamState(nil)
	b.SetBytes(int64(len(benchChunk)))
	for b.Loop() {
		if err := s.handle("", benchChunk); err != nil {
			b.Fatal(err)
		}
		if s.text.Len() > 1<<20 {
			s.text.Reset()
		}
	}
}

func BenchmarkUnmarshalChunkBaseline(b *testing.B) {
	b.SetBytes(int64(len(benchChunk)))
	for b.Loop() {
		var c chunk
		if err := json.Unmarshal(benchChunk, &c); err != nil {
			b.Fatal(err)
		}
	}
}
