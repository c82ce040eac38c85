package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"
	"github.com/dsh-tools/dshd/acp/acptest"
	"github.com/dsh-tools/dshd/internal/atomicfile"
)

// Every benchmark here has a sub-benchmark per side: "dshd" is the real
// daemon, the others are references measured in the same run (the bare
// echo process over the same pipes is the floor). scripts/bench-table.sh
// prints the ratios.

const initializeLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"

// lineConn is a raw newline-delimited JSON connection to a process, for
// measurements that must not include a client library's cost.
type lineConn struct {
	p  *proc
	in *bufio.Reader
}

func newLineConn(p *proc) *lineConn {
	return &lineConn{p: p, in: bufio.NewReaderSize(p.stdout, 1<<20)}
}

func (c *lineConn) send(tb testing.TB, line string) {
	if _, err := io.WriteString(c.p.stdin, line); err != nil {
		tb.Fatal(err)
	}
}

// untilID reads lines until the response carrying the JSON id text.
func (c *lineConn) untilID(tb testing.TB, id string) []byte {
	want := []byte(`"id":` + id + `,`)
	for {
		line, err := c.in.ReadBytes('\n')
		if err != nil {
			tb.Fatalf("reading the response %s: %v", id, err)
		}
		if bytes.Contains(line, want) {
			return line
		}
	}
}

// reportMedian reports the median of samples as the metric unit
// (p50-ns, first-session-p50-ns).
func reportMedian(b *testing.B, samples []time.Duration, unit string) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), unit)
}

// benchTarget is one side of a start-up or session/new benchmark: a
// binary built by TestMain and its arguments for a fixture.
type benchTarget struct {
	name string
	bin  *string
	args func(f *fixture) []string
}

func (t benchTarget) start(b *testing.B, f *fixture) *proc {
	var args []string
	if t.args != nil {
		args = t.args(f)
	}
	p, err := spawn(*t.bin, f.ws, f.env(), args...)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

var (
	echoTarget = benchTarget{name: "echo", bin: &echoBin}
	// echoJSONSchemaTarget is the echo linking santhosh-tekuri/jsonschema/v6:
	// the start-up no binary that links it can beat.
	echoJSONSchemaTarget = benchTarget{name: "echo-jsonschema", bin: &echoJSONSchemaBin}
	// echoDepsTarget is the echo linking every package from outside the
	// module that dshd imports (TestDepsEchoLinksDshdsDependencies): the
	// start-up dshd's dependencies cost before any code of its own runs.
	echoDepsTarget = benchTarget{name: "echo-deps", bin: &echoDepsBin}
	dshdTarget     = benchTarget{name: "dshd", bin: &dshdBin, args: (*fixture).args}
)

// runsPerOp is how many runs one op of the start-up and session/new
// benchmarks makes: the issue asks for the median of 20.
const runsPerOp = 20

// BenchmarkStartup measures process start → initialize response over real
// pipes (issue 19's target: 1.2x echo-jsonschema; echo-deps shows how much
// of that the dependencies take by themselves). One op is 20 spawns;
// p50-ns is the median of every spawn, ns/op the time of 20 (processes are
// closed outside the timer). first-session-p50-ns is start → the answer to
// the session/new sent right after initialize's: when an editor can
// prompt (the echoes answer it at once).
func BenchmarkStartup(b *testing.B) {
	for _, target := range []benchTarget{echoTarget, echoJSONSchemaTarget, echoDepsTarget, dshdTarget} {
		b.Run(target.name, func(b *testing.B) {
			f := newFixture(b, script{Turns: []turn{{Responses: []response{{Text: "hi"}}}}})
			samples := make([]time.Duration, 0, b.N*runsPerOp)
			sessions := make([]time.Duration, 0, b.N*runsPerOp)
			newSession := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", f.ws)
			b.ResetTimer()
			for range b.N * runsPerOp {
				start := time.Now()
				p := target.start(b, f)
				c := newLineConn(p)
				c.send(b, initializeLine)
				c.untilID(b, "0")
				samples = append(samples, time.Since(start))
				c.send(b, newSession)
				c.untilID(b, "1")
				sessions = append(sessions, time.Since(start))
				b.StopTimer()
				_ = p.stdin.Close()
				if !p.waitExit(5 * time.Second) {
					p.kill()
					b.Fatalf("%s did not exit after stdin closed", target.name)
				}
				b.StartTimer()
			}
			reportMedian(b, samples, "p50-ns")
			reportMedian(b, sessions, "first-session-p50-ns")
		})
	}
}

// BenchmarkSessionNew measures session/new round trips on a freshly
// started, initialized process (target: 2 ms for dshd without MCP
// servers). One op is 20 session/new in a new process, so that sessions
// do not pile up over a long run; p50-ns is the median of every one.
func BenchmarkSessionNew(b *testing.B) {
	for _, target := range []benchTarget{echoTarget, dshdTarget} {
		b.Run(target.name, func(b *testing.B) {
			f := newFixture(b, script{Turns: []turn{{Responses: []response{{Text: "hi"}}}}})
			samples := make([]time.Duration, 0, b.N*runsPerOp)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				p := target.start(b, f)
				c := newLineConn(p)
				c.send(b, initializeLine)
				c.untilID(b, "0")
				b.StartTimer()
				for i := 1; i <= runsPerOp; i++ {
					start := time.Now()
					c.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", i, f.ws))
					c.untilID(b, fmt.Sprint(i))
					samples = append(samples, time.Since(start))
				}
				b.StopTimer()
				p.kill()
				b.StartTimer()
			}
			reportMedian(b, samples, "p50-ns")
		})
	}
}

