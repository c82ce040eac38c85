package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-tools/dshd/acp"

	"github.com/dsh-tools/dshd/internal/testsupport"
)

var dshd string

func TestMain(m *testing.M) {
	os.Exit(testsupport.MainWithBinary(m, "./cmd/dshd", &dshd))
}

func TestDemoTranscript(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut strings.Builder
	if code := run(ctx, []string{"--dshd", dshd}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"user: Show me the demo",
		"thinking: ",
		"agent: Hello!",
		"☰ plan:",
		"[read]",
		"? permission asked for \"Edit dshd-demo.txt\"",
		"answered: \"Allow once\" (allow_once)",
		"-This line will be edited.\n",
		"+This line was edited by dshd, after you allowed it.\n",
		"[execute]",
		"│ Hello from the dshd demo.",
		"■ turn ended: end_turn",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("transcript:\n%s", got)
	}
}

func TestMissingBinary(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"--dshd", filepath.Join(t.TempDir(), "none")}, &out, &errOut); code == 0 {
		t.Fatal("a missing binary succeeded")
	}
	if !strings.Contains(errOut.String(), "make build") {
		t.Errorf("stderr %q", errOut.String())
	}
}

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\n"
	for _, tc := range []struct {
		name string
		old  *string
		new  string
		want string
	}{
		{"change", &old, "a\nB\nc\n", "--- f.txt\n+++ f.txt\n a\n-b\n+B\n c\n"},
		{"new file", nil, "x\ny\n", "--- /dev/null\n+++ f.txt (new file)\n+x\n+y\n"},
		{"emptied", &old, "", "--- f.txt\n+++ f.txt\n-a\n-b\n-c\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unifiedDiff("f.txt", tc.old, tc.new); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestTranscriptGroupsChunks(t *testing.T) {
	var sb strings.Builder
	tr := newTranscript(&sb, "/w")
	id := "m1"
	tr.update(&acp.AgentMessageChunk{Content: acp.Text("Hel"), MessageID: &id})
	tr.update(&acp.AgentMessageChunk{Content: acp.Text("lo"), MessageID: &id})
	tr.update(&acp.ToolCall{ToolCallID: "c", Title: "Read a.txt", Kind: acp.ToolKindRead, Status: acp.ToolCallPending,
		Locations: []acp.ToolCallLocation{{Path: "/w/a.txt"}}})
	st := acp.ToolCallCompleted
	tr.update(&acp.ToolCallUpdate{ToolCallID: "c", Status: &st, Content: []acp.ToolCallContent{acp.ToolText("line")}})
	want := "\nagent: Hello\n\n▶ tool call c: Read a.txt [read] pending\n    at a.txt\n  ↳ Read a.txt: completed\n    │ line\n"
	if sb.String() != want {
		t.Errorf("got\n%q\nwant\n%q", sb.String(), want)
	}
}
