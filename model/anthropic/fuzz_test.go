package anthropic

import (
	"strings"
	"testing"

	"github.com/dsh-tools/dshd/model/internal/ssetest"
	"github.com/dsh-tools/dshd/model/llm"
)

// eventSeeds are event sequences, one a line as "type<TAB>data", taken from
// the stream tests, plus the shapes a broken server or proxy could send:
// deltas for blocks never started, a block started twice, deltas after a
// block stopped, deltas of the wrong kind, server tool blocks.
var eventSeeds = []string{
	"message_start\t" + msgStart + "\nping\t{\"type\":\"ping\"}\n" +
		"content_block_start\t{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n" +
		"content_block_delta\t{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n" +
		"content_block_stop\t{\"type\":\"content_block_stop\",\"index\":0}\n" +
		"message_delta\t" + msgDelta("end_turn", 12) + "\nmessage_stop\t" + msgStop,
	"message_start\t" + msgStart + "\n" +
		"content_block_start\t{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n" +
		"content_block_delta\t{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me \"}}\n" +
		"content_block_delta\t{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCkYIARgCIkB+sig==\"}}\n" +
		"content_block_stop\t{\"type\":\"content_block_stop\",\"index\":0}\n" +
		"content_block_start\t{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va3pzix/LafPsn4a\"}}\n" +
		"content_block_stop\t{\"type\":\"content_block_stop\",\"index\":1}\n" +
		"content_block_start\t{\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\",\"input\":{}}}\n" +
		"content_block_delta\t{\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n" +
		"content_block_delta\t{\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"READ\"}}\n" +
		"content_block_delta\t{\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ME.md\\\"}\"}}\n" +
		"content_block_stop\t{\"type\":\"content_block_stop\",\"index\":3}\n" +
		"content_block_start\t{\"type\":\"content_block_start\",\"index\":4,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"noargs\",\"input\":{\"a\":1}}}\n" +
		"content_block_stop\t{\"type\":\"content_block_stop\",\"index\":4}\n" +
		"message_delta\t" + msgDelta("tool_use", 80) + "\nmessage_stop\t" + msgStop,
	"content_block_delta\t{\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n" +
		"content_block_stop\t{\"index\":2}\nmessage_delta\t" + msgDelta("tool_use", 1),
	"content_block_start\t{\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"a\"}}\n" +
		"content_block_start\t{\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"b\"}}\n" +
		"content_block_delta\t{\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"c\"}}",
	"content_block_start\t{\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n" +
		"content_block_stop\t{\"index\":0}\n" +
		"content_block_delta\t{\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"late\"}}\n" +
		"content_block_stop\t{\"index\":0}",
	"content_block_start\t{\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\"}}\n" +
		"content_block_delta\t{\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"q\\\":1}\"}}\n" +
		"content_block_stop\t{\"index\":0}",
	"error\t{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
	"error\t{}",
	"content_block_start\t{\"type\":\"content_block_start\",\"index\":0}",
	"content_block_delta\t{\"index\":0,\"delta\":\"text\"}",
	"message_delta\t{\"delta\":7}",
	"x\t{\"type\":",
}

// FuzzStreamEvents feeds event sequences to a stream's state as the SSE
// loop does (stopping at message_stop or an error) and checks that the
// state never panics, never reports both message_stop and an error, that
// the emitted events agree with the response (ssetest's Collector.Check:
// text and reasoning deltas add up to the message; each finished call's
// deltas add up to its arguments, and it is in the message exactly as
// finished), and that the response holds no more text than the events
// carried.
func FuzzStreamEvents(f *testing.F) {
	for _, s := range eventSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream string) {
		var c ssetest.Collector
		s := newStreamState(c.Emit)
		size := 0
		for _, line := range strings.Split(stream, "\n") {
			typ, data, ok := strings.Cut(line, "\t")
			if !ok {
				typ, data = "", line
			}
			if strings.TrimSpace(data) == "" {
				continue
			}
			size += len(data)
			done, err := s.handle(typ, []byte(data))
			if done && err != nil {
				t.Fatalf("handle reported message_stop and %v", err)
			}
			if err != nil && err.Error() == "" {
				t.Fatal("an error without a message")
			}
			if done || err != nil {
				break
			}
		}
		resp := s.Response()
		c.Check(t, resp)
		n := 0
		for _, p := range resp.Message.Parts {
			switch p := p.(type) {
			case *llm.Text:
				n += len(p.Text)
			case *llm.Reasoning:
				n += len(p.Text) + len(p.Signature) + len(p.Redacted)
			}
		}
		if n > size {
			t.Errorf("%d bytes of text from %d bytes of events", n, size)
		}
	})
}