// leanClient is a client that costs as little as possible: it counts
// updates and answers every permission request by allowing once.
type leanClient struct {
	acp.UnimplementedClient
	updates atomic.Int64
	asks    atomic.Int64
}

func (c *leanClient) SessionUpdate(context.Context, *acp.SessionNotification) error {
	c.updates.Add(1)
	return nil
}

func (c *leanClient) RequestPermission(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	c.asks.Add(1)
	return &acp.RequestPermissionResponse{Outcome: acptest.AllowOnce(ctx, req)}, nil
}

func (p *proc) leanClient(tb testing.TB) (*leanClient, *acp.AgentConn) {
	c := &leanClient{}
	ctx, cancel := context.WithCancel(context.Background())
	conn := acp.ConnectAgent(ctx, p.rwc(), c)
	tb.Cleanup(func() {
		cancel()
		_ = conn.Close()
	})
	return c, conn
}

// callsScript is one turn of n calls of tool with args, in one model
// response, then a closing text.
func callsScript(n int, tool string, args any) script {
	return script{Turns: []turn{{Responses: []response{
		{ToolCalls: calls("c", n, tool, args)},
		{Text: "done"},
	}}}}
}

// readFixture is a fixture whose script reads a small file n times (reads
// are allowed in the default mode).
func readFixture(tb testing.TB, n int) *fixture {
	f := newFixture(tb, callsScript(n, "read", map[string]any{"path": "small.txt"}))
	if err := os.WriteFile(filepath.Join(f.ws, "small.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return f
}

// writeFixture is a fixture whose script writes the same small file n
// times: every write asks in the default mode.
func writeFixture(tb testing.TB, n int) *fixture {
	return newFixture(tb, callsScript(n, "write", map[string]any{"path": "out.txt", "content": "same\n"}))
}

// runTurn opens a session and runs its one scripted turn.
func runTurn(tb testing.TB, conn *acp.AgentConn, cwd string) string {
	ctx := callCtx(tb, 5*time.Minute)
	s, err := conn.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.MCPServer{}})
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := prompt(ctx, conn, s.SessionID, "go")
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StopReason != acp.StopEndTurn {
		tb.Fatalf("stop reason %s", resp.StopReason)
	}
	return s.SessionID
}

func initialize(tb testing.TB, conn *acp.AgentConn) {
	if _, err := conn.Initialize(callCtx(tb, 20*time.Second), &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: &acp.ClientCapabilities{}}); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkTurn1000Calls runs one prompt turn of 1,000 tool calls through
// the real binary: "allowed" reads a small file (allowed in the default
// mode), "asked" writes one and the client allows every call once,
// "write-floor" is the disk's part of "asked" alone (no daemon). Their
// client reads the JSON-RPC envelopes only (envelopeClient); the
// "-acp-client" sides are the same turns under the typed acp client, whose
// decoding shares the machine's two cores with the daemon. The in-process
// references are bridge's BenchmarkTurn1000Calls and
// BenchmarkTurn1000CallsAsked. Each iteration is a new session (the
// script's first turn); its session/new is timed too, a few ms per 1,000
// calls.
func BenchmarkTurn1000Calls(b *testing.B) {
	const n = 1000
	for _, side := range []struct {
		name  string
		f     func(testing.TB, int) *fixture
		typed bool
	}{
		{"allowed", readFixture, false},
		{"asked", writeFixture, false},
		{"allowed-acp-client", readFixture, true},
		{"asked-acp-client", writeFixture, true},
	} {
		b.Run(side.name, func(b *testing.B) {
			f := side.f(b, n)
			p := f.start(b)
			var turn func()
			var asks func() int
			if side.typed {
				c, conn := p.leanClient(b)
				initialize(b, conn)
				turn = func() { runTurn(b, conn, f.ws) }
				asks = func() int { return int(c.asks.Swap(0)) }
			} else {
				c := newEnvelopeClient(p)
				c.call(b, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
				turn = func() { c.turn(b, f.ws, n) }
				asks = func() int { return c.asks }
			}
			cpu0, cpuErr := procCPU(p.pid())
			self0, selfErr := procCPU(os.Getpid())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				turn()
			}
			b.StopTimer()
			// The daemon's own CPU time, and the client's (this process):
			// the wall clock counts both, on the machine's shared cores.
			if cpu1, err := procCPU(p.pid()); err == nil && cpuErr == nil {
				b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/float64(b.N), "daemon-cpu-ms/op")
			}
			if self1, err := procCPU(os.Getpid()); err == nil && selfErr == nil {
				b.ReportMetric(float64((self1-self0).Milliseconds())/float64(b.N), "client-cpu-ms/op")
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "calls/s")
			b.ReportMetric(float64(asks())/float64(b.N), "asks/op")
			if hwm, err := procStatusKB(p.pid(), "VmHWM"); err == nil {
				b.ReportMetric(float64(hwm)/1024, "peak-RSS-MB")
			}
		})
	}
	// The disk's floor under "asked": its 1,000 calls each replace the same
	// file the way the write tool does (a temporary file renamed over it),
	// and on some file systems that rename is most of a call (ext4 with
	// auto_da_alloc flushes the new data first: ~0.5 ms on a virtual disk
	// against ~0.1 ms for a rename to a new name).
	b.Run("write-floor", func(b *testing.B) {
		const n = 1000
		f := newFixture(b, script{})
		r, err := os.OpenRoot(f.ws)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for range n {
				if err := atomicfile.WriteIn(r, "out.txt", []byte("same\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "calls/s")
	})
}

// BenchmarkMemory reports the daemon's peak RSS (VmHWM) idle (after
// initialize and one session/new), after a turn of 1,000 tool calls, and
// with 50 concurrent sessions each running a 1,000-call turn. "echo" is
// the floor: the echo process's peak RSS after one round trip. Each
// iteration is a fresh process; the metric is the largest peak seen.
func BenchmarkMemory(b *testing.B) {
	cases := []struct {
		name string
		run  func(b *testing.B) int64
	}{
		{"echo-idle", func(b *testing.B) int64 {
			f := newFixture(b, script{})
			p, err := spawn(echoBin, f.ws, f.env())
			if err != nil {
				b.Fatal(err)
			}
			defer p.kill()
			c := newLineConn(p)
			c.send(b, initializeLine)
			c.untilID(b, "0")
			return peakKB(b, p)
		}},
		{"idle", daemonPeak(1, func(b *testing.B, conn *acp.AgentConn, ws string) {
			open(b, conn, ws, acp.ClientCapabilities{})
		})},
		{"turn1000", daemonPeak(1000, func(b *testing.B, conn *acp.AgentConn, ws string) {
			initialize(b, conn)
			runTurn(b, conn, ws)
		})},
		{"sessions50", daemonPeak(1000, func(b *testing.B, conn *acp.AgentConn, ws string) {
			initialize(b, conn)
			var wg sync.WaitGroup
			for range 50 {
				wg.Go(func() { runTurn(b, conn, ws) })
			}
			wg.Wait()
		})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var peak int64
			for i := 0; i < b.N; i++ {
				peak = max(peak, c.run(b))
			}
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
		})
	}
}

// daemonPeak is a BenchmarkMemory case: the daemon on a fixture of calls
// read calls, driven by work over a lean client; it returns the daemon's
// peak RSS.
func daemonPeak(calls int, work func(b *testing.B, conn *acp.AgentConn, ws string)) func(*testing.B) int64 {
	return func(b *testing.B) int64 {
		f := readFixture(b, calls)
		p := f.start(b)
		defer p.kill()
		_, conn := p.leanClient(b)
		work(b, conn, f.ws)
		return peakKB(b, p)
	}
}

func peakKB(tb testing.TB, p *proc) int64 {
	kb, err := procStatusKB(p.pid(), "VmHWM")
	if err != nil {
		tb.Fatal(err)
	}
	return kb
}

// envelopeClient is a client for measuring the daemon rather than a client
// library: over a lineConn it decodes each message's JSON-RPC envelope (id,
// method, and the params of a permission request), counts the calls that
// completed, and allows every permission request once. The typed acp
// client decodes every update into its union types, ~70 µs of CPU a tool
// call on the two cores the daemon runs on; an editor's client runs in
// another process with cores of its own.
type envelopeClient struct {
	*lineConn
	nextID    int
	completed int // calls completed in the current turn
	asks      int // permission requests answered, in all
}

func newEnvelopeClient(p *proc) *envelopeClient {
	return &envelopeClient{lineConn: newLineConn(p)}
}

// envelope is the part of a JSON-RPC message the client reads.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends a request and reads until its response, handling what comes
// before it; it returns the response's result.
func (c *envelopeClient) call(tb testing.TB, method string, params any) json.RawMessage {
	tb.Helper()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	c.write(tb, map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	for {
		line, err := c.in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			line, err = c.readLong(line)
		}
		if err != nil {
			tb.Fatalf("%s: reading: %v", method, err)
		}
		if bytes.HasPrefix(line, updatePrefix) {
			// Most of a turn's messages: not decoded (the daemon's
			// encoding puts the method first).
			c.update(line)
			continue
		}
		var env envelope
		if err := json.Unmarshal(line, &env); err != nil {
			tb.Fatalf("%s: a message that is not JSON-RPC: %v: %s", method, err, line)
		}
		switch {
		case env.Method == "session/update":
			c.update(line)
		case env.Method == "session/request_permission" && env.ID != nil:
			c.asks++
			c.allowOnce(tb, env.ID, line)
		case env.Method != "" && env.ID != nil:
			c.write(tb, map[string]any{"jsonrpc": "2.0", "id": env.ID, "error": map[string]any{"code": -32601, "message": "not supported by the benchmark's client"}})
		case env.Method == "" && string(env.ID) == id:
			if env.Error != nil {
				tb.Fatalf("%s: error %d: %s", method, env.Error.Code, env.Error.Message)
			}
			return env.Result
		}
	}
}

// update counts a session/update line: whether it completes a call.
func (c *envelopeClient) update(line []byte) {
	if bytes.Contains(line, []byte(`"status":"completed"`)) {
		c.completed++
	}
}

// updatePrefix starts every session/update notification the daemon sends.
var updatePrefix = []byte(`{"jsonrpc":"2.0","method":"session/update","params":`)

// readLong reads the rest of a line longer than the read buffer.
func (c *envelopeClient) readLong(start []byte) ([]byte, error) {
	line := bytes.Clone(start)
	rest, err := c.in.ReadBytes('\n')
	return append(line, rest...), err
}

// allowOnce answers a permission request with its allow_once option.
func (c *envelopeClient) allowOnce(tb testing.TB, id json.RawMessage, line []byte) {
	var req struct {
		Params struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &req); err != nil {
		tb.Fatalf("session/request_permission: %v", err)
	}
	for _, o := range req.Params.Options {
		if o.Kind == "allow_once" {
			c.write(tb, map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": o.OptionID}}})
			return
		}
	}
	tb.Fatalf("session/request_permission without an allow_once option: %s", line)
}

func (c *envelopeClient) write(tb testing.TB, msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		tb.Fatal(err)
	}
	c.send(tb, string(b)+"\n")
}

// turn opens a session in cwd and runs its one scripted turn; it fails
// unless the turn ended and every one of its n calls completed.
func (c *envelopeClient) turn(tb testing.TB, cwd string, n int) {
	tb.Helper()
	c.completed = 0
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(c.call(tb, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}), &s); err != nil {
		tb.Fatal(err)
	}
	var resp struct {
		StopReason string `json:"stopReason"`
	}
	res := c.call(tb, "session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	if err := json.Unmarshal(res, &resp); err != nil {
		tb.Fatal(err)
	}
	if resp.StopReason != "end_turn" || c.completed != n {
		tb.Fatalf("stop reason %q with %d of %d calls completed", resp.StopReason, c.completed, n)
	}
}
